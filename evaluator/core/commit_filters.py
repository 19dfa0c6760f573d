"""What a commit's diff says about the question its subject asks: the rules that keep a
history question worth keeping (issue 24's cold review of 60 drafted questions).

:mod:`evaluator.core.commits` decides from ``git log`` alone (subject, files, sizes); this
module reads the change itself, per module it touched: the ``-U0`` patch's added lines
(with their line numbers) and deleted lines, the module before and after the commit and
today. It is pure: the adapter (:mod:`evaluator.history_changes`) reads git.

A commit is **skipped** (each a counted reason) when

* its subject is about tests (``Add tests …``, ``test: …``, a test named, coverage), about
  docs (their build too) or holds several topics (two sentences, two "; ", a count of
  fixes, a list of verb clauses: :func:`listed_topics`): :func:`subject_reason` (a
  ``Merge …`` subject, ``Merge commit from fork`` with one parent included, is a merge of
  branches in :mod:`.commits` before this is asked);
* it is a **chore**: every Python module it touched has the same syntax tree before and
  after once docstrings, comments, type annotations, ``if TYPE_CHECKING:`` blocks, typing
  imports, ``@overload`` stubs, ``cast()``, ``TypeVar`` assignments and ``__all__`` are dropped and
  imports are compared as the set of names they bind (docs wording, type hints,
  ``# type: ignore``, an import restyle, ``import x as x``);
* it only **removes** code: it adds no code line (blank, comment and docstring lines do
  not count), so the answer is the absence of code;
* it is **superseded**: none of its added code lines survives today. A line survives when
  one to three consecutive lines of today's module hold at least 3/4 of its tokens
  (identifiers split into words, numbers, string literals) and every token the line
  brought that the diff's deleted lines of that file did not have: a rename or a reflow
  keeps it, a later change of the value it set does not;
* it is **mostly superseded**: fewer than half of its *distinctive* added code lines survive
  (imports and lines with at most one name, ``if x is None:``, ``except E:``, are not).

Otherwise its **grades** follow the surviving added code lines (3 for the fewest modules
holding more than half of them and any module tied with the last, 2 for the rest), not
deletions or docstring rewrites; a version file (``__version__.py``, ``_version.py``,
``version.py``, ``__about__.py``) whose only change is a version string, or any module whose
only changed line sets its version at the top level (``__version__ = "1.2"``), is never
graded (a commit changing nothing else is skipped: :data:`SKIP_VERSION_ONLY`), and
its **facts** come only from added lines that still exist word for word, were not merely
moved (the same line deleted elsewhere in the diff, or one whose tokens differ from it
by one renamed name), reflowed (its words, in order, run
through the deleted lines) or re-wrapped (its code runs through the deleted lines' code,
its comment, if any, one a deleted line had: an argument split onto its own line) and are
not version markers (``.. versionadded::``).
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field

from evaluator.core.commit_chores import (
    SKIP_COSMETIC,
    SKIP_LAYOUT,
    SKIP_PIN_OR_COMPAT,
    chore_change,
    collapse_space,
    cosmetic_change,
    layout_change,
    parse_source,
)
from evaluator.core.commit_grades import grade_weights
from evaluator.core.giveaway import options_in

SKIP_TESTS_SUBJECT = "the subject is about tests"
SKIP_DOCS_SUBJECT = "the subject is about documentation"
SKIP_MIXED = "two topics in one subject (two sentences, or a list of changes)"
SKIP_NO_CODE = "a chore: docstrings, comments or type hints only"
SKIP_REMOVAL = "removes code only (adds no new code line)"
SKIP_IMPORTS_ONLY = "changes the modules' imports only (a re-export or a compat import)"
SKIP_SUPERSEDED = "superseded: none of its added code lines exists at the evaluated commit"
SKIP_MOSTLY_SUPERSEDED = ("superseded: most of its distinctive added code lines (not "
                          "imports or guards) are gone at the evaluated commit")
SKIP_VERSION_ONLY = "changes only a version string (a version file or line)"
FILTER_REASONS: tuple[str, ...] = (SKIP_TESTS_SUBJECT, SKIP_MIXED, SKIP_DOCS_SUBJECT,
                                   SKIP_NO_CODE, SKIP_IMPORTS_ONLY, SKIP_VERSION_ONLY,
                                   SKIP_REMOVAL, SKIP_PIN_OR_COMPAT, SKIP_LAYOUT,
                                   SKIP_COSMETIC,
                                   SKIP_SUPERSEDED,
                                   SKIP_MOSTLY_SUPERSEDED)

#: Share of an added line's tokens a window of today's module must hold for it to survive.
SURVIVE_SHARE = 0.75
WINDOW = 3

_TESTS_PREFIX = re.compile(r"^\s*(?:tests?|testing)(?:\([^)]{0,60}\))?\s*:", re.IGNORECASE)
_TESTS_WORD = r"(?:tests\b|test(?:\s+(?:for|to|of|that|cases?|coverage|suite)\b|$))"
_TESTS_SUBJECT = re.compile(
    r"^(?:(?:add(?:s|ed|ing)?|more|improve[sd]?|extend(?:s|ed)?|update[sd]?|fix(?:es|ed)?|"
    r"increase[sd]?|write|refactor(?:s|ed)?|clean ?up)\s+(?:(?:more|some|a|the|unit|missing|"
    r"regression|new|extra)\s+)*)?" + _TESTS_WORD, re.IGNORECASE)
_TEST_TOOLING = re.compile(r"\btest(?:ing)?\s+(?:env\w*|dependencies|deps|"
                           r"requirements|matrix|setup|infrastructure|runner)\b", re.IGNORECASE)
_DOCS_SUBJECT = re.compile(
    r"^(?:add(?:s|ed)?|create[sd]?|write|update[sd]?|improve[sd]?|rewrite|fix(?:es|ed)?|"
    r"clarify|tweak|reword|expand)\s+(?:(?:a|an|the|new|more|some|missing|api)\s+)*"
    r"(?:docs?|documentation|docstrings?|changelog|readme)\b", re.IGNORECASE)
#: A screenshot or screencast is documentation, whatever module a demo script it updates.
_SCREENSHOT = re.compile(r"\bscreen(?:shots?|casts?)\b", re.IGNORECASE)
_TWO_SENTENCES = re.compile(r"[a-z0-9`')\]]\.\s+[A-Z][a-z]+\s+\S")
#: Several topics listed in one subject (issue 24's ninth fresh review, round 12): two
#: or more "; " separators ("bump pytest to 9; add pyv to file template; use = for …",
#: alembic history-16; all 29 such subjects of the 30 tuning histories list chores).
_SEMICOLONS = re.compile(r";\s+\S[^;]*;\s+\S")
#: What a subject's separators are read without: a code span (```a; b; c```) and an HTML
#: entity (``&lt;``), whose ";" separates nothing.
_NOT_SEPARATORS = re.compile(r"`[^`]*`|&#?\w+;")
#: ... or a count of fixes or changes: "Four run-edge polish fixes" (tox history-01),
#: "Various fixes", "Two small doc tweaks" (42 tuning subjects, all bundles).
#: A behaviour said of several changes stays a question: "Two updates to the same key are
#: merged" (the count ends the subject, or fixes, tweaks or clean-ups go on "to …").
_COUNTED = re.compile(r"^(?:two|three|four|five|six|seven|several|multiple|various|a few|"
                      r"a couple of|misc(?:ellaneous)?)\s+(?:[\w-]+\s+){0,3}?"
                      r"(?:(?:fix(?:es)?|tweaks|clean-?ups)(?:\s+(?:to|in|for|after|on|and)\b|"
                      r"\s*$)|(?:changes|improvements|updates)\s*$)", re.IGNORECASE)
#: ... or a number of fixes or findings that the subject addresses: "Address six WSGI/ASGI
#: parser and protocol findings" (the tenth review's gunicorn history-18), "Fix two small
#: documentation issues", "Fixed various issues on the Python 3 port" (never "Avoid
#: deadlock when two threads report issues": the number must follow the opening verb).
_COUNTED_FIXES = re.compile(r"^(?:fix(?:e[sd])?|address(?:es|ed)?|resolve[sd]?|solve[sd]?)\s+"
                            r"(?:the\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|"
                            r"several|multiple|various)\s+(?:[\w/-]+\s+){0,4}?(?:fixes|"
                            r"findings|issues|bugs|problems)\b", re.IGNORECASE)
#: A verb opening a clause of a list: "Honor tox c -o, clean devenv ALL error, correct
#: provision pin" (tox history-02), in its base (imperative) or its past form.
_LIST_VERBS = (r"add|allow|avoid|change|clean|correct|deprecate|drop|fix|handle|honou?r|"
               r"improve|make|move|raise|remove|rename|replace|return|set|support|switch|"
               r"update|use|document|refactor|fail|repair|restore|skip|ensure|preserve|"
               r"respect|reject|accept|expose|harden|propagate|treat|stop|keep|bump|tweak|"
               r"adjust|enable|disable|emit|warn|pass|guard|reuse|normali[sz]e|simplify|"
               r"sort|strip|validate|catch|delete|rewrite|introduce|extend|implement|"
               r"convert|check|show|include|exclude|require|modify|reorder|rearrange|"
               r"separate|split|extract|clarify|mention|test|get|apply")
_CLAUSE_VERB = re.compile(r"^(?:(?P<past>(?:" + _LIST_VERBS + r")(?:e?d|[pgt]ed)|made|got|"
                          r"kept|rewrote)|(?P<base>" + _LIST_VERBS + r"))\b", re.IGNORECASE)
_CLAUSE_SPLIT = re.compile(r",\s+(?:and\s+)?")
#: A second clause that says more of the first: a test or a changelog entry added with
#: it, "… instead", "related …", a pronoun back to it ("and avoid exceptions in it"), or
#: a deprecation of what it replaces ("Add env argument …, deprecate **env_options").
_CLAUSE_SAME = re.compile(r"\b(?:tests?|changelog|changes|news\w*|authors|docs?|instead|"
                          r"related|it|its|them|that|this|these|those)\b|^deprecat",
                          re.IGNORECASE)
_LIST_STOP = frozenset({"with", "from", "into", "when", "some", "more", "also"})


def _content(clause: str) -> set[str]:
    """A clause's words past its verb, of four characters or more, not stop words."""
    rest = clause.split(None, 1)[1] if " " in clause else ""
    return {w for w in re.findall(r"[a-z][a-z0-9_]{3,}", rest.lower()) if w not in _LIST_STOP}


