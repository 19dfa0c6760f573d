"""Reading a results document back: :func:`from_dict` checks untrusted JSON field by field
(the layout is :mod:`evaluator.core.results`'s) and refuses any other schema version with a
message naming both, so a tampered or foreign ``results.json`` is one clear error, never a
traceback."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from evaluator.core import textcheck
from evaluator.core.floors import Violation
from evaluator.core.giveaway import Overlap
from evaluator.core.groundtruth import Problem, has_control
from evaluator.core.judge import JUDGED_BY, FactAudit
from evaluator.core.judgecheck import CheckRow, JudgeCheck, summarise
from evaluator.core.measures import PRIMARY_METRIC
from evaluator.core.results import (
    LINK_FIELDS,
    READABLE_VERSIONS,
    REQUIRED_METRICS,
    SCHEMA_VERSION,
    SECTIONS_SCHEMA_VERSION,
    ReportInputs,
    Results,
    RunInfo,
    combine_sections,
)
from evaluator.core.scoring import (
    Aggregate,
    Diagnostics,
    Faithfulness,
    MissedModule,
    QueryResult,
)
from evaluator.core.shards import (
    MAX_SHARDS,
    Shard,
    ShardInfo,
    policy_from_dict,
)
from evaluator.core.stats import DEFAULT_TEST
from evaluator.core.systems import FrontierPoint, SystemQuery, SystemRun
from evaluator.errors import ResultsError

#: The largest metric value a results file may hold, either way: every measure is a share,
#: a rank or a count far below it, and the sum of a million of them stays finite.
MAX_METRIC = 1e9
#: The largest results file read (a run of 10,000 questions writes a few megabytes).
MAX_RESULTS_BYTES = 64 * 1024 * 1024


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

    def metrics(self, value: Any, where: str, *, required: bool = True
                ) -> dict[str, float | None]:
        out = {self.text(k, where): self.number(v, f"{where}.{k}", optional=True)
               for k, v in self.mapping(value, where).items()}
        for key, number in out.items():  # a sum of any number of them stays finite
            if number is not None and abs(number) > MAX_METRIC:
                raise self.fail(f"{where}.{key}", f"{number!r} is no metric value (at most "
                                f"{MAX_METRIC:g} either way)")
        missing = [m for m in REQUIRED_METRICS if out.get(m) is None] if required else []
        if missing:
            raise self.fail(where, f"missing metric(s) {', '.join(missing)}")
        return out

    def aggregate(self, value: Any, where: str) -> Aggregate:
        data = self.mapping(value, where)
        n = self.integer(data.get("n"), f"{where}.n")
        # A mean over no query is None (an empty shard of a sharded run has none).
        return Aggregate(n=n, metrics=self.metrics(data.get("metrics"), f"{where}.metrics",
                                                   required=n > 0))


def _read_audit(r: _Reader, value: Any, where: str) -> tuple[FactAudit, ...]:
    """The per-fact audit of a query (absent in results written before it existed)."""
    out = []
    for i, item in enumerate(r.seq(value, where)):
        at = f"{where}[{i}]"
        data = r.mapping(item, at)
        how = r.text(data.get("judged_by"), f"{at}.judged_by")
        if how not in JUDGED_BY:
            raise r.fail(f"{at}.judged_by", f"{how!r} is not one of {', '.join(JUDGED_BY)}")
        span = data.get("span")
        out.append(FactAudit(r.text(data.get("fact"), f"{at}.fact"), how,
                             r.flag(data.get("found"), f"{at}.found"),
                             None if span is None else r.text(span, f"{at}.span")))
    return tuple(out)


def _faith(metrics: Mapping[str, float | None], found: tuple[str, ...],
           missing: tuple[str, ...], audit: tuple[FactAudit, ...] = ()) -> Faithfulness:
    return Faithfulness(
        fact_recall=metrics.get("fact_recall") or 0.0,
        contradiction=metrics.get("contradiction") or 0.0,
        faithfulness=metrics.get("faithfulness") or 0.0,
        facts_found=found, facts_missing=missing, facts=audit,
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
    overlap = None
    if data.get("overlap") is not None:
        raw = r.mapping(data["overlap"], f"{where}.overlap")
        overlap = Overlap(shared=r.strs(raw.get("shared", []), f"{where}.overlap.shared"),
                          named=r.strs(raw.get("named", []), f"{where}.overlap.named"),
                          share=r.number(raw.get("share", 0.0), f"{where}.overlap.share")
                          or 0.0)
    return QueryResult(
        id=r.text(data.get("id"), f"{where}.id"),
        question=r.text(data.get("question"), f"{where}.question"),
        shape=r.text(data.get("shape"), f"{where}.shape"),
        ranked_modules=r.strs(data.get("ranked_modules"), f"{where}.ranked_modules"),
        expected=expected,
        metrics=metrics,
        faithfulness=_faith(metrics, found, missing,
                            _read_audit(r, data.get("facts", []), f"{where}.facts")),
        diagnostics=Diagnostics(no_relevant=r.flag(diag.get("no_relevant", False),
                                                   f"{where}.diagnostics.no_relevant"),
                                missed_top=tuple(missed), missing_facts=missing),
        latency_ms=latency or 0.0,
        overlap=overlap,
        filtered_out=_read_filtered(r, data.get("filtered_out", {}), f"{where}.filtered_out"),
        short_of_depth=r.flag(data.get("short_of_depth", False), f"{where}.short_of_depth"),
    )


def _read_filtered(r: _Reader, value: Any, where: str) -> dict[str, int]:
    """A ranking's entries filtered out of the module universe, per reason."""
    return {r.text(k, where): _count(r, n, f"{where}.{k}")
            for k, n in r.mapping(value, where).items()}


