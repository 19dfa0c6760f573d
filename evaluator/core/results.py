"""The results document: a versioned JSON of one evaluation, its model and its writer.

``schema_version`` is bumped whenever a field changes meaning or disappears; the reader
refuses any other version with a message naming both. Layout::

    {"schema_version": 1,
     "run": {tool/NeuralMind versions, backend, graph source, commit, k values, gain, ...},
     "overall": {"n": 19, "metrics": {"recall@5": 0.8, ...}},
     "by_shape": {"focused": {"n": 7, "metrics": {...}}, ...},
     "queries": [{"id", "question", "shape", "ranked_modules", "expected", "metrics",
                  "facts_found", "facts_missing", "diagnostics", "latency_ms",
                  "overlap": {"names_answer", "named", "shared", "share"},
                  "filtered_out": {reason: count}, "short_of_depth": true}, ...],
     "floors": {"passed": true, "violations": [{"scope", "metric", "value", "rule"}]},
     "judge_check": {"separation", "right_mean", "wrong_mean", "false_credit",
                     "retrieved_mean", "warning", "skipped",
                     "queries": [{"id", "right", "wrong", "wrong_module", "wrong_from",
                                  "false_versions", "false_credited"}]},
     "systems": [{"label", "overall", "by_shape",
                  "queries": [{"id", "shape", "ranked_modules", "metrics",
                               "filtered_out", "short_of_depth"}],
                  "frontier": [{"scale", "tokens", "quality"}]}]}

``judge_check`` (with ``--judge-check``) and ``systems`` (with ``--systems``, one block per
system, the first being the top-level evaluation's) are present only when computed.

``"report"`` (optional, any version) holds what the report shows beyond this side's own
numbers, so that ``comment --results FILE`` renders the very document ``report.md`` is
(:class:`ReportInputs`): ``{"baseline": {results body of the side compared with, or
null}, "source", "notes", "primary_metric", "alpha", "min_effect", "floors": {"aggregate":
[{"metric", "op", "value"}], "per_shape": [...], "zero_miss"} or null, "changed_files":
[path] or null, "links": {"server", "repository", "sha", "root"} or null}``.

Schema version 2 adds two optional blocks; a document without them is still written as
version 1, and this reader reads both versions:

* ``"sections": {name: {"run", "overall", "by_shape", "queries", "floors"}}`` — one full
  results body per section (its ``run.root`` is the section's path). The top-level
  ``overall``/``by_shape`` then pool every section's queries (means over all queries, not
  of the section means), ``queries`` is left out (the sections hold them; in memory they
  are pooled with ids qualified as ``section/id``), and ``floors`` lists every section's
  violations with the scope prefixed ``section NAME:`` — a section's floors gate only that
  section, and the overall verdict passes when every section passes;
* ``"shard": {"index", "total", "unit", "units", "plan", "settings_sha256",
  "ground_truth_sha256", "policies", "side", "label"}`` — the file is one part of a sharded
  evaluation (:mod:`evaluator.core.shards`); its ``floors.passed`` is null because a part is not
  gated: merge the parts first (:mod:`evaluator.core.merge`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cached_property
from typing import Any

from evaluator.core.floors import FloorPolicy, Violation
from evaluator.core.giveaway import Overlap
from evaluator.core.groundtruth import Problem, shape_order
from evaluator.core.judge import anchored_share
from evaluator.core.judgecheck import JudgeCheck
from evaluator.core.measures import MEASURES, PRIMARY_METRIC
from evaluator.core.scoring import (
    Aggregate,
    QueryResult,
    aggregate,
    by_shape,
)
from evaluator.core.shards import (
    ShardInfo,
    policy_to_dict,
)
from evaluator.core.stats import DEFAULT_TEST, SignificanceTest
from evaluator.core.systems import SystemRun

SCHEMA_VERSION = 1
SECTIONS_SCHEMA_VERSION = 2  # adds the optional "sections" and "shard" blocks
READABLE_VERSIONS = (SCHEMA_VERSION, SECTIONS_SCHEMA_VERSION)
# Every results file carries the ranked measures of the headline table.
REQUIRED_METRICS = tuple(m.headline_name for m in MEASURES
                         if m.source == "ranking" and m.report == "always")


@dataclass(frozen=True)
class RunInfo:
    """How the evaluation was made: enough to reproduce it and to judge a comparison."""

    tool_version: str
    neuralmind_version: str
    backend: str
    graph_source: str
    k_values: tuple[int, ...]
    gain: str
    threshold: int
    queries_file: str
    queries_sha256: str
    root: str = "."
    commit: str | None = None
    ref: str | None = None
    model: str | None = None
    model_fingerprint: str | None = None
    judge: str | None = None
    started_at: str = ""
    draft: bool = False
    tree_differs: bool = False  # the checkout's files differ from ``commit``
    queries_differ: bool = False  # the ground-truth file differs from ``commit``
    index: Mapping[str, Any] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    #: The module universe the ranking was scored over: ``include``/``exclude`` as applied
    #: and the counts (``modules``, ``left_out``); empty in results from before it existed.
    universe: Mapping[str, Any] = field(default_factory=dict)
    #: Untracked, non-ignored files of the checkout, left out of the evaluation (git's
    #: tracked files are what is evaluated; see evaluator.snapshot).
    untracked: tuple[str, ...] = ()
    #: What else can move a number, recorded to compare (core/comparability.py): the
    #: onnxruntime version, the NeuralMind settings the evaluator pins, the host's CPU class
    #: (features that change floating-point results); ``None``/empty in older results.
    onnxruntime_version: str | None = None
    neuralmind_pins: Mapping[str, str] = field(default_factory=dict)
    host_class: str | None = None
    #: Anchored facts whose evidence span is in none of their question's grade >= 2
    #: modules at this commit (warnings at the fact's line; ``drifted`` when the base held
    #: it, see :mod:`evaluator.core.evidence`).
    drift: tuple[Problem, ...] = ()
    #: The significance tests' settings (``alpha``, ``min_effect``, ``seed``) every view of
    #: these results tests with; empty in results from before it was recorded.
    significance: Mapping[str, float] = field(default_factory=dict)
    #: ``--budget``: every system's context cut to N tokens or to NeuralMind's count
    #: (``"neuralmind"``) before judging, counted as characters / 4; ``None`` without one.
    budget: str | None = None
    #: The ranking depth every system was asked for (``--depth``, default the largest k;
    #: :mod:`evaluator.core.depth`); ``None`` in results from before it was recorded.
    depth: int | None = None


def untracked_sentence(untracked: Sequence[str]) -> str:
    """The sentence that lists the untracked files a run left out (progress, report, CI)."""
    shown = ", ".join(untracked[:10]) + (f" and {len(untracked) - 10} more"
                                         if len(untracked) > 10 else "")
    return (f"{len(untracked)} untracked file(s) were not evaluated: {shown} — git add them "
            "to include them")


def significance_of(run: RunInfo) -> SignificanceTest:
    """The run's significance settings; the defaults for results that recorded none."""
    recorded = run.significance
    if not recorded:
        return DEFAULT_TEST
    return SignificanceTest(alpha=float(recorded.get("alpha", DEFAULT_TEST.alpha)),
                            min_effect=float(recorded.get("min_effect",
                                                          DEFAULT_TEST.min_effect)),
                            seed=int(recorded.get("seed", DEFAULT_TEST.seed)))


