"""Totals of the hostile-input corpus (issue 9) from tally files, as figures.

Produce a tally with ``CORPUS_TALLY=FILE pytest tests/hostile`` (one JSON line per case);
to measure the code before a change, copy ``tests/hostile`` into a worktree of the old commit
and run it there with ``CORPUS_ORIGINAL=1`` (no ``--comment-timeout`` flag, shorter hang
limit). The recorded runs are in ``benchmarks/corpus_totals/``. ``unreadable`` (issue 19)
counts the cases that left an output another uid cannot read (checked when the tests run as
root); ``before-i19-input.jsonl`` is branch i19-input's corpus run against main f5cdb94's
code, its YAML alias cases each in a process of their own, killed (and tallied as a hang)
when still busy after 120 s.

    python benchmarks/corpus_tally.py benchmarks/corpus_totals/before-start-round2.jsonl
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

KEYS = ("hang", "traceback", "leak", "wrong_code", "lost_results", "outside_writes",
        "checkout_changed", "unreadable", "message", "extra")


def main(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in Path(p).read_text().splitlines()
            if line.strip()]
    ran = [r for r in rows if not r.get("skipped")]
    print(f"cases {len(rows)}  run {len(ran)}  not run {len(rows) - len(ran)}")
    for key in KEYS:
        print(f"{key:17} {sum(1 for r in ran if r.get(key))}")
    print(f"{'failing cases':17} {sum(1 for r in ran if any(r.get(k) for k in KEYS))}")


if __name__ == "__main__":
    main(sys.argv[1:])
