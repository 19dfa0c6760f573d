"""The results document: a versioned JSON of one evaluation, written and read back.

``schema_version`` is bumped whenever a field changes meaning or disappears; a reader
refuses any other version with a message naming both. Layout::

    {"schema_version": 1,
     "run": {tool/NeuralMind versions, backend, graph source, commit, k values, gain, ...},
     "overall": {"n": 19, "metrics": {"recall@5": 0.8, ...}},
     "by_shape": {"focused": {"n": 7, "metrics": {...}}, ...},
     "queries": [{"id", "question", "shape", "ranked_modules", "expected", "metrics",
                  "facts_found", "facts_missing", "diagnostics", "latency_ms"}, ...],
     "floors": {"passed": true, "violations": [{"scope", "metric", "value", "rule"}]}}
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any

from evaluator.core.floors import Violation
from evaluator.core.groundtruth import has_control
from evaluator.core.measures import MEASURES
from evaluator.core.scoring import (
    Aggregate,
    Diagnostics,
    Faithfulness,
    MissedModule,
    QueryResult,
)
from evaluator.errors import ResultsError

SCHEMA_VERSION = 1
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


@dataclass(frozen=True)
class Results:
    run: RunInfo
    overall: Aggregate
    shapes: Mapping[str, Aggregate]
    queries: tuple[QueryResult, ...]
    violations: tuple[Violation, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.violations

    @cached_property
    def _by_id(self) -> dict[str, QueryResult]:
        return {q.id: q for q in self.queries}

    def query(self, query_id: str) -> QueryResult | None:
        return self._by_id.get(query_id)


def _aggregate_dict(agg: Aggregate) -> dict[str, Any]:
    return {"n": agg.n, "metrics": dict(agg.metrics)}


def _query_dict(row: QueryResult) -> dict[str, Any]:
    return {
        "id": row.id,
        "question": row.question,
        "shape": row.shape,
        "ranked_modules": list(row.ranked_modules),
        "expected": {str(g): list(ms) for g, ms in row.expected.items()},
        "metrics": dict(row.metrics),
        "facts_found": list(row.faithfulness.facts_found),
        "facts_missing": list(row.faithfulness.facts_missing),
        "diagnostics": {
            "no_relevant": row.diagnostics.no_relevant,
            "missed_top": [asdict(m) for m in row.diagnostics.missed_top],
            "missing_facts": list(row.diagnostics.missing_facts),
            "flags": list(row.diagnostics.flags),
        },
        "latency_ms": row.latency_ms,
    }


def to_dict(results: Results) -> dict[str, Any]:
    run = asdict(results.run)
    run["k_values"] = list(results.run.k_values)
    run["warnings"] = list(results.run.warnings)
    return {
        "schema_version": SCHEMA_VERSION,
        "run": run,
        "overall": _aggregate_dict(results.overall),
        "by_shape": {s: _aggregate_dict(a) for s, a in results.shapes.items()},
        "queries": [_query_dict(q) for q in results.queries],
        "floors": {
            "passed": results.passed,
            "violations": [asdict(v) | {"message": v.message} for v in results.violations],
        },
    }


# ----------------------------------------------------------------------------- reading


class _Reader:
    """Typed access into untrusted JSON, with errors that name the field."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, what: str) -> ResultsError:
        return ResultsError(f"{self.source}: {where}: {what}; is this a results.json written by "
                            "retrieval-eval?")

    def mapping(self, value: Any, where: str) -> Mapping[str, Any]:
        if not isinstance(value, Mapping):
            raise self.fail(where, "expected an object")
        return value

    def seq(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(where, "expected a list")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, "expected a string")
        if has_control(value):
            # A results file may come from untrusted code (the fork-safe workflow's artifact);
            # a newline could forge workflow commands in the log.
            raise self.fail(where, "contains a control character")
        return value

    def strs(self, value: Any, where: str) -> tuple[str, ...]:
        return tuple(self.text(v, where) for v in self.seq(value, where))

    def number(self, value: Any, where: str, *, optional: bool = False) -> float | None:
        if value is None and optional:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, "expected a number")
        if not math.isfinite(value):
            raise self.fail(where, f"expected a finite number, not {value!r}")
        return float(value)

    def real(self, value: Any, where: str) -> float:
        number = self.number(value, where)
        assert number is not None
        return number

    def integer(self, value: Any, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, "expected an integer")
        return value

    def flag(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, "expected true or false")
        return value

    def metrics(self, value: Any, where: str) -> dict[str, float | None]:
        out = {self.text(k, where): self.number(v, f"{where}.{k}", optional=True)
               for k, v in self.mapping(value, where).items()}
        missing = [m for m in REQUIRED_METRICS if out.get(m) is None]
        if missing:
            raise self.fail(where, f"missing metric(s) {', '.join(missing)}")
        return out

    def aggregate(self, value: Any, where: str) -> Aggregate:
        data = self.mapping(value, where)
        n = self.integer(data.get("n"), f"{where}.n")
        return Aggregate(n=n, metrics=self.metrics(data.get("metrics"), f"{where}.metrics"))


def _faith(metrics: Mapping[str, float | None], found: tuple[str, ...],
           missing: tuple[str, ...]) -> Faithfulness:
    return Faithfulness(
        fact_recall=metrics.get("fact_recall") or 0.0,
        contradiction=metrics.get("contradiction") or 0.0,
        faithfulness=metrics.get("faithfulness") or 0.0,
        facts_found=found, facts_missing=missing,
        context_precision=metrics.get("context_precision"),
        context_recall=metrics.get("context_recall"),
        answer_relevance=metrics.get("answer_relevance"),
    )