def listed_topics(cleaned: str) -> bool:
    """The subject lists changes as clauses after commas, each opening with a verb (issue
    24's ninth fresh review, tox history-02 "Honor tox c -o, clean devenv ALL error,
    correct provision pin"; -04 "Honor metadata behind a BOM, fail cleanly on bad
    blocks"): three or more such clauses; or two in the same form (both imperative or
    both past: "Rename to AsyncHTTPTransport, add AsyncByteStream") unless the second
    says more of the first (:data:`_CLAUSE_SAME`, or a content word of the first: "Remove
    support for Click 7, require Click 8+"). Brackets and code spans are not read (their
    commas list names). Of 207 tuning subjects caught, a sample of 60 read holds a few
    single topics ("Implement … commands, fix up lots of problems from that" before the
    pronoun rule)."""
    if "`" in cleaned or re.search(r"[(\[{][^)\]}]*,", cleaned):
        return False
    parts = [p.strip() for p in _CLAUSE_SPLIT.split(cleaned)]
    if len(parts) < 2:
        return False
    forms = set()
    for part in parts:
        verb = _CLAUSE_VERB.match(part)
        # a clause has an object, and its verb is a word, not SQL ("Emit DROP CHECK for
        # MySQL, DROP CONSTRAINT for MariaDB"; "Split, simplify, and fix x" is one topic)
        if verb is None or " " not in part or verb.group(0).isupper():
            return False
        # operations listed for one object: "Add read, update and delete handlers"
        if re.match(r"\S+\s+(?:and|or|&)\s", part):
            return False
        word = verb.group(0).lower()
        if word not in {"set", "split"}:  # either form
            forms.add("past" if verb.group("past") else "base")
    if len(parts) >= 3:
        return True
    return len(forms) <= 1 and _CLAUSE_SAME.search(parts[1]) is None and \
        not _content(parts[0]) & _content(parts[1])


