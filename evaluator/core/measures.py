"""The registry of measures: every number the evaluator reports is one entry of ``MEASURES``.

Each :class:`Measure` declares its name, label, whether it is computed at every cut-off k,
its direction (higher or lower is better), its definition and citation, where it is shown
(the report's headline table, the per-shape table, a step output) and the function that
computes it for one query. Scoring (:mod:`evaluator.core.scoring`), floor and option
validation, the comparison's direction of "better", the report's labels and columns, the
Action's step outputs and the table of measures in docs/measures.md all read this
registry, so adding a measure is one entry here (and, when its value comes from a new
source, the field that carries it on :class:`Retrieval`).

Shared rules of the ranked measures are in :mod:`evaluator.core.metrics`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from evaluator.core.metrics import (
    Gain,
    accuracy_at_k,
    hit_rate_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

HEADLINE_K = 5
Direction = Literal["higher", "lower"]
Unit = Literal["score", "tokens", "times"]
Shown = Literal["always", "computed", "never"]


@dataclass(frozen=True)
class MeasureInput:
    """What one query's measures are computed from."""

    ranking: tuple[str, ...]  # deduplicated module paths, best first
    grades: Mapping[str, int]
    k: int  # the cut-off (``HEADLINE_K`` for measures that are not per k)
    threshold: int  # grade from which a module counts as relevant
    gain: Gain
    columns: Mapping[str, float | None]  # values measured by the index adapter, by name


MeasureFn = Callable[[MeasureInput], float | None]


@dataclass(frozen=True)
class Measure:
    """One reported measure.

    ``at_k``: computed at every configured cut-off as ``name@k`` (``label`` takes ``{k}``);
    ``bare``: its headline value (k = 5, the N-15 runner's cut) is also reported under the
    bare name (``mrr``, ``hit_rate``), one row for both. ``report``: shown in the headline
    table ``always`` (when present), only when ``computed`` (not ``None``), or ``never``.
    ``shape_column``: a column of the per-shape table. ``system_column``: a column of the
    ``--systems`` comparison table (at k = 5).
    ``output``: the Action's step output carrying the overall value (at k = 5).
    ``tracked``: kept in the history file (the default branch's trend). ``judge_column``: a
    column of the faithfulness judge (the ``judge`` command's report). ``detail``: the name
    each question's summary line shows it under (empty: not shown). ``primary``: the
    default primary metric (exactly one measure).
    """

    name: str
    label: str
    direction: Direction
    definition: str
    citation: str
    compute: MeasureFn
    at_k: bool = False
    unit: Unit = "score"
    report: Shown = "never"
    shape_column: bool = False
    output: str | None = None
    source: Literal["ranking", "index"] = "ranking"
    system_column: bool = False
    bare: bool = False
    tracked: bool = False
    judge_column: bool = False
    detail: str = ""
    primary: bool = False

    def names(self, ks: Iterable[int]) -> tuple[str, ...]:
        return tuple(f"{self.name}@{k}" for k in ks) if self.at_k else (self.name,)

    @property
    def headline_name(self) -> str:
        """The name of the value reported in tables and outputs (k = ``HEADLINE_K``)."""
        return f"{self.name}@{HEADLINE_K}" if self.at_k and not self.bare else self.name

    def label_for(self, k: int = HEADLINE_K) -> str:
        return self.label.format(k=k)


def _column(name: str) -> MeasureFn:
    return lambda x: x.columns.get(name)


def _index_measure(name: str, label: str, direction: Direction, definition: str,
                   citation: str, *, unit: Unit = "score", report: Shown = "never",
                   shape_column: bool = False, output: str | None = None,
                   system_column: bool = False, tracked: bool = False,
                   judge_column: bool = True, detail: str = "") -> Measure:
    """A measure whose value the index adapter measures (``Retrieval.columns``); a column
    of the judge unless ``judge_column`` is false."""
    return Measure(name, label, direction, definition, citation, _column(name), unit=unit,
                   report=report, shape_column=shape_column, output=output, source="index",
                   system_column=system_column, tracked=tracked, judge_column=judge_column,
                   detail=detail)


