"""The rooms of ``evaluator/`` for docs/architecture.md: each module's duty, from its docstring.

A module's duty is the first sentence of its docstring; its room is where it lives and what
it imports: ``evaluator/core/`` is the pure core, a module that imports one of the
:data:`LIBRARIES` is the adapter of that library, ``cli.py`` and ``__main__.py`` are the
command line, and everything else is the application. ``python -m evaluator.optiondocs``
writes the table between the ``modules`` markers, so a new, renamed or re-described module
makes its ``--check`` (and the test that runs it) fail until the page is regenerated.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

# The libraries an adapter owns (the design test keeps each to its own module).
LIBRARIES = ("neuralmind", "graphify", "jinja2", "requests", "subprocess", "rank_bm25",
             "filelock", "onnxruntime", "tokenizers")
CLI = frozenset({"cli.py", "__main__.py"})
ROOMS = ("core", "adapter", "application", "command line")


@dataclass(frozen=True)
class Module:
    path: str
    room: str
    duty: str
    owns: tuple[str, ...]


def _duty(docstring: str) -> str:
    """The first sentence, in Markdown (reST's double back-quotes and roles made plain)."""
    paragraph = " ".join(docstring.split("\n\n", 1)[0].split())
    match = re.match(r"(.+?[.?!])(\s|$)", paragraph)
    sentence = match.group(1) if match else paragraph
    sentence = re.sub(r":[a-z]+:`~?(?:[\w.]+\.)?(\w+)`", r"`\1`", sentence)
    return re.sub(r"``([^`]+)``", r"`\1`", sentence)


def _imported(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def modules(package: Path) -> tuple[Module, ...]:
    """Every module of ``package`` but the ``__init__.py`` files; a module without a
    docstring is an error: its duty must be said."""
    found = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package.parent).as_posix()
        if path.name == "__init__.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstring = ast.get_docstring(tree)
        if not docstring:
            raise ValueError(f"{rel} has no docstring: say what the module holds")
        owns = tuple(lib for lib in LIBRARIES if lib in _imported(tree))
        core = path.parent.name == "core"
        room = "core" if core else "command line" if path.name in CLI and \
            path.parent == package else "adapter" if owns else "application"
        found.append(Module(rel, room, _duty(docstring), owns))
    return tuple(found)


def modules_table(package: Path) -> str:
    """The Markdown table of rooms, grouped core → adapters → application → command line."""
    rows = ["| room | module | duty |", "|---|---|---|"]
    listed = modules(package)
    for room in ROOMS:
        for m in (m for m in listed if m.room == room):
            label = f"{room} ({', '.join(m.owns)})" if m.owns and room != "core" else room
            duty = m.duty.replace("|", "\\|")
            rows.append(f"| {label} | `{m.path}` | {duty} |")
    return "\n".join(rows)
