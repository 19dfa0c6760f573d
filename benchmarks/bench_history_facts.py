"""The history route's facts before and after a change, against the cold reviews' tags.

A rule about facts (which added lines of a commit may be a question's facts) does not change
which questions are drafted, so ``bench_history_review.py`` cannot see it. This drafts every
reviewed repository (as that benchmark does, in clones at the reviews' evaluated commits)
and writes each drafted question's facts to a JSON file; a second call compares two such
files and counts, by review verdict (a ``+facts`` suffix when the review tagged the
question ``facts``), how many drafted questions' facts changed, and how many were emptied
(a question with fewer than 2 facts has none). ``--show`` prints each changed question's
facts (``-`` dropped, ``+`` added) and the review's edit, so a reader can judge whether the
dropped ones are those the reviewer complained about. The reviews are tuning data for the
rules this measures (say so when quoting the figures)::

    python benchmarks/bench_history_facts.py --clones /tmp/clones --dump /tmp/after.json
    python benchmarks/bench_history_facts.py --clones /tmp/clones --dump /tmp/before.json \\
        --code /tmp/before            # a tree of the old commit: git archive OLD | tar -x
    python benchmarks/bench_history_facts.py --compare /tmp/before.json /tmp/after.json --show
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def dump(clones: Path, count: int, names: list[str] | None) -> dict[str, Any]:
    """Every reviewed repository's drafted questions by source commit: question, facts."""
    import bench_history_review as review_bench

    out: dict[str, Any] = {}
    for path, review in review_bench._reviews(names):
        chosen = review_bench.draft_at_review(
            clones / review["repository"].split("/")[-1], review, count)
        out[path.name] = {c.key.removeprefix("commit:"): {"question": c.question,
                                                          "facts": list(c.facts)}
                          for c in chosen}
        print(f"{path.name}: {len(chosen)} drafted", file=sys.stderr)
    return out


def compare(before: dict[str, Any], after: dict[str, Any], clones: Path | None,
            show: bool) -> None:
    """Print the questions whose facts changed, by review verdict."""
    import bench_history_review as review_bench

    counts: dict[str, list[int]] = {}
    totals = dict.fromkeys(("drafted", "changed", "emptied", "facts before", "facts after"), 0)
    for path, review in review_bench._reviews(None):
        old, new = before.get(path.name, {}), after.get(path.name, {})
        reviewed: dict[str, dict[str, Any]] = {}
        for q in review["questions"]:
            sha = q["source_commit"]
            if sha not in old and sha not in new and clones is not None:  # now its PR's
                sha = review_bench._pull_merge(
                    clones / review["repository"].split("/")[-1], sha) or sha
            reviewed[sha] = q
        for sha in sorted(set(old) & set(new)):
            was, now = old[sha]["facts"], new[sha]["facts"]
            q = reviewed.get(sha)
            kind = "unreviewed" if q is None else \
                q["verdict"] + ("+facts" if "facts" in q["tags"] else "")
            row = counts.setdefault(kind, [0, 0])
            row[0] += 1
            totals["drafted"] += 1
            totals["facts before"] += len(was)
            totals["facts after"] += len(now)
            if was == now:
                continue
            row[1] += 1
            totals["changed"] += 1
            totals["emptied"] += bool(was) and not now
            if show:
                print(f"\n{path.name} {q['id'] if q else sha[:12]} [{kind}] "
                      f"{old[sha]['question']!r}")
                for fact in was:
                    print(f"   {'  ' if fact in now else '- '}{fact}")
                for fact in now:
                    if fact not in was:
                        print(f"   + {fact}")
                if q and q.get("edit"):
                    print(f"   review edit: {q['edit']}")
    print("\n| review verdict | drafted | facts changed |\n|---|---:|---:|")
    for kind, (n, changed) in sorted(counts.items()):
        print(f"| {kind} | {n} | {changed} |")
    print(", ".join(f"{k}: {v}" for k, v in totals.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, default=None)
    parser.add_argument("--count", type=int, default=20)
    parser.add_argument("--repos", nargs="+", default=None)
    parser.add_argument("--code", type=Path, default=None,
                        help="import evaluator/ from this tree (the old commit's)")
    parser.add_argument("--dump", type=Path, default=None)
    parser.add_argument("--compare", type=Path, nargs=2, default=None)
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    if args.code is not None:
        sys.path.insert(0, str(args.code.resolve()))
    if args.dump is not None:
        if args.clones is None:
            parser.error("--dump needs --clones")
        args.dump.write_text(json.dumps(dump(args.clones, args.count, args.repos), indent=1),
                             encoding="utf-8")
    if args.compare is not None:
        before, after = (json.loads(p.read_text(encoding="utf-8")) for p in args.compare)
        compare(before, after, args.clones, args.show)


if __name__ == "__main__":
    main()