LINK_FIELDS = ("server", "repository", "sha", "root")


@dataclass(frozen=True)
class ReportInputs:
    """What the report shows beyond one side's results, saved with them: the side it was
    compared with (every per-question value), how it was compared, the floor policy (for the
    margins and the Floor column), the pull request's changed files and where they link."""

    baseline: Results | None = None
    source: str = ""
    notes: tuple[str, ...] = ()
    primary_metric: str = PRIMARY_METRIC
    alpha: float = DEFAULT_TEST.alpha
    min_effect: float = DEFAULT_TEST.min_effect
    floors: FloorPolicy | None = None
    changed_files: tuple[str, ...] | None = None
    links: Mapping[str, str] | None = None  # server, repository, sha, root (checked on use)


@dataclass(frozen=True)
class Results:
    run: RunInfo
    overall: Aggregate
    shapes: Mapping[str, Aggregate]
    queries: tuple[QueryResult, ...]
    violations: tuple[Violation, ...] = ()
    # Per section, in declared order (empty without sections); see combine_sections.
    sections: Mapping[str, Results] = field(default_factory=dict)
    # Set on one part of a sharded evaluation (not gated until merged).
    shard: ShardInfo | None = None
    judge_check: JudgeCheck | None = None
    systems: tuple[SystemRun, ...] = ()
    report: ReportInputs | None = None  # saved with the file: see the module doc

    @property
    def passed(self) -> bool:
        return not self.violations

    @property
    def is_partial(self) -> bool:
        return self.shard is not None

    @cached_property
    def _by_id(self) -> dict[str, QueryResult]:
        return {q.id: q for q in self.queries}

    def query(self, query_id: str) -> QueryResult | None:
        return self._by_id.get(query_id)