#: A test named in the subject: a test module ``test_x.py`` or a test function whose name
#: holds three words or more after ``test_`` ("Run GC on PyPy more for
#: test_worker_thread_context_not_leaked", trio history-01); never an API method called
#: ``app.test_request_context`` or ``test_client`` (Flask's).
_TEST_NAME = re.compile(r"(?<![.\w])test_\w+\.py\b|(?<![.\w])test_[a-z0-9]+(?:_[a-z0-9]+){2,}"
                        r"\b(?!\()", re.IGNORECASE)
#: A test fixed: "Adjust sqlite test further" (alembic history-19), "Fix redis tests".
_TEST_FIXED = re.compile(r"^(?:adjust|fix|tweak|update|repair|correct|rework|amend)(?:s|e?d|es)?"
                         r"\s+(?:\S+\s+){0,2}tests?(?:\s+(?:further|again|more))?$",
                         re.IGNORECASE)
#: Coverage chores: "Get and enforce 100% coverage" (trio history-11), "Increase test
#: coverage" (never a coverage tool's own "branch coverage" feature).
_COVERAGE = re.compile(r"\b(?:100\s?%|full|complete)\s+(?:\w+\s+)?coverage\b|"
                       r"\b(?:test|code)\s+coverage\b|\bcoverage\s+(?:to|at)\s+100\b|"
                       r"^(?:get|reach|enforce|achieve)\w*\s+(?:\S+\s+){0,2}coverage\b",
                       re.IGNORECASE)
#: Documentation builds: "Allow documentation builds on Windows" (trio history-07).
_DOCS_BUILD = re.compile(r"\b(?:docs?|documentation|sphinx)\s+builds?\b|"
                         r"\bbuild(?:ing)?\s+(?:the\s+)?(?:docs?|documentation)\b",
                         re.IGNORECASE)
_VERSION_MARKER = re.compile(r"^\.\.\s*(?:versionadded|versionchanged|deprecated|"
                             r"versionremoved)\s*::", re.IGNORECASE)
_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[A-Za-z_][A-Za-z0-9_]*|\d+")
_SUBWORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_TYPING_MODULES = frozenset({"typing", "typing_extensions", "collections.abc", "__future__",
                             "_typeshed"})


