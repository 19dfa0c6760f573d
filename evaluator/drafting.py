"""Drafting ground-truth questions from a package's own code: what ``init`` proposes.

Reads the Python modules of the module universe with :mod:`ast` (never imports them) and
builds:

* a *code map*: every module's public functions, classes and methods with their signature
  line and docstring, its ``__all__``, and its imports resolved to the modules of
  the universe; the package's public API (the top-level ``__init__`` exports and
  ``[project.scripts]`` entry points);
* a *call graph* between modules: a call inside a function to a name imported from another
  module of the universe (``from .utils import echo`` … ``echo()``, ``utils.echo()``) is an
  edge ``core.py:invoke → utils.py:echo``. Only resolved imports count, so an edge is a real
  dependency, not two functions that share a name;
* candidate questions of the three shapes — *identity* about exported names, *focused*
  about one documented function or class, *cross-file* along a call path of two or three
  modules starting at a public entry point — each with grades and a one-line reason per
  non-zero grade, and 2–4 facts quoted verbatim from a module graded ≥ 2 (whole words,
  never generic: :func:`evaluator.core.groundtruth.fact_problem`).

Questions are written from names and docstrings as whole sentences: a docstring sentence
is used only when it is short and complete, otherwise a fixed template; nothing is cut.
"""

from __future__ import annotations

import ast
import contextlib
import posixpath
import re
import tomllib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from evaluator.core.evidence import source_span
from evaluator.core.groundtruth import DEFAULT_MIX, KNOWN_SHAPES, fact_problem
from evaluator.errors import InputError
from evaluator.snapshot import MAX_FILE_BYTES

SHAPES = KNOWN_SHAPES
_Item = TypeVar("_Item")
MAX_FACT_CHARS = 80
HUB_CALLS = 6  # a function called from more places than this is a hub, not a path step
MAX_SENTENCE_WORDS = 18
#: Verbs docstrings start with ("Return …", "Creates …"): a first sentence that starts with
#: one of them becomes "How does X <verb> …?"; any other sentence gets a fixed template.
DOC_VERBS = frozenset("""
add allow apply ask attach authenticate build calculate call capture change charge check
clear close collect compare compute configure confirm connect construct convert copy count
create decode decorate define delete detect determine disable dispatch display download
echo edit emit enable encode ensure exchange execute expand extract fetch filter find format
generate get give handle hash hold initialize insert invoke issue iterate join launch list
load log look make manage map mark match merge mirror normalize open parse pause perform
pop post prepare print process produce prompt provide push put raise read receive record
refresh refund register remove render replace represent reset resolve restrict return
rewind run save search select send serialize set show sign sort split stamp start stop
store stream strip style take test translate try turn unstyle update upload use validate
verify wait wrap write yield
""".split())  # noqa: SIM905 (a word list reads best as text)


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