def _aggregate_dict(agg: Aggregate) -> dict[str, Any]:
    return {"n": agg.n, "metrics": dict(agg.metrics)}


def _query_dict(row: QueryResult) -> dict[str, Any]:
    audit = {"facts": [a.to_dict() for a in row.faithfulness.facts]} \
        if row.faithfulness.facts else {}
    return {
        "id": row.id,
        "question": row.question,
        "shape": row.shape,
        "ranked_modules": list(row.ranked_modules),
        "expected": {str(g): list(ms) for g, ms in row.expected.items()},
        "metrics": dict(row.metrics),
        "facts_found": list(row.faithfulness.facts_found),
        "facts_missing": list(row.faithfulness.facts_missing),
        **audit,
        "diagnostics": {
            "no_relevant": row.diagnostics.no_relevant,
            "missed_top": [asdict(m) for m in row.diagnostics.missed_top],
            "missing_facts": list(row.diagnostics.missing_facts),
            "flags": list(row.diagnostics.flags),
        },
        "latency_ms": row.latency_ms,
    } | ({} if row.overlap is None else {"overlap": _overlap_dict(row.overlap)}) \
        | ({"filtered_out": dict(row.filtered_out)} if row.filtered_out else {}) \
        | ({"short_of_depth": True} if row.short_of_depth else {})


def _overlap_dict(found: Overlap) -> dict[str, Any]:
    return {"names_answer": found.names_answer, "named": list(found.named),
            "shared": list(found.shared), "share": found.share}


def _check_dict(check: JudgeCheck) -> dict[str, Any]:
    return {"separation": check.separation, "right_mean": check.right_mean,
            "wrong_mean": check.wrong_mean, "false_credit": check.false_credit,
            "retrieved_mean": check.retrieved_mean, "warning": check.warning,
            "skipped": list(check.skipped),
            "queries": [{"id": r.query_id, "right": r.right, "wrong": r.wrong,
                         "wrong_module": r.wrong_module, "wrong_from": r.wrong_from,
                         "false_versions": r.false_versions,
                         "false_credited": r.false_credited}
                        for r in check.rows]}


def _system_dict(run: SystemRun) -> dict[str, Any]:
    return {"label": run.label, "overall": _aggregate_dict(run.overall),
            "by_shape": {s: _aggregate_dict(a) for s, a in run.shapes.items()},
            "queries": [{"id": q.id, "shape": q.shape, "ranked_modules": list(q.ranked_modules),
                         "metrics": dict(q.metrics)}
                        | ({"filtered_out": dict(q.filtered_out)} if q.filtered_out else {})
                        | ({"short_of_depth": True} if q.short_of_depth else {})
                        for q in run.queries]} \
        | ({"frontier": [asdict(p) for p in run.frontier]} if run.frontier else {})


