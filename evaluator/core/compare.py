"""Compare a head evaluation with a baseline: paired deltas, significance, query changes.

Rules:

* Queries are matched by id. Deltas of aggregates are *paired*: the mean over the queries
  present on both sides, head minus base. Queries only in the head are listed as added,
  only in the baseline as removed; neither is silently dropped.
* A query is *newly failing* when it had a hit in the top 5 (``hit_rate`` = 1) in the
  baseline and has none now; *newly passing* the other way round. *Movers* are the
  queries whose ``ndcg@5`` moved most (|Δ| > 0), biggest first.
* Significance (the primary metric, ``ndcg@5`` by default): a two-sided paired
  randomization test and a bootstrap interval (:mod:`evaluator.core.stats`); a delta is
  *significant* only when p < alpha and |Δ| ≥ the minimum effect, else *not significant*.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from evaluator.core.floors import Violation
from evaluator.core.measures import PRIMARY_METRIC, lower_is_better
from evaluator.core.moves import QuestionMove, question_moves, tally
from evaluator.core.results import Results
from evaluator.core.scoring import mean
from evaluator.core.stats import Comparison, compare, minimum_detectable_effect, paired_deltas

MOVER_METRIC = PRIMARY_METRIC
HIT_METRIC = "hit_rate"


@dataclass(frozen=True)
class MetricDelta:
    metric: str
    base: float | None
    head: float | None

    @property
    def delta(self) -> float | None:
        return None if self.base is None or self.head is None else self.head - self.base

    @property
    def improved(self) -> bool | None:
        """True if better, False if worse, None if unchanged or not computed."""
        d = self.delta
        if d is None or abs(d) < 1e-12:
            return None
        return (d < 0) if lower_is_better(self.metric) else (d > 0)


@dataclass(frozen=True)
class QueryChange:
    id: str
    question: str
    shape: str
    base: float | None
    head: float | None
    kind: str  # "newly failing" | "newly passing" | "moved"

    @property
    def delta(self) -> float:
        return (self.head or 0.0) - (self.base or 0.0)


@dataclass(frozen=True)
class BaselineComparison:
    source: str
    overall: Mapping[str, MetricDelta]
    shapes: Mapping[str, Mapping[str, MetricDelta]]
    newly_failing: tuple[QueryChange, ...]
    newly_passing: tuple[QueryChange, ...]
    movers: tuple[QueryChange, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    primary: Comparison
    notes: tuple[str, ...] = ()
    detectable: float | None = None  # smallest primary-metric change the suite can detect
    worse: int = 0  # paired queries whose primary metric went down
    better: int = 0  # ... and up
    moves: tuple[QuestionMove, ...] = ()  # every paired question, worst first (core.moves)
    alpha: float = 0.05
    # With sections on both sides: each section's own comparison (see compare_sections).
    sections: Mapping[str, BaselineComparison] = field(default_factory=dict)


def _paired(metric: str, base: Results, head: Results, ids: Sequence[str]) -> MetricDelta:
    b = [base.query(i) for i in ids]
    h = [head.query(i) for i in ids]
    return MetricDelta(metric, mean(r.metrics.get(metric) for r in b if r is not None),
                       mean(r.metrics.get(metric) for r in h if r is not None))


def _rules(universe: Mapping[str, object]) -> tuple[object, object]:
    return universe.get("include"), universe.get("exclude")


def universe_notes(base: Results, head: Results) -> list[str]:
    """The module universe is a setting both sides must share: a ranking filtered to other
    modules gives other numbers. Says so when they differ (or the baseline predates it)."""
    if not head.run.universe:
        return []
    if not base.run.universe:
        return ["The baseline records no module universe (it was scored over every file "
                "by an older retrieval-eval), so its numbers are not comparable: re-run it."]
    if _rules(base.run.universe) != _rules(head.run.universe):
        return ["The baseline was scored over another module universe (include/exclude "
                "differ), so its numbers are not comparable: re-run it with these settings."]
    return []


def _changes(base: Results, head: Results, common: Sequence[str]
             ) -> tuple[list[QueryChange], list[QueryChange], list[QueryChange]]:
    """Newly failing, newly passing and moved queries (biggest move first)."""
    failing, passing, moved = [], [], []
    for qid in common:
        b, h = base.query(qid), head.query(qid)
        assert b is not None
        assert h is not None
        bh, hh = b.metrics.get(HIT_METRIC), h.metrics.get(HIT_METRIC)
        bn, hn = b.metrics.get(MOVER_METRIC), h.metrics.get(MOVER_METRIC)
        if bh == 1.0 and hh == 0.0:
            failing.append(QueryChange(qid, h.question, h.shape, bn, hn, "newly failing"))
        elif bh == 0.0 and hh == 1.0:
            passing.append(QueryChange(qid, h.question, h.shape, bn, hn, "newly passing"))
        elif bn is not None and hn is not None and abs(hn - bn) > 1e-12:
            moved.append(QueryChange(qid, h.question, h.shape, bn, hn, "moved"))
    moved.sort(key=lambda c: (-abs(c.delta), c.id))
    return failing, passing, moved


def compare_results(
    base: Results,
    head: Results,
    *,
    source: str,
    metrics: Sequence[str],
    primary_metric: str = PRIMARY_METRIC,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    movers: int = 5,
    notes: Sequence[str] = (),
) -> BaselineComparison:
    """Everything the report needs to show what the change did, relative to ``base``."""
    base_ids = [q.id for q in base.queries]
    head_ids = [q.id for q in head.queries]
    in_base, in_head = set(base_ids), set(head_ids)  # built once: 10,000 ids each side
    common = [i for i in head_ids if i in in_base]
    added = tuple(i for i in head_ids if i not in in_base)
    removed = tuple(i for i in base_ids if i not in in_head)
    overall = {m: _paired(m, base, head, common) for m in metrics}
    shapes: dict[str, dict[str, MetricDelta]] = {}
    for shape in head.shapes:
        ids = [i for i in common if (q := head.query(i)) is not None and q.shape == shape]
        shapes[shape] = {m: _paired(m, base, head, ids) for m in metrics}
    failing, passing, moved = _changes(base, head, common)
    primary = compare(
        primary_metric,
        {i: q.metrics.get(primary_metric) for i in common if (q := base.query(i)) is not None},
        {i: q.metrics.get(primary_metric) for i in common if (q := head.query(i)) is not None},
        alpha=alpha, min_effect=min_effect,
    )
    _ids, deltas = paired_deltas(
        {i: q.metrics.get(primary_metric) for i in common if (q := base.query(i)) is not None},
        {i: q.metrics.get(primary_metric) for i in common if (q := head.query(i)) is not None})
    moves = question_moves(base, head, metric=primary_metric)
    counts = tally(moves)  # worse/better by the metric's direction (lower-is-better too)
    detectable = (minimum_detectable_effect(statistics.stdev(deltas), len(deltas), alpha=alpha)
                  if len(deltas) >= 2 and statistics.stdev(deltas) > 0 else None)
    return BaselineComparison(
        source=source, overall=overall, shapes=shapes, newly_failing=tuple(failing),
        newly_passing=tuple(passing), movers=tuple(moved[:movers]), added=added,
        removed=removed, primary=primary,
        notes=_notes([*notes, *universe_notes(base, head)], base, head, common=len(common),
                     added=added, removed=removed),
        detectable=detectable, moves=moves, alpha=alpha, worse=counts.worse,
        better=counts.better,
    )


def _notes(notes: Sequence[str], base: Results, head: Results, *, common: int,
           added: Sequence[str], removed: Sequence[str]) -> tuple[str, ...]:
    out = list(notes)
    if added or removed:
        out.append(f"deltas are paired over the {common} queries on both sides; "
                   f"{len(added)} added, {len(removed)} removed")
    if base.run.queries_sha256 != head.run.queries_sha256 and not (added or removed):
        out.append("the baseline was evaluated with a different version of the ground truth "
                   "file")
    return tuple(out)


def compare_sections(
    base: Results,
    head: Results,
    pooled: BaselineComparison,
    *,
    source: str,
    metrics: Sequence[str],
    primary_metric: str,
    alpha: float,
    min_effect: float,
) -> BaselineComparison:
    """``pooled`` (the comparison of the pooled results) with each section's own comparison
    added, for the sections present on both sides; the options as for
    :func:`compare_results`."""
    sections = {name: compare_results(base.sections[name], section, source=source,
                                      metrics=metrics, primary_metric=primary_metric,
                                      alpha=alpha, min_effect=min_effect)
                for name, section in head.sections.items() if name in base.sections}
    return replace(pooled, sections=sections)


def check_gates(
    comparison: BaselineComparison,
    base: Results,
    head: Results,
    *,
    max_drop: Mapping[str, float],
    significant_only: bool = False,
    new_failures: bool = False,
    alpha: float = 0.05,
    min_effect: float = 0.02,
) -> tuple[Violation, ...]:
    """Regression gates against the baseline.

    * ``max_drop``: a metric may get worse by at most the given amount (paired means; for
      a measure whose direction is "lower is better", worse means higher). With
      ``significant_only`` a drop counts only when the paired randomization test calls it
      significant.
    * ``new_failures``: no query that had a hit in the top 5 in the baseline may lose it.
    """
    out: list[Violation] = []
    common = [q.id for q in head.queries if base.query(q.id) is not None]
    for metric, allowed in max_drop.items():
        delta = comparison.overall.get(metric) or _paired(metric, base, head, common)
        if delta.delta is None or delta.base is None:
            continue
        worse = delta.delta if lower_is_better(metric) else -delta.delta
        if worse <= allowed + 1e-12:
            continue
        detail = ""
        if significant_only:
            test = compare(
                metric,
                {i: q.metrics.get(metric) for i in common if (q := base.query(i)) is not None},
                {i: q.metrics.get(metric) for i in common if (q := head.query(i)) is not None},
                alpha=alpha, min_effect=min_effect)
            if not test.significant:
                continue
            detail = f", significant: p = {test.p_value:.3f}"
        out.append(Violation("regression", metric, delta.head,
                             f"may worsen by at most {allowed:g} from the baseline "
                             f"{delta.base:.4f} (worsened by {worse:.4f}{detail})", kind="gate"))
    if new_failures:
        for change in comparison.newly_failing:
            out.append(Violation(f"query {change.id}", HIT_METRIC, 0.0,
                                 "newly failing: it had a hit in the top 5 in the baseline",
                                 kind="gate"))
    return tuple(out)
