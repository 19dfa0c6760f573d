"""Markdown rendering of a :class:`~evaluator.report_views.ReportView`: formatting only.

The view (every number, verdict, significance test and row) is computed by the application
(:mod:`evaluator.reporting`); this module picks the template, renders it in the sandbox of
:mod:`evaluator.template_sandbox` (the only module that imports jinja2) and shrinks the
result to fit where it goes.

A pull-request comment may hold at most 65,536 characters. :func:`render_comment` drops
detail in steps (per-query details beyond the worst N, then the per-query section, then the
per-shape table) until the comment fits, and says what it dropped; the full report still
goes to the job summary and to a file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.report_views import ReportView
from evaluator.template_sandbox import render_template

COMMENT_LIMIT = 65_536
COMMENT_MARGIN = 512  # room for the sticky marker and anything a caller appends
DETAIL_STEPS: tuple[int | None, ...] = (None, 25, 10, 3, 0)
_BLANK_RUNS = re.compile(r"\n{3,}")


@dataclass(frozen=True)
class Rendered:
    text: str
    dropped: tuple[str, ...]


def _shown(view: ReportView, detail_limit: int | None,
           dropped: Sequence[str]) -> dict[str, Any]:
    """The view's variables with at most ``detail_limit`` questions' details."""
    shown = view.queries if detail_limit is None else view.queries[:detail_limit]
    return {**view.values, "queries": list(shown), "queries_shown": len(shown),
            "show_queries": detail_limit != 0,
            "show_shapes": "shapes" not in " ".join(dropped), "dropped": list(dropped)}


def render(view: ReportView, *, template: Path | None = None, name: str = "comment.md.j2",
           detail_limit: int | None = None, dropped: Sequence[str] = ()) -> str:
    """The report of ``view`` through ``template`` (a user's, sandboxed) or the built-in
    ``name``, with at most ``detail_limit`` questions' details."""
    text = render_template(template, name, _shown(view, detail_limit, dropped))
    # Blank-line runs are one paragraph break in Markdown; keep the source tidy.
    return _BLANK_RUNS.sub("\n\n", text) if name.endswith(".md.j2") else text


def render_text(view: ReportView) -> str:
    """The plain-text terminal summary."""
    return render(view, name="summary.txt.j2")


def render_comment(view: ReportView, *, template: Path | None = None,
                   limit: int = COMMENT_LIMIT - COMMENT_MARGIN,
                   size: Callable[[str], int] = len, full: str | None = None) -> Rendered:
    """The comment body within ``limit`` (``size``: characters by default), dropping detail
    step by step. ``full``: the full report when the caller rendered it already."""
    dropped: list[str] = []
    text = full if full is not None else render(view, template=template)
    if size(text) <= limit:
        return Rendered(text, ())
    total = len(view.queries)
    for step in DETAIL_STEPS[1:]:
        assert step is not None
        if step >= total:
            continue
        dropped = [f"per-query details beyond the worst {step} of {total} queries"
                   if step else "the per-query section"]
        text = render(view, template=template, detail_limit=step, dropped=dropped)
        if size(text) <= limit:
            return Rendered(text, tuple(dropped))
    dropped = ["the per-query section", "the per-shape table"]
    text = render(view, template=template, detail_limit=0, dropped=dropped)
    if size(text) > limit:
        marker = "\n\n…(truncated to fit a GitHub comment; the full report is in the job summary)"
        while size(text) + size(marker) > limit and text:
            text = text[: max(0, len(text) - max(1, size(text) + size(marker) - limit))]
        text += marker
        dropped.append("the end of the report")
    return Rendered(text, tuple(dropped))


SUMMARY_LIMIT = 1024 * 1024 - 4096  # GitHub's step summary: at most 1 MiB (bytes) per step


def render_summary(view: ReportView, *, template: Path | None = None,
                   full: str | None = None) -> Rendered:
    """The job-summary report: the full report, shrunk like the comment if over 1 MiB."""
    return render_comment(view, template=template, limit=SUMMARY_LIMIT,
                          size=lambda text: len(text.encode("utf-8")), full=full)