def _defining(modules: Mapping[str, ModuleInfo], module: str, name: str,
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
            return _defining(modules, target, inner, depth + 1)
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
                    target = _defining(modules, module, name)
            elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                    and f.value.id in info.imported:
                module, name = info.imported[f.value.id]
                if name is None:
                    target = _defining(modules, module, f.attr)
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
            found = _defining(infos, init.path, name)
            # Without __all__, a function defined in the __init__ itself is usually a helper
            # of the package's import (``check_compatibility``), not its API.
            if found is not None and not (init.all_names is None and found[0] == init.path):
                exports[name] = found
                export_modules[name] = init.path
    return CodeMap(modules=infos, exports=exports, export_modules=export_modules,
                   entry_points=_entry_points(root, by_dotted), edges=edges, package=package)


# ----------------------------------------------------------------------------- facts


def verbatim(fact: str, source: str) -> bool:
    """Whether ``fact`` occurs in ``source``, case-insensitively, on word boundaries."""
    low, key = source.lower(), fact.lower()  # once: a module may hold many near misses
    index = low.find(key)
    while index >= 0:
        before = source[index - 1] if index > 0 else " "
        after_i = index + len(fact)
        after = source[after_i] if after_i < len(source) else " "
        if not (fact[0].isalnum() and (before.isalnum() or before == "_")) and not (
                fact[-1].isalnum() and (after.isalnum() or after == "_")):
            return True
        index = low.find(key, index + 1)
    return False


_DANGLING = frozenset({"a", "an", "the", "of", "to", "for", "with", "and", "or", "in", "on",
                       "by", "as", "from", "that", "is", "are", "be"})


def _clause(text: str, max_words: int = 12) -> str:
    """A leading clause of ``text`` that ends where the writer ended it: at the first
    comma, semicolon, colon or full stop followed by a space, or at the end of a line that
    ends a sentence. ``''`` when that clause runs past ``max_words`` words or to the next
    line, holds Sphinx markup (``:class:`X```), or ends on a word that needs a follow-up
    ("a", "the", "of" …): never a phrase cut short."""
    text = text.strip()
    match = re.match(r"(.+?)(?:[,;]|:\s|\.(?:\s|$))", text)
    if match is not None:
        cut = match.group(1).strip()
    elif text.endswith((".", "!", "?")):
        cut = text[:-1]
    else:
        return ""
    words = cut.split()
    if not words or len(words) > max_words or re.search(r":\w+:`", cut) \
            or words[-1].lower() in _DANGLING or cut.count("(") != cut.count(")"):
        return ""
    return cut


def usable(fact: str, source: str) -> bool:
    return (2 <= len(fact) <= MAX_FACT_CHARS and fact_problem(fact) is None
            and verbatim(fact, source))


def symbol_facts(symbol: Symbol, source: str) -> list[str]:
    """Facts about one symbol, each verified verbatim in ``source``: its signature line (or
    its head, cut after a parameter), and a clause of its docstring."""
    out: list[str] = []
    signature = symbol.signature
    if len(signature) > 60 and "(" in signature:
        signature = signature[: signature.index("(") + 1]
    if signature and usable(signature, source):
        out.append(signature)
    if symbol.doc_line:
        clause = _clause(symbol.doc_line)
        if len(clause.split()) >= 3 and usable(clause, source):
            out.append(clause)
    if len(out) < 3:
        body = [line.rstrip(",") for line in symbol.body_lines
                if len(line) >= 12 and len(re.findall(r"[A-Za-z0-9]+", line)) >= 3]
        out += [line for line in body if usable(line, source)][:3 - len(out)]
    return out


def anchored(fact: str, sources: Iterable[str]) -> str | dict[str, str]:
    """A drafted fact as the ground truth holds it: ``{"fact", "evidence"}`` with the whole
    source line(s) it was quoted from, found in the first of ``sources`` (the question's
    grade >= 2 modules) that holds it; the plain fact when none does (as written, it could
    never pass ``validate``)."""
    for source in sources:
        span = source_span(fact, source)
        if span is not None:
            return {"fact": fact, "evidence": span}
    return fact


def _dedupe(facts: Iterable[str], limit: int = 4) -> list[str]:
    seen: set[str] = set()
    out = []
    for fact in facts:
        key = fact.lower()
        if key not in seen and not any(key in s or s in key for s in seen):
            seen.add(key)
            out.append(fact)
            if len(out) == limit:  # ``seen`` stays small: at most ``limit`` comparisons each
                break
    return out


# ----------------------------------------------------------------------------- questions


def _third_to_base(word: str) -> str:
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith(("sses", "shes", "ches", "xes", "zes")):
        return w[:-2]
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def _as_clause(sentence: str) -> str | None:
    """``Prints a message to stdout.`` → ``print a message to stdout`` (a verb phrase), or
    ``None`` when the sentence does not start with a known verb or is not short and whole.
    A sentence is cut at a semicolon or a dash (the rest is usually a second thought)."""
    sentence = re.split(r";| — | -- ", sentence.rstrip(".!?"), maxsplit=1)[0]
    words = sentence.split()
    if not 2 <= len(words) <= MAX_SENTENCE_WORDS:
        return None
    first = words[0]
    if not first[:1].isupper() or not first.isalpha() or first.isupper() \
            or _third_to_base(first) not in DOC_VERBS:
        return None
    if len(words) > 3 and words[1] in ("and", "or") and words[2].isalpha():
        words[2] = _third_to_base(words[2])
    rest = " ".join(words[1:])
    if rest.count("(") != rest.count(")") or rest.count("`") % 2 or "n't" in rest:
        return None
    return f"{_third_to_base(first)} {rest}"


def focused_question(symbol: Symbol) -> str:
    clause = _as_clause(symbol.doc_sentence) if symbol.doc_sentence else None
    where = posixpath.basename(symbol.module)
    if clause:
        return f"How does {symbol.mention()} in `{where}` {clause}?"
    if symbol.kind == "class":
        return f"What is the {symbol.mention()} class in `{where}` responsible for?"
    return f"What does {symbol.mention()} in `{where}` do, and what does it return?"


# ----------------------------------------------------------------------------- candidates


@dataclass(frozen=True)
class Candidate:
    shape: str
    question: str
    grades: Mapping[str, int]
    reasons: Mapping[str, str]
    facts: tuple[str, ...]
    key: str                     # the symbol / path it is about (one question per key)
    source: Mapping[str, str] | None = None  # {commit, subject}: drafted from history


@dataclass
class _Grading:
    grades: dict[str, int] = field(default_factory=dict)
    reasons: dict[str, str] = field(default_factory=dict)

    def set(self, module: str, grade: int, reason: str) -> None:
        if grade > self.grades.get(module, 0):
            self.grades[module] = grade
            self.reasons[module] = reason

    def candidate(self, shape: str, question: str, facts: Sequence[str],
                  key: str) -> Candidate | None:
        """The candidate with these grades, or ``None`` with fewer than 2 distinct facts."""
        kept = _dedupe(list(facts))
        if len(kept) < 2:
            return None
        return Candidate(shape, question, self.grades, self.reasons, tuple(kept), key)


def _round_robin(groups: dict[str, list[_Item]], order: Callable[[str], Any]) -> list[_Item]:
    """One item of each group in turn (groups sorted by ``order`` before every round), so
    the drafted questions spread over the package's modules."""
    out: list[_Item] = []
    while any(groups.values()):
        for name in sorted(groups, key=order):
            if groups[name]:
                out.append(groups[name].pop(0))
    return out


def _neighbours(code: CodeMap, grading: _Grading, module: str, name: str,
                limit: int = 3) -> None:
    """Grade 1: other modules whose functions call ``name``, or that ``name`` calls."""
    added = 0
    for edge in code.edges:
        if added >= limit:
            break
        if edge.dst == module and edge.callee == name and edge.src not in grading.grades:
            grading.set(edge.src, 1, f"related: `{edge.caller}` there calls `{name}`")
            added += 1
        elif edge.src == module and edge.caller == name and edge.dst not in grading.grades:
            grading.set(edge.dst, 1, f"related: `{name}` calls `{edge.callee}` defined there")
            added += 1


def _references(code: CodeMap) -> Counter[tuple[str, str]]:
    return Counter((e.dst, e.callee) for e in code.edges)


def _base_module(code: CodeMap, module: str, base: str) -> tuple[str, str] | None:
    """Where the base class ``base`` (``Name`` or ``alias.Name``) of a class in ``module``
    is defined."""
    head, _, attr = base.partition(".")
    if not attr:
        return _defining(code.modules, module, head)
    imported = code.modules[module].imported.get(head)
    if imported is None or imported[1] is not None:
        return None
    return _defining(code.modules, imported[0], attr)


def _api(code: CodeMap) -> dict[str, tuple[str, str]]:
    """The public API: the package's exports, or else the names other modules import."""
    if code.exports:
        return dict(code.exports)
    importers: Counter[tuple[str, str]] = Counter()
    for info in code.modules.values():
        for module, name in info.imported.values():
            found = _defining(code.modules, module, name) if name else None
            if found and found[0] != info.path:
                importers[found] += 1
    return {sym: (module, sym) for (module, sym), _n in importers.most_common()
            if "." not in sym}


def _identity_items(code: CodeMap) -> list[tuple[str, str, str, str]]:
    """``(public name, module, symbol, how)``: entry points, then the API round-robin over
    the defining modules (most referenced first; names defined in the exporting
    ``__init__`` last)."""
    refs = _references(code)
    items = [(script, module, func, "entry")
             for script, (module, func) in sorted(code.entry_points.items())]
    ranked = sorted(_api(code).items(), key=lambda kv: (
        kv[1][0] == code.export_modules.get(kv[0]), -refs[kv[1]], kv[0]))
    per_module: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
    for name, (module, sym) in ranked:
        per_module[module].append((name, module, sym, "export"))
    return items + _round_robin(per_module, lambda m: (
        m in code.export_modules.values(), -len(per_module[m]), m))


def _identity_candidate(code: CodeMap, public: str, symbol: Symbol,
                        how: str) -> Candidate | None:
    module, name = symbol.module, symbol.name
    grading = _Grading()
    grading.set(module, 3, f"defines `{name}`")
    if how == "entry":
        question = (f"Which function runs when the `{public}` command is started, and "
                    f"where is it defined?")
    else:
        dotted = f"{code.package}.{public}" if public in code.exports and code.package \
            else public
        question = (f"What is `{dotted}`, and which module defines it?"
                    if symbol.kind == "class" else
                    f"What does `{dotted}()` do, and which module defines it?")
    exporter = code.export_modules.get(public)
    if exporter and exporter != module:
        grading.set(exporter, 1, f"related: exports `{public}` in the public API")
    for base in symbol.bases:
        found = _base_module(code, module, base)
        if found and found[0] != module:
            grading.set(found[0], 2, f"needed: defines `{found[1]}`, the base class "
                                     f"of `{name}`")
    _neighbours(code, grading, module, name)
    source = code.modules[module].source
    facts = symbol_facts(symbol, source)
    if len(facts) < 2:
        methods = [s for s in code.modules[module].symbols.values()
                   if s.name.startswith(f"{name}.") and s.public and s.doc_line]
        for method in methods[:2]:
            facts += symbol_facts(method, source)
    return grading.candidate("identity", question, facts, f"{module}:{name}")


def identity_candidates(code: CodeMap) -> list[Candidate]:
    """Questions about the public API: entry points and exported names."""
    out: list[Candidate] = []
    for public, module, name, how in _identity_items(code):
        symbol = code.symbol(module, name)
        if symbol is not None and symbol.public and \
                (candidate := _identity_candidate(code, public, symbol, how)) is not None:
            out.append(candidate)
    return out


def focused_candidates(code: CodeMap, *, skip: set[str]) -> list[Candidate]:
    refs = _references(code)
    symbols = [s for info in code.modules.values() for s in info.symbols.values()
               if s.public and s.doc_sentence and f"{s.module}:{s.name}" not in skip
               and not s.short.startswith("__")]
    exported = set(code.exports.values())
    symbols.sort(key=lambda s: (posixpath.basename(s.module).startswith("_"),
                                -(refs[(s.module, s.name)] + 3 * ((s.module, s.name)
                                                                  in exported)),
                                s.module, s.line))
    per_module: dict[str, list[Symbol]] = defaultdict(list)
    for s in symbols:
        per_module[s.module].append(s)
    out = []
    for symbol in _round_robin(per_module, lambda m: -len(per_module[m])):
        facts = symbol_facts(symbol, code.modules[symbol.module].source)
        grading = _Grading()
        grading.set(symbol.module, 3, f"defines `{symbol.name}`")
        _neighbours(code, grading, symbol.module, symbol.name)
        candidate = grading.candidate("focused", focused_question(symbol), facts,
                                      f"{symbol.module}:{symbol.name}")
        if candidate is not None:
            out.append(candidate)
    return out


def _call_paths(code: CodeMap) -> list[list[Edge]]:
    """Call paths of two or three modules, best first: public (exported) starts, public
    documented functions along the way, three modules before two."""
    exported = set(code.exports.values()) | set(code.entry_points.values())
    by_src: dict[tuple[str, str], list[Edge]] = defaultdict(list)
    for edge in code.edges:
        by_src[(edge.src, edge.caller)].append(edge)
    callers = _references(code)
    paths: list[tuple[int, list[Edge]]] = []
    for edge in code.edges:
        start = code.symbol(edge.src, edge.caller)
        end = code.symbol(edge.dst, edge.callee)
        if start is None or end is None or not start.public or start.short.startswith("__"):
            continue
        # A hub (a helper called from everywhere, like ``echo``) makes a trivial path.
        hub = callers[(edge.dst, edge.callee)] > HUB_CALLS
        onward = [] if hub else [
            e for e in by_src.get((edge.dst, edge.callee), [])
            if e.dst not in (edge.src, edge.dst)
            and (nxt := code.symbol(e.dst, e.callee)) is not None and nxt.public
            and nxt.kind != "class" and callers[(e.dst, e.callee)] <= HUB_CALLS]
        score = (4 * ((edge.src, edge.caller) in exported) + 2 * end.public
                 + (end.kind != "class") + bool(end.doc_sentence) - 8 * hub)
        if onward:
            paths.append((score + 1, [edge, onward[0]]))
        paths.append((score, [edge]))
    paths.sort(key=lambda p: (-p[0], -len(p[1]), p[1][0].src, p[1][0].caller))
    return [path for _score, path in paths]


def _path_candidate(code: CodeMap, path: Sequence[Edge]) -> Candidate | None:
    """A cross-file question along ``path``: 3 where it starts, 2 on the rest."""
    first = path[0]
    start = code.symbol(first.src, first.caller)
    mid = code.symbol(first.dst, first.callee)
    assert start is not None
    assert mid is not None
    grading = _Grading()
    grading.set(first.src, 3, f"defines `{first.caller}`, where the path starts")
    grading.set(first.dst, 2, f"needed: defines `{first.callee}`, called by "
                              f"`{first.caller}`")
    facts = symbol_facts(start, code.modules[first.src].source)[:1]
    facts += symbol_facts(mid, code.modules[first.dst].source)[:1]
    call = first.line.rstrip(",")
    if usable(call, code.modules[first.src].source):
        facts.append(call)
    a, b = posixpath.basename(first.src), posixpath.basename(first.dst)
    if len(path) == 2:
        last = path[1]
        end = code.symbol(last.dst, last.callee)
        assert end is not None
        grading.set(last.dst, 2, f"needed: defines `{last.callee}`, called by "
                                 f"`{last.caller}`")
        facts += symbol_facts(end, code.modules[last.dst].source)[:1]
        question = (f"How does {start.mention()} in `{a}` reach {end.mention()} in "
                    f"`{posixpath.basename(last.dst)}`, by way of {mid.mention()} "
                    f"in `{b}`?")
    else:
        question = (f"How does {start.mention()} in `{a}` use {mid.mention()} from "
                    f"`{b}`, and what does {mid.mention()} do for it?")
    return grading.candidate("cross-file", question, facts, f"{first.src}:{first.caller}")


def cross_file_candidates(code: CodeMap) -> list[Candidate]:
    """Questions along call paths of two or three modules, from public callers first; a
    module pair, a start and a callee are each used once."""
    out: list[Candidate] = []
    used_pairs: set[tuple[str, str]] = set()
    used_starts: set[tuple[str, str]] = set()
    used_callees: set[tuple[str, str]] = set()
    for path in _call_paths(code):
        first = path[0]
        pair = (first.src, first.dst)
        callees = {(e.dst, e.callee) for e in path}
        if pair in used_pairs or (first.src, first.caller) in used_starts \
                or callees & used_callees:
            continue
        candidate = _path_candidate(code, path)
        if candidate is None:
            continue
        used_pairs.add(pair)
        used_starts.add((first.src, first.caller))
        used_callees |= callees
        out.append(candidate)
    return out


# ----------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Plan:
    """The drafted candidates and, per missing slot, why it could not be filled."""

    chosen: tuple[Candidate, ...]
    shortfall: tuple[str, ...]


def split_count(count: int, mix: Mapping[str, float]) -> dict[str, int]:
    """``count`` slots over the shapes by the weights in ``mix`` (largest remainder; every
    shape with a positive weight gets at least one slot when ``count`` allows)."""
    weights = {s: max(0.0, float(mix.get(s, 0.0))) for s in SHAPES}
    total = sum(weights.values()) or 1.0
    raw = {s: count * w / total for s, w in weights.items()}
    out = {s: int(v) for s, v in raw.items()}
    for s in sorted(SHAPES, key=lambda s: -(raw[s] - out[s])):
        if sum(out.values()) >= count:
            break
        out[s] += 1
    for s in SHAPES:
        if weights[s] > 0 and out[s] == 0 and count >= len([w for w in weights.values()
                                                             if w > 0]):
            donor = max(SHAPES, key=lambda d: out[d])
            out[donor] -= 1
            out[s] += 1
    return out


_WHY_NONE = {
    "identity": "no more exported names (the package's __init__ exports, __all__, "
                "[project.scripts]) with a signature and a docstring to quote",
    "cross-file": "no more call paths between two modules of the universe (a call to a "
                  "name imported from another module) with facts to quote",
    "focused": "no more public, documented functions or classes with two facts to quote",
}


def plan(candidates: Mapping[str, Sequence[Candidate]], count: int,
         mix: Mapping[str, float] = DEFAULT_MIX) -> Plan:
    """Pick ``count`` questions in the mix; a shape that runs short lends its slots to the
    others, and every slot left empty gets its reason."""
    targets = split_count(count, mix)
    pools = {s: list(candidates.get(s, ())) for s in SHAPES}
    chosen: dict[str, list[Candidate]] = {s: [] for s in SHAPES}
    used_keys: set[str] = set()
    used_questions: set[str] = set()

    def take(shape: str) -> bool:
        while pools[shape]:
            c = pools[shape].pop(0)
            if c.key in used_keys or c.question.lower() in used_questions:
                continue
            used_keys.add(c.key)
            used_questions.add(c.question.lower())
            chosen[shape].append(c)
            return True
        return False

    short: dict[str, int] = {}
    for shape in SHAPES:
        for _ in range(targets[shape]):
            if not take(shape):
                short[shape] = short.get(shape, 0) + 1
    lent: list[str] = []
    for shape, missing in short.items():
        for _ in range(missing):
            for other in sorted(SHAPES, key=lambda s: -len(pools[s])):
                if other != shape and take(other):
                    lent.append(f"{shape} slot filled with a {other} question: "
                                f"{_WHY_NONE[shape]}")
                    break
            else:
                lent.append(f"{shape} slot left empty: {_WHY_NONE[shape]}, and no other "
                            "shape has candidates left")
    ordered = tuple(c for s in SHAPES for c in chosen[s])
    return Plan(chosen=ordered, shortfall=tuple(lent))


def all_candidates(code: CodeMap) -> dict[str, list[Candidate]]:
    identity = identity_candidates(code)
    skip = {c.key for c in identity[:8]}
    return {"identity": identity, "focused": focused_candidates(code, skip=skip),
            "cross-file": cross_file_candidates(code)}