def subject_reason(raw_subject: str, cleaned: str) -> str | None:
    """Why a subject cannot be a question whatever its diff: about tests (a test named,
    a test fixed, coverage), about docs (their build too), or several topics (two
    sentences, two "; ", a count of fixes, a list of verb clauses)."""
    if _TESTS_PREFIX.match(raw_subject) or _TESTS_SUBJECT.search(cleaned) or \
            _TEST_TOOLING.search(cleaned) or _TEST_NAME.search(cleaned) or \
            _TEST_FIXED.match(cleaned) or _COVERAGE.search(cleaned):
        return SKIP_TESTS_SUBJECT
    if _DOCS_SUBJECT.match(cleaned) or _SCREENSHOT.search(cleaned) or \
            _DOCS_BUILD.search(cleaned):
        return SKIP_DOCS_SUBJECT
    if _TWO_SENTENCES.search(cleaned) or \
            _SEMICOLONS.search(_NOT_SEPARATORS.sub(" ", cleaned)) or \
            _COUNTED.match(cleaned) or _COUNTED_FIXES.search(cleaned) or \
            listed_topics(cleaned):
        return SKIP_MIXED
    return None


def is_version_marker(line: str) -> bool:
    return _VERSION_MARKER.match(line.strip()) is not None


# ----------------------------------------------------------------------------- syntax


_parse = parse_source


def _docstring_of(body: Sequence[ast.stmt]) -> ast.Expr | None:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and \
            isinstance(first.value.value, str):
        return first
    return None


def docstring_lines(tree: ast.Module | None) -> set[int]:
    """The line numbers (1-based) the docstrings of ``tree`` span."""
    out: set[int] = set()
    if tree is None:
        return out
    # Only statements hold statements (a function or a class is one, whatever it nests
    # in), so the walk never enters an expression: most of a module's nodes.
    nodes: list[ast.AST] = [tree]
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef |
                      ast.AsyncFunctionDef):
            doc = _docstring_of(node.body)
            if doc is not None:
                out.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
        nodes += [child for child in ast.iter_child_nodes(node)
                  if isinstance(child, ast.stmt | ast.excepthandler | ast.match_case)]
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or \
        (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


class _Behaviour(ast.NodeTransformer):
    """Drop what does not change behaviour: docstrings and every other bare string
    statement (attribute docstrings), annotations, typing imports and
    ``if TYPE_CHECKING:`` blocks (comments are not in the tree)."""

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        if _docstring_of(body) is not None:
            body = body[1:]
        out: list[ast.stmt] = []
        imports: set[tuple[str, str, str]] = set()
        for stmt in body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and \
                    isinstance(stmt.value.value, str):  # an attribute's docstring
                continue
            if isinstance(stmt, ast.If) and _type_checking(stmt.test):
                out.extend(stmt.orelse)
                continue
            if isinstance(stmt, ast.Import | ast.ImportFrom):
                imports |= _bindings(stmt)
                continue
            if _typing_only(stmt):
                continue
            out.append(stmt)
        # Imports as the set of names they bind: a restyle or a reorder is no change.
        return [ast.Expr(ast.Constant(f"import {m} {n} {a}")) for m, n, a in sorted(imports)] \
            + out

    def visit_Call(self, node: ast.Call) -> ast.AST:  # cast(T, x) → x
        self.generic_visit(node)
        if _called(node.func) == "cast" and len(node.args) == 2 and not node.keywords:
            return node.args[1]
        return node

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, name, self._body(value))
        super().generic_visit(node)
        if isinstance(node, ast.arg):
            node.annotation = None
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
            node.type_comment = None
        if isinstance(node, ast.ClassDef):  # MutableMapping[str, Any] → MutableMapping
            node.bases = [b.value if isinstance(b, ast.Subscript) else b for b in node.bases]
        if isinstance(node, ast.AnnAssign):
            if node.value is not None:  # "x: list[str] = []" as "x = []  # type: list[str]"
                return ast.Assign(targets=[node.target], value=node.value)
            node.annotation = ast.Constant(value=None)
        if isinstance(node, ast.Subscript):  # Union[a, b] → a | b; Optional[a] → a | None
            return _union(node)
        return node


