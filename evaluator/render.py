"""Markdown rendering with Jinja2: the only module that imports jinja2.

Templates live in the top-level ``templates/`` folder (packaged as ``evaluator/templates``).
Every ``{{ expression }}`` is escaped for Markdown unless it is ``Markup``: user text
(questions, module paths, shapes) cannot inject HTML, close a table or ``@mention`` anyone.
``StrictUndefined`` makes a template typo fail loudly. A user template can extend the
default one: ``{% extends "builtin/comment.md.j2" %}`` and override its blocks.

A pull-request comment may hold at most 65,536 characters. :func:`render_comment` drops
detail in steps (per-query details beyond the worst N, then the per-query section, then the
per-shape table) until the comment fits, and says what it dropped; the full report still
goes to the job summary and to a file.
"""

from __future__ import annotations

import math
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
import jinja2.exceptions
import jinja2.filters
import jinja2.sandbox
from markupsafe import Markup

from evaluator.core import chart, measures
from evaluator.core import history as history_doc
from evaluator.core.budget import scaled
from evaluator.core.comparability import SettingDifference
from evaluator.core.compare import MOVER_METRIC as _ORDER_METRIC
from evaluator.core.compare import BaselineComparison, MetricDelta
from evaluator.core.floors import ZERO_MISS_METRIC, Floor, FloorPolicy
from evaluator.core.judge import anchored_share
from evaluator.core.measures import HEADLINE_K
from evaluator.core.moves import QuestionMove, tally
from evaluator.core.results import Results, significance_of, untracked_sentence
from evaluator.core.scoring import QueryResult, retrieval_only
from evaluator.core.systems import (
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
from evaluator.errors import InputError
from evaluator.paths import confine, regular_file

COMMENT_LIMIT = 65_536
COMMENT_MARGIN = 512  # room for the sticky marker and anything a caller appends
HEADLINE = measures.headline()
SHAPE_COLUMNS = measures.shape_columns()
# The columns of the --systems comparison table (ranx-style: systems as rows).
SYSTEM_COLUMNS = measures.system_columns()
DETAIL_STEPS: tuple[int | None, ...] = (None, 25, 10, 3, 0)

# Escaped everywhere: HTML (<, >), code spans (`), table cells (|), links ([, ]), the
# backslash itself, and ~ (GitHub strikes through ~one~ tilde as well as ~~two~~). ``@``
# only where it could start a mention (not after a letter or digit); ``_`` and ``*`` only
# where they could start emphasis (not inside a word).
_MD_SPECIAL = re.compile(
    r"([\\`{}\[\]<>|~]|(?<![A-Za-z0-9])@|(?<![A-Za-z0-9])[_*]|[_*](?![A-Za-z0-9])|^[#!])")
_ENTITIES = {"<": "&lt;", ">": "&gt;", "@": "&#64;", "|": "&#124;"}
# A code span the user wrote (`Cart.checkout()`): kept as one, since nothing inside a code
# span is Markdown or HTML; a lone backtick is escaped (it would pair with a later one).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


_SPAN_UNSAFE = re.compile(r"[<>|]|(?<![A-Za-z0-9])@")
_SPAN_ENTITIES = {"<": "&lt;", ">": "&gt;", "@": "&#64;", "|": "\\|"}


def _escape_prose(text: str) -> str:
    return _MD_SPECIAL.sub(lambda m: _ENTITIES.get(m.group(1), "\\" + m.group(1)), text)


def md_escape(value: object) -> str:
    """Escape user text for Markdown tables and prose; newlines become spaces.

    The result cannot open HTML, close a table cell, start a link, or ``@mention`` anyone;
    ordinary identifiers such as ``hit_rate`` or ``a@b`` stay readable, and a code span the
    text holds (a pair of backticks) stays a code span (``|`` inside it written ``\\|``,
    ``<``, ``>`` and a mention's ``@`` as entities).
    """
    text = " ".join(str(value).split())
    out, at = [], 0
    for span in _CODE_SPAN.finditer(text):
        out.append(_escape_prose(text[at:span.start()]))
        # < > & @ as entities too: the span may land in an HTML block (a <summary>), where
        # it is not a code span; in Markdown they then show as written.
        out.append(_SPAN_UNSAFE.sub(lambda m: _SPAN_ENTITIES[m.group(0)], span.group(0)))
        at = span.end()
    out.append(_escape_prose(text[at:]))
    return "".join(out)


_BACKTICKS = re.compile(r"`+")
_BLANK_RUNS = re.compile(r"\n{3,}")


def md_code(value: object) -> Markup:
    """User text as an inline code span: readable (no backslash escapes) and inert.

    Nothing inside a code span is Markdown or HTML, so it cannot open a tag, a link or a
    mention. Whitespace runs (newlines) become one space; the fence is one backtick longer
    than the longest run inside (CommonMark), padded when the text starts or ends with a
    backtick; ``|`` is written ``\\|`` so a table cell stays one cell (GFM tables honour that
    escape inside code spans).
    """
    text = " ".join(str(value).split())
    if not text:
        return Markup("` `")
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return Markup(f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}")


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


def _finalize(value: object) -> object:
    if isinstance(value, Markup):
        return value
    if isinstance(value, bool | int | float) or value is None:
        return Markup(str(value))
    return Markup(md_escape(value))


def _plain(value: object) -> object:
    return value


label = measures.label


def fmt_value(value: float | None, metric: str = "") -> Markup:
    if value is None:
        return Markup("n/a")
    if measures.unit(metric) == "tokens":
        return Markup(f"{value:,.0f}")
    if measures.unit(metric) == "times":
        return Markup(f"{value:.1f}×")
    return Markup(f"{value:.3f}")


def fmt_signed(value: float) -> Markup:
    """``+0.031`` / ``−0.020`` with a real minus sign."""
    return Markup(f"{value:+.3f}".replace("-", "−"))


def fmt_delta_short(delta: MetricDelta | None) -> Markup:
    """``↑ +0.050`` for table cells (no word)."""
    full = str(fmt_delta(delta))
    return Markup(full.split(" (")[0])


def violation_line(scope: str, metric: str, value: float | None, rule: str,
                   kind: str = "floor") -> Markup:
    shown = "not computed" if value is None else f"{value:.3f}"
    pretty = rule.replace(">=", "≥").replace("<=", "≤")
    # Every part is escaped: a results file can come from untrusted code (fork-safe flow).
    return Markup(f"{md_escape(scope)}: {md_escape(metric)} = {shown}, {md_escape(kind)} "
                  f"{md_escape(pretty)}")


def fmt_delta(delta: MetricDelta | None) -> Markup:
    """``↑ +0.031 (better)`` — direction by arrow and by word, readable without colour."""
    if delta is None or delta.delta is None:
        return Markup("n/a")
    d = delta.delta
    tokens = measures.unit(delta.metric) == "tokens"
    if abs(d) < (0.5 if tokens else 5e-4):
        return Markup("→ ±0")
    arrow = "↑" if d > 0 else "↓"
    number = f"{d:+,.0f}" if tokens else f"{d:+.3f}"
    word = "better" if delta.improved else "worse"
    return Markup(f"{arrow} {number.replace('-', '−')} ({word})")


def fmt_blank_delta(delta: MetricDelta | None, *, words: bool = False) -> Markup:
    """``↓ −0.016`` (``words``: ``↓ −0.016 (worse)``) for a table cell; blank when nothing
    moved at three decimals, or when there is nothing to compare."""
    text = str(fmt_delta(delta) if words else fmt_delta_short(delta))
    return Markup("") if text in ("→ ±0", "n/a") else Markup(text)


def fmt_rank(rank: int | None) -> Markup:
    return Markup("not retrieved" if rank is None else f"#{rank}")


@dataclass(frozen=True)
class Rendered:
    text: str
    dropped: tuple[str, ...]


def templates_dir() -> Path:
    """The packaged templates (wheel) or the repository's ``templates/`` (editable install)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates", here.parent / "templates"):
        if (candidate / "comment.md.j2").is_file():
            return candidate
    raise InputError("the default templates are missing from this installation")


# A template from the repository renders under a budget: this much time and output at most.
TEMPLATE_SECONDS = 5.0
TEMPLATE_MAX_CHARS = 4_000_000
_MAX_ARG = 100_000  # the largest number a template may pass to a function or filter
_WIDE_FORMAT = re.compile(r"(?:%[-#0 +]*|\{[^}]*:[^}]*?)(\d{6,})")


class TemplateBudgetExceeded(Exception):
    """A user template went over its time or size budget (internal; becomes InputError)."""


def _check_args(args: Sequence[object], kwargs: Mapping[str, object]) -> None:
    for value in (*args, *kwargs.values()):
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _MAX_ARG:
            raise jinja2.exceptions.SecurityError(
                f"the number {value} is too large for a template (at most {_MAX_ARG:,})")
        if isinstance(value, str) and _WIDE_FORMAT.search(value):
            raise jinja2.exceptions.SecurityError("a format width that large is not allowed")


class _BudgetSandbox(jinja2.sandbox.SandboxedEnvironment):
    """The sandbox, plus: no huge repetitions or powers, no huge numeric arguments, and a
    deadline checked on every call (the line tracer in :func:`_render_budgeted` covers
    loops that call nothing)."""

    intercepted_binops = frozenset({"*", "**"})
    deadline: float = float("inf")

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "**":
            if isinstance(right, int | float) and abs(right) > 64:
                raise jinja2.exceptions.SecurityError("an exponent that large is not allowed")
        else:
            for seq, times in ((left, right), (right, left)):
                if isinstance(seq, str | list | tuple) and isinstance(times, int) \
                        and len(seq) * times > TEMPLATE_MAX_CHARS:
                    raise TemplateBudgetExceeded(
                        f"a repetition of {len(seq) * times:,} items is over the "
                        f"{TEMPLATE_MAX_CHARS:,} limit (size budget)")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any,
             **kwargs: Any) -> Any:
        if time.monotonic() > __self.deadline:
            raise TemplateBudgetExceeded(f"rendering took over {TEMPLATE_SECONDS:g} s "
                                         "(time budget)")
        _check_args(args, kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and _WIDE_FORMAT.search(owner):
            raise jinja2.exceptions.SecurityError("a format width that large is not allowed")
        return super().call(__context, __obj, *args, **kwargs)


def _guard_filter(func: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        _check_args(args[1:], kwargs)
        if args and isinstance(args[0], str) and func is _FORMAT and \
                _WIDE_FORMAT.search(args[0]):
            raise jinja2.exceptions.SecurityError("a format width that large is not allowed")
        return func(*args, **kwargs)
    for attr in ("jinja_pass_arg",):
        if hasattr(func, attr):
            setattr(guarded, attr, getattr(func, attr))
    return guarded


_FORMAT = jinja2.filters.FILTERS["format"]
_SIZED_FILTERS = ("center", "indent", "wordwrap", "truncate", "format", "batch", "slice",
                  "filesizeformat", "round")


TEMPLATE_MAX_BYTES = 1024 * 1024


class _ConfinedLoader(jinja2.FileSystemLoader):
    """A repository's template folder. Every file a template loads from it (``include``,
    ``import``, ``extends``) must be a regular file inside the folder once symlinks are
    followed, and at most :data:`TEMPLATE_MAX_BYTES`: a committed link to
    ``/proc/self/environ`` must not put the runner's environment into the comment."""

    def get_source(self, environment: jinja2.Environment,
                   template: str) -> tuple[str, str, Callable[[], bool]]:
        root = Path(self.searchpath[0])
        path = root.joinpath(*jinja2.loaders.split_template_path(template))
        if not path.exists() and not path.is_symlink():
            raise jinja2.TemplateNotFound(template)
        confine(path, root, setting=f"template {template!r}")
        regular_file(path, what="template")
        if path.stat().st_size > TEMPLATE_MAX_BYTES:
            raise InputError(f"template {template!r} is larger than "
                             f"{TEMPLATE_MAX_BYTES // 1024} KiB")
        return super().get_source(environment, template)


