"""Module changes that are chores whatever their subject says: dependency pins,
compatibility swaps, ``__slots__`` declarations and sentinel swaps.

Issue 24's fourth fresh review rejected tenacity history-10 "Support Python 3.14" and yarl
history-16 "Use Cython 3.1 universally"; :func:`evaluator.core.commit_filters.judge` skips:

* a **dependency pin**: every added code line holds a requirement specifier
  (``'Cython >= 3.1.2'``, ``"urllib3<3"``), whatever else the change took out;
* a **compatibility swap**: the change swaps one compatibility check for another
  (``try: … except AttributeError:`` for ``if not hasattr(…):``, a ``sys.version_info``
  branch): every added code line is such a check or a line the change deleted elsewhere
  (moved), and the deleted lines held one too.

Issue 24's fifth fresh review rejected anyio history-11 "Added `__slots__` to several classes"
and history-01 "Use the PEP 661 sentinel type"; also skipped:

* a **``__slots__`` declaration**: every added code line is part of a ``__slots__ = …``
  statement, a deleted line moved (the class attribute ``_n: int = 0`` into ``__init__`` as
  ``self._n = 0``) or a bare ``def __init__(self):`` to hold them, and one declares slots;
* a **sentinel swap**: a name the deleted lines bound to a bare ``object()`` is bound to
  another sentinel (``undefined = sentinel("undefined")``), and every other added code line
  is an import or a compatibility check.

Pure: the caller gives each module's added code lines and deleted lines.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from itertools import zip_longest

SKIP_PIN_OR_COMPAT = ("changes only a dependency pin or swaps a compatibility check "
                      "(sys.version_info, hasattr) in its modules")
SKIP_LAYOUT = "a chore: only declares __slots__ or swaps a sentinel object"

_PIN = re.compile(r"""["'][A-Za-z][\w.\-\[\],]*\s*(?:===|[<>=!~]=|[<>])\s*\d""")
_COMPAT = re.compile(r"\bhasattr\(|\bsys\.version_info\b|\bsys\.implementation\b|"
                     r"\bplatform\.python_implementation\(|^\s*try\s*:|"
                     r"^\s*except\s*\(?\s*(?:AttributeError|ImportError|ModuleNotFoundError|"
                     r"NameError)\b|^\s*else\s*:")
_CHECK = re.compile(r"\bhasattr\(|\bsys\.version_info\b|\bsys\.implementation\b|"
                    r"\bplatform\.python_implementation\(|"
                    r"^\s*except\s*\(?\s*(?:AttributeError|ImportError|ModuleNotFoundError|"
                    r"NameError)\b")


def collapse_space(line: str) -> str:
    """``line`` with its runs of whitespace one space, none at its ends."""
    return " ".join(line.split())


def pin_only(added: Sequence[str]) -> bool:
    """Every added code line holds a requirement specifier."""
    return bool(added) and all(_PIN.search(line) for line in added)


def compat_swap(added: Sequence[str], deleted: Sequence[str]) -> bool:
    """The added code lines are compatibility checks or moved deleted lines, one adds a
    check, and the deleted lines held one."""
    moved = {collapse_space(line) for line in deleted}
    return bool(added) and any(_CHECK.search(line) for line in added) and \
        any(_CHECK.search(line) for line in deleted) and \
        all(_COMPAT.search(line) or collapse_space(line) in moved for line in added)