def _called(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else \
        func.attr if isinstance(func, ast.Attribute) else ""


_TYPE_MAKERS = frozenset({"TypeVar", "ParamSpec", "TypeVarTuple", "NewType"})


def _bindings(stmt: ast.Import | ast.ImportFrom) -> set[tuple[str, str, str]]:
    """What an import binds, ``import x as x`` as ``import x``; typing imports none."""
    module = ""
    if isinstance(stmt, ast.ImportFrom):
        module = "." * stmt.level + (stmt.module or "")
        if stmt.module in _TYPING_MODULES:
            return set()
    out = set()
    for alias in stmt.names:
        if alias.name in _TYPING_MODULES:
            continue
        out.add((module, alias.name, alias.asname or alias.name.split(".")[0]))
    return out


def _typing_only(stmt: ast.stmt) -> bool:
    """``__all__`` (what ``import *`` exports), ``T = TypeVar("T")`` and ``@overload``
    stubs: statements only a type checker reads."""
    if isinstance(stmt, ast.Assign | ast.AugAssign | ast.AnnAssign):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            return True
        value = stmt.value
        return isinstance(value, ast.Call) and _called(value.func) in _TYPE_MAKERS
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
        return any(_called(d) == "overload" for d in stmt.decorator_list)
    return False


def _union(node: ast.Subscript) -> ast.expr:
    name = node.value.id if isinstance(node.value, ast.Name) else \
        node.value.attr if isinstance(node.value, ast.Attribute) else ""
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if name == "Optional" and len(items) == 1:
        items = [items[0], ast.Constant(value=None)]
    elif name != "Union" or not items:
        return node
    out = items[0]
    for item in items[1:]:
        out = ast.BinOp(left=out, op=ast.BitOr(), right=item)
    return out


def behaviour(source: str | None, *, imports: bool = True) -> str | None:
    """The syntax tree of ``source`` without what does not change behaviour, as text; None
    when it is not Python that parses. ``imports=False`` also drops the module's own
    (top-level) imports."""
    both = _read(source)[1]
    return None if both is None else both[0 if imports else 1]


@functools.lru_cache(maxsize=16)  # a commit's "after" is often the next one's "before"
def _read(source: str | None) -> tuple[frozenset[int], tuple[str, str] | None]:
    """One parse of ``source`` for every rule that reads it: the lines its docstrings span
    (:func:`docstring_lines`), and :func:`behaviour` with the module's imports and without
    them, each top-level statement dumped once (None when it does not parse or is too deep
    to walk). A module of 5,000 lines takes a tenth of a second to parse, and every commit
    that touched it is read."""
    tree = _parse(source)
    if tree is None:
        return frozenset(), None
    docs = frozenset(docstring_lines(tree))
    try:  # a tree that parses can still be too deep to walk (1+1+…+1, 1,000 terms)
        module = _Behaviour().visit(tree)
        dumps = [(ast.dump(s, include_attributes=False),
                  isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and
                  str(s.value.value).startswith("import ")) for s in module.body]
    except RecursionError:
        return docs, None
    return docs, ("\n".join(d for d, _ in dumps),
                  "\n".join(d for d, is_import in dumps if not is_import))


# ----------------------------------------------------------------------------- the change


@dataclass(frozen=True)
class ModuleDiff:
    """One module a commit touched: its path today, the lines the commit added (line
    number after the commit, text) and deleted, and its source before and after the commit
    and today (None when absent or unreadable)."""

    module: str
    added: tuple[tuple[int, str], ...]
    deleted: tuple[str, ...]
    before: str | None
    after: str | None
    today: str | None


@dataclass(frozen=True)
class Judged:
    """A commit's change judged: why it is skipped, or the modules' surviving added code
    lines (for grades) and the added lines a fact may come from."""

    reason: str | None
    surviving: Mapping[str, int]
    fact_lines: Mapping[str, tuple[str, ...]]
    #: modules the change touched that are never graded (a version string only)
    ungraded: frozenset[str] = frozenset()
    #: the surviving lines each module counts for its grade (:func:`.grade_weights`)
    weights: Mapping[str, int] = field(default_factory=dict)
    #: the command-line options the change adds (:func:`evaluator.core.giveaway.options_in`)
    options: frozenset[str] = frozenset()


VERSION_FILES = frozenset({"__version__.py", "_version.py", "version.py", "__about__.py"})
_LITERAL = re.compile(r"""(?:[rbuf]{0,2})(?:"[^"\n]*"|'[^'\n]*')|\b\d[\w.]*""",
                      re.IGNORECASE)


#: A line that sets a module's version at its top level (``__version__ = "1.2"``,
#: ``VERSION: str = "2.0.1"``, ``__version_info__ = (1, 2)``): never indented, never a
#: protocol's ``version = "HTTP/1.1"`` or ``VERSION = 13``.
_VERSION_LINE = re.compile(r"^(?:__version__|__version_info__|VERSION)\s*(?::[^=]*)?=\s*"
                           r"(?:[rbuf]{0,2}[\"']v?\d+\.\d+|\(\s*\d+\s*,\s*\d+)")


def version_string_only(diff: ModuleDiff) -> bool:
    """A version file whose changed lines differ only in their string and number literals
    (``__version__ = "2.1.0"`` for ``"2.0.0"``), or any module whose changed lines are only
    such a version line (a package's ``__init__.py`` bumped for a release: issue 24 round
    12, alembic history-02)."""
    added = [t for _, t in diff.added if t.strip()]
    deleted = [t for t in diff.deleted if t.strip()]
    if diff.module.rsplit("/", 1)[-1] not in VERSION_FILES and not all(
            _VERSION_LINE.match(t) for t in (*added, *deleted)):
        return False
    return bool(added) and sorted(_LITERAL.sub('""', collapse_space(t)) for t in added) == \
        sorted(_LITERAL.sub('""', collapse_space(t)) for t in deleted)


def _words(line: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", line.lower())


#: The most places :meth:`_Run.holds` compares a sequence at: past them it is read as not
#: held (a patch deleting thousands of near-same lines), so a test stays near linear.
MAX_PLACES = 2048


class _Run:
    """Rows of tokens (the deleted lines') read as one run, indexed by adjacent token pair:
    whether a sequence occurs in it contiguously, across rows, compared only where its
    rarest pair is (at most :data:`MAX_PLACES` of them), not along the run: a patch may
    delete a megabyte."""

    def __init__(self, rows: Iterable[Sequence[str]]) -> None:
        self.tokens: list[str] = []
        self.ends: set[int] = set()  # the position just past each row's last token
        self.at: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for row in rows:
            for tok in row:
                self.at[(tok,)].append(len(self.tokens))
                if self.tokens:
                    self.at[(self.tokens[-1], tok)].append(len(self.tokens) - 1)
                self.tokens.append(tok)
            self.ends.add(len(self.tokens))
        self.seen: dict[tuple[tuple[str, ...], bool], bool] = {}

    def holds(self, seq: Sequence[str], *, row_end: bool = False) -> bool:
        """``seq`` runs through the rows (ending where a row ends, with ``row_end``)."""
        key = (tuple(seq), row_end)
        if key not in self.seen:
            self.seen[key] = self._holds(list(seq), row_end)
        return self.seen[key]

    def _holds(self, want: list[str], row_end: bool) -> bool:
        if not want:
            return False
        keys = [tuple(want[i:i + 2]) for i in range(max(1, len(want) - 1))]
        pick = min(range(len(keys)), key=lambda i: len(self.at.get(keys[i], ())))
        for position in self.at.get(keys[pick], ())[:MAX_PLACES]:
            start = position - pick
            if start >= 0 and self.tokens[start:start + len(want)] == want and \
                    (not row_end or start + len(want) in self.ends):
                return True
        return False


def _reflowed(line: str, stream: _Run) -> bool:
    """An added line whose words, in order, run through the deleted lines (``stream``: their
    words): text the commit only reflowed or punctuated, not new text."""
    found = _words(line)
    return len(found) >= 2 and stream.holds(found)


_CODE_TOKEN = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|\w+|\S")


#: A comment that is a tool's directive, not words (as :func:`code_tokens` joins it).
_DIRECTIVE = re.compile(r"# (?:type :|noqa\b|pragma\b|pyright :|mypy :|fmt :|pylint :|"
                        r"nosec\b|isort :)")


def code_tokens(line: str) -> tuple[list[str], str]:
    """A line's code as tokens (string literals whole, names and numbers, every other
    character one token) and its trailing ``#`` comment, its tokens joined by spaces (a
    ``#`` in a string is code)."""
    out = _CODE_TOKEN.findall(line)
    if "#" not in out:
        return out, ""
    return out[:out.index("#")], " ".join(out[out.index("#"):])


def _rewrapped(line: str, code: _Run, comments: Set[str]) -> bool:
    """An added line whose code (:func:`code_tokens`) the deleted lines' code (``code``)
    holds, as a part of one line or running across lines, or, without a trailing comma, at
    a line's end, and whose comment, if any, a deleted line had (``comments``): a statement
    the commit only re-wrapped or moved, within a file or between two (responses
    history-04: ``method=…,  # type: ignore[misc]`` split out of ``method=…,
    status_code=…  # type: ignore[misc]``; the words rule, :func:`_reflowed`, misses it
    for the repeated comment). The added line must occur in the deleted text, not the
    reverse: a new line holding a deleted ``self.release()`` is new; and a comment the
    commit wrote makes the line its own (jsonschema history-14, kept: ``validator in
    strong,  # for a high priority keyword``), unless it is a tool's directive
    (:data:`_DIRECTIVE`: pluggy history-07's ``gi_code  # type: ignore[attr-defined]``
    only changed its error code)."""
    found, comment = code_tokens(line)
    if comment and comment not in comments and not _DIRECTIVE.match(comment):
        return False
    return code.holds(found) or (len(found) > 2 and found[-1] == "," and
                                 code.holds(found[:-1], row_end=True))


def tokens(line: str) -> list[str]:
    """A line's tokens: string literals (quotes normalised), numbers, and identifiers split
    into lower-case words (``urllib3_version_list`` → ``urllib``, ``3``, ``version``,
    ``list``)."""
    out: list[str] = []
    for tok in _TOKEN.findall(line):
        if tok[0] in "\"'":
            out.append('"' + tok[1:-1] + '"')
        else:
            out.extend(p.lower() for p in _SUBWORD.findall(tok))
    return out


class _Today:
    """Windows of one to :data:`WINDOW` consecutive lines of today's module, by token."""

    def __init__(self, source: str) -> None:
        lines = [tokens(line) for line in source.splitlines()]
        self.windows: list[Counter[str]] = []
        self.by_token: dict[str, list[int]] = defaultdict(list)
        for i in range(len(lines)):
            for width in range(1, WINDOW + 1):
                if i + width > len(lines) or (width > 1 and not lines[i + width - 1]):
                    break
                window: Counter[str] = Counter()
                for row in lines[i:i + width]:
                    window.update(row)
                n = len(self.windows)
                self.windows.append(window)
                for tok in window:
                    self.by_token[tok].append(n)

    def holds(self, line: list[str], new: set[str]) -> bool:
        if not line:
            return False
        need = Counter(line)
        rarest = min(need, key=lambda t: (len(self.by_token.get(t, ())), t))
        for n in self.by_token.get(rarest, ()):
            window = self.windows[n]
            if not new <= window.keys():
                continue
            held = sum(min(c, window[t]) for t, c in need.items())
            if held >= SURVIVE_SHARE * len(line):
                return True
        return False


@functools.lru_cache(maxsize=8)
def _today(source: str) -> _Today:
    """Today's module read once for every commit that touched it (read only after)."""
    return _Today(source)


_PLAIN = frozenset({"self", "cls", "None", "True", "False"})


def _names(line: str) -> bool:
    """The line names something: an identifier that is no keyword, a value (``True``,
    ``None``, a number or a string: black's fix ``return False`` for a ``raise``); a bare
    ``return``, ``try:``, ``else:`` or ``pass`` names nothing."""
    return bool(re.search(r"\d|[\"']", line)) or any(
        not keyword.iskeyword(w) or w in ("True", "False", "None")
        for w in re.findall(r"[A-Za-z_]\w*", line))


def generic(line: str) -> bool:
    """A line any change could add, which says nothing of this one: an import, or a line
    with at most one name besides keywords (``if x is None:``, ``except E:``,
    ``return x``, ``else:``, ``)``)."""
    text = line.strip()
    if text.startswith(("import ", "from ")):
        return True
    names = {w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)
             if not keyword.iskeyword(w) and w not in _PLAIN}
    return len(names) <= 1


def _code_lines(diff: ModuleDiff, python: bool) -> list[str]:
    docs = _read(diff.after)[0] if python else frozenset()
    out = []
    for number, text in diff.added:
        stripped = text.strip()
        if not stripped or stripped.startswith(("#", "//")) or number in docs:
            continue
        out.append(text)
    return out


def _removal(diffs: Sequence[ModuleDiff], code: Mapping[str, list[str]]) -> bool:
    """No added code line; or fewer added code lines than deleted ones, none bringing a
    token its file's deleted lines did not have (a call or an import taken out)."""
    added_n = deleted_n = 0
    for diff in diffs:
        gone = {t for line in diff.deleted for t in tokens(line)}
        if any(not set(tokens(line)) <= gone for line in code[diff.module]):
            return False
        added_n += len(code[diff.module])
        deleted_n += sum(1 for line in diff.deleted
                         if line.strip() and not line.strip().startswith(("#", "//")))
    return added_n < deleted_n or added_n == 0


#: Tokens past which a line is no fact (every token is a character at least, and a fact
#: holds at most :data:`evaluator.core.commit_facts.MAX_FACT_CHARS`), so its renamed forms
#: are never compared: the keys are quadratic in the tokens, and a pull request may write a
#: line of any length.
MAX_RENAMED_TOKENS = 120  # MAX_FACT_CHARS; not imported (a cycle), a test keeps them equal


def _one_name_out(line: str) -> set[tuple[str, ...]]:
    """The line's tokens with each identifier in turn left out: an added line sharing one
    with a deleted line differs from it by one renamed name (moved, not added). Empty for a
    line of over :data:`MAX_RENAMED_TOKENS` tokens, which is never a fact."""
    toks = re.findall(r"[A-Za-z_]\w*|\S", line)
    return {(*toks[:i], "\0", *toks[i + 1:]) for i, tok in enumerate(toks)
            if (tok[0].isalpha() or tok[0] == "_") and not keyword.iskeyword(tok)} \
        if 2 <= len(toks) <= MAX_RENAMED_TOKENS else set()


def judge(diffs: Sequence[ModuleDiff]) -> Judged:
    """Judge a commit's change over the modules it touched (see the module's rules)."""
    ungraded = frozenset(d.module for d in diffs if version_string_only(d))
    if diffs and len(ungraded) == len(diffs):
        return Judged(SKIP_VERSION_ONLY, {}, {}, ungraded)
    diffs = [d for d in diffs if d.module not in ungraded]
    python = {d.module: d.module.endswith(".py") for d in diffs}
    if diffs and all(python[d.module] for d in diffs):
        shapes = [(behaviour(d.before), behaviour(d.after)) for d in diffs]
        if all(b is not None and b == a for b, a in shapes):
            return Judged(SKIP_NO_CODE, {}, {})
        if all(behaviour(d.before, imports=False) == behaviour(d.after, imports=False)
               is not None for d in diffs):
            return Judged(SKIP_IMPORTS_ONLY, {}, {})
        if cosmetic_change([(d.module, d.before, d.after) for d in diffs]):
            return Judged(SKIP_COSMETIC, {}, {})
    code = {d.module: _code_lines(d, python[d.module]) for d in diffs}
    if _removal(diffs, code):
        return Judged(SKIP_REMOVAL, {}, {})
    if chore_change([(code[d.module], d.deleted) for d in diffs]):
        return Judged(SKIP_PIN_OR_COMPAT, {}, {})
    if layout_change([(code[d.module], d.deleted) for d in diffs]):
        return Judged(SKIP_LAYOUT, {}, {})
    surviving: dict[str, int] = {}
    own: dict[str, list[str]] = {}  # each module's surviving distinctive lines
    distinct = distinct_kept = 0
    named = False  # a surviving line names something (not `return`, `try:`, `else:` alone)
    for diff in diffs:
        if not code[diff.module]:
            continue
        gone = {t for line in diff.deleted for t in tokens(line)}
        today = _today(diff.today) if diff.today is not None else None
        kept = [line for line in code[diff.module] if today is not None and
                today.holds(toks := tokens(line), set(toks) - gone)]
        if today is not None:
            surviving[diff.module] = len(kept)
        distinct += sum(1 for line in code[diff.module] if not generic(line))
        named = named or any(_names(line) for line in kept)
        own[diff.module] = [line for line in kept if not generic(line)]
        distinct_kept += len(own[diff.module])
    # pytest-asyncio history-10 (the seventeenth review): of `except SkipTest:` and its
    # `return`, only the `return` is "still there", as it is in any module
    if not any(surviving.values()) or not named:
        return Judged(SKIP_SUPERSEDED, {}, {})
    if distinct_kept * 2 < distinct:
        return Judged(SKIP_MOSTLY_SUPERSEDED, {}, {})
    surviving = {m: n for m, n in surviving.items() if n}
    options = {o for d in diffs for _, text in d.added for o in options_in(text)} - \
        {o for d in diffs for text in d.deleted for o in options_in(text)}
    return Judged(None, surviving, _new_lines(diffs), ungraded,
                  weights=grade_weights(surviving, own, {d.module: d.today for d in diffs}),
                  options=frozenset(options))


def _new_lines(diffs: Sequence[ModuleDiff]) -> dict[str, tuple[str, ...]]:
    """Each module's added lines a fact may come from: not moved (also with one name
    renamed), reflowed or re-wrapped from the deleted lines of any module, not version
    markers."""
    moved = {collapse_space(line) for d in diffs for line in d.deleted}
    renamed = {key for d in diffs for line in d.deleted for key in _one_name_out(line)}
    stream = _Run(_words(line) for d in diffs for line in d.deleted)
    split = [code_tokens(line) for d in diffs for line in d.deleted]
    deleted_code = _Run(code for code, _ in split)
    comments = {comment for _, comment in split if comment}
    return {d.module: tuple(text for _, text in d.added
                            if collapse_space(text) not in moved and not is_version_marker(text)
                            and not renamed & _one_name_out(text)
                            and not _reflowed(text, stream)
                            and not _rewrapped(text, deleted_code, comments))
            for d in diffs}


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True)
class PatchSide:
    """One file of a ``-U0`` patch: the lines added (line number after the commit, text)
    and the lines deleted."""

    added: tuple[tuple[int, str], ...]
    deleted: tuple[str, ...]