def _body(results: Results) -> dict[str, Any]:
    run = asdict(results.run)
    run["k_values"] = list(results.run.k_values)
    run["warnings"] = list(results.run.warnings)
    run["untracked"] = list(results.run.untracked)
    if not results.run.drift:
        del run["drift"]  # written only when there is some
    body: dict[str, Any] = {
        "run": run,
        "overall": _aggregate_dict(results.overall),
        "by_shape": {s: _aggregate_dict(a) for s, a in results.shapes.items()},
        "queries": [_query_dict(q) for q in results.queries],
        "floors": {
            "passed": None if results.is_partial else results.passed,
            "violations": [asdict(v) | {"message": v.message} for v in results.violations],
        },
    }
    anchored, facts = anchored_share(a for q in results.queries for a in q.faithfulness.facts)
    if facts:  # derived from the queries' audits (not read back)
        body["faithfulness_judge"] = {"judge": results.run.judge, "facts": facts,
                                      "anchored": anchored}
    if results.sections:
        del body["queries"]  # the sections hold them
        body["sections"] = {name: _body(section) for name, section in results.sections.items()}
    if results.shard is not None:
        body["shard"] = results.shard.to_dict()
    if results.judge_check is not None:
        body["judge_check"] = _check_dict(results.judge_check)
    if results.systems:
        body["systems"] = [_system_dict(s) for s in results.systems]
    return body


def to_dict(results: Results) -> dict[str, Any]:
    """The JSON document; version 1 unless it has sections or a shard (see module doc)."""
    extended = bool(results.sections) or results.shard is not None
    version = SECTIONS_SCHEMA_VERSION if extended else SCHEMA_VERSION
    doc = {"schema_version": version, **_body(results)}
    if results.report is not None:
        doc["report"] = _report_dict(results.report)
    return doc


def _report_dict(report: ReportInputs) -> dict[str, Any]:
    return {"baseline": _body(report.baseline) if report.baseline is not None else None,
            "source": report.source, "notes": list(report.notes),
            "primary_metric": report.primary_metric, "alpha": report.alpha,
            "min_effect": report.min_effect,
            "floors": policy_to_dict(report.floors) if report.floors is not None else None,
            "changed_files": (list(report.changed_files)
                              if report.changed_files is not None else None),
            "links": dict(report.links) if report.links is not None else None}


def qualified(section: str, query_id: str) -> str:
    """A query id made unique across sections (section names never hold a '/')."""
    return f"{section}/{query_id}"


def pooled_index(runs: Sequence[RunInfo]) -> dict[str, Any]:
    """The index block of a pooled result: how many sections, their nodes and files."""
    return {"sections": len(runs), "nodes": sum(int(r.index.get("nodes", 0)) for r in runs),
            "files": sum(int(r.index.get("files", 0)) for r in runs),
            "cached": all(bool(r.index.get("cached")) for r in runs)}


def pooled_universe(runs: Sequence[RunInfo]) -> dict[str, Any]:
    """The universe block of a pooled result: the rules (the same for every section) and the
    counts summed over the sections; empty when no section recorded one."""
    recorded = [r.universe for r in runs if r.universe]
    if not recorded:
        return {}
    pooled = dict(recorded[0])
    for key, value in recorded[0].items():
        if isinstance(value, int) and not isinstance(value, bool):
            pooled[key] = sum(int(u.get(key, 0)) for u in recorded)
    return pooled


def combine_sections(run: RunInfo, sections: Mapping[str, Results], *,
                     shard: ShardInfo | None = None) -> Results:
    """One results object over sections: pooled queries (ids ``section/id``), aggregates
    recomputed from the per-query scores, every section's violations scoped to it."""
    rows = tuple(replace(q, id=qualified(name, q.id))
                 for name, section in sections.items() for q in section.queries)
    violations = tuple(replace(v, scope=f"section {name}: {v.scope}")
                       for name, section in sections.items() for v in section.violations)
    run = replace(run, universe=pooled_universe([s.run for s in sections.values()]))
    return Results(run=run, overall=aggregate(rows),
                   shapes=by_shape(rows, shape_order(q.shape for q in rows)), queries=rows,
                   violations=violations, sections=dict(sections), shard=shard)
