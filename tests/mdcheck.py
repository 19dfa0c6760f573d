"""Parse rendered Markdown as GitHub does (CommonMark + GFM tables, raw HTML allowed) and
list anything user text could have injected: HTML tags, @mentions, links, extra table cells."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt
from markdown_it.token import Token

TEMPLATE_HTML = re.compile(r"^\s*</?(details|summary|sub)>\s*$|^\s*<details><summary>|"
                           r"</summary>\s*$")
MENTION = re.compile(r"(?<![A-Za-z0-9`])@[A-Za-z0-9]")


def _parser() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def _walk(tokens: list[Token]):
    for token in tokens:
        yield token
        if token.children:
            yield from _walk(token.children)


def problems(markdown: str, *, allowed_link_prefix: str = "https://github.com/") -> list[str]:
    out: list[str] = []
    tokens = _parser().parse(markdown)
    row_cells: list[int] = []
    header_cells = 0
    cells = 0
    for token in _walk(tokens):
        if token.type in ("html_inline", "html_block"):
            for piece in re.findall(r"<[^>]*>", token.content):
                if not re.fullmatch(r"</?(details|summary|sub)>", piece):
                    out.append(f"HTML from input: {piece!r}")
        elif token.type == "inline":
            # The source, outside code spans: a raw @name there would mention someone
            # (an entity-escaped &#64; does not, and a code span never does).
            source = re.sub(r"(`+).*?\1", "", token.content)
            if MENTION.search(source):
                out.append(f"mention: {token.content!r}")
        elif token.type == "link_open":
            href = token.attrGet("href") or ""
            if not str(href).startswith(allowed_link_prefix):
                out.append(f"link: {href!r}")
        elif token.type == "thead_open":
            header_cells = -1
        elif token.type == "tr_open":
            cells = 0
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            if header_cells == -1:
                header_cells = cells
            row_cells.append(cells)
        elif token.type == "table_close":
            if any(c != header_cells for c in row_cells):
                out.append(f"table rows with other cell counts: {row_cells}")
            row_cells = []
    return out


def inline_code(markdown: str) -> list[str]:
    """The contents of every code span."""
    return [t.content for t in _walk(_parser().parse(markdown)) if t.type == "code_inline"]