_RUN_STRS = ("tool_version", "neuralmind_version", "backend", "graph_source", "gain",
             "queries_file", "queries_sha256", "root", "started_at")
_RUN_OPTIONAL_STRS = ("commit", "ref", "model", "model_fingerprint", "judge",
                      "onnxruntime_version", "host_class", "budget")


def _run_field(r: _Reader, name: str, value: Any, prefix: str = "run") -> Any:
    """One ``run`` field, type-checked so a wrong type is named instead of surfacing later."""
    where = f"{prefix}.{name}"
    if name in _RUN_STRS:
        return r.text(value, where)
    if name in _RUN_OPTIONAL_STRS:
        return None if value is None else r.text(value, where)
    if name == "k_values":
        return tuple(r.integer(k, where) for k in r.seq(value, where))
    if name == "threshold":
        return r.integer(value, where)
    if name == "depth":
        return None if value is None else r.integer(value, where)
    if name in ("draft", "tree_differs", "queries_differ"):
        return r.flag(value, where)
    if name == "index":
        return {r.text(k, where): (r.text(v, f"{where}.{k}") if isinstance(v, str) else v)
                for k, v in r.mapping(value, where).items()}
    if name == "timings":
        return {r.text(k, where): r.real(v, f"{where}.{k}")
                for k, v in r.mapping(value, where).items()}
    if name in ("warnings", "untracked"):
        return r.strs(value, where)
    if name == "neuralmind_pins":
        return {r.text(k, where): r.text(v, f"{where}.{k}")
                for k, v in r.mapping(value, where).items()}
    if name == "drift":
        return tuple(_read_problem(r, item, f"{where}[{i}]")
                     for i, item in enumerate(r.seq(value, where)))
    if name == "significance":
        raw = r.mapping(value, where)
        test = {k: r.real(raw[k], f"{where}.{k}") for k in ("alpha", "min_effect", "seed")
                if k in raw}
        if not 0.0 < test.get("alpha", 0.05) < 1.0 or test.get("min_effect", 0.0) < 0.0:
            raise r.fail(where, "alpha must lie in (0, 1) and min_effect be non-negative")
        return test
    if name == "universe":
        raw = r.mapping(value, where)
        return {**{k: list(r.strs(raw[k], f"{where}.{k}")) for k in ("include", "exclude")
                   if k in raw},
                **{k: r.integer(raw[k], f"{where}.{k}") for k in ("modules", "left_out")
                   if k in raw}}
    return value


