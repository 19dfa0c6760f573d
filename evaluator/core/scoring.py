"""Score what the index returned against the ground truth: per query, per shape, overall.

Every value comes from the registry of measures (:mod:`evaluator.core.measures`). The
headline ``mrr`` and ``hit_rate`` follow the N-15 runner, which cuts rankings at
``HEADLINE_K`` = 5: ``mrr`` is the mean RR@5 and ``hit_rate`` the mean success@5. The cut 5
is always computed, whatever k values are configured, so the default floors always apply.

Means skip ``None`` (a column that was not computed, such as the embedding columns without
``--embed``); a mean over nothing is ``None``, never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evaluator.core.giveaway import Overlap
from evaluator.core.groundtruth import GroundTruth, Query
from evaluator.core.judge import FactAudit
from evaluator.core.measures import (
    HEADLINE_K,
    MeasureInput,
    compute_all,
    effective_k,
    judge_columns,
    metric_names,
)
from evaluator.core.metrics import Gain, dedupe, first_rank

DEFAULT_K: tuple[int, ...] = (1, 3, 5, 10)
FAITHFULNESS_COLUMNS: tuple[str, ...] = (
    "faithfulness", "fact_recall", "contradiction",
    "context_precision", "context_recall", "answer_relevance",
)
#: Every measure judged against the gold facts: not computed (``None``) for a
#: retrieval-only question (no gold facts), so means and floors leave it out.
#: These are the judge's columns (the registry's ``judge_column`` measures).
FACT_METRICS: frozenset[str] = frozenset(judge_columns())
__all__ = ["DEFAULT_K", "HEADLINE_K", "effective_k", "metric_names"]


@dataclass(frozen=True)
class Faithfulness:
    """How well the retrieved context supports the gold facts (:mod:`evaluator.core.judge`)."""

    fact_recall: float
    contradiction: float
    faithfulness: float
    facts_found: tuple[str, ...] = ()
    facts_missing: tuple[str, ...] = ()
    context_precision: float | None = None
    context_recall: float | None = None
    answer_relevance: float | None = None
    #: Per gold fact, how it was judged and what supported it (empty in results written
    #: before the audit existed).
    facts: tuple[FactAudit, ...] = ()


@dataclass(frozen=True)
class Retrieval:
    """What the index returned for one question (produced by the NeuralMind adapter)."""

    query_id: str
    ranked_modules: tuple[str, ...]
    context_tokens: int
    token_reduction: float | None
    latency_ms: float
    faithfulness: Faithfulness
    # Further values measured by an index adapter, by measure name (see ``MEASURES``).
    columns: Mapping[str, float | None] = field(default_factory=dict)
    # The system's ranked entries outside the module universe, per reason (filtered out).
    filtered_out: Mapping[str, int] = field(default_factory=dict)
    # The ranking stopped short of the run's depth (:mod:`evaluator.core.depth`).
    short_of_depth: bool = False


@dataclass(frozen=True)
class ScoringOptions:
    k_values: tuple[int, ...] = DEFAULT_K
    gain: Gain = Gain.EXPONENTIAL
    threshold: int = 1


@dataclass(frozen=True)
class MissedModule:
    """A grade-3 module that is not in the top ``HEADLINE_K``; ``rank`` None = not retrieved."""

    module: str
    rank: int | None


@dataclass(frozen=True)
class Diagnostics:
    """Why a query is weak, in terms a person can act on."""

    no_relevant: bool
    missed_top: tuple[MissedModule, ...]
    missing_facts: tuple[str, ...]

    @property
    def flags(self) -> tuple[str, ...]:
        out = []
        if self.no_relevant:
            out.append("no relevant module graded")
        if self.missed_top:
            out.append(f"{len(self.missed_top)} grade-3 module(s) outside the top {HEADLINE_K}")
        if self.missing_facts:
            out.append(f"{len(self.missing_facts)} gold fact(s) missing from the context")
        return tuple(out)


@dataclass(frozen=True)
class QueryResult:
    id: str
    question: str
    shape: str
    ranked_modules: tuple[str, ...]
    expected: Mapping[int, tuple[str, ...]]
    metrics: Mapping[str, float | None]
    faithfulness: Faithfulness
    diagnostics: Diagnostics
    latency_ms: float
    overlap: Overlap | None = None   # the question against its answer's names (give-away)
    # The system's ranked entries outside the module universe, per reason (filtered out).
    filtered_out: Mapping[str, int] = field(default_factory=dict)
    # The ranking stopped short of the run's depth (:mod:`evaluator.core.depth`).
    short_of_depth: bool = False


@dataclass(frozen=True)
class Aggregate:
    n: int
    metrics: Mapping[str, float | None] = field(default_factory=dict)


def mean(values: Iterable[float | None]) -> float | None:
    """Mean of the values that are not ``None``; ``None`` when there are none."""
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def score_query(query: Query, retrieval: Retrieval, options: ScoringOptions) -> QueryResult:
    """Every metric of one query, plus the diagnostics that explain a weak one."""
    ranking = dedupe(retrieval.ranked_modules)
    grades = query.grades
    th = options.threshold
    faith = retrieval.faithfulness
    columns: dict[str, float | None] = {c: getattr(faith, c) for c in FAITHFULNESS_COLUMNS}
    columns |= {"context_tokens": float(retrieval.context_tokens),
                "token_reduction": retrieval.token_reduction, **retrieval.columns}
    if query.retrieval_only:
        columns = {c: None if c in FACT_METRICS else v for c, v in columns.items()}
    metrics = compute_all(MeasureInput(ranking, grades, HEADLINE_K, th, options.gain, columns),
                          effective_k(options.k_values))
    top = set(ranking[:HEADLINE_K])
    missed = tuple(MissedModule(m, first_rank(ranking, m))
                   for m in query.modules_with_grade(3) if m not in top)
    diagnostics = Diagnostics(
        no_relevant=not any(g >= th for g in grades.values()),
        missed_top=missed,
        missing_facts=faith.facts_missing,
    )
    expected = {g: query.modules_with_grade(g) for g in (3, 2, 1) if query.modules_with_grade(g)}
    return QueryResult(
        id=query.id, question=query.question, shape=query.shape, ranked_modules=ranking,
        expected=expected, metrics=metrics, faithfulness=faith, diagnostics=diagnostics,
        latency_ms=retrieval.latency_ms, filtered_out=dict(retrieval.filtered_out),
        short_of_depth=retrieval.short_of_depth,
    )


def retrieval_only(row: QueryResult) -> bool:
    """Whether ``row`` scores a retrieval-only question (no gold facts, so no
    faithfulness)."""
    return row.metrics.get("faithfulness") is None


def aggregate(rows: Sequence[QueryResult]) -> Aggregate:
    """Mean of every metric over ``rows`` (``None`` skipped)."""
    names: list[str] = []
    for row in rows:
        names += [n for n in row.metrics if n not in names]
    return Aggregate(n=len(rows), metrics={n: mean(r.metrics.get(n) for r in rows) for n in names})


def by_shape(rows: Sequence[QueryResult], shapes: Sequence[str]) -> dict[str, Aggregate]:
    """One aggregate per shape, in the order given (rows grouped in one pass: a file may
    give every question its own shape)."""
    grouped: dict[str, list[QueryResult]] = {s: [] for s in shapes}
    for row in rows:
        if row.shape in grouped:
            grouped[row.shape].append(row)
    return {s: aggregate(group) for s, group in grouped.items()}


def score_all(ground_truth: GroundTruth, retrievals: Mapping[str, Retrieval],
              options: ScoringOptions) -> tuple[QueryResult, ...]:
    """Score every query of the ground truth; a query the index was not asked is a bug."""
    missing = [q.id for q in ground_truth.queries if q.id not in retrievals]
    if missing:
        raise KeyError(f"no retrieval for queries: {', '.join(missing)}")
    return tuple(score_query(q, retrievals[q.id], options) for q in ground_truth.queries)
