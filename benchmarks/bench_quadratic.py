"""Work that grew with the square of the input (issue 19 item 8), timed at 1k and 10k.

Two stages, each on synthetic input of ``n`` items, timed once per size:

* **sections**: ``parse_sections`` of ``n`` sections in separate folders (``pkg/m{i}``):
  the overlap check compared every pair.
* **by_shape**: ``by_shape`` of ``n`` scored questions that each carry their own shape
  label (a ground truth may do that): every shape scanned every row.
* **facts**: ``judge`` of a commit deleting ``n`` lines and adding ``n`` others (a module
  rewritten): which added lines are moved, not written, searched each added line through
  all the deleted text (issue 24 round 9; a patch may hold 2 MiB).

(``compare_results`` also built a set of the question ids once per question; it is not timed
here because its permutation test, linear but 10,000 resamples, takes minutes at 10k.)

To time the code before a change, point ``--code`` at a tree of the old commit (its
``evaluator/`` and ``tests/factories.py`` are imported instead of this checkout's):

    git archive f5cdb94 | tar -x -C /tmp/before
    python benchmarks/bench_quadratic.py --code /tmp/before   # before
    python benchmarks/bench_quadratic.py                      # after

Nothing here gates on time; the figures depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluator.core.commit_filters import ModuleDiff

ROOT = Path(__file__).resolve().parents[1]


def timed(work: Callable[[], object]) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def stages(n: int) -> dict[str, float]:
    from evaluator.core.commit_filters import judge
    from evaluator.core.floors import DEFAULT_POLICY
    from evaluator.core.scoring import by_shape
    from evaluator.core.sections import parse_sections
    from tests.factories import make_results

    raw = {f"s{i}": {"path": f"pkg/m{i}"} for i in range(n)}
    scored = make_results(n=100).queries
    rows = [dataclasses.replace(scored[i % len(scored)], id=f"q{i}", shape=f"shape-{i}")
            for i in range(n)]
    shapes = [q.shape for q in rows]
    return {
        "sections": timed(lambda: parse_sections(raw, base_policy=DEFAULT_POLICY)),
        "by_shape": timed(lambda: by_shape(rows, shapes)),
        "facts": timed(lambda: judge([rewritten(n)])),
    }


def rewritten(n: int) -> ModuleDiff:
    """A module whose ``n`` lines a commit replaced by ``n`` others, all surviving today:
    assignments of calls over a pool of names that share their first word (``name_17 =
    name_2051(name_940, key=3)``), so a text search meets a near-match at every line."""
    from evaluator.core.commit_filters import ModuleDiff

    def line(i: int, salt: int) -> str:
        a, b, c = (i * 7919 + salt) % 3000, (i * 104729 + salt) % 3000, (i * 31 + salt) % 3000
        return f"    name_{a} = name_{b}(name_{c}, key={(i * salt) % 1000})"

    old, new = [line(i, 1) for i in range(n)], [line(i, 2) for i in range(n)]
    before = "def f():\n" + "\n".join(old) + "\n"
    after = "def f():\n" + "\n".join(new) + "\n"
    return ModuleDiff(module="pkg/m.py", added=tuple(enumerate(new, start=2)),
                      deleted=tuple(old), before=before, after=after, today=after)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, default=ROOT,
                        help="the tree whose evaluator/ is timed (default: this checkout)")
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.code.resolve()))
    import evaluator

    print(f"code: {Path(evaluator.__file__).parent.parent}")
    sizes = [int(s) for s in args.sizes.split(",")]
    figures = {n: stages(n) for n in sizes}
    print(f"{'stage':10}" + "".join(f"{f'n={n:,}':>14}" for n in sizes))
    for stage in figures[sizes[0]]:
        print(f"{stage:10}" + "".join(f"{figures[n][stage]:>13.3f}s" for n in sizes))


if __name__ == "__main__":
    main()