def _read_problem(r: _Reader, value: Any, where: str) -> Problem:
    data = r.mapping(value, where)
    line = data.get("line")
    optional = {k: None if data.get(k) is None else r.text(data[k], f"{where}.{k}")
                for k in ("query_id", "field")}
    return Problem("warning", r.text(data.get("message"), f"{where}.message"),
                   r.text(data.get("file"), f"{where}.file"), optional["query_id"],
                   optional["field"], None if line is None else r.integer(line, f"{where}.line"))


def _read_run(r: _Reader, value: Any, where: str = "run") -> RunInfo:
    raw = r.mapping(value, where)
    known = set(RunInfo.__dataclass_fields__)
    data = {k: _run_field(r, k, v, where) for k, v in raw.items() if k in known}
    missing = [f.name for f in dataclasses.fields(RunInfo) if f.name not in data
               and f.default is dataclasses.MISSING
               and f.default_factory is dataclasses.MISSING]
    if missing:
        raise r.fail(where, f"missing fields: {', '.join(missing)}")
    return RunInfo(**data)


def _read_violations(r: _Reader, value: Any, where: str) -> tuple[Violation, ...]:
    violations = []
    floors = r.mapping(value, where)
    for i, v in enumerate(r.seq(floors.get("violations", []), f"{where}.violations")):
        at = f"{where}.violations[{i}]"
        item = r.mapping(v, at)
        violations.append(Violation(
            scope=r.text(item.get("scope"), f"{at}.scope"),
            metric=r.text(item.get("metric"), f"{at}.metric"),
            value=r.number(item.get("value"), f"{at}.value", optional=True),
            rule=r.text(item.get("rule"), f"{at}.rule"),
            kind=r.text(item.get("kind", "floor"), f"{at}.kind"),
        ))
    return tuple(violations)


def _read_shard(r: _Reader, value: Any) -> ShardInfo:
    data = r.mapping(value, "shard")
    total = r.integer(data.get("total"), "shard.total")
    index = r.integer(data.get("index"), "shard.index")
    if not 1 <= index <= total <= MAX_SHARDS:
        raise r.fail("shard", f"{index}/{total} is not a shard I/N with 1 <= I <= N")
    unit = r.text(data.get("unit"), "shard.unit")
    if unit not in ("section", "query"):
        raise r.fail("shard.unit", f"{unit!r} is not section or query")
    plan = []
    for i, item in enumerate(r.seq(data.get("plan"), "shard.plan")):
        pair = r.seq(item, f"shard.plan[{i}]")
        if len(pair) != 2:
            raise r.fail(f"shard.plan[{i}]", "expected [unit, shard]")
        where = f"shard.plan[{i}]"
        owner = r.integer(pair[1], where)
        if not 1 <= owner <= total:
            raise r.fail(where, f"shard {owner} is not in 1..{total}")
        plan.append((r.text(pair[0], where), owner))
    policies = {}
    for name, raw in r.mapping(data.get("policies", {}), "shard.policies").items():
        try:
            policies[r.text(name, "shard.policies")] = policy_from_dict(raw)
        except ValueError as err:
            raise r.fail(f"shard.policies.{name}", str(err)) from None
    side = r.text(data.get("side", "head"), "shard.side")
    if side not in ("head", "base"):
        raise r.fail("shard.side", f"{side!r} is not head or base")
    info = ShardInfo(shard=Shard(index, total), unit=unit,  # type: ignore[arg-type]
                     side=side,  # type: ignore[arg-type]
                     label=r.text(data.get("label", ""), "shard.label"),
                     plan=tuple(plan),
                     settings_sha256=r.text(data.get("settings_sha256"),
                                            "shard.settings_sha256"),
                     ground_truth_sha256=r.text(data.get("ground_truth_sha256"),
                                                "shard.ground_truth_sha256"),
                     policies=policies)
    if len({u for u, _ in plan}) != len(plan):
        raise r.fail("shard.plan", "a unit is listed twice")
    if "units" in data and list(r.strs(data["units"], "shard.units")) != list(info.units):
        raise r.fail("shard.units", "does not match the plan")
    return info


