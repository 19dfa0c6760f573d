"""The history route's drafts against the cold reviews of ``benchmarks/init_review/``.

For every reviewed repository (a ``*.json`` review of the history route there), this drafts
``init --from-history --count N`` again in a clone at the review's evaluated commit, with the
tool as it is now, and counts by source commit, against the review's verdicts:

* the rejected and the edited questions the rules now avoid (no longer drafted), with the
  reason each one is skipped for now;
* the kept questions they lose (no longer drafted), with the reason;
* the kept questions drafted in other words than the review read (the cleaning changed),
  and those drafted with other grades;
* the drafted questions the review never saw (newer rules reach further back), listed so a
  reader can judge them;
* the skip reasons counted, and the time the route took (no index is built).

The reviews are tuning data for the rules this measures (say so when quoting the figures)::

    python benchmarks/bench_history_review.py --clones /tmp/clones [--count 20] [--show]

``--clones DIR`` holds one clone per repository, named as the repository (``requests``,
``click``, …), checked out at the review's ``evaluated_commit``.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import time
from pathlib import Path
from typing import Any

from evaluator.authoring import history_plan
from evaluator.core.commits import SKIP_IN_PULL
from evaluator.drafting import Candidate
from evaluator.git_repo import GitRepo
from evaluator.progress import Progress
from evaluator.validation import universe_of

REVIEWS = Path(__file__).resolve().parent / "init_review"


def _reviews(names: list[str] | None) -> list[tuple[Path, dict[str, Any]]]:
    out = []
    for path in sorted(REVIEWS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("route") != "history":
            continue
        repo = doc["repository"].split("/")[-1]
        if names is None or repo in names:
            out.append((path, doc))
    return out


def _files(clone: Path) -> tuple[str, ...]:
    raw = subprocess.run(["git", "-C", str(clone), "ls-files", "-z"], capture_output=True,
                         check=True).stdout
    return tuple(sorted(p.decode("utf-8", "replace") for p in raw.split(b"\0") if p))


def _git(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(clone), *args], capture_output=True, text=True,
                          check=False)


def _pull_merge(clone: Path, sha: str) -> str | None:
    """The merge commit that brought ``sha`` in through its second parent (the pull
    request whose title now asks the question), oldest first."""
    merges = _git(clone, "rev-list", "--merges", "--ancestry-path", "--reverse",
                  f"{sha}..HEAD").stdout.split()
    for merge in merges:
        if _git(clone, "merge-base", "--is-ancestor", sha, f"{merge}^1").returncode != 0:
            return merge
    return None


def draft_at_review(clone: Path, review: dict[str, Any], count: int,
                    decisions: dict[str, str] | None = None,
                    log: io.StringIO | None = None) -> list[Candidate]:
    """``init --from-history --count`` drafted in ``clone`` with the tool as it is now, once
    the clone is checked to be at the review's evaluated commit (elsewhere, the figures
    would move for a reason other than the tool)."""
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    if head != review["evaluated_commit"]:
        raise SystemExit(f"{clone} is at {head[:12]}, the review evaluated "
                         f"{review['evaluated_commit'][:12]}: check it out first")
    chosen, _ = history_plan(clone, universe_of(_files(clone), None), GitRepo({}),
                             count=count, since=None, progress=Progress(log or io.StringIO()),
                             decisions=decisions)
    return chosen


def measure(clone: Path, review: dict[str, Any], count: int) -> dict[str, Any]:
    """One repository: the draft now against the review's verdicts."""
    decisions: dict[str, str] = {}
    log = io.StringIO()
    started = time.perf_counter()
    chosen = draft_at_review(clone, review, count, decisions, log)
    seconds = time.perf_counter() - started
    drafted = {c.key.removeprefix("commit:"): c for c in chosen}
    rows = []
    for q in review["questions"]:
        sha = q["source_commit"]
        if decisions.get(sha) == SKIP_IN_PULL:  # now asked by its pull request's title
            sha = _pull_merge(clone, sha) or sha
        rows.append({"id": q["id"], "verdict": q["verdict"], "tags": q["tags"],
                     "asked_by": sha, "now": drafted[sha].question if sha in drafted else "",
                     "grades_now": drafted[sha].grades if sha in drafted else {},
                     "grades": q["grades"],
                     "question": q["question"], "kept_now": sha in drafted,
                     "reason_now": "drafted" if sha in drafted else
                     decisions.get(sha, "not reached (--count met before it)")})
    seen = {q["source_commit"] for q in review["questions"]} | {r["asked_by"] for r in rows}
    new = [(sha, c.question) for sha, c in drafted.items() if sha not in seen]
    skipped: dict[str, int] = {}
    for reason in decisions.values():
        if reason != "drafted":
            skipped[reason] = skipped.get(reason, 0) + 1
    return {"rows": rows, "new": new, "seconds": seconds, "skipped": skipped,
            "drafted": len(chosen), "history_line": log.getvalue().strip()}