def patch_sides(patch: bytes) -> dict[str, PatchSide]:
    """The added and deleted lines of a ``git show -U0`` patch by the file's path after the
    commit (before it, for a deleted file). Undecodable bytes become U+FFFD. ``---``/``+++``
    are headers only before a file's first hunk: inside one they are a deleted ``-- …`` or
    an added ``++ …`` line (round 9)."""
    added: dict[str, list[tuple[int, str]]] = defaultdict(list)
    deleted: dict[str, list[str]] = defaultdict(list)
    current: str | None = None
    old: str | None = None
    number = 0
    in_hunk = False  # past a file's first "@@": "--- x" is the deleted line "-- x"
    for raw in patch.split(b"\n"):
        if raw.startswith(b"diff --git "):
            current = old = None
            in_hunk = False
        elif not in_hunk and raw.startswith(b"--- "):
            old = _side_path(raw[4:], b"a/")
        elif not in_hunk and raw.startswith(b"+++ "):
            current = _side_path(raw[4:], b"b/") or old
        elif (hunk := _HUNK.match(raw)) is not None:
            number = int(hunk.group(1))
            in_hunk = True
        elif current is not None and raw.startswith(b"+"):
            added[current].append((number, raw[1:].decode("utf-8", "replace")))
            number += 1
        elif current is not None and raw.startswith(b"-"):
            deleted[current].append(raw[1:].decode("utf-8", "replace"))
    return {path: PatchSide(tuple(added.get(path, ())), tuple(deleted.get(path, ())))
            for path in {*added, *deleted}}


def _side_path(raw: bytes, prefix: bytes) -> str | None:
    if not raw.startswith(prefix):
        return None  # /dev/null, or a quoted path (left out)
    try:
        return raw[len(prefix):].decode("utf-8")
    except UnicodeDecodeError:
        return None