def _read_body(r: _Reader, doc: Mapping[str, Any], where: str, *,
               nested: bool) -> Results:
    at = (lambda name: f"{where}.{name}") if where else (lambda name: name)
    run = _read_run(r, doc.get("run"), at("run"))
    shard = _read_shard(r, doc["shard"]) if "shard" in doc and not nested else None
    if "sections" in doc and not nested:
        sections = {r.text(name, at("sections")): _read_body(
                        r, r.mapping(body, f"sections.{name}"), f"sections.{name}", nested=True)
                    for name, body in r.mapping(doc["sections"], "sections").items()}
        if not sections:
            raise r.fail("sections", "is empty")
        # The top level's own list: the sections' violations plus the regression gates
        # checked on the pooled result after it was combined.
        return replace(combine_sections(run, sections, shard=shard),
                       violations=_read_violations(r, doc.get("floors", {}), "floors"))
    shapes = {r.text(s, at("by_shape")): r.aggregate(a, at(f"by_shape.{s}"))
              for s, a in r.mapping(doc.get("by_shape", {}), at("by_shape")).items()}
    queries = tuple(_read_query(r, q, at(f"queries[{i}]"))
                    for i, q in enumerate(r.seq(doc.get("queries"), at("queries"))))
    check = (_read_check(r, doc["judge_check"]) if doc.get("judge_check") is not None
             else None)
    systems = tuple(_read_system(r, s, at(f"systems[{i}]"))
                    for i, s in enumerate(r.seq(doc.get("systems", []), at("systems"))))
    return Results(run=run, overall=r.aggregate(doc.get("overall"), at("overall")),
                   shapes=shapes, queries=queries,
                   violations=_read_violations(r, doc.get("floors", {}), at("floors")),
                   shard=shard, judge_check=check, systems=systems)


def from_dict(data: Any, source: str) -> Results:
    """Read a results document; raises :class:`ResultsError` with a message naming the field."""
    r = _Reader(source)
    bad = textcheck.first_bad_string(data)
    if bad is not None:
        raise r.fail(bad, textcheck.MESSAGE)
    doc = r.mapping(data, "top level")
    version = doc.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int) or (
            version not in READABLE_VERSIONS):
        raise ResultsError(
            f"{source}: results schema_version {version!r} is not supported; this "
            f"retrieval-eval reads schema_version {SCHEMA_VERSION} and "
            f"{SECTIONS_SCHEMA_VERSION}. Re-run the evaluation with this version to get a "
            "comparable file."
        )
    if version == SCHEMA_VERSION and ("sections" in doc or "shard" in doc):
        raise r.fail("top level", f"sections and shards need schema_version "
                     f"{SECTIONS_SCHEMA_VERSION}")
    results = _read_body(r, doc, "", nested=False)
    if doc.get("report") is None:
        return results
    report = _read_report(r, doc["report"])
    if report.primary_metric not in results.overall.metrics:
        raise r.fail("report.primary_metric", f"{report.primary_metric!r} is not a metric of "
                     "the results")
    if not 0 < report.alpha < 1 or report.min_effect < 0:
        raise r.fail("report", "alpha must be between 0 and 1 and min_effect at least 0")
    return replace(results, report=report)