MEASURES: tuple[Measure, ...] = (
    Measure("recall", "Recall@{k}", "higher",
            "relevant modules in the top k / all relevant modules of the query",
            "trec_eval recall.k",
            lambda x: recall_at_k(x.ranking, x.grades, x.k, threshold=x.threshold),
            at_k=True, report="always", shape_column=True, output="recall",
            system_column=True, tracked=True, detail="recall@5"),
    Measure("precision", "Precision@{k}", "higher",
            "relevant in the top k / k, even when fewer than k were returned",
            "trec_eval P.k",
            lambda x: precision_at_k(x.ranking, x.grades, x.k, threshold=x.threshold),
            at_k=True, report="always", system_column=True, tracked=True),
    Measure("mrr", "MRR@{k}", "higher",
            "RR@k: 1 / rank of the first relevant module in the top k; the mean over "
            "queries. `mrr` (no `@k`) is `mrr@5`, the N-15 runner's cut",
            "trec_eval recip_rank, cut at k",
            lambda x: reciprocal_rank(x.ranking, x.grades, x.k, threshold=x.threshold),
            at_k=True, bare=True, report="always", shape_column=True, output="mrr",
            system_column=True, tracked=True),
    Measure("ndcg", "nDCG@{k}", "higher",
            "DCG@k / IDCG@k; gain `2^rel − 1` (default) or `rel`; IDCG from every module "
            "graded > 0; 0 when IDCG is 0",
            "trec_eval ndcg_cut.k; Järvelin & Kekäläinen, TOIS 2002",
            lambda x: ndcg_at_k(x.ranking, x.grades, x.k, gain=x.gain),
            at_k=True, report="always", shape_column=True, output="ndcg",
            system_column=True, tracked=True, detail="nDCG@5", primary=True),
    Measure("hit_rate", "Hit rate@{k}", "higher",
            "success@k: 1 if a relevant module is in the top k; the mean is the share of "
            "queries with one. `hit_rate` (no `@k`) is `hit_rate@5`",
            "trec_eval success.k",
            lambda x: hit_rate_at_k(x.ranking, x.grades, x.k, threshold=x.threshold),
            at_k=True, bare=True, report="always", shape_column=True, output="hit-rate",
            system_column=True, tracked=True),
    Measure("acc", "Acc@{k}", "higher",
            "1 if every module graded ≥ 2 (needed to answer; ≥ the threshold when it is "
            "higher) is in the top k, else 0; 0 when none is graded ≥ 2. The mean is the "
            "share of questions whose whole needed context is retrieved",
            "Agentless (Xia et al. 2024), LocAgent (Chen et al. 2025): Acc@k; = 1 iff "
            "trec_eval recall.k at relevance_level 2 is 1",
            lambda x: accuracy_at_k(x.ranking, x.grades, x.k, threshold=x.threshold),
            at_k=True, system_column=True),
    _index_measure("faithfulness", "Faithfulness", "higher",
                   "share of gold facts the retrieved context supports: found in one stretch "
                   "of at most 10 lines (≥ 0.7 of the fact's stemmed, identifier-split terms, "
                   "its names, numbers, quoted strings and quantities exactly, prose in the "
                   "fact's order, the fact's own polarity; or, for a prose fact with the "
                   "run's model, every key term there and MiniLM cosine ≥ 0.38) and not "
                   "contradicted (see docs/judge.md)",
                   "evaluator.core.judge",
                   report="always", shape_column=True, output="faithfulness",
                   system_column=True, tracked=True, detail="faithfulness"),
    _index_measure("fact_recall", "Fact recall", "higher",
                   "share of gold facts found in the retrieved context (by terms or by "
                   "similarity)", "evaluator.core.judge"),
    _index_measure("contradiction", "Contradiction", "lower",
                   "share of gold facts whose every fitting stretch has the opposite polarity "
                   "(a prose negation cue near a fact term where the fact has none, or none "
                   "where the fact is negated)",
                   "evaluator.core.judge", report="always"),
    _index_measure("faithfulness_n15", "Faithfulness (N-15)", "higher",
                   "NeuralMind's judge: `fact_recall_n15 × (1 − contradiction_n15)`, kept "
                   "comparable with the N-15 runner", "neuralmind.ragas", report="computed"),
    _index_measure("fact_recall_n15", "Fact recall (N-15)", "higher",
                   "share of gold facts whose every token occurs in the context as a substring",
                   "neuralmind.ragas"),
    _index_measure("contradiction_n15", "Contradiction (N-15)", "lower",
                   "NeuralMind's negation-flip / exclusive-choice signal", "neuralmind.ragas"),
    _index_measure("faithfulness_embed", "Faithfulness (judge or MiniLM)", "higher",
                   "with `--embed`: share of gold facts found by the judge or at cosine ≥ 0.5 "
                   "with a context segment, not contradicted; `n/a` otherwise",
                   "evaluator.judging", report="computed"),
    _index_measure("context_precision", "Context precision", "higher",
                   "with `--embed`: mean over the retrieved documents of the share of gold "
                   "facts a document supports (a segment at cosine ≥ 0.5); `n/a` otherwise",
                   "evaluator.judging", report="computed"),
    _index_measure("context_recall", "Context recall", "higher",
                   "with `--embed`: share of gold facts with a context segment at cosine ≥ 0.5 "
                   "(the context segmented, never truncated); `n/a` otherwise — means skip it, "
                   "never count it as 0", "evaluator.judging", report="computed"),
    _index_measure("answer_relevance", "Answer relevance", "higher",
                   "no longer computed (always `n/a`): no answer is generated, and the "
                   "context–question cosine did not tell right from wrong context",
                   "neuralmind.ragas (dropped)", report="computed"),
    _index_measure("context_tokens", "Context tokens", "lower",
                   "tokens of the context NeuralMind returned", "NeuralMind query()",
                   unit="tokens", report="always", system_column=True, judge_column=False),
    _index_measure("token_reduction", "Token reduction", "higher",
                   "NeuralMind's reported reduction against the whole repository",
                   "NeuralMind query()", unit="times", judge_column=False),
)


