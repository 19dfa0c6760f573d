"""The code map ``init`` drafts its questions from: a package's own code, read with
:mod:`ast` (never imported).

* every module's public functions, classes and methods with their signature line and
  docstring, its ``__all__``, and its imports resolved to the modules of the universe; the
  package's public API (the top-level ``__init__`` exports and ``[project.scripts]`` entry
  points);
* a *call graph* between modules: a call inside a function to a name imported from another
  module of the universe (``from .utils import echo`` … ``echo()``, ``utils.echo()``) is an
  edge ``core.py:invoke → utils.py:echo``. Only resolved imports count, so an edge is a real
  dependency, not two functions that share a name.

:mod:`evaluator.drafting` plans the questions over it.
"""

from __future__ import annotations

import ast
import contextlib
import posixpath
import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evaluator.errors import InputError
from evaluator.snapshot import MAX_FILE_BYTES

# ----------------------------------------------------------------------------- the code map


@dataclass(frozen=True)
class Symbol:
    module: str
    name: str            # ``echo`` or ``Group.invoke``
    kind: str            # class | function | method
    line: int
    signature: str       # the ``def``/``class`` line as written, without the colon
    doc_line: str        # the docstring's first non-empty line as written
    doc_sentence: str    # the docstring's first sentence, whitespace normalised ('' if none)
    bases: tuple[str, ...] = ()
    body_lines: tuple[str, ...] = ()   # one-line statements of the body, as written

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def public(self) -> bool:
        return not any(part.startswith("_") for part in self.name.split("."))

    def mention(self) -> str:
        return f"`{self.name}()`" if self.kind != "class" else f"`{self.name}`"


@dataclass
class ModuleInfo:
    path: str
    dotted: str
    source: str
    symbols: dict[str, Symbol] = field(default_factory=dict)
    all_names: tuple[str, ...] | None = None
    imported: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """Local name → (module path, name in it; ``None`` when the name is the module)."""
    identifiers: frozenset[str] = frozenset()
    """Every name the code uses (names, attributes, imported names), docstrings left out."""


@dataclass(frozen=True)
class Edge:
    """``caller`` in ``src`` calls ``callee`` defined in ``dst`` (``dst != src``)."""

    src: str
    caller: str
    dst: str
    callee: str
    line: str            # the source line of the call, stripped


@dataclass
class CodeMap:
    modules: dict[str, ModuleInfo]
    exports: dict[str, tuple[str, str]]       # public name → (defining module, symbol name)
    export_modules: dict[str, str]            # public name → the __init__ that exports it
    entry_points: dict[str, tuple[str, str]]  # script → (module, function)
    edges: list[Edge]
    package: str

    def symbol(self, module: str, name: str) -> Symbol | None:
        info = self.modules.get(module)
        return info.symbols.get(name) if info else None

    def subsystem(self, module: str) -> set[str]:
        """The modules of ``module``'s subsystem: what it imports from the universe, and
        what imports it."""
        out: set[str] = set()
        info = self.modules.get(module)
        if info is not None:
            out |= {target for target, _name in info.imported.values()}
        out |= {m for m, other in self.modules.items()
                if any(target == module for target, _name in other.imported.values())}
        out.discard(module)
        return out


