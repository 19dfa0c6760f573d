"""Code chunks for ``embedding``: what ``chunks=code`` embeds, and the source its hits show.

A Python module (one that parses) is cut at its definitions, as a code RAG cuts it: each
function or method is a chunk (decorators included; a nested function stays in its
parent), each class's own lines before its first method are a chunk, and the module's
lines outside any definition are windows of :data:`WINDOW_LINES` lines. Any other module
(or Python that does not parse) is windows of :data:`WINDOW_LINES` lines. A chunk longer
than :data:`MAX_CHUNK_LINES` lines is cut into windows of that many, named by their lines.
Blank chunks are left out. Pure: text in, chunks out.
"""

from __future__ import annotations

import ast
import warnings
from collections.abc import Iterator
from dataclasses import dataclass

WINDOW_LINES = 40
MAX_CHUNK_LINES = 80
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(frozen=True)
class Chunk:
    """One chunk: its module, its name (qualified name, or its lines), its source and the
    line it starts on (1-based)."""

    module: str
    name: str
    text: str
    line: int = 1

    @property
    def embedded(self) -> str:
        """The text embedded for it: where it is, then its source."""
        return f"{self.module}: {self.name}\n{self.text}"


def _start(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """The 0-based first line of a definition, its decorators included."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1


def _spans(body: list[ast.stmt], prefix: str) -> Iterator[tuple[str, int, int]]:
    """``(qualified name, first line, end line)`` (0-based, end exclusive) of each
    function, method and class head in ``body``."""
    for node in body:
        if not isinstance(node, _DEFS):
            continue
        name = f"{prefix}{node.name}"
        start, end = _start(node), node.end_lineno or node.lineno
        if isinstance(node, ast.ClassDef):
            inner = [n for n in node.body if isinstance(n, _DEFS)]
            head_end = _start(inner[0]) if inner else end
            yield name, start, head_end
            yield from _spans(node.body, f"{name}.")
        else:
            yield name, start, end


def _windows(module: str, lines: list[str], start: int, end: int, size: int,
             name: str | None = None) -> Iterator[Chunk]:
    for a in range(start, end, size):
        b = min(a + size, end)
        text = "\n".join(lines[a:b])
        if not text.strip():
            continue
        if name is None:
            label = f"lines {a + 1}-{b}"
        else:
            label = name if (a, b) == (start, end) else f"{name} (lines {a + 1}-{b})"
        yield Chunk(module, label, text, a + 1)


def chunks_of(module: str, text: str) -> tuple[Chunk, ...]:
    """The chunks of ``module`` (path) whose source is ``text``, in file order."""
    lines = text.splitlines()
    spans: list[tuple[str, int, int]] = []
    if module.endswith((".py", ".pyi")):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # invalid escapes in a checkout's source
                tree = ast.parse(text)
            spans = sorted(_spans(tree.body, ""), key=lambda s: s[1])
        except (SyntaxError, ValueError, RecursionError):
            spans = []
    out: list[Chunk] = []
    covered = [False] * len(lines)
    for name, a, b in spans:
        for i in range(a, b):
            covered[i] = True
        out += _windows(module, lines, a, b, MAX_CHUNK_LINES, name)
    rest_start = None
    for i in range(len(lines) + 1):  # the lines outside every definition, run by run
        free = i < len(lines) and not covered[i]
        if free and rest_start is None:
            rest_start = i
        elif not free and rest_start is not None:
            out += _windows(module, lines, rest_start, i, WINDOW_LINES)
            rest_start = None
    return tuple(sorted(out, key=lambda c: c.line))
