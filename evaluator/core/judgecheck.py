"""The judge's self-check on a suite: does it tell right source from wrong source here?

Definition: for every query, two contexts are scored against its gold facts —

* **right**: the full text of its modules of grade ≥ 2, best grade first (then by path);
* **wrong**: the full text of one grade-3 module of *another* query that this query grades
  0 (or leaves ungraded): the first such module of the next query in file order that has
  one, wrapping around.

``separation`` = mean score on right − mean score on wrong, over the queries that have
both (a query without a grade ≥ 2 module, or without any wrong module, is skipped and
counted in ``skipped``). Below :data:`WARN_BELOW` the faithfulness floor means little for
the suite, and the check says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from evaluator.core.groundtruth import GroundTruth, Query

WARN_BELOW = 0.5


@dataclass(frozen=True)
class CheckPair:
    """The two contexts of one query: its right modules and another query's module."""

    query: Query
    right_modules: tuple[str, ...]
    wrong_module: str
    wrong_from: str


@dataclass(frozen=True)
class CheckRow:
    query_id: str
    right: float
    wrong: float
    wrong_module: str
    wrong_from: str


@dataclass(frozen=True)
class JudgeCheck:
    """The self-check's outcome (see the module docstring)."""

    rows: tuple[CheckRow, ...]
    skipped: tuple[str, ...]
    right_mean: float | None
    wrong_mean: float | None
    separation: float | None

    @property
    def warning(self) -> str | None:
        """The warning to show, or ``None`` when the judge separates well enough."""
        if self.separation is None:
            return ("the judge self-check found no query with both a grade ≥ 2 module and "
                    "another query's grade-3 module; the faithfulness floor cannot be checked")
        if self.separation < WARN_BELOW:
            return (f"the judge separates right from wrong source by only "
                    f"{self.separation:.2f} on this suite (below {WARN_BELOW}): the "
                    "faithfulness figures and floor mean little here; rewrite the gold facts "
                    "as sentences the source supports")
        return None

    @property
    def sentence(self) -> str:
        if self.separation is None:
            return "the judge self-check had no query to check"
        return (f"the judge separates right from wrong source by {self.separation:.2f} on "
                f"this suite ({self.right_mean:.2f} on the right modules, "
                f"{self.wrong_mean:.2f} on another question's)")


def check_pairs(ground_truth: GroundTruth) -> tuple[list[CheckPair], list[str]]:
    """Each query's right modules and wrong module; the ids of the queries skipped."""
    queries = ground_truth.queries
    pairs: list[CheckPair] = []
    skipped: list[str] = []
    for i, query in enumerate(queries):
        right = tuple(sorted((m for m, g in query.grades.items() if g >= 2),
                             key=lambda m: (-query.grades[m], m)))
        wrong: tuple[str, str] | None = None
        for step in range(1, len(queries)):
            other = queries[(i + step) % len(queries)]
            found = [m for m in other.modules_with_grade(3) if query.grade(m) == 0]
            if found:
                wrong = (found[0], other.id)
                break
        if not right or wrong is None:
            skipped.append(query.id)
            continue
        pairs.append(CheckPair(query, right, wrong[0], wrong[1]))
    return pairs, skipped


def judge_check(ground_truth: GroundTruth, texts: Mapping[str, str],
                score: Callable[[Query, str], float]) -> JudgeCheck:
    """Run the self-check: ``texts`` maps module paths to their text (a module missing from
    it reads as empty), ``score`` is the judge (context → faithfulness)."""
    pairs, skipped = check_pairs(ground_truth)
    rows = []
    for pair in pairs:
        right = "\n\n".join(texts.get(m, "") for m in pair.right_modules)
        rows.append(CheckRow(pair.query.id, score(pair.query, right),
                             score(pair.query, texts.get(pair.wrong_module, "")),
                             pair.wrong_module, pair.wrong_from))
    return summarise(rows, skipped)


def summarise(rows: Sequence[CheckRow], skipped: Sequence[str]) -> JudgeCheck:
    if not rows:
        return JudgeCheck((), tuple(skipped), None, None, None)
    right = math.fsum(r.right for r in rows) / len(rows)
    wrong = math.fsum(r.wrong for r in rows) / len(rows)
    return JudgeCheck(tuple(rows), tuple(skipped), right, wrong, right - wrong)


def modules_needed(ground_truth: GroundTruth) -> tuple[str, ...]:
    """Every module the self-check reads (to load their text once)."""
    pairs, _ = check_pairs(ground_truth)
    return tuple(sorted({m for p in pairs for m in (*p.right_modules, p.wrong_module)}))
