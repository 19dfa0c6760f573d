"""Mermaid chart sources (GitHub renders ```` ```mermaid ```` blocks in comments).

Four charts, all ``xychart-beta``:

* :func:`shape_chart` — the headline metric per question shape: bars for the head, a line
  for the baseline;
* :func:`delta_chart` — per-question deltas of the changed questions, worst first;
* :func:`trend_chart` — the headline metric over the last commits of the history;
* :func:`frontier_chart` — each system's quality at each budget of ``--budget``'s frontier.

Every label comes from user data (shape names, question ids, commits), so :func:`label`
keeps only ``[A-Za-z0-9 ._/+@-]`` and at most 24 characters: nothing can close the quoted
string, the code fence or the chart, and nothing reaches the page as Markdown or HTML.
Numbers are finite and written with three decimals.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

_UNSAFE = re.compile(r"[^A-Za-z0-9 ._/+@-]")
_TITLE_UNSAFE = re.compile(r"[^A-Za-z0-9 ._/+(),:@-]")
_MAX_LABEL = 24


def label(text: str) -> str:
    """A chart-safe label: unsafe characters become ``_``, at most 24 characters."""
    cleaned = _UNSAFE.sub("_", " ".join(str(text).split()))
    if len(cleaned) > _MAX_LABEL:
        cleaned = cleaned[: _MAX_LABEL - 1] + "_"
    return cleaned or "_"


def _num(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return "0"
    return f"{value:.3f}"


def _axis(labels: Sequence[str]) -> str:
    return "[" + ", ".join(f'"{label(x)}"' for x in labels) + "]"


def _series(values: Sequence[float | None]) -> str:
    return "[" + ", ".join(_num(v) for v in values) + "]"


def _fence(lines: Sequence[str]) -> str:
    return "```mermaid\n" + "\n".join(lines) + "\n```"


def _range(values: Sequence[float | None], *, symmetric: bool = False) -> tuple[float, float]:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    top = max([1.0, *finite]) if not symmetric else max([0.05, *(abs(v) for v in finite)])
    if symmetric:
        top = math.ceil(top * 20) / 20
        return -top, top
    return min([0.0, *finite]), top


def shape_chart(metric_label: str, shapes: Sequence[str], head: Sequence[float | None],
                base: Sequence[float | None] | None = None) -> str:
    """Bars: ``metric`` per shape on the head; line: the same on the baseline (if any).

    A missing value (``None``) is never drawn as 0: the bar chart needs a value per shape, so
    such shapes are left out, and the baseline line is left out when any shape lacks one.
    """
    keep = [i for i, v in enumerate(head) if v is not None and math.isfinite(v)]
    shapes, head = [shapes[i] for i in keep], [head[i] for i in keep]
    if base is not None:
        base = [base[i] for i in keep]
        if any(v is None or not math.isfinite(v) for v in base):
            base = None
    low, high = _range([*head, *(base or ())])
    title = f"{metric_label} by question shape" + (" (bars: this PR, line: base)"
                                                  if base is not None else "")
    lines = ["xychart-beta", f'    title "{_title(title)}"',
             f"    x-axis {_axis(shapes)}",
             f'    y-axis "{label(metric_label)}" {_num(low)} --> {_num(high)}',
             f"    bar {_series(head)}"]
    if base is not None:
        lines.append(f"    line {_series(base)}")
    return _fence(lines)


def delta_chart(metric_label: str, ids: Sequence[str], deltas: Sequence[float | None]) -> str:
    """Bars: per-question change of ``metric`` (head − base), in the order given."""
    low, high = _range(deltas, symmetric=True)
    lines = ["xychart-beta", f'    title "{_title(f"{metric_label} change per question")}"',
             f"    x-axis {_axis(ids)}",
             f'    y-axis "Δ {label(metric_label)}" {_num(low)} --> {_num(high)}',
             f"    bar {_series(deltas)}"]
    return _fence(lines)


def trend_chart(metric_label: str, points: Sequence[tuple[str, float]]) -> str:
    """Line: ``metric`` over the history's commits, oldest first."""
    low, high = _range([v for _, v in points])
    lines = ["xychart-beta",
             f'    title "{_title(f"{metric_label} over the last {len(points)} commits")}"',
             f"    x-axis {_axis([c for c, _ in points])}",
             f'    y-axis "{label(metric_label)}" {_num(low)} --> {_num(high)}',
             f"    line {_series([v for _, v in points])}"]
    return _fence(lines)


def frontier_chart(metric_label: str, budgets: Sequence[str],
                   lines: Sequence[Sequence[float | None]]) -> str:
    """Lines: ``metric`` of each system (in the order given) at each budget. xychart draws
    no legend: the caller lists the systems in the same order beside the chart."""
    low, high = _range([v for line in lines for v in line])
    lines_out = ["xychart-beta",
                 f'    title "{_title(f"{metric_label} by context budget, one line per system")}"',
                 f'    x-axis "context budget (tokens)" {_axis(budgets)}',
                 f'    y-axis "{label(metric_label)}" {_num(low)} --> {_num(high)}',
                 *(f"    line {_series(line)}" for line in lines)]
    return _fence(lines_out)


def _title(text: str) -> str:
    """Titles are ours but carry a metric label: same character set, longer limit."""
    return _TITLE_UNSAFE.sub("_", " ".join(text.split()))[:80]