def _dotted_names(py_files: Iterable[str], present: set[str]) -> dict[str, str]:
    """Dotted module name of each file: packages walk up while ``__init__.py`` exists."""
    out: dict[str, str] = {}
    for path in py_files:
        parts = path[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        folder = posixpath.dirname(path)
        top = len(path.split("/")) - 1          # index of the first package folder
        while folder and f"{folder}/__init__.py" in present:
            top -= 1
            folder = posixpath.dirname(folder)
        dotted = ".".join(p for p in parts[max(top, 0):] if p)
        if dotted:
            out[path] = dotted
    return out


def _first_sentence(doc: str) -> str:
    paragraph = doc.strip().split("\n\n", 1)[0]
    text = " ".join(paragraph.split())
    text = re.sub(r":\w+:`~?([^`<]+?)\s*(?:<[^`>]*>)?`", r"`\1`", text).replace("``", "`")
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    if match is None:
        return ""
    return match.group(1)


_STRING_PREFIX = re.compile(r"^[rRbBuUfF]{1,2}(?=[\"'])")  # r""", u'…': not a word's letters


def _doc_line(node: ast.AST, lines: Sequence[str]) -> str:
    body = getattr(node, "body", None)
    first = body[0] if body else None
    if not isinstance(first, ast.Expr) or not isinstance(first.value, ast.Constant) \
            or not isinstance(first.value.value, str):
        return ""
    start = first.lineno - 1
    for raw in lines[start:start + 4]:
        text = _STRING_PREFIX.sub("", raw.strip()).strip("\"'").strip()
        if len(text.split()) >= 3:
            return text
    return ""


def _body_lines(node: ast.AST, lines: Sequence[str]) -> tuple[str, ...]:
    """Single-line statements of a function body (a class: none), docstring left out."""
    if isinstance(node, ast.ClassDef):
        return ()
    out = []
    for stmt in ast.walk(node):
        if isinstance(stmt, ast.Assign | ast.Return | ast.Raise | ast.AugAssign | ast.Expr) \
                and stmt.lineno == stmt.end_lineno and stmt is not node:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            out.append((stmt.lineno, lines[stmt.lineno - 1].strip()))
    return tuple(text for _n, text in sorted(out))


def _signature(node: ast.AST, lines: Sequence[str]) -> str:
    line = lines[node.lineno - 1].strip()  # type: ignore[attr-defined]
    return line[:-1].rstrip() if line.endswith(":") else line


def _bases(node: ast.ClassDef) -> tuple[str, ...]:
    out = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            out.append(base.id)
        elif isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name):
            out.append(f"{base.value.id}.{base.attr}")
    return tuple(out)


def _resolve(module_dotted: str, is_package: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    parts = module_dotted.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, *( [name] if name else [])])