_SLOTS = re.compile(r"^\s*__slots__\s*[:=]")
_OBJECT = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*object\(\s*\)\s*$")
_REBIND = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*[\w.]+\(")
_IMPORT = re.compile(r"^\s*(?:import|from)\s")


def _depth(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


_ANNOTATED = re.compile(r"^(\s*[\w.]+)\s*:[^=]+=")
#: An ``__init__`` taking no argument: where class attributes move to beside ``__slots__``.
_BARE_INIT = re.compile(r"^\s*def __init__\(\s*self\s*\)\s*(?:->\s*None\s*)?:")


def _unself(line: str) -> str:
    """A line as a moved attribute compares: without ``self.`` and its annotation."""
    return collapse_space(_ANNOTATED.sub(r"\1 =", re.sub(r"\bself\.", "", line)))


def slots_only(added: Sequence[str], deleted: Sequence[str]) -> bool:
    """Every added code line is part of a ``__slots__`` declaration (one at least) or a
    deleted line moved (``self.`` aside)."""
    moved = {_unself(line) for line in deleted}
    slots = False
    depth = 0
    for line in added:
        if depth > 0:  # a continuation line of the declaration
            depth += _depth(line)
        elif _SLOTS.match(line):
            slots = True
            depth = _depth(line)
        elif _unself(line) not in moved and not _BARE_INIT.match(line):
            return False
    return slots


def sentinel_swap(added: Sequence[str], deleted: Sequence[str]) -> bool:
    """A name the deleted lines bound to ``object()`` is bound to another call, and every
    other added code line is an import or a compatibility check."""
    objects = {m.group(1) for line in deleted if (m := _OBJECT.match(line))}
    swapped = False
    for line in added:
        rebind = _REBIND.match(line)
        if rebind is not None and rebind.group(1) in objects:
            swapped = True
        elif not (_IMPORT.match(line) or _COMPAT.search(line)):
            return False
    return swapped


def layout_change(changes: Sequence[tuple[Sequence[str], Sequence[str]]]) -> bool:
    """Each module's change declares ``__slots__`` or swaps a sentinel object, and nothing
    else (a module with no added code line only deletes)."""
    touched = [(added, deleted) for added, deleted in changes if added]
    return bool(touched) and all(slots_only(added, deleted) or sentinel_swap(added, deleted)
                                 for added, deleted in touched)


def chore_change(changes: Sequence[tuple[Sequence[str], Sequence[str]]]) -> bool:
    """Each module's change (its added code lines, its deleted lines) is a dependency pin
    or a compatibility swap (a module with no added code line only deletes)."""
    touched = [(added, deleted) for added, deleted in changes if added]
    return bool(touched) and all(pin_only(added) or compat_swap(added, deleted)
                                 for added, deleted in touched)


# ------------------------------------------------------------------ cosmetic source changes

SKIP_COSMETIC = ("a chore: the modules' code is the same but for an alias swap, help or "
                 "message text, "
                 "type-narrowing asserts or renamed imported modules")

#: Names that are the very class ``OSError`` (Python 3.3+, PEP 3151).
_OSERROR_ALIASES = frozenset({"IOError", "EnvironmentError", "WindowsError"})
_OSERROR_MODULES = frozenset({"socket", "select"})  # ``socket.error``, ``select.error``
#: Keyword arguments whose text is only shown to a user (a CLI option's help).
_HELP_KEYWORDS = frozenset({"help", "short_help", "epilog"})


def _narrowing(test: ast.expr) -> bool:
    """``x is not None``, ``isinstance(x, T)`` (or a conjunction of them): an assert a type
    checker reads to narrow a type."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return all(_narrowing(v) for v in test.values)
    if isinstance(test, ast.Compare):
        return len(test.ops) == 1 and isinstance(test.ops[0], ast.IsNot | ast.Is) and \
            isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None
    return isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and \
        test.func.id in ("isinstance", "callable")


def message(text: str) -> bool:
    """A string a person reads: three words or more with spaces between (an error's or a
    warning's message, a help text), not a token, a path, a header or a format code."""
    return text.count(" ") >= 2 and len(re.findall(r"[A-Za-z]{2,}", text)) >= 3


class _Cosmetic(ast.NodeTransformer):
    """A module's tree without what a cosmetic change touches: ``OSError`` aliases read as
    ``OSError``, help texts and messages blanked (:func:`message`: the paired reviews of
    round 14 rejected as chores all four drafted commits that only reworded messages, cli
    "Change error messages to use a better format", pytest-xdist "Clarify error
    message …", invoke "Twiddle newly raised exception language", isort "Fix deprecation
    message link"), type-narrowing asserts dropped."""

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return ast.Constant(value="") if isinstance(node.value, str) and \
            message(node.value) else node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        """An f-string message is its values alone, in order: words reworded around them
        are cosmetic, a value added is not."""
        text = "".join(v.value for v in node.values
                       if isinstance(v, ast.Constant) and isinstance(v.value, str))
        if not message(text):
            return self.generic_visit(node)
        return ast.JoinedStr(values=[self.visit(v) for v in node.values
                                     if isinstance(v, ast.FormattedValue)])

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id="OSError", ctx=node.ctx) if node.id in _OSERROR_ALIASES else node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if node.attr == "error" and isinstance(node.value, ast.Name) and \
                node.value.id in _OSERROR_MODULES:
            return ast.Name(id="OSError", ctx=node.ctx)
        return self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        if node.arg in _HELP_KEYWORDS:
            return ast.keyword(arg=node.arg, value=ast.Constant(value=""))
        return self.generic_visit(node)

    def visit_Assert(self, node: ast.Assert) -> ast.AST | None:
        return None if _narrowing(node.test) else self.generic_visit(node)


def _bound(tree: ast.AST, *, imports: bool = True) -> set[str]:
    """The names ``tree`` binds: definitions, parameters, assignment targets and (with
    ``imports``) import aliases."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            out.add(node.id)
        elif imports and isinstance(node, ast.alias):
            out.add(node.asname or node.name.split(".")[0])
    return out


_NAME_FIELDS = frozenset({"id", "name", "arg", "attr", "asname"})


def _imports(body: list[ast.stmt], names: dict[str, str]) -> set[tuple[str, str, str]]:
    """The top-level imports as (module, name, alias), renamed by ``names``, unordered."""
    def ren(dotted: str | None) -> str:
        return ".".join(names.get(p, p) for p in (dotted or "").split("."))
    return {(ren(getattr(node, "module", None)) + "." * getattr(node, "level", 0),
             ren(a.name), ren(a.asname))
            for node in body if isinstance(node, ast.Import | ast.ImportFrom)
            for a in node.names}


def _code(tree: ast.Module) -> ast.Module:
    return ast.Module([s for s in tree.body if not isinstance(s, ast.Import | ast.ImportFrom)],
                      [])


def _renames(before: ast.Module, after: ast.Module) -> dict[str, str] | None:
    """The names the code (imports aside) of ``before`` has where ``after`` has others,
    old → new, one to one; None when the trees differ otherwise (an attribute renamed
    as no bound name is counts as a difference)."""
    names: dict[str, str] = {}
    attrs: set[tuple[str, str]] = set()
    # Walked side by side, never listed whole: most changes differ in the first nodes (a
    # statement added changes the module's body), and a module can have a million nodes.
    pairs = zip_longest(ast.walk(_code(before)), ast.walk(_code(after)))
    for one, two in pairs:
        if one is None or two is None or type(one) is not type(two):  # one walk is longer
            return None
        for field in one._fields:
            x, y = getattr(one, field, None), getattr(two, field, None)
            if isinstance(x, list) and isinstance(y, list):
                if len(x) != len(y) or (x != y and not all(  # names in a list (global x)
                        isinstance(i, ast.AST) for i in (*x, *y))):
                    return None
            elif isinstance(one, ast.keyword) and field == "arg":
                if x != y:  # a call's keyword names the callee's option, not a bound name
                    return None
            elif isinstance(x, ast.AST | list) or isinstance(y, ast.AST | list):
                if type(x) is not type(y):
                    return None
            elif field in _NAME_FIELDS and isinstance(x, str) and isinstance(y, str):
                if field == "attr":
                    attrs.add((x, y))
                elif names.setdefault(x, y) != y:
                    return None
            elif x != y or type(x) is not type(y):
                return None
    names = {o: n for o, n in names.items() if o != n}
    if len(set(names.values())) != len(names) or \
            any(x != y and names.get(x) != y for x, y in attrs):
        return None
    return names


def renamed_only(before: ast.Module, after: ast.Module, own: frozenset[str]) -> bool:
    """The trees are the same but for a consistent renaming of names each binds (a
    variable, parameter, function or class: ``applicable_validators`` →
    ``applicable_keywords``) and of imported modules to ``own`` modules the change touched
    (``_validators`` → ``_keywords``: a module renamed, not a library swapped for
    another); the imports may be reordered. An attribute is renamed only as a bound name
    is; a builtin or a name the module does not bind is never renamed."""
    names = _renames(before, after)
    if not names:
        return False
    bound_before, bound_after = _bound(before), _bound(after)
    defined = _bound(before, imports=False)
    for old, new in names.items():
        if old not in bound_before or new not in bound_after or \
                (old not in defined and new not in own):  # imported: only an own module
            return False
    return _imports(before.body, names) == _imports(after.body, {})


_OMITTED = object()  # a field ast.dump leaves out: absent, or None as its class's default


def _field(node: ast.AST, name: str) -> object:
    value = getattr(node, name, _OMITTED)
    return _OMITTED if value is None and getattr(type(node), name, ...) is None else value


def same_tree(one: ast.AST, two: ast.AST) -> bool:
    """Whether ``ast.dump(one) == ast.dump(two)`` (``include_attributes=False``: positions
    aside), decided without writing either out: node types and fields in order, a field
    ``ast.dump`` leaves out as left out, other values by type and ``repr`` as it writes
    them (``1`` is neither ``1.0`` nor ``True``), stopping at the first difference."""
    stack: list[tuple[object, object]] = [(one, two)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if isinstance(x, ast.AST):
            assert isinstance(y, ast.AST)  # the same type (for mypy)
            stack += [(_field(x, f), _field(y, f)) for f in reversed(x._fields)]
        elif isinstance(x, list):
            assert isinstance(y, list)
            if len(x) != len(y):
                return False
            stack += reversed(list(zip(x, y, strict=True)))
        elif x is not y and (x != y if isinstance(x, str) else repr(x) != repr(y)):
            return False
    return True


def parse_source(source: str | None) -> ast.Module | None:
    """``source``'s syntax tree; None without a source or when it does not parse."""
    if source is None:
        return None
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def cosmetic_only(before: str | None, after: str | None,
                  own: frozenset[str] = frozenset()) -> bool:
    """The module's code is the same before and after the change once ``OSError``'s
    aliases read as ``OSError``, help texts and messages are blanked and type-narrowing
    asserts dropped,
    or but for names renamed (:func:`renamed_only`, ``own``: the module names the change
    touched). False for a module that does not parse on either side, or is too deep to walk."""
    old, new = parse_source(before), parse_source(after)
    if old is None or new is None:
        return False
    try:  # a tree that parses can still be too deep to walk (1+1+…+1, 1,000 terms)
        old, new = _Cosmetic().visit(old), _Cosmetic().visit(new)
        return same_tree(old, new) or renamed_only(old, new, own)
    except RecursionError:
        return False


def _module_name(path: str) -> str:
    """The name a module path is imported by (``pkg/_keywords.py`` → ``_keywords``,
    ``pkg/sub/__init__.py`` → ``sub``)."""
    parts = path.removesuffix(".py").split("/")
    return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]


def cosmetic_change(sources: Sequence[tuple[str, str | None, str | None]]) -> bool:
    """Each module's change (its path, its source before and after) is cosmetic
    (:func:`cosmetic_only`; the modules' names are the ones a renamed import may take)."""
    own = frozenset(_module_name(path) for path, _, _ in sources)
    return bool(sources) and all(cosmetic_only(before, after, own)
                                 for _, before, after in sources)
