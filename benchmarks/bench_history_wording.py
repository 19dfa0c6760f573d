"""Which subject features separate the kept history questions from the reworded ones? (issue 24)

The largest class of edits the cold reviews made to ``init --from-history`` drafts is
``wording``: a subject that states the implementation or the fix ("Update metavar printing",
"Fix error message") instead of what a user would ask. The route cannot rewrite a subject;
it can skip one that carries too little (and draft the next candidate), or ask a text the
commit itself holds (its body). This measures, over every reviewed question of
``benchmarks/init_review/*.json`` (history route), how candidate features separate the
``keep`` verdicts from the ``wording``-tagged edits (and from any edit or rejection):

* ``words``: the question's words; ``content``: its words once generic verbs and fillers
  are dropped (:func:`evaluator.core.commit_wording.content_words`);
* ``vague``: a vague phrase (``commit_wording.VAGUE``: "as expected", "correctly", "issue",
  a version number, ...);
* ``impl_verb``: the subject opens with a verb that names work on the code, not a behaviour
  (``commit_wording.CODE_WORK_VERBS``: refactor, update, improve, use, ...);
* ``adopted``: the rule the route applies (:func:`commit_wording.wording_reason`);
* ``absent``: the share of its content words found nowhere in the commit's diff;
* ``body_failure``: the commit's body (its lines other than trailers, check-lists and the
  pull request's title) holds a sentence describing a failure (:data:`FAILURE`).

Each feature, as a skip rule, is printed with the kept questions it loses and the bad ones
(wording edits; all edits and rejections) it avoids, over all questions; then
**leave-one-repository-out**: for every repository (one reviewed twice is left out whole) a
threshold is chosen on the other repositories (most bad avoided minus 3 x kept lost) and
applied to the held-out one. A rule earns adoption only if it avoids at least 3 bad
questions per kept one lost there. The reviews are tuning data::

    python benchmarks/bench_history_wording.py --clones /tmp/clones-r8

``--clones DIR`` holds one clone per repository (see ``bench_history_review.py``).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evaluator.core.commit_wording import (
    SKIP_WORDING,
    VAGUE,
    code_work,
    content_words,
    wording_reason,
)

FAILURE = re.compile(r"\b(raise[sd]?|raising|error|exception|fail(s|ed|ing|ure)?|crash(es|ed)?|"
                     r"broke|broken|instead of|traceback|incorrect(ly)?|wrong|hang(s|ed)?|"
                     r"does not|doesn't|did not|didn't|cannot|can't|unable)\b", re.IGNORECASE)
_TRAILER = re.compile(r"^\s*([\w-]+-by|co-authored-by|signed-off-by|fixes|closes|refs?)\b[: ]",
                      re.IGNORECASE)
_CHECKLIST = re.compile(r"^\s*([-*] \[[ xX]\]|<!--|#+ |- \[)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*")


def _git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                          check=False, errors="replace").stdout


def body_text(raw: str) -> str:
    """A body's prose: without trailers, check-lists, template comments and the first line
    (a merge's pull-request title)."""
    lines = raw.splitlines()
    out = [line for line in lines[1:] if line.strip() and not _TRAILER.match(line)
           and not _CHECKLIST.match(line)]
    return " ".join(out)


def features(clone: Path, q: dict[str, Any]) -> dict[str, float]:
    sha = q["source_commit"]
    text = q["question"]
    words = _WORD.findall(text)
    content = content_words(text)
    diff = _git(clone, "diff", f"{sha}^1", sha).lower()
    absent = sum(1 for w in content if w not in diff) / len(content) if content else 1.0
    full = _git(clone, "log", "-1", "--format=%B", sha)
    body = body_text(full)
    return {"words": len(words), "content": len(content),
            "vague": 1.0 if VAGUE.search(text) else 0.0,
            "impl_verb": 1.0 if code_work(text) else 0.0,
            "adopted": 1.0 if wording_reason(text) else 0.0,
            "absent": absent,
            "body_failure": 1.0 if FAILURE.search(body) else 0.0}


def drafted_now(clones: Path, review: dict[str, Any]) -> set[str]:
    """The reviewed source commits the route drafts today (``bench_history_review``), or
    skips only by the wording rule measured here."""
    from bench_history_review import measure  # the sibling benchmark (imports the tool)
    repo = review["repository"].split("/")[-1]
    got = measure(clones / repo, review, 20)
    return {q["source_commit"] for q, row in zip(review["questions"], got["rows"], strict=True)
            if row["kept_now"] or row["reason_now"] == SKIP_WORDING}


def rows(clones: Path, *, now: bool, cache: Path | None) -> list[dict[str, Any]]:
    """Every reviewed question with its features; with ``now``, only those the route still
    drafts (the others a rule no longer needs to avoid), read from ``cache`` when it exists
    (``--drafted``: the drafting takes minutes; the features are read every run)."""
    cached = json.loads(cache.read_text(encoding="utf-8")) if cache and cache.exists() else {}
    from bench_history_review import _reviews  # the sibling benchmark's review reader
    out = []
    for path, doc in _reviews(None):
        repo = doc["repository"].split("/")[-1]
        keep = None
        if now:
            if path.name not in cached:
                cached[path.name] = sorted(drafted_now(clones, doc))
            keep = set(cached[path.name])
        for q in doc["questions"]:
            if keep is not None and q["source_commit"] not in keep:
                continue
            out.append({"repo": repo, "verdict": q["verdict"],
                        "wording": "wording" in q["tags"], "question": q["question"],
                        **features(clones / repo, q)})
    if cache is not None:
        cache.write_text(json.dumps(cached, indent=1), encoding="utf-8")
    return out


Rule = Callable[[dict[str, Any]], bool]


def count(data: list[dict[str, Any]], rule: Rule) -> dict[str, int]:
    hit = [r for r in data if rule(r)]
    return {"keep_lost": sum(r["verdict"] == "keep" for r in hit),
            "wording_avoided": sum(r["wording"] for r in hit),
            "bad_avoided": sum(r["verdict"] != "keep" for r in hit)}


def _score(c: dict[str, int]) -> int:
    return c["bad_avoided"] - 3 * c["keep_lost"]


def rules() -> dict[str, list[tuple[str, Rule]]]:
    """Each family: its thresholds, loosest last; leave-one-out picks one per held-out
    repository (or none)."""
    fam: dict[str, list[tuple[str, Rule]]] = {}
    fam["words <= k"] = [(f"words<={k}", lambda r, k=k: r["words"] <= k) for k in range(3, 7)]
    fam["content <= k"] = [(f"content<={k}", lambda r, k=k: r["content"] <= k)
                           for k in range(0, 4)]
    fam["vague"] = [("vague", lambda r: r["vague"] > 0)]
    fam["impl_verb"] = [("impl_verb", lambda r: r["impl_verb"] > 0)]
    fam["impl_verb and content <= k"] = [
        (f"impl_verb&content<={k}", lambda r, k=k: r["impl_verb"] > 0 and r["content"] <= k)
        for k in range(1, 5)]
    fam["vague and content <= k"] = [
        (f"vague&content<={k}", lambda r, k=k: r["vague"] > 0 and r["content"] <= k)
        for k in range(1, 5)]
    fam["(impl_verb or vague) and content <= k"] = [
        (f"(impl_verb|vague)&content<={k}",
         lambda r, k=k: (r["impl_verb"] > 0 or r["vague"] > 0) and r["content"] <= k)
        for k in range(1, 5)]
    fam["adopted rule (k = 2 fixed, so in-sample)"] = [("adopted", lambda r: r["adopted"] > 0)]
    fam["absent >= t"] = [(f"absent>={t}", lambda r, t=t: r["absent"] >= t)
                          for t in (1.0, 0.75, 0.5)]
    fam["absent <= t (all in code)"] = [(f"absent<={t}", lambda r, t=t: r["absent"] <= t)
                                        for t in (0.0, 0.25)]
    fam["no body failure sentence"] = [("no_body_failure", lambda r: r["body_failure"] == 0)]
    return fam


def leave_one_repo_out(data: list[dict[str, Any]],
                       family: list[tuple[str, Rule]]) -> tuple[dict[str, int], list[str]]:
    total = {"keep_lost": 0, "wording_avoided": 0, "bad_avoided": 0}
    picked = []
    for repo in sorted({r["repo"] for r in data}):
        train = [r for r in data if r["repo"] != repo]
        test = [r for r in data if r["repo"] == repo]
        best = max(family, key=lambda nr: _score(count(train, nr[1])))
        if _score(count(train, best[1])) <= 0:
            picked.append(f"{repo}:none")
            continue
        picked.append(f"{repo}:{best[0]}")
        for key, value in count(test, best[1]).items():
            total[key] += value
    return total, picked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, required=True)
    parser.add_argument("--show", action="store_true", help="print every question's features")
    parser.add_argument("--all", action="store_true",
                        help="every reviewed question, also those the route no longer drafts")
    parser.add_argument("--drafted", type=Path, default=None,
                        help="a JSON file caching the drafted commits (written when absent)")
    args = parser.parse_args()
    data = rows(args.clones, now=not args.all, cache=args.drafted)
    keep = sum(r["verdict"] == "keep" for r in data)
    wording = sum(r["wording"] for r in data)
    bad = sum(r["verdict"] != "keep" for r in data)
    which = "all" if args.all else "still drafted today"
    repos = len({r["repo"] for r in data})
    print(f"{len(data)} reviewed questions ({which}) in {repos} repositories: "
          f"{keep} kept, {wording} wording-tagged, {bad} edited or rejected (tuning data)\n")
    print("| feature | mean keep | mean wording | mean other bad |")
    print("|---|---:|---:|---:|")
    for name in ("words", "content", "vague", "impl_verb", "absent", "body_failure"):
        def mean(sel: list[dict[str, Any]], name: str = name) -> float:
            return sum(r[name] for r in sel) / len(sel) if sel else 0.0
        print(f"| {name} | {mean([r for r in data if r['verdict'] == 'keep']):.2f} | "
              f"{mean([r for r in data if r['wording']]):.2f} | "
              f"{mean([r for r in data if r['verdict'] != 'keep' and not r['wording']]):.2f} |")
    print("\nAs a skip rule, on all questions (in-sample):\n")
    print("| rule | kept lost | wording avoided | bad avoided | bad per kept lost |")
    print("|---|---:|---:|---:|---:|")
    families = rules()
    for family in families.values():
        for name, rule in family:
            c = count(data, rule)
            ratio = f"{c['bad_avoided'] / c['keep_lost']:.1f}" if c["keep_lost"] else "-"
            print(f"| {name} | {c['keep_lost']} | {c['wording_avoided']} | "
                  f"{c['bad_avoided']} | {ratio} |")
    print("\nLeave-one-repository-out (threshold chosen on the other repositories):\n")
    print("| family | kept lost | wording avoided | bad avoided | adopt (>= 3 bad per kept) | "
          "picked (held-out repositories) |")
    print("|---|---:|---:|---:|---|---|")
    for fname, family in families.items():
        c, picked = leave_one_repo_out(data, family)
        chosen = Counter(p.split(":", 1)[1] for p in picked)
        ok = c["bad_avoided"] > 0 and c["bad_avoided"] >= 3 * c["keep_lost"]
        print(f"| {fname} | {c['keep_lost']} | {c['wording_avoided']} | {c['bad_avoided']} | "
              f"{'yes' if ok else 'no'} | "
              f"{', '.join(f'{k} x{n}' for k, n in sorted(chosen.items()))} |")
    wf = sum(r["body_failure"] > 0 for r in data if r["wording"])
    kf = sum(r["body_failure"] > 0 for r in data if r["verdict"] == "keep")
    print(f"\nbody route: a failure sentence in the body of {wf}/{wording} wording-tagged "
          f"and {kf}/{keep} kept questions' commits")
    if args.show:
        for r in data:
            print(f"{r['verdict']:6} {'W' if r['wording'] else ' '} w={r['words']} "
                  f"c={r['content']} v={r['vague']:.0f} i={r['impl_verb']:.0f} "
                  f"a={r['absent']:.2f} b={r['body_failure']:.0f} {r['question']}")


if __name__ == "__main__":
    main()