def environment(template: Path | None = None, *, markdown: bool = True) -> jinja2.Environment:
    builtin = jinja2.FileSystemLoader(str(templates_dir()))
    loaders: list[jinja2.BaseLoader] = []
    if template is not None:
        loaders.append(_ConfinedLoader(str(template.parent)))
    loaders += [jinja2.PrefixLoader({"builtin": builtin}), builtin]
    # Sandboxed: a template from the repository under test must not reach Python internals.
    env = _BudgetSandbox(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        finalize=_finalize if markdown else _plain,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(md=lambda v: Markup(md_escape(v)), code=md_code, value=fmt_value,
                       delta=fmt_delta, blank_delta=fmt_blank_delta, rank=fmt_rank,
                       delta_short=fmt_delta_short, signed=fmt_signed,
                       label=lambda m: Markup(md_escape(label(m))))
    if template is not None:
        for name in _SIZED_FILTERS:
            if name in env.filters:
                env.filters[name] = _guard_filter(env.filters[name])
        env.globals.pop("lipsum", None)
    return env


def _render_budgeted(tmpl: jinja2.Template, env: jinja2.Environment, values: dict[str, Any],
                     ) -> str:
    """Render under :data:`TEMPLATE_SECONDS` and :data:`TEMPLATE_MAX_CHARS`.

    A line tracer runs only in the template's compiled code (not in Python libraries), so a
    nested loop that calls nothing is stopped too; the output is counted as it streams.
    """
    deadline = time.monotonic() + TEMPLATE_SECONDS
    if isinstance(env, _BudgetSandbox):
        env.deadline = deadline

    def local(frame: Any, event: str, arg: Any) -> Any:
        if event == "line" and time.monotonic() > deadline:
            raise TemplateBudgetExceeded(f"rendering took over {TEMPLATE_SECONDS:g} s "
                                         "(time budget)")
        return local

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        return None if frame.f_code.co_filename.endswith(".py") else local

    previous = sys.gettrace()
    parts: list[str] = []
    size = 0
    sys.settrace(tracer)
    try:
        for chunk in tmpl.generate(**values):
            size += len(chunk)
            if size > TEMPLATE_MAX_CHARS:
                raise TemplateBudgetExceeded(f"the output is over {TEMPLATE_MAX_CHARS:,} "
                                             "characters (size budget)")
            if time.monotonic() > deadline:
                raise TemplateBudgetExceeded(f"rendering took over {TEMPLATE_SECONDS:g} s "
                                             "(time budget)")
            parts.append(chunk)
    finally:
        sys.settrace(previous)
    return "".join(parts)


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
    if q.metrics.get("hit_rate") != 1:
        return "❌"
    return "⚠️" if q.diagnostics.missed_top else "✅"


#: "Weak queries" lists the questions whose nDCG@5 is below this (N-15's nDCG@5 floor).
WEAK_BELOW = 0.5
WEAK_METRIC = "ndcg@5"


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


SECTION_METRIC = "ndcg@5"  # the headline of a section's row


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
        shown = [m for m in HEADLINE if m in overall]
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


def _system_view(table: SystemTable) -> dict[str, Any]:
    unlike = unlike_sizes(table)
    return {"shape": table.shape, "n": table.n, "columns": list(table.metrics),
            "rows": [{"label": label, "unlike": unlike[i],
                      "cells": [{"name": m, "mean": c.mean, "best": c.best, "marker": c.marker,
                                 "p": c.comparison.p_value if c.comparison else None,
                                 "p_adjusted": c.p_adjusted}
                                for m, c in zip(table.metrics, cells, strict=True)]}
                     for i, (label, cells) in enumerate(zip(table.labels, table.cells,
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


def systems_view(results: Results) -> list[dict[str, Any]]:
    """The ``--systems`` comparison: overall, then one table per shape (empty without it),
    tested with the run's own significance settings (``run.significance``)."""
    if len(results.systems) < 2:
        return []
    scores = [s.scores() for s in results.systems]
    lower = frozenset(m for m in SYSTEM_COLUMNS if measures.lower_is_better(m))
    test = significance_of(results.run)
    return [_system_view(table) for table in system_tables(
        scores, SYSTEM_COLUMNS, list(results.shapes), lower_is_better=lower, alpha=test.alpha,
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


def context(results: Results, *, comparison: BaselineComparison | None = None,
            detail_limit: int | None = None, dropped: Sequence[str] = (),
            title: str = "Retrieval quality", extras: Extras | None = None) -> dict[str, Any]:
    """The template's variables (documented in templates/comment.md.j2)."""
    extras = extras or Extras()
    run = results.run
    overall = results.overall.metrics
    shown_metrics = [m for m in HEADLINE if m in overall]
    shown_metrics += [m for m in measures.when_computed() if overall.get(m) is not None]
    deltas: Mapping[str, MetricDelta] = comparison.overall if comparison else {}
    shape_rows = _shape_rows(results, comparison)
    ordered = _order_queries(results, comparison)
    shown = ordered if detail_limit is None else ordered[:detail_limit]
    return {
        "title": title,
        "passed": results.passed,
        "run": run,
        "commit": (run.commit or "")[:12],
        "n_queries": len(results.queries),
        "retrieval_only": sum(retrieval_only(q) for q in results.queries),
        "metrics": [{"name": m, "label": label(m), "value": results.overall.metrics.get(m),
                     "delta": deltas.get(m), "lower_is_better": measures.lower_is_better(m)}
                    for m in shown_metrics],
        "shape_columns": list(SHAPE_COLUMNS),
        "shapes": shape_rows,
        "sections": _section_rows(results, comparison),
        "section_metric": SECTION_METRIC,
        "violations": [violation_line(v.scope, v.metric, v.value, v.rule, v.kind)
                       for v in results.violations],
        "violation_messages": [v.message for v in results.violations],
        "comparison": comparison,
        "queries": [_query_view(q, 10) for q in shown],
        "queries_total": len(ordered),
        "queries_shown": len(shown),
        "show_queries": detail_limit != 0,
        "show_shapes": "shapes" not in " ".join(dropped),
        "dropped": list(dropped),
        "timings": run.timings,
        "warnings": list(run.warnings),
        "untracked": untracked_sentence(run.untracked) if run.untracked else None,
        "facts_measured": facts_measured(results),
        "drift": [p.message for p in run.drift],
        "judge_check": results.judge_check,
        "systems": systems_view(results),
        "systems_short": [note for s in results.systems
                          if (note := short_rankings(s, HEADLINE_K)) is not None]
        if len(results.systems) > 1 else [],
        "weak": _weak(results),
        "weak_below": WEAK_BELOW,
        "weak_metric": WEAK_METRIC,
        "systems_test": significance_of(results.run).as_dict(),
        "budget": results.run.budget,
        "frontier": frontier_view(results),
    } | _verdict_context(results, comparison, extras, shown_metrics)


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
                                       if policy else [primary, "hit_rate"]))
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
    primary = comparison.primary.metric if comparison is not None else "ndcg@5"
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


def render(results: Results, *, comparison: BaselineComparison | None = None,
           template: Path | None = None, name: str = "comment.md.j2",
           detail_limit: int | None = None, dropped: Sequence[str] = (),
           extras: Extras | None = None) -> str:
    env = environment(template, markdown=name.endswith(".md.j2"))
    target = template.name if template is not None else name
    try:
        tmpl = env.get_template(target)
        values = context(results, comparison=comparison, detail_limit=detail_limit,
                         dropped=dropped, extras=extras)
        text = tmpl.render(**values) if template is None else _render_budgeted(tmpl, env,
                                                                               values)
        # Blank-line runs are one paragraph break in Markdown; keep the source tidy.
        return _BLANK_RUNS.sub("\n\n", text) if name.endswith(".md.j2") else text
    except TemplateBudgetExceeded as err:
        raise InputError(f"template {template} stopped: {err}",
                         hint="simplify the template") from None
    except RecursionError:
        raise InputError(f"template {target} recurses too deeply") from None
    except UnicodeDecodeError:
        raise InputError(f"template {target} is not UTF-8 text") from None
    except jinja2.TemplateSyntaxError as err:
        raise InputError(f"template {err.filename or target} line {err.lineno}: "
                         f"{err.message}") from None
    except jinja2.TemplateNotFound as err:
        raise InputError(f"template {err.name} not found") from None
    except jinja2.UndefinedError as err:
        raise InputError(f"template {target} failed to render: {err.message}") from None
    except jinja2.exceptions.SecurityError as err:
        raise InputError(f"template {target} is not allowed: {err}") from None
    except jinja2.TemplateError as err:
        raise InputError(f"template {target} failed to render: {err}") from None
    except InputError:
        raise
    except (ArithmeticError, TypeError, ValueError, LookupError, AttributeError) as err:
        if template is None:  # a built-in template: a bug of ours, shown as one
            raise
        raise InputError(f"template {target} failed to render: {err}",
                         hint="fix the expression in the template") from None


def render_text(results: Results, *, comparison: BaselineComparison | None = None) -> str:
    """The plain-text terminal summary."""
    return render(results, comparison=comparison, name="summary.txt.j2")


def render_comment(results: Results, *, comparison: BaselineComparison | None = None,
                   template: Path | None = None,
                   limit: int = COMMENT_LIMIT - COMMENT_MARGIN,
                   size: Callable[[str], int] = len, full: str | None = None,
                   extras: Extras | None = None) -> Rendered:
    """The comment body within ``limit`` (``size``: characters by default), dropping detail
    step by step. ``full``: the full report when the caller rendered it already."""
    dropped: list[str] = []
    text = full if full is not None else render(results, comparison=comparison,
                                                template=template, extras=extras)
    if size(text) <= limit:
        return Rendered(text, ())
    total = len(results.queries)
    for step in DETAIL_STEPS[1:]:
        assert step is not None
        if step >= total:
            continue
        dropped = [f"per-query details beyond the worst {step} of {total} queries"
                   if step else "the per-query section"]
        text = render(results, comparison=comparison, template=template, detail_limit=step,
                      dropped=dropped, extras=extras)
        if size(text) <= limit:
            return Rendered(text, tuple(dropped))
    dropped = ["the per-query section", "the per-shape table"]
    text = render(results, comparison=comparison, template=template, detail_limit=0,
                  dropped=dropped, extras=extras)
    if size(text) > limit:
        marker = "\n\n…(truncated to fit a GitHub comment; the full report is in the job summary)"
        while size(text) + size(marker) > limit and text:
            text = text[: max(0, len(text) - max(1, size(text) + size(marker) - limit))]
        text += marker
        dropped.append("the end of the report")
    return Rendered(text, tuple(dropped))


SUMMARY_LIMIT = 1024 * 1024 - 4096  # GitHub's step summary: at most 1 MiB (bytes) per step


def render_summary(results: Results, *, comparison: BaselineComparison | None = None,
                   template: Path | None = None, full: str | None = None,
                   extras: Extras | None = None) -> Rendered:
    """The job-summary report: the full report, shrunk like the comment if over 1 MiB."""
    return render_comment(results, comparison=comparison, template=template,
                          limit=SUMMARY_LIMIT, size=lambda text: len(text.encode("utf-8")),
                          full=full, extras=extras)


def check_template(template: Path) -> None:
    """Render a user template against a tiny synthetic result, before any work is done."""
    from evaluator.core.floors import Violation
    from evaluator.core.results import RunInfo
    from evaluator.core.scoring import (
        Aggregate,
        Diagnostics,
        Faithfulness,
        MissedModule,
    )

    if not template.is_file():
        raise InputError(f"template {template} does not exist")
    metrics: dict[str, float | None] = dict.fromkeys((*HEADLINE, *SHAPE_COLUMNS), 0.5)
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
    render(probe, template=template)