def _read_query(r: _Reader, value: Any, where: str) -> QueryResult:
    data = r.mapping(value, where)
    metrics = r.metrics(data.get("metrics"), f"{where}.metrics")
    found = r.strs(data.get("facts_found", []), f"{where}.facts_found")
    missing = r.strs(data.get("facts_missing", []), f"{where}.facts_missing")
    diag = r.mapping(data.get("diagnostics", {}), f"{where}.diagnostics")
    missed = []
    for i, m in enumerate(r.seq(diag.get("missed_top", []), f"{where}.diagnostics.missed_top")):
        item_where = f"{where}.diagnostics.missed_top[{i}]"
        item = r.mapping(m, item_where)
        rank = item.get("rank")
        missed.append(MissedModule(r.text(item.get("module"), f"{item_where}.module"),
                                   None if rank is None else r.integer(rank, f"{item_where}.rank")))
    expected_raw = r.mapping(data.get("expected", {}), f"{where}.expected")
    expected: dict[int, tuple[str, ...]] = {}
    for grade, modules in expected_raw.items():
        if not (str(grade).isascii() and str(grade).isdigit()):
            raise r.fail(f"{where}.expected", f"grade {grade!r} is not a number")
        expected[int(grade)] = r.strs(modules, f"{where}.expected.{grade}")
    latency = r.number(data.get("latency_ms", 0.0), f"{where}.latency_ms")
    return QueryResult(
        id=r.text(data.get("id"), f"{where}.id"),
        question=r.text(data.get("question"), f"{where}.question"),
        shape=r.text(data.get("shape"), f"{where}.shape"),
        ranked_modules=r.strs(data.get("ranked_modules"), f"{where}.ranked_modules"),
        expected=expected,
        metrics=metrics,
        faithfulness=_faith(metrics, found, missing),
        diagnostics=Diagnostics(no_relevant=r.flag(diag.get("no_relevant", False),
                                                   f"{where}.diagnostics.no_relevant"),
                                missed_top=tuple(missed), missing_facts=missing),
        latency_ms=latency or 0.0,
    )


_RUN_STRS = ("tool_version", "neuralmind_version", "backend", "graph_source", "gain",
             "queries_file", "queries_sha256", "root", "started_at")
_RUN_OPTIONAL_STRS = ("commit", "ref", "model", "model_fingerprint", "judge")


def _run_field(r: _Reader, name: str, value: Any) -> Any:
    """One ``run`` field, type-checked so a wrong type is named instead of surfacing later."""
    where = f"run.{name}"
    if name in _RUN_STRS:
        return r.text(value, where)
    if name in _RUN_OPTIONAL_STRS:
        return None if value is None else r.text(value, where)
    if name == "k_values":
        return tuple(r.integer(k, where) for k in r.seq(value, where))
    if name == "threshold":
        return r.integer(value, where)
    if name in ("draft", "tree_differs", "queries_differ"):
        return r.flag(value, where)
    if name == "index":
        return {r.text(k, where): (r.text(v, f"{where}.{k}") if isinstance(v, str) else v)
                for k, v in r.mapping(value, where).items()}
    if name == "timings":
        return {r.text(k, where): r.real(v, f"{where}.{k}")
                for k, v in r.mapping(value, where).items()}
    if name == "warnings":
        return r.strs(value, where)
    return value


def _read_run(r: _Reader, value: Any) -> RunInfo:
    raw = r.mapping(value, "run")
    known = set(RunInfo.__dataclass_fields__)
    data = {k: _run_field(r, k, v) for k, v in raw.items() if k in known}
    try:
        return RunInfo(**data)
    except TypeError as err:
        raise r.fail("run", f"missing or wrong fields ({err})") from None


def from_dict(data: Any, source: str) -> Results:
    """Read a results document; raises :class:`ResultsError` with a message naming the field."""
    r = _Reader(source)
    doc = r.mapping(data, "top level")
    version = doc.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or version != SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: results schema_version {version!r} is not supported; this "
            f"retrieval-eval reads schema_version {SCHEMA_VERSION}. Re-run the evaluation "
            "with this version to get a comparable file."
        )
    violations = []
    floors = r.mapping(doc.get("floors", {}), "floors")
    for i, v in enumerate(r.seq(floors.get("violations", []), "floors.violations")):
        item = r.mapping(v, f"floors.violations[{i}]")
        violations.append(Violation(
            scope=r.text(item.get("scope"), f"floors.violations[{i}].scope"),
            metric=r.text(item.get("metric"), f"floors.violations[{i}].metric"),
            value=r.number(item.get("value"), f"floors.violations[{i}].value", optional=True),
            rule=r.text(item.get("rule"), f"floors.violations[{i}].rule"),
            kind=r.text(item.get("kind", "floor"), f"floors.violations[{i}].kind"),
        ))
    shapes = {r.text(s, "by_shape"): r.aggregate(a, f"by_shape.{s}")
              for s, a in r.mapping(doc.get("by_shape", {}), "by_shape").items()}
    queries = tuple(_read_query(r, q, f"queries[{i}]")
                    for i, q in enumerate(r.seq(doc.get("queries"), "queries")))
    return Results(run=_read_run(r, doc.get("run")), overall=r.aggregate(doc.get("overall"),
                   "overall"), shapes=shapes, queries=queries, violations=tuple(violations))