_KEYS = ("keep", "edit", "reject", "keep_lost", "keep_reworded", "keep_regraded",
         "edit_avoided", "reject_avoided")


def _tally(rows: list[dict[str, Any]]) -> dict[str, int]:
    out = dict.fromkeys(_KEYS, 0)
    for row in rows:
        out[row["verdict"]] += 1
        if row["verdict"] == "keep" and row["kept_now"] and row["now"] != row["question"]:
            out["keep_reworded"] += 1
        if row["verdict"] == "keep" and row["kept_now"] and row["grades_now"] != row["grades"]:
            out["keep_regraded"] += 1
        if not row["kept_now"]:
            out[{"keep": "keep_lost", "edit": "edit_avoided",
                 "reject": "reject_avoided"}[row["verdict"]]] += 1
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, required=True)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--repos", nargs="+", default=None)
    parser.add_argument("--show", action="store_true",
                        help="print every reviewed question's fate and the new questions")
    args = parser.parse_args()
    total = dict.fromkeys(_KEYS, 0)
    print("| repository | drafted | rejected avoided | edited avoided | kept lost | "
          "kept reworded | kept regraded | new (unreviewed) | seconds |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    details = []
    skipped_all: dict[str, int] = {}
    for _path, review in _reviews(args.repos):
        name = review["repository"].split("/")[-1]
        got = measure(args.clones / name, review, args.count)
        tally = _tally(got["rows"])
        for key, value in tally.items():
            total[key] += value
        for reason, n in got["skipped"].items():
            skipped_all[reason] = skipped_all.get(reason, 0) + n
        print(f"| {review['repository']} | {got['drafted']}/{args.count} | "
              f"{tally['reject_avoided']}/{tally['reject']} | "
              f"{tally['edit_avoided']}/{tally['edit']} | {tally['keep_lost']}/{tally['keep']} | "
              f"{tally['keep_reworded']} | {tally['keep_regraded']} | {len(got['new'])} | "
              f"{got['seconds']:.1f} |")
        details.append((review["repository"], got))
    print(f"| all | | {total['reject_avoided']}/{total['reject']} | "
          f"{total['edit_avoided']}/{total['edit']} | {total['keep_lost']}/{total['keep']} | "
          f"{total['keep_reworded']} | {total['keep_regraded']} | | |")
    print("\nskipped, by reason (every commit decided, all repositories):")
    for reason, n in sorted(skipped_all.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {n:5d}  {reason}")
    if args.show:
        for repository, got in details:
            print(f"\n== {repository}")
            for row in got["rows"]:
                if not row["kept_now"] or row["verdict"] != "keep" or \
                        row["now"] != row["question"] or row["grades_now"] != row["grades"]:
                    mark = f"drafted as {row['now']!r}" if row["kept_now"] else \
                        f"SKIPPED: {row['reason_now']}"
                    if row["kept_now"] and row["grades_now"] != row["grades"]:
                        mark += f", graded {row['grades_now']} (reviewed {row['grades']})"
                    print(f"  {row['id']} [{row['verdict']} {','.join(row['tags'])}] "
                          f"{row['question']!r} -> {mark}")
            for sha, question in got["new"]:
                print(f"  new {sha[:12]} {question!r}")


if __name__ == "__main__":
    main()
