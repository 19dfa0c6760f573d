"""Every question scored on both sides, as a reviewer reads it: its primary metric before →
after and the rank of its *defining module* (its highest-grade module) before → after, the
modules that entered or left the top ``k``, ordered **worst first** (the biggest drop first,
then smaller drops, then improvements biggest first, then unchanged), and their tally.

The comparison (:mod:`evaluator.core.compare`) carries these moves; the verdict
(:mod:`evaluator.core.verdict`) words them. Both build on this module, so neither imports
the other for its types.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from evaluator.core.measures import PRIMARY_METRIC, lower_is_better
from evaluator.core.results import Results
from evaluator.core.scoring import QueryResult

Direction = Literal["worse", "better", "unchanged"]
TOP_K = 5
_EPS = 1e-12


@dataclass(frozen=True)
class QuestionMove:
    """One question on both sides: the primary metric and its defining module's rank.

    ``rank_before`` / ``rank_after`` are 1-based ranks in the full retrieved list, ``None``
    when the module was not retrieved at all. ``entered`` / ``left``: modules that entered
    or left the top ``k`` (``k`` = 5), each in its rank order.
    """

    id: str
    question: str
    shape: str
    metric: str
    before: float | None
    after: float | None
    module: str | None
    grade: int
    rank_before: int | None
    rank_after: int | None
    entered: tuple[str, ...]
    left: tuple[str, ...]

    @property
    def delta(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before

    @property
    def direction(self) -> Direction:
        d = self.delta
        if d is None or abs(d) <= _EPS:
            return "unchanged"
        better = d < 0 if lower_is_better(self.metric) else d > 0
        return "better" if better else "worse"

    @property
    def changed(self) -> bool:
        return self.direction != "unchanged"


def _rank(ranked: Sequence[str], module: str | None) -> int | None:
    if module is None:
        return None
    try:
        return ranked.index(module) + 1
    except ValueError:
        return None


def defining_module(row: QueryResult, ranked: Sequence[str] = ()) -> tuple[str | None, int]:
    """The question's highest-grade module and its grade; ties go to the one ranked best in
    ``ranked`` (then by name). ``(None, 0)`` when nothing is graded relevant."""
    graded = [(g, m) for g, ms in row.expected.items() if g >= 1 for m in ms]
    if not graded:
        return None, 0
    top = max(g for g, _ in graded)
    candidates = sorted(m for g, m in graded if g == top)
    big = len(ranked) + 1
    best = min(candidates, key=lambda m: (_rank(ranked, m) or big, m))
    return best, top


def _order_key(move: QuestionMove) -> tuple[int, float, str]:
    d = move.delta or 0.0
    worse_by = d if lower_is_better(move.metric) else -d
    group = {"worse": 0, "better": 1, "unchanged": 2}[move.direction]
    # worse: biggest drop first; better: biggest gain first; unchanged: by id.
    magnitude = -abs(worse_by) if group < 2 else 0.0
    return group, magnitude, move.id


def question_moves(base: Results, head: Results, *, metric: str = PRIMARY_METRIC,
                   top: int = TOP_K) -> tuple[QuestionMove, ...]:
    """Every question present on both sides, worst first (see the module docstring).

    Questions are matched by id; the head's question (text, shape, grades) is used for both
    sides, as the comparison does.
    """
    moves = []
    for h in head.queries:
        b = base.query(h.id)
        if b is None:
            continue
        module, grade = defining_module(h, b.ranked_modules)
        before_top, after_top = b.ranked_modules[:top], h.ranked_modules[:top]
        moves.append(QuestionMove(
            id=h.id, question=h.question, shape=h.shape, metric=metric,
            before=b.metrics.get(metric), after=h.metrics.get(metric),
            module=module, grade=grade,
            rank_before=_rank(b.ranked_modules, module),
            rank_after=_rank(h.ranked_modules, module),
            entered=tuple(m for m in after_top if m not in before_top),
            left=tuple(m for m in before_top if m not in after_top),
        ))
    return tuple(sorted(moves, key=_order_key))


@dataclass(frozen=True)
class Tally:
    worse: int
    better: int
    unchanged: int

    @property
    def changed(self) -> int:
        return self.worse + self.better


def tally(moves: Iterable[QuestionMove]) -> Tally:
    directions = [m.direction for m in moves]
    return Tally(directions.count("worse"), directions.count("better"),
                 directions.count("unchanged"))
