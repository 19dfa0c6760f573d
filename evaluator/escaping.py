"""Markdown escaping and the number formats of the report templates' filters.

Every ``{{ expression }}`` of a Markdown template is escaped by :func:`md_escape` unless it
is ``Markup``: user text (questions, module paths, shapes) cannot inject HTML, close a table
or ``@mention`` anyone. :func:`md_code` makes user text an inert code span. The ``fmt_*``
functions are the templates' ``value``, ``delta``, ``rank``… filters. Nothing here computes:
each function formats one value it is given.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from markupsafe import Markup

from evaluator.core import measures
from evaluator.core.textcheck import visible

if TYPE_CHECKING:
    from evaluator.core.compare import MetricDelta


# Escaped everywhere: HTML (<, >), code spans (`), table cells (|), links ([, ]), the
# backslash itself, and ~ (GitHub strikes through ~one~ tilde as well as ~~two~~). ``@``
# only where it could start a mention (not after a letter or digit); ``_`` and ``*`` only
# where they could start emphasis (not inside a word).
_MD_SPECIAL = re.compile(
    r"([\\`{}\[\]<>|~&]|(?<![A-Za-z0-9])@|(?<![A-Za-z0-9])[_*]|[_*](?![A-Za-z0-9])|^[#!])")
# & too: "&#x202E;" in plain ASCII would otherwise be shown as the character it names.
_ENTITIES = {"<": "&lt;", ">": "&gt;", "@": "&#64;", "|": "&#124;", "&": "&amp;"}
# A code span the user wrote (`Cart.checkout()`): kept as one, since nothing inside a code
# span is Markdown or HTML; a lone backtick is escaped (it would pair with a later one).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


_SPAN_UNSAFE = re.compile(r"[<>|&]|(?<![A-Za-z0-9])@")
_SPAN_ENTITIES = {"<": "&lt;", ">": "&gt;", "@": "&#64;", "|": "\\|", "&": "&amp;"}


def _escape_prose(text: str) -> str:
    return _MD_SPECIAL.sub(lambda m: _ENTITIES.get(m.group(1), "\\" + m.group(1)), text)


def md_escape(value: object) -> str:
    """Escape user text for Markdown tables and prose; newlines become spaces.

    The result cannot open HTML, close a table cell, start a link, or ``@mention`` anyone;
    ordinary identifiers such as ``hit_rate`` or ``a@b`` stay readable, and a code span the
    text holds (a pair of backticks) stays a code span (``|`` inside it written ``\\|``,
    ``<``, ``>`` and a mention's ``@`` as entities).
    """
    text = visible(" ".join(str(value).split()))
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


def md_code(value: object) -> Markup:
    """User text as an inline code span: readable (no backslash escapes) and inert.

    Nothing inside a code span is Markdown or HTML, so it cannot open a tag, a link or a
    mention. Whitespace runs (newlines) become one space; the fence is one backtick longer
    than the longest run inside (CommonMark), padded when the text starts or ends with a
    backtick; ``|`` is written ``\\|`` so a table cell stays one cell (GFM tables honour that
    escape inside code spans).
    """
    text = visible(" ".join(str(value).split()))
    if not text:
        return Markup("` `")
    longest = max((len(m.group(0)) for m in _BACKTICKS.finditer(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return Markup(f"{fence}{pad}{text.replace('|', chr(92) + '|')}{pad}{fence}")


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