def _read_module(path: str, dotted: str, source: str, by_dotted: Mapping[str, str]) -> \
        tuple[ModuleInfo, ast.Module | None]:
    info = ModuleInfo(path=path, dotted=dotted, source=source)
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # hostile nesting too
        return info, None
    lines = source.splitlines()
    is_package = path.endswith("__init__.py")
    info.identifiers = frozenset(
        n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute)
        else n.name.rsplit(".", 1)[-1]
        for n in ast.walk(tree) if isinstance(n, ast.Name | ast.Attribute | ast.alias))

    def add(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, name: str,
            kind: str) -> None:
        info.symbols[name] = Symbol(
            module=path, name=name, kind=kind, line=node.lineno,
            signature=_signature(node, lines), doc_line=_doc_line(node, lines),
            doc_sentence=_first_sentence(ast.get_docstring(node) or ""),
            bases=_bases(node) if isinstance(node, ast.ClassDef) else (),
            body_lines=_body_lines(node, lines))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            add(node, node.name, "function")
        elif isinstance(node, ast.ClassDef):
            add(node, node.name, "class")
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    add(item, f"{node.name}.{item.name}", "method")
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if "__all__" in names and isinstance(node.value, ast.List | ast.Tuple):
                info.all_names = tuple(e.value for e in node.value.elts
                                       if isinstance(e, ast.Constant)
                                       and isinstance(e.value, str))
        if isinstance(node, ast.ImportFrom):
            target = _resolve(dotted, is_package, node.level, node.module)
            for alias in node.names:
                local = alias.asname or alias.name
                sub = f"{target}.{alias.name}" if target else alias.name
                if sub in by_dotted:                     # from pkg import submodule
                    info.imported[local] = (by_dotted[sub], None)
                elif target in by_dotted:
                    info.imported[local] = (by_dotted[target], alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in by_dotted:
                    info.imported[alias.asname or alias.name] = (by_dotted[alias.name], None)
    return info, tree


def defining(modules: Mapping[str, ModuleInfo], module: str, name: str,
              depth: int = 0) -> tuple[str, str] | None:
    """Follow re-exports to the module that defines ``name``."""
    info = modules.get(module)
    if info is None or depth > 4:
        return None
    if name in info.symbols:
        return module, name
    if name in info.imported:
        target, inner = info.imported[name]
        if inner is not None:
            return defining(modules, target, inner, depth + 1)
    return None


def _call_edges(info: ModuleInfo, tree: ast.Module, modules: Mapping[str, ModuleInfo]) -> \
        list[Edge]:
    lines = info.source.splitlines()
    edges: list[Edge] = []

    def walk(func: ast.AST, caller: str) -> None:
        for node in ast.walk(func):
            if not isinstance(node, ast.Call):
                continue
            target: tuple[str, str] | None = None
            f = node.func
            if isinstance(f, ast.Name) and f.id in info.imported:
                module, name = info.imported[f.id]
                if name is not None:
                    target = defining(modules, module, name)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.value.id in info.imported:
                module, name = info.imported[f.value.id]
                if name is None:
                    target = defining(modules, module, f.attr)
            if target is not None and target[0] != info.path:
                edges.append(Edge(info.path, caller, target[0], target[1],
                                  lines[node.lineno - 1].strip()))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            walk(node, node.name)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    walk(item, f"{node.name}.{item.name}")
    return edges


def _entry_points(root: Path, by_dotted: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    out: dict[str, tuple[str, str]] = {}
    scripts: dict[str, str] = {}
    project = root / "pyproject.toml"
    with contextlib.suppress(OSError, ValueError, tomllib.TOMLDecodeError):
        # A committed file may be a link anywhere (/dev/zero): only a small regular file.
        if project.is_symlink() or not project.is_file() or \
                project.stat().st_size > MAX_FILE_BYTES:
            return out
        data = tomllib.loads(project.read_text(encoding="utf-8"))
        raw = data.get("project", {}).get("scripts", {})
        if isinstance(raw, dict):
            scripts.update({str(k): str(v) for k, v in raw.items()})
    for name, target in scripts.items():
        module, _, func = target.partition(":")
        if module.strip() in by_dotted and func.strip():
            out[name] = (by_dotted[module.strip()], func.strip().split(".")[0])
    return out


def build_code_map(root: Path, modules: Sequence[str]) -> CodeMap:
    """The code map of the Python modules among ``modules`` (the universe)."""
    py = [m for m in modules if m.endswith(".py")]
    by_path = _dotted_names(py, set(modules))
    by_dotted = {d: p for p, d in by_path.items()}
    infos: dict[str, ModuleInfo] = {}
    trees: dict[str, ast.Module] = {}
    for path, dotted in by_path.items():
        try:
            source = (root / path).read_bytes().decode("utf-8")
        except OSError:
            continue
        except UnicodeDecodeError:
            raise InputError(f"{path} is not UTF-8 text; drafting reads every Python module "
                             "of the module universe as UTF-8 (PEP 3120)",
                             hint="save it as UTF-8, or leave it out with the exclude "
                                  "option") from None
        info, tree = _read_module(path, dotted, source, by_dotted)
        infos[path] = info
        if tree is not None:
            trees[path] = tree
    edges = [e for path, tree in trees.items() for e in _call_edges(infos[path], tree, infos)]
    tops = sorted((d for d in by_dotted if "." not in d and by_dotted[d].endswith(
        "__init__.py")), key=lambda d: -sum(1 for p in by_path.values()
                                            if p.startswith(d + ".")))
    exports: dict[str, tuple[str, str]] = {}
    export_modules: dict[str, str] = {}
    package = tops[0] if tops else ""
    for top in tops[:1]:
        init = infos.get(by_dotted[top])
        if init is None:
            continue
        names = init.all_names if init.all_names is not None else tuple(
            n for n in (*init.imported, *init.symbols) if not n.startswith("_"))
        for name in names:
            found = defining(infos, init.path, name)
            # Without __all__, a function defined in the __init__ itself is usually a helper
            # of the package's import (``check_compatibility``), not its API.
            if found is not None and not (init.all_names is None and found[0] == init.path):
                exports[name] = found
                export_modules[name] = init.path
    return CodeMap(modules=infos, exports=exports, export_modules=export_modules,
                   entry_points=_entry_points(root, by_dotted), edges=edges, package=package)
