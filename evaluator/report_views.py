"""The report's view models: what every template variable holds, computed from the results.

The application (:mod:`evaluator.reporting`) builds one :class:`ReportView` per outcome —
with the run's own significance settings, the PR's changed files, their links and the
history it gathered (:class:`Extras`) — and carries it in the outcome; :mod:`evaluator.render`
only formats it. Nothing here imports jinja2: a value that is already Markdown is
``Markup`` (charts, links, floors), everything else is escaped when a template shows it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, urlsplit

from markupsafe import Markup

from evaluator.core import chart, measures
from evaluator.core import history as history_doc
from evaluator.core.budget import scaled
from evaluator.core.comparability import SettingDifference
from evaluator.core.compare import HIT_METRIC, BaselineComparison, MetricDelta
from evaluator.core.compare import MOVER_METRIC as _ORDER_METRIC
from evaluator.core.depth import Unmeasurable, at_k, unmeasurable
from evaluator.core.floors import ZERO_MISS_METRIC, Floor, FloorPolicy
from evaluator.core.judge import anchored_share
from evaluator.core.measures import HEADLINE_K, PRIMARY_METRIC, label
from evaluator.core.moves import QuestionMove, tally
from evaluator.core.results import Results, untracked_sentence
from evaluator.core.scoring import QueryResult, retrieval_only
from evaluator.core.stats import DEFAULT_TEST, SignificanceTest
from evaluator.core.systems import (
    SystemRun,
    SystemTable,
    short_rankings,
    system_tables,
    unlike_sizes,
)
from evaluator.core.universe import returned_sentence
from evaluator.core.verdict import (
    lead_line,
    significance,
    significance_sentences,
    touched_questions,
)
from evaluator.escaping import violation_line


@dataclass(frozen=True)
class Links:
    """Where a file of the head commit lives on GitHub: ``{server}/{repo}/blob/{sha}/{path}``.

    Built by :func:`links` only from values that pass validation (an http(s) server with no
    path, ``owner/name``, a hex sha), so a link can never carry Markdown or a script URL.
    """

    server: str
    repository: str
    sha: str
    root: str = "."

    def url(self, path: str) -> str:
        full = PurePosixPath(self.root) / path if self.root not in ("", ".") else path
        return (f"{self.server}/{self.repository}/blob/{self.sha}/"
                f"{quote(str(full), safe='/-._~')}")


_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_SHA = re.compile(r"[0-9a-f]{7,64}")


def links(server: str | None, repository: str | None, sha: str | None,
          root: str = ".") -> Links | None:
    """:class:`Links` when all three values are present and well-formed, else ``None``."""
    if not (server and repository and sha):
        return None
    parts = urlsplit(server.rstrip("/"))
    if (parts.scheme not in ("https", "http") or not parts.netloc or parts.path
            or parts.query or parts.fragment or not re.fullmatch(r"[A-Za-z0-9.:-]+",
                                                                   parts.netloc)):
        return None
    if not _REPO.fullmatch(repository) or not _SHA.fullmatch(sha.lower()):
        return None
    clean_root = str(PurePosixPath(root)) if root and ".." not in PurePosixPath(root).parts \
        else "."
    return Links(f"{parts.scheme}://{parts.netloc}", repository, sha.lower(), clean_root)


@dataclass(frozen=True)
class Extras:
    """What the report shows beyond one results file (all optional).

    ``floors``: the floor policy, to show every floor with its margin (else only the missed
    ones, from the results). ``changed_files``: the pull request's changed files relative
    to the evaluated root (``None``: unknown, no section). ``links``: where to link them.
    ``history``: the default branch's headline history (a trend chart of the last
    ``history_count`` commits). ``mismatch``: baseline settings that differ (a warning
    banner; ``baseline-mismatch: warn``).
    """

    floors: FloorPolicy | None = None
    changed_files: tuple[str, ...] | None = None
    links: Links | None = None
    history: history_doc.History | None = None
    history_count: int = 20
    mismatch: tuple[SettingDifference, ...] = ()


CHANGED_SHOWN = 10
FLOORS_TIGHTEST = 3
CHART_QUESTIONS = 20


def _order_queries(results: Results, comparison: BaselineComparison | None) -> list[QueryResult]:
    """Newly failing, newly passing, biggest movers first; then the rest, worst nDCG first."""
    first: list[str] = []
    if comparison is not None:
        first = [m.id for m in comparison.moves if m.changed]
    rest = sorted((q for q in results.queries if q.id not in first),
                  key=lambda q: (q.metrics.get(_ORDER_METRIC) or 0.0, q.id))
    head = [q for i in dict.fromkeys(first) if (q := results.query(i)) is not None]
    return head + rest


def _icon(q: QueryResult) -> str:
    """✅ only when a relevant module is in the top k and no grade-3 module is missing from
    it; ⚠️ when one is; ❌ when nothing relevant is."""
    if q.metrics.get(HIT_METRIC) != 1:
        return "❌"
    return "⚠️" if q.diagnostics.missed_top else "✅"


#: "Weak queries" lists the questions whose nDCG@5 is below this (N-15's nDCG@5 floor).
WEAK_BELOW = 0.5
WEAK_METRIC = PRIMARY_METRIC


def _weak(results: Results) -> list[dict[str, Any]]:
    """The questions below :data:`WEAK_BELOW`, worst first, with why."""
    rows = [q for q in results.queries
            if (q.metrics.get(WEAK_METRIC) or 0.0) < WEAK_BELOW]
    rows.sort(key=lambda q: (q.metrics.get(WEAK_METRIC) or 0.0, q.id))
    return [{"id": q.id, "shape": q.shape, "value": q.metrics.get(WEAK_METRIC),
             "flags": list(q.diagnostics.flags)} for q in rows]


class MetricsView(dict[str, float | None]):
    """A row's metrics for a template: a metric the row lacks reads as ``None`` (shown
    "—"), never an undefined value. A results file need not hold every metric (a shape
    of retrieval-only questions has no faithfulness; a part of a sharded run, none)."""

    def __missing__(self, key: str) -> None:
        return None


def _query_view(q: QueryResult, k: int) -> dict[str, Any]:
    grades = {m: g for g, ms in q.expected.items() for m in ms}
    return {
        "id": q.id, "question": q.question, "shape": q.shape, "icon": _icon(q),
        "metrics": MetricsView(q.metrics),
        "ranked": [{"rank": i, "module": m, "grade": grades.get(m, 0)}
                   for i, m in enumerate(q.ranked_modules[:k], start=1)],
        "expected": [{"grade": g, "modules": list(ms)} for g, ms in sorted(q.expected.items(),
                                                                           reverse=True)],
        "missed": [{"module": m.module, "rank": m.rank} for m in q.diagnostics.missed_top],
        "facts_found": list(q.faithfulness.facts_found),
        "facts_missing": list(q.faithfulness.facts_missing),
        "audit": [{"fact": a.fact, "judged_by": a.judged_by, "found": a.found,
                   "span": _clip(a.span) if a.span is not None else None}
                  for a in q.faithfulness.facts],
        "flags": list(q.diagnostics.flags),
        "no_relevant": q.diagnostics.no_relevant,
        # fewer than the headline k after the universe's filter: what it returned and why
        "returned": returned_sentence(len(q.ranked_modules), q.filtered_out)
        if len(q.ranked_modules) < HEADLINE_K and q.filtered_out else None,
    }


AUDIT_SPAN_CHARS = 300  # a supporting span longer than this is cut in the report


def _clip(text: str) -> str:
    return text if len(text) <= AUDIT_SPAN_CHARS else text[:AUDIT_SPAN_CHARS - 1] + "…"


def facts_measured(results: Results) -> str | None:
    """``faithfulness, 42 of 63 facts anchored`` over every question's audit; ``None`` when
    the results hold no audit (written before it existed)."""
    anchored, total = anchored_share(a for q in results.queries for a in q.faithfulness.facts)
    return f"faithfulness, {anchored} of {total} facts anchored" if total else None


SECTION_METRIC = PRIMARY_METRIC  # the headline of a section's row


def _shape_rows(results: Results, comparison: BaselineComparison | None) -> list[dict[str, Any]]:
    return [{"name": shape, "n": agg.n, "metrics": MetricsView(agg.metrics),
             "deltas": comparison.shapes.get(shape, {}) if comparison else {}}
            for shape, agg in results.shapes.items()]


def _section_rows(results: Results,
                  comparison: BaselineComparison | None) -> list[dict[str, Any]]:
    """One row per section: verdict, questions worse/better, the headline and its delta,
    and the detail shown collapsed under the table."""
    rows = []
    for name, section in results.sections.items():
        mine = comparison.sections.get(name) if comparison else None
        overall = section.overall.metrics
        shown = [m for m in measures.headline() if m in overall]
        rows.append({
            "name": name, "path": section.run.root, "passed": section.passed,
            "n": len(section.queries), "value": overall.get(SECTION_METRIC),
            "delta": mine.overall.get(SECTION_METRIC) if mine else None,
            "worse": mine.worse if mine else None, "better": mine.better if mine else None,
            "metrics": [{"name": m, "label": label(m), "value": overall.get(m),
                         "delta": mine.overall.get(m) if mine else None,
                         "lower_is_better": measures.lower_is_better(m)} for m in shown],
            "shapes": _shape_rows(section, mine),
            "violations": [violation_line(v.scope, v.metric, v.value, v.rule, v.kind)
                           for v in section.violations],
            "violation_messages": [v.message for v in section.violations],
        })
    return rows


def _system_view(table: SystemTable, results: Results) -> dict[str, Any]:
    unlike = unlike_sizes(table)
    short = {s.label: {m.k for m in depth_marks(s, table.shape)} for s in results.systems}
    return {"shape": table.shape, "n": table.n, "columns": list(table.metrics),
            "rows": [{"label": name, "unlike": unlike[i],
                      "cells": [{"name": m, "mean": c.mean, "best": c.best, "marker": c.marker,
                                 "p": c.comparison.p_value if c.comparison else None,
                                 "p_adjusted": c.p_adjusted,
                                 "unmeasurable": at_k(label(m)) in short.get(name, ())}
                                for m, c in zip(table.metrics, cells, strict=True)]}
                     for i, (name, cells) in enumerate(zip(table.labels, table.cells,
                                                            strict=True))]}


def frontier_view(results: Results) -> dict[str, Any] | None:
    """The ``--budget`` frontier: a chart (a line per system) and its numbers, or ``None``
    (no budget, one system, or no question with gold facts)."""
    runs = [s for s in results.systems if s.frontier]
    budget = results.run.budget
    if budget is None or len(runs) < 2 or len(results.systems) != len(runs) or any(
            p.quality is None for s in runs for p in s.frontier):
        return None
    scales = [p.scale for p in runs[0].frontier]
    budgets = [f"{s:g}x" if budget == "neuralmind" else str(scaled(int(budget), s))
               for s in scales]
    lines = [[p.quality for p in s.frontier] for s in runs]
    return {"chart": Markup(chart.frontier_chart(label("faithfulness"), budgets, lines)),
            "budgets": budgets, "rows": [{"label": s.label, "points": [
                {"quality": p.quality, "tokens": p.tokens} for p in s.frontier]}
                for s in runs]}


def depth_marks(run: SystemRun, shape: str | None = None) -> tuple[Unmeasurable, ...]:
    """A system's not-measurable cut-offs (:mod:`evaluator.core.depth`) over its questions
    (of ``shape`` when given)."""
    queries = [q for q in run.queries if shape is None or q.shape == shape]
    ks = {k for q in queries for m in q.metrics if (k := at_k(m)) is not None}
    return unmeasurable(run.label, [(len(q.ranked_modules), q.short_of_depth)
                                    for q in queries], sorted(ks))


def systems_view(results: Results, *, test: SignificanceTest) -> list[dict[str, Any]]:
    """The ``--systems`` comparison: overall, then one table per shape (empty without it),
    tested with the run's own significance settings ``test`` (no default: a caller that
    forgot them must not get alpha 0.05 silently)."""
    if len(results.systems) < 2:
        return []
    scores = [s.scores() for s in results.systems]
    # The registry's system columns (ranx-style: systems as rows, measures as columns).
    columns = measures.system_columns()
    lower = frozenset(m for m in columns if measures.lower_is_better(m))
    return [_system_view(table, results) for table in system_tables(
        scores, columns, list(results.shapes), lower_is_better=lower, alpha=test.alpha,
        min_effect=test.min_effect, seed=test.seed)]


def _margin(floor: Floor, value: float | None) -> float | None:
    """How far ``value`` is on the safe side of ``floor`` (negative: missed by that much)."""
    if value is None or not math.isfinite(value):
        return None
    return value - floor.value if floor.op in (">=", ">") else floor.value - value


def _floor_text(floor: Floor) -> Markup:
    """``≥ 0.5`` — built from the parsed operator and number only, so it needs no escaping."""
    op = {">=": "≥", "<=": "≤"}.get(floor.op, floor.op)
    return Markup(f"{op} {floor.value:g}")


def _floor_rows(results: Results, policy: FloorPolicy) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    scopes: list[tuple[str, Mapping[str, float | None], Sequence[Floor]]] = [
        ("overall", results.overall.metrics, policy.aggregate)]
    scopes += [(f"shape {s}", a.metrics, policy.per_shape) for s, a in results.shapes.items()]
    for scope, metrics, floors in scopes:
        for floor in floors:
            value = metrics.get(floor.metric)
            rows.append({"scope": scope, "metric": floor.metric, "label": label(floor.metric),
                         "value": value, "rule": _floor_text(floor), "held": floor.holds(value),
                         "margin": _margin(floor, value), "misses": []})
    if policy.zero_miss:
        misses = [q.id for q in results.queries if q.metrics.get(ZERO_MISS_METRIC) == 0.0]
        rows.append({"scope": "every question", "metric": ZERO_MISS_METRIC,
                     "label": label(ZERO_MISS_METRIC), "value": None,
                     "rule": Markup("> 0"), "held": not misses, "margin": None, "misses": misses})
    return rows


def _move_view(m: QuestionMove) -> dict[str, Any]:
    return {"id": m.id, "question": m.question, "shape": m.shape, "metric": m.metric,
            "label": label(m.metric), "before": m.before, "after": m.after,
            "delta": m.delta, "direction": m.direction, "module": m.module, "grade": m.grade,
            "rank_before": m.rank_before, "rank_after": m.rank_after,
            "entered": list(m.entered), "left": list(m.left),
            "icon": {"worse": "❌", "better": "✅"}.get(m.direction, "➖")}


def _charts(results: Results, comparison: BaselineComparison | None,
            primary: str) -> list[Markup]:
    shapes = list(results.shapes)
    head = [results.shapes[s].metrics.get(primary) for s in shapes]
    base = None
    if comparison is not None:
        base = [(comparison.shapes.get(s, {}).get(primary) or MetricDelta(primary, None, None))
                .base for s in shapes]
    out = [Markup(chart.shape_chart(label(primary), shapes, head, base))] if shapes else []
    if comparison is not None:
        changed = [m for m in comparison.moves if m.changed][:CHART_QUESTIONS]
        if len(changed) >= 2:  # one changed question is said in full by the list above
            out.append(Markup(chart.delta_chart(label(primary), [m.id for m in changed],
                                                [m.delta for m in changed])))
    return out


@dataclass(frozen=True)
class ReportView:
    """The template's variables (documented in templates/comment.md.j2), every question
    included: ``queries`` holds each question's view, most changed and weakest first;
    :mod:`evaluator.render` shows as many of them as fit."""

    values: Mapping[str, Any]
    queries: tuple[Mapping[str, Any], ...]


def report_view(results: Results, *, comparison: BaselineComparison | None,
                extras: Extras, test: SignificanceTest,
                title: str = "Retrieval quality") -> ReportView:
    """Everything the report shows of ``results``; ``test``: the run's significance
    settings (the systems table's test)."""
    run = results.run
    overall = results.overall.metrics
    shown_metrics = [m for m in measures.headline() if m in overall]
    shown_metrics += [m for m in measures.when_computed() if overall.get(m) is not None]
    deltas: Mapping[str, MetricDelta] = comparison.overall if comparison else {}
    values = {
        "title": title,
        "passed": results.passed,
        "run": run,
        "commit": (run.commit or "")[:12],
        "n_queries": len(results.queries),
        "retrieval_only": sum(retrieval_only(q) for q in results.queries),
        "metrics": [{"name": m, "label": label(m), "value": results.overall.metrics.get(m),
                     "delta": deltas.get(m), "lower_is_better": measures.lower_is_better(m)}
                    for m in shown_metrics],
        "shape_columns": list(measures.shape_columns()),
        "shapes": _shape_rows(results, comparison),
        "sections": _section_rows(results, comparison),
        "section_metric": SECTION_METRIC,
        "violations": [violation_line(v.scope, v.metric, v.value, v.rule, v.kind)
                       for v in results.violations],
        "violation_messages": [v.message for v in results.violations],
        "comparison": comparison,
        "queries_total": len(results.queries),
        "query_line": [{"name": m, "label": shown} for m, shown in measures.detail_line()],
        "timings": run.timings,
        "warnings": list(run.warnings),
        "untracked": untracked_sentence(run.untracked) if run.untracked else None,
        "facts_measured": facts_measured(results),
        "drift": [p.message for p in run.drift],
        "judge_check": results.judge_check,
        "systems": systems_view(results, test=test),
        "systems_short": [note for s in results.systems
                          if (note := short_rankings(s, HEADLINE_K)) is not None]
        if len(results.systems) > 1 else [],
        "systems_depth": [m for s in results.systems for m in depth_marks(s)]
        if len(results.systems) > 1 else [],
        "weak": _weak(results),
        "weak_below": WEAK_BELOW,
        "weak_metric": WEAK_METRIC,
        "systems_test": test.as_dict(),
        "budget": run.budget,
        "frontier": frontier_view(results),
    } | _verdict_context(results, comparison, extras, shown_metrics)
    queries = tuple(_query_view(q, 10) for q in _order_queries(results, comparison))
    return ReportView(values, queries)


def _lead(results: Results, comparison: BaselineComparison | None, primary: str) -> str:
    head_primary = results.overall.metrics.get(primary)
    base_primary = None
    if comparison is not None and primary in comparison.overall:
        paired = comparison.overall[primary]
        base_primary, head_primary = paired.base, paired.head
    return lead_line(passed=results.passed, label=label(primary), head_value=head_primary,
                     base_value=base_primary,
                     counts=tally(comparison.moves) if comparison is not None else None,
                     n_questions=len(results.queries), missed=len(results.violations))


def _shape_table(results: Results, comparison: BaselineComparison | None, primary: str,
                 policy: FloorPolicy | None) -> list[dict[str, Any]]:
    """Rows (shape × metric): the primary metric and every per-shape floor's metric."""
    shape_floor_for = {f.metric: _floor_text(f) for f in policy.per_shape} if policy else {}
    shape_metrics = list(dict.fromkeys([primary, *(f.metric for f in policy.per_shape)]
                                       if policy else [primary, HIT_METRIC]))
    rows = []
    for shape, agg in results.shapes.items():
        shape_deltas = comparison.shapes.get(shape, {}) if comparison else {}
        for metric in shape_metrics:
            delta = shape_deltas.get(metric)
            rows.append({"shape": shape, "n": agg.n, "metric": metric, "label": label(metric),
                         "value": agg.metrics.get(metric),
                         "base": delta.base if delta else None, "delta": delta,
                         "floor": shape_floor_for.get(metric, "")})
    return rows


def _touched(results: Results, moves: Sequence[QuestionMove],
             extras: Extras) -> list[dict[str, Any]] | None:
    if extras.changed_files is None:
        return None
    link = extras.links
    return [{"id": t.id, "shape": t.shape, "question": t.question,
             "files": [{"path": f, "grade": g, "url": Markup(link.url(f)) if link else None}
                       for f, g in t.files],
             "move": _move_view(t.move) if t.move else None}
            for t in touched_questions(results, extras.changed_files, moves)]


def _floors_context(results: Results, policy: FloorPolicy | None) -> dict[str, Any]:
    rows = _floor_rows(results, policy) if policy else None
    return {
        "floor_rows": rows,
        "floors_missed": [f for f in rows or () if not f["held"]],
        "floors_met": sum(1 for f in rows or () if f["held"]),
        "floors_tightest": sorted((f for f in rows or () if f["held"]
                                   and f["margin"] is not None),
                                  key=lambda f: f["margin"])[:FLOORS_TIGHTEST],
        "gate_violations": [violation_line(v.scope, v.metric, v.value, v.rule, v.kind)
                            for v in results.violations if v.kind == "gate"],
    }


def _overlap_rows(results: Results, primary: str) -> list[dict[str, Any]]:
    """The "By overlap" rows: the questions that name their answer (a grade-3 module's file
    or symbol) and those that do not, with the primary metric's mean (none without the
    overlap, as in results written before it existed)."""
    known = [q for q in results.queries if q.overlap is not None]
    if not known:
        return []
    rows = []
    for text, names in (("name their answer", True), ("do not name it", False)):
        group = [q for q in known if q.overlap is not None and
                 q.overlap.names_answer is names]
        values = [v for q in group if (v := q.metrics.get(primary)) is not None]
        rows.append({"label": text, "n": len(group), "metric": primary,
                     "value": sum(values) / len(values) if values else None})
    return rows


def _verdict_context(results: Results, comparison: BaselineComparison | None, extras: Extras,
                     shown_metrics: Sequence[str]) -> dict[str, Any]:
    """The verdict-first sections: lead line, changed questions, floors with margins,
    Value | Base | Δ | Floor tables, statistics, PR-touched questions, charts, trend."""
    primary = comparison.primary.metric if comparison is not None else PRIMARY_METRIC
    moves = list(comparison.moves) if comparison is not None else []
    changed = [m for m in moves if m.changed]
    sig = significance(comparison) if comparison is not None else None
    deltas: Mapping[str, MetricDelta] = comparison.overall if comparison else {}
    floor_for = ({f.metric: _floor_text(f) for f in extras.floors.aggregate}
                 if extras.floors else {})
    trend = (list(history_doc.trend(extras.history, primary, extras.history_count,
                                    judge=results.run.judge))
             if extras.history is not None else [])
    return {
        "lead": _lead(results, comparison, primary),
        "primary": primary,
        "primary_label": label(primary),
        "changed": [_move_view(m) for m in changed[:CHANGED_SHOWN]],
        "changed_total": len(changed),
        "counts": tally(moves) if comparison is not None else None,
        "significance": sig,
        "significance_text": significance_sentences(sig, label(primary)) if sig else (),
        "overall_rows": [{"name": m, "label": label(m), "value": results.overall.metrics.get(m),
                          "base": deltas[m].base if m in deltas else None,
                          "delta": deltas.get(m), "lower_is_better": measures.lower_is_better(m),
                          "floor": floor_for.get(m, "")} for m in shown_metrics],
        "shape_table": _shape_table(results, comparison, primary, extras.floors),
        "overlap_rows": _overlap_rows(results, primary),
        "touched": _touched(results, moves, extras),
        "charts": _charts(results, comparison, primary),
        "trend": trend,
        "trend_note": history_doc.host_classes_note(extras.history, trend,
                                                    results.run.host_class)
        if extras.history is not None and len(trend) >= 2 else None,
        "trend_chart": Markup(chart.trend_chart(label(primary), trend)) if len(trend) >= 2
        else None,
        "mismatch": [d.message for d in extras.mismatch],
    } | _floors_context(results, extras.floors)


def probe_view() -> ReportView:
    """A tiny synthetic report: a user template is rendered against it before any work is
    done (every variable present, one of each row)."""
    from evaluator.core.floors import Violation
    from evaluator.core.results import RunInfo
    from evaluator.core.scoring import Aggregate, Diagnostics, Faithfulness, MissedModule

    metrics: dict[str, float | None] = dict.fromkeys(
        (*measures.headline(), *measures.shape_columns()), 0.5)
    row = QueryResult(
        id="q1", question="probe?", shape="focused", ranked_modules=("a.py",),
        expected={3: ("a.py",)}, metrics=metrics,
        faithfulness=Faithfulness(0.5, 0.0, 0.5, ("f",), ("g",)),
        diagnostics=Diagnostics(False, (MissedModule("b.py", None),), ("g",)),
        latency_ms=1.0)
    run = RunInfo(tool_version="0", neuralmind_version="0", backend="b", graph_source="g",
                  k_values=(5,), gain="exponential", threshold=1, queries_file="q",
                  queries_sha256="0", timings={"total_s": 0.0})
    probe = Results(run=run, overall=Aggregate(1, metrics), shapes={"focused":
                    Aggregate(1, metrics)}, queries=(row,),
                    violations=(Violation("overall", "mrr", 0.5, "mrr >= 0.9"),))
    # No systems are compared in the probe: the test's settings show only as numbers.
    return report_view(probe, comparison=None, extras=Extras(), test=DEFAULT_TEST)