def _read_report(r: _Reader, value: Any) -> ReportInputs:
    data = r.mapping(value, "report")
    baseline = None
    if data.get("baseline") is not None:
        body = r.mapping(data["baseline"], "report.baseline")
        if "shard" in body:
            raise r.fail("report.baseline", "is one part of a sharded evaluation")
        baseline = _read_body(r, body, "report.baseline", nested=False)
    floors = None
    if data.get("floors") is not None:
        try:
            floors = policy_from_dict(data["floors"])
        except ValueError as err:
            raise r.fail("report.floors", str(err)) from None
    changed = data.get("changed_files")
    links = data.get("links")
    return ReportInputs(
        baseline=baseline, source=r.text(data.get("source", ""), "report.source"),
        notes=r.strs(data.get("notes", []), "report.notes"),
        primary_metric=r.text(data.get("primary_metric", PRIMARY_METRIC), "report.primary_metric"),
        alpha=r.real(data.get("alpha", DEFAULT_TEST.alpha), "report.alpha"),
        min_effect=r.real(data.get("min_effect", DEFAULT_TEST.min_effect), "report.min_effect"),
        floors=floors,
        changed_files=r.strs(changed, "report.changed_files") if changed is not None else None,
        links=({k: r.text(r.mapping(links, "report.links").get(k), f"report.links.{k}")
                for k in LINK_FIELDS} if links is not None else None))


def _read_check(r: _Reader, value: Any) -> JudgeCheck:
    data = r.mapping(value, "judge_check")
    rows = []
    for i, item in enumerate(r.seq(data.get("queries", []), "judge_check.queries")):
        where = f"judge_check.queries[{i}]"
        q = r.mapping(item, where)
        rows.append(CheckRow(r.text(q.get("id"), f"{where}.id"),
                             r.real(q.get("right"), f"{where}.right"),
                             r.real(q.get("wrong"), f"{where}.wrong"),
                             r.text(q.get("wrong_module"), f"{where}.wrong_module"),
                             r.text(q.get("wrong_from"), f"{where}.wrong_from"),
                             _count(r, q.get("false_versions", 0), f"{where}.false_versions"),
                             _count(r, q.get("false_credited", 0),
                                    f"{where}.false_credited")))
    retrieved = data.get("retrieved_mean")
    return summarise(rows, r.strs(data.get("skipped", []), "judge_check.skipped"),
                     retrieved_mean=None if retrieved is None
                     else r.real(retrieved, "judge_check.retrieved_mean"))


def _count(r: _Reader, value: Any, where: str) -> int:
    number = r.real(value, where)
    if number < 0 or number != int(number):
        raise r.fail(where, "must be a whole number ≥ 0")
    return int(number)


def _read_system(r: _Reader, value: Any, where: str) -> SystemRun:
    data = r.mapping(value, where)
    queries = []
    for i, item in enumerate(r.seq(data.get("queries", []), f"{where}.queries")):
        w = f"{where}.queries[{i}]"
        q = r.mapping(item, w)
        queries.append(SystemQuery(r.text(q.get("id"), f"{w}.id"),
                                   r.text(q.get("shape"), f"{w}.shape"),
                                   r.strs(q.get("ranked_modules", []), f"{w}.ranked_modules"),
                                   r.metrics(q.get("metrics"), f"{w}.metrics"),
                                   _read_filtered(r, q.get("filtered_out", {}),
                                                  f"{w}.filtered_out"),
                                   r.flag(q.get("short_of_depth", False),
                                          f"{w}.short_of_depth")))
    shapes = {r.text(s, f"{where}.by_shape"): r.aggregate(a, f"{where}.by_shape.{s}")
              for s, a in r.mapping(data.get("by_shape", {}), f"{where}.by_shape").items()}
    frontier = r.seq(data.get("frontier", []), f"{where}.frontier")
    return SystemRun(r.text(data.get("label"), f"{where}.label"),
                     r.aggregate(data.get("overall"), f"{where}.overall"), shapes,
                     tuple(queries), tuple(_read_point(r, item, f"{where}.frontier[{i}]")
                                           for i, item in enumerate(frontier)))


def _read_point(r: _Reader, value: Any, where: str) -> FrontierPoint:
    """One point of a system's ``--budget`` frontier."""
    point = r.mapping(value, where)
    quality = point.get("quality")
    return FrontierPoint(r.real(point.get("scale"), f"{where}.scale"),
                         r.real(point.get("tokens"), f"{where}.tokens"),
                         None if quality is None else r.real(quality, f"{where}.quality"))