def effective_k(k_values: Iterable[int]) -> tuple[int, ...]:
    """The configured k values plus the headline cut, sorted, each once."""
    ks = set(k_values) | {HEADLINE_K}
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            raise ValueError(f"k must be a positive integer, got {k!r}")
    return tuple(sorted(ks))


def metric_names(k_values: Iterable[int]) -> tuple[str, ...]:
    """Every metric a result row carries: the ranked measures' headline values first, then
    every ranked measure at every k, then the measures of the index adapter."""
    ks = effective_k(k_values)
    ranked = [m for m in MEASURES if m.source == "ranking"]
    names = [m.headline_name for m in ranked]
    names += [n for m in ranked for n in m.names(ks)]
    names += [n for m in MEASURES if m.source == "index" for n in m.names(ks)]
    return tuple(dict.fromkeys(names))


def measure_of(metric: str) -> Measure | None:
    """The registry entry behind a metric name (``ndcg@10`` → ``ndcg``), if any."""
    base, _, k = metric.partition("@")
    for m in MEASURES:
        if m.name == base and (m.at_k if k else m.headline_name == base):
            return m
    return None


def lower_is_better(metric: str) -> bool:
    m = measure_of(metric)
    return m is not None and m.direction == "lower"


def label(metric: str) -> str:
    """``ndcg@10`` → ``nDCG@10``; unknown names stay as they are."""
    m = measure_of(metric)
    if m is None:
        return metric
    _, _, k = metric.partition("@")
    return m.label_for(int(k)) if k.isdigit() else m.label_for()


def unit(metric: str) -> Unit:
    m = measure_of(metric)
    return m.unit if m is not None else "score"


def headline() -> tuple[str, ...]:
    """The headline table's rows shown whenever present."""
    return tuple(m.headline_name for m in MEASURES if m.report == "always")


def when_computed() -> tuple[str, ...]:
    """Rows shown only when computed (the embedding columns)."""
    return tuple(m.headline_name for m in MEASURES if m.report == "computed")


def compared() -> tuple[str, ...]:
    """Every measure a comparison pairs (its base shown wherever its value is)."""
    return tuple(dict.fromkeys([*headline(), *shape_columns(), *when_computed()]))


def shape_columns() -> tuple[str, ...]:
    return tuple(m.headline_name for m in MEASURES if m.shape_column)


def system_columns() -> tuple[str, ...]:
    """The columns of the ``--systems`` comparison table."""
    return tuple(m.headline_name for m in MEASURES if m.system_column)


def tracked() -> tuple[str, ...]:
    """The metrics the history file keeps (the default branch's trend)."""
    return tuple(m.headline_name for m in MEASURES if m.tracked)


def judge_columns() -> tuple[str, ...]:
    """The faithfulness judge's columns, in registry order."""
    return tuple(m.name for m in MEASURES if m.judge_column)


def detail_line() -> tuple[tuple[str, str], ...]:
    """(metric, shown name) of each measure in a question's summary line: the primary
    metric first, then registry order."""
    shown = sorted((m for m in MEASURES if m.detail), key=lambda m: not m.primary)
    return tuple((m.headline_name, m.detail) for m in shown)


def primary_metric() -> str:
    """The default primary metric: the one measure flagged ``primary``."""
    flagged = [m.headline_name for m in MEASURES if m.primary]
    if len(flagged) != 1:
        raise ValueError(f"exactly one measure must be primary, found {flagged}")
    return flagged[0]


def outputs() -> dict[str, Measure]:
    """Step output name → measure (its overall value at k = 5)."""
    return {m.output: m for m in MEASURES if m.output}


def compute_all(x: MeasureInput, ks: Iterable[int]) -> dict[str, float | None]:
    """Every measure of one query, in registry order."""
    out: dict[str, float | None] = {}
    for m in MEASURES:
        if m.at_k:
            at = {k: m.compute(MeasureInput(x.ranking, x.grades, k, x.threshold, x.gain,
                                            x.columns)) for k in {*ks, HEADLINE_K}}
            if m.bare:
                out[m.name] = at[HEADLINE_K]
            out |= {f"{m.name}@{k}": at[k] for k in ks}
        else:
            out[m.name] = m.compute(x)
    return out


#: The default primary metric (significance, movers, the trend, weak questions).
PRIMARY_METRIC = primary_metric()
