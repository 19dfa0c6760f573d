"""Give-away detection: does a question name its own answer?

A question that names the file or the function that answers it ("How does `echo()` in
`utils.py` …") is found by keyword search alone, so scores on it look better than the
retrieval is. For a question and its grade-3 modules this module computes:

* the **names** of each answer (:func:`answer_names`): its file name and stem, and the
  functions, classes and methods it defines (Python read with :mod:`ast`, other languages by
  their ``def``/``class``/``function``/``func``/``fn`` lines), the names its module-level
  assignments and type aliases bind (``JsonType = …``), and the words of those names,
  of its path and of the first docstring lines (module and symbols);
* the question's **overlap** (:func:`overlap`): the words it shares with those names, their
  share of the question's own words, and the names it *states*: the answer's file name or
  stem, or a symbol it defines, spelled as code (in backticks, called, dotted, or an
  identifier with ``_``, a digit or inner capitals such as ``merge_setting``,
  ``HTTPAdapter``), or a CamelCase class name as written (``Session``); brace expansions
  count as what they expand to (``iter_{content,lines}``). A private name counts
  without its leading ``_`` (``ASGIApp`` states ``_ASGIApp``), and a run of the
  question's words (three or more) states the name they spell ("parse header links" states
  ``_parse_header_links``, "subset hook caller" ``_SubsetHookCaller``). A plain word that
  happens to be a name (``session``) is a shared word, not a stated name.

A question *names its answer* when it states one of those names.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evaluator.core.groundtruth import GENERIC_WORDS

QUESTION_WORDS = frozenset("""
about after also and any are because been before being between both but can could did
does doing done each either every for from had has have how into its just more most not
now only other our over same should some such than that the their them then there these
they this those through too under until use used uses using via was way were what when
where whether which while who why will with within without would you your
""".split())  # noqa: SIM905 (a word list reads best as text)
_SKIP_PARTS = frozenset({"src", "lib", "__init__", "__main__", "index", "mod", "main"})
_OTHER_DEFS = re.compile(
    r"^\s*(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?(?:def|class|function|func|fn|"
    r"struct|interface|trait|enum|type)\s+(?:\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)",
    re.MULTILINE)
#: A C-family definition: a function at the start of a line (its return type before it on
#: the line or the one above: ``static PyObject *\nmd_clear(MultiDictObject *md)``) or a
#: macro; multidict's titles named ``md_clear`` and ``_md_shrink`` of the header graded 3
#: (issue 24, round 14). Only names that read as code (:func:`_distinctive`) count.
_C_DEFS = re.compile(r"^(?:(?:[A-Za-z_][A-Za-z0-9_]*[ \t*]+)*\**([A-Za-z_][A-Za-z0-9_]*)[ \t]*\("
                     r"|#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*))", re.MULTILINE)
_C_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".pyx", ".pxd")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CODE = re.compile(r"`([^`]{1,200})`|([A-Za-z_][A-Za-z0-9_.]*)\(\)|"
                   r"\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\b")


@dataclass(frozen=True)
class AnswerNames:
    """What a module is called and defines, for give-away detection."""

    module: str
    files: frozenset[str]     # "utils.py", "utils" (lower case)
    symbols: frozenset[str]   # names it defines, as written ("Session", "merge_setting")
    words: frozenset[str]     # every word of its path, names and first docstring lines
    #: the lower-case words its docstrings and comments use as prose (not spelled as code)
    prose: frozenset[str] = frozenset()
    #: the attributes its classes assign: named only in backticks
    members: frozenset[str] = frozenset()
    #: its public module-level classes and functions (no leading ``_``): named even when
    #: the module is graded 2, when spelt as code
    public: frozenset[str] = frozenset()
    #: the classes, functions and methods it defines (not the names it assigns or imports)
    defined: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Overlap:
    """A question against its answer's names."""

    shared: tuple[str, ...]   # words the question shares with the names, sorted
    named: tuple[str, ...]    # the names it states (file or symbol), sorted
    share: float              # shared words / the question's own words (0 without words)

    @property
    def names_answer(self) -> bool:
        return bool(self.named)


#: Platforms, as a conventional-commit scope spells them (``fix(windows): …``) and as a
#: question does. A platform is a domain word even where a module names a class after it
#: (platformdirs' ``class Windows`` in ``windows.py``): "… on Windows" says where the
#: behaviour is, as the twentieth review asked (platformdirs history-02, -06, -08, -10),
#: and names no answer unless written as code.
PLATFORMS = {"windows": "Windows", "win": "Windows", "win32": "Windows", "macos": "macOS",
             "mac": "macOS", "osx": "macOS", "darwin": "macOS", "linux": "Linux",
             "unix": "Unix", "posix": "POSIX", "bsd": "BSD", "openbsd": "OpenBSD",
             "freebsd": "FreeBSD", "android": "Android", "ios": "iOS", "cygwin": "Cygwin",
             "msys": "MSYS", "termux": "Termux", "wasm": "WebAssembly",
             "emscripten": "Emscripten"}
PLATFORM_WORDS = frozenset(PLATFORMS) | frozenset(p.lower() for p in PLATFORMS.values())


def words(text: str) -> set[str]:
    """The content words of ``text``: identifiers split at ``_`` and case changes, lower
    case, 3 letters or more, neither generic code words nor question words."""
    out: set[str] = set()
    for ident in _IDENT.findall(text):
        for part in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", ident):
            low = part.lower()
            if len(low) >= 3 and low not in GENERIC_WORDS and low not in QUESTION_WORDS:
                out.add(low)
    return out


def _doc_first_line(node: ast.AST) -> str:
    try:
        doc = ast.get_docstring(node)  # type: ignore[arg-type]
    except TypeError:
        return ""
    return doc.strip().splitlines()[0] if doc and doc.strip() else ""


def _assigned(node: ast.stmt) -> set[str]:
    """The names a module-level assignment, annotated assignment or type alias defines
    (``JsonType = …``, ``DEFAULT_PORTS: dict[…] = …``, ``type Headers = …``)."""
    if isinstance(node, ast.Assign):
        targets = [t for target in node.targets for t in
                   (target.elts if isinstance(target, ast.Tuple) else [target])]
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.If | ast.Try):  # "if TYPE_CHECKING:", "try: import …"
        return {name for part in (node.body, node.orelse) for stmt in part
                for name in _assigned(stmt)}
    else:  # Python 3.12's "type X = …" is an ast.TypeAlias with a Name
        name = getattr(node, "name", None) if type(node).__name__ == "TypeAlias" else None
        targets = [name] if isinstance(name, ast.Name) else []
    return {t.id for t in targets if isinstance(t, ast.Name)}


_PROSE_CODE = re.compile(r"``[^`]*``|`[^`\n]*`|:\w+:`[^`]*`|[A-Za-z_][\w.]*\(|\w*[_.]\w+|\*\w+\*")
_COMMENT = re.compile(r"#([^\n]*)")


def prose_words(source: str, tree: ast.Module | None) -> set[str]:
    """The lower-case words ``source``'s docstrings and comments use as prose: code spans
    (backticks, roles, calls, dotted or ``_`` names, ``*emphasis*``) left out. ``tree`` is
    ``source`` parsed (``None`` when it does not parse: its comments only)."""
    texts = [m.group(1) for m in _COMMENT.finditer(source)]
    for node in ast.walk(tree) if tree is not None else ():
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef |
                      ast.AsyncFunctionDef):
            texts.append(_doc_text(node))
    out: set[str] = set()
    for text in texts:
        out.update(w.lower() for w in re.findall(r"[A-Za-z]+", _PROSE_CODE.sub(" ", text)))
    return out


def _doc_text(node: ast.AST) -> str:
    try:
        return ast.get_docstring(node) or ""  # type: ignore[arg-type]
    except TypeError:
        return ""


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """The module's statements, and those of its ``if``/``try``/``with`` blocks
    (``if sys.platform == "win32": def proxy_bypass_registry(…)``)."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If | ast.Try | ast.With):
            for part in ("body", "orelse", "finalbody"):
                out += _module_level(getattr(node, part, []))
            for handler in getattr(node, "handlers", []):
                out += _module_level(handler.body)
    return out


def _members(tree: ast.Module) -> set[str]:
    """The names class bodies assign (``spool_max_size = 1024 * 1024``). Not function
    parameters: a backticked parameter (`` `kw_only` ``, `` `field_transformer` ``) is how
    kept questions state the behaviour they ask about (attrs, click reviews)."""
    return {name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            for stmt in node.body for name in _assigned(stmt)}


def _defined(tree: ast.Module | None) -> tuple[set[str], set[str]]:
    """The public module-level classes and functions of ``tree``, and every class,
    function and method it defines."""
    if tree is None:
        return set(), set()
    defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    public = {node.name for node in _module_level(tree.body)
              if isinstance(node, defs) and not node.name.startswith("_")}
    return public, {node.name for node in ast.walk(tree) if isinstance(node, defs)}


def _python_names(tree: ast.Module | None) -> tuple[set[str], list[str]]:
    if tree is None:
        return set(), []
    names: set[str] = set()
    docs = [_doc_first_line(tree)]
    for node in _module_level(tree.body):
        names |= _assigned(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            docs.append(_doc_first_line(node))
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(item.name)
                        docs.append(_doc_first_line(item))
    return names, docs


def answer_names(module: str, source: str | None) -> AnswerNames:
    """The names of ``module`` (its path, and what ``source`` defines; none without it)."""
    base = posixpath.basename(module)
    stem = posixpath.splitext(base)[0]
    # its folders named as code ("pep517_backend"), not plain words ("structlog", "src")
    # a private one also as written without its "_" ("Soft_rw: …" states `_soft_rw/`, the
    # eighteenth review's filelock history-09)
    folders = {name for p in module.split("/")[:-1] if _distinctive(p.strip("_"))
               for name in (p.lower(), p.lower().lstrip("_"))}
    files = ({base.lower(), stem.lower()} | folders) - _SKIP_PARTS
    symbols: set[str] = set()
    members: set[str] = set()
    public: set[str] = set()
    defined: set[str] = set()
    docs: list[str] = []
    prose: set[str] = set()
    if source is not None:
        if module.endswith(".py"):
            tree = _parse(source)  # once: names, members, definitions and prose read it
            symbols, docs = _python_names(tree)
            members = {m for m in _members(tree) if _distinctive(m)} if tree else set()
            public, defined = _defined(tree)
            prose = prose_words(source, tree)
        else:
            symbols = set(_OTHER_DEFS.findall(source))
            if module.endswith(_C_SUFFIXES):
                # "if (" or "sizeof(" never reads as code: no keyword passes _distinctive
                symbols |= {name for pair in _C_DEFS.findall(source) for name in pair
                            if len(name) >= 3 and _distinctive(name)}
    symbols = {s for s in symbols if not s.startswith("__")}
    parts = [p for p in module.split("/") if posixpath.splitext(p)[0] not in _SKIP_PARTS]
    vocabulary = words(" ".join([*parts, *symbols, *docs]))
    return AnswerNames(module, frozenset(files), frozenset(symbols), frozenset(vocabulary),
                       frozenset(prose), frozenset(members), frozenset(public),
                       frozenset(defined))


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _distinctive(name: str) -> bool:
    """A name that reads as code, not as a word: ``_``, a digit, or inner capitals."""
    return "_" in name.strip("_") or any(c.isdigit() for c in name) or \
        any(c.isupper() for c in name[1:])


MIN_PROSE_WORDS = 10


def _coined(symbol: str, plain: set[str], prose: frozenset[str]) -> bool:
    """A lower-case name written as a plain word (``asdict``) that is not a word of the
    answer's prose: its docstrings and comments never use it outside code, so it is the
    name, not an English word (``redirect``, ``session`` are). A module with under
    :data:`MIN_PROSE_WORDS` words of prose says too little to tell."""
    low = symbol.lower()
    if len(prose) < MIN_PROSE_WORDS:  # too little prose to tell a name from a word
        return False
    return symbol.islower() and low in plain and len(low) >= 4 and low not in prose and \
        low not in QUESTION_WORDS and low not in GENERIC_WORDS


_BRACES = re.compile(r"([A-Za-z0-9_.]*)\{([A-Za-z0-9_]+(?:\s*,\s*[A-Za-z0-9_]+)+)\}"
                     r"([A-Za-z0-9_]*)")


def expand_braces(text: str) -> str:
    """Shell-style brace expansions spelled out: ``iter_{content,lines}`` →
    ``iter_content iter_lines`` (a question that writes them names both)."""
    return _BRACES.sub(lambda m: " ".join(m.group(1) + part.strip() + m.group(3)
                                          for part in m.group(2).split(",")), text)


def _stated(question: str) -> tuple[set[str], set[str]]:
    """What the question spells as code, split into identifiers, and its plain tokens."""
    code: set[str] = set()
    for match in _CODE.finditer(question):
        text = next(g for g in match.groups() if g)
        code.add(text.lower())
        code |= set(_IDENT.findall(text))
    plain = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", question))
    return code, plain


def _states(symbol: str, code: set[str], plain: set[str], prose: frozenset[str]) -> bool:
    """The question spells ``symbol`` as code, or writes it as a name (see :func:`overlap`;
    a coined word only given the answer's ``prose``: a private ``_sign`` is not "sign")."""
    if not symbol:
        return False
    if symbol in code or symbol.lower() in code:  # in backticks, any length
        return True
    if len(symbol) < 3:
        return False
    return (symbol in plain and (_distinctive(symbol) or symbol[0].isupper())) or \
        _coined(symbol, plain, prose)


def _word_runs(question: str) -> str:
    """The question's words, lower case, each followed by one space (for run matching)."""
    return "".join(f"{w} " for w in re.findall(r"[a-z]+|\d+", question.lower()))


def _spelt_as_words(symbol: str, runs: str) -> bool:
    """A name the question writes as a run of its words: ``_parse_header_links`` as "parse
    header links", ``_SubsetHookCaller`` as "subset hook caller". The name has at least three
    words, two of 3 letters or more and one neither a question word nor generic: two words
    ("retry budget" for ``retry_budget``) read as a phrase, not as the name."""
    parts = [p.lower() for p in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", symbol)]
    long = [p for p in parts if len(p) >= 3]
    if len(parts) < 3 or len(long) < 2 or \
            all(p in QUESTION_WORDS or p in GENERIC_WORDS for p in long):
        return False
    # the last word either way singular or plural: "pure python tag" spells pure_python_tags
    stems = {" ".join(parts[:-1]) + " " + last for last in
             {parts[-1], parts[-1].removesuffix("s"), parts[-1] + "s"}}
    return any(f" {stem} " in f" {runs}" for stem in stems)


def _loose(text: str) -> set[str]:
    """A code-like token compared loosely: lower case, and without a trailing plural ``s``
    (``BaseHttpMiddleware`` is ``BaseHTTPMiddleware``, ``configure_tagged_unions`` is
    ``configure_tagged_union``)."""
    low = text.lower().rstrip(".")
    return {low, low.removesuffix("s")}


MIN_MISSPELT = 8


def _one_edit(a: str, b: str) -> bool:
    """``a`` and ``b`` differ by exactly one inserted, deleted or replaced character."""
    if abs(len(a) - len(b)) > 1 or a == b:
        return False
    if len(a) == len(b):
        return sum(x != y for x, y in zip(a, b, strict=True)) == 1
    short, long = sorted((a, b), key=len)
    start = next((i for i, (x, y) in enumerate(zip(short, long, strict=False)) if x != y),
                 len(short))
    return short[start:] == long[start + 1:]


def _misspelt(symbol: str, plain: set[str]) -> bool:
    """The question writes the CapWords name ``symbol`` (:data:`MIN_MISSPELT` letters or
    more) one letter off, as a name (an inner capital): "AsyncRetring" for
    ``AsyncRetrying``."""
    return len(symbol) >= MIN_MISSPELT and symbol[0].isupper() and any(
        len(p) >= MIN_MISSPELT - 1 and p[0].isupper() and _distinctive(p) and
        _one_edit(p, symbol) for p in plain)


MAX_CLIPPED = 2


def _clipped(symbol: str, plain: set[str]) -> bool:
    """The question writes the CapWords name ``symbol`` (:data:`MIN_MISSPELT` letters or
    more) without its last letters (at most :data:`MAX_CLIPPED`), as a name (an inner
    capital): "ClientDisconnect" for ``ClientDisconnected``."""
    return len(symbol) >= MIN_MISSPELT and symbol[0].isupper() and any(
        len(p) >= MIN_MISSPELT - MAX_CLIPPED and p[0].isupper() and _distinctive(p) and
        symbol.startswith(p) and 0 < len(symbol) - len(p) <= MAX_CLIPPED for p in plain)


def file_in_words(question: str, module: str) -> set[str]:
    """The answer's file as the question names it in words: its stem followed by "module"
    ("in the main module" names ``main.py``, "the validate module" ``validate.py``). Not a
    package's ``__init__.py``; not "… file" ("pylock file names" are files of that format),
    nor a subject's leading tag ("Hooks: fix …", a component the reviews read as a plain
    word)."""
    base = posixpath.basename(module).lower()
    stem = posixpath.splitext(base)[0]
    if stem.startswith("__") or len(stem) < 3:
        return set()
    text = question.lower()
    for name in {stem, stem.replace("_", " ")}:
        if re.search(rf"(?<![\w.]){re.escape(name)} (?:sub)?module\b", text):
            return {base}
    return set()


def _hyphenated(question: str) -> set[str]:
    """The question's lower-case hyphenated words spelt as the identifiers they would
    name: "level-styles" → ``level_styles`` (not "Content-MD5", a header)."""
    return {w.replace("-", "_") for w in
            re.findall(r"(?<![\w-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w-])", question)}


_PLAIN_CALL = re.compile(r"(?<![\w.`])([a-z]+)\(\)(?![\w`])")


def plain_calls(text: str) -> str:
    """``text`` with each call of a plain lower-case word, ``select()``, as the word."""
    return _PLAIN_CALL.sub(r"\1", text)


def called_definitions(question: str, answer: AnswerNames) -> set[str]:
    """The classes, functions and methods ``answer`` defines that ``question`` writes as a
    call of a plain lower-case word (``chunked()``, ``last()``, ``reinstall()``). Such a
    call is the name, not the word: the cold reviews counted every one of them as naming
    its answer (more-itertools, humanize, setuptools_scm, loguru: 8 questions, 12 verdicts
    of 12). Written without its ``()`` the word stays a word ("Allow select to prefer …",
    packaging, kept)."""
    return set(_PLAIN_CALL.findall(question)) & answer.defined


def overlap(question: str, answers: Sequence[AnswerNames], *,
            seconds: Sequence[AnswerNames] = ()) -> Overlap:
    """The question's overlap with the names of its answers (its grade-3 modules), and
    the public classes and functions of ``seconds`` (its grade-2 modules) it spells as code
    (in backticks, called or dotted)."""
    called: set[str] = set().union(
        *(called_definitions(expand_braces(question), a) for a in answers))
    question = expand_braces(plain_calls(question))
    own = words(question)
    vocabulary: set[str] = set().union(*(a.words | {f for f in a.files if "." not in f}
                                         for a in answers)) if answers else set()
    shared = own & vocabulary
    code, plain = _stated(question)
    hyphenated = _hyphenated(question)
    first = re.match(r"\s*([A-Za-z_][A-Za-z0-9_.]*)", question)
    if first is not None:  # a subject's first word, capitalised by cleaning: "Safe_join"
        plain.add(first.group(1)[:1].lower() + first.group(1)[1:])
    plain_lower = {p.lower().rstrip(".") for p in plain}
    named: set[str] = set(called)
    runs = _word_runs(question)
    loose = {v for p in plain if _distinctive(p.rstrip(".")) for v in _loose(p)}
    for answer in answers:
        for f in answer.files:
            if f in code or (f in plain_lower and ("." in f or _distinctive(f))):
                named.add(f)
        named.update(file_in_words(question, answer.module))
        for symbol in answer.symbols:
            if symbol.lower() in PLATFORM_WORDS and symbol.lower() not in code:
                continue  # "on Windows": the platform, not `class Windows`
            if _states(symbol, code, plain, answer.prose) or \
                    _states(symbol.lstrip("_"), code, plain, frozenset()) or \
                    _spelt_as_words(symbol, runs) or \
                    (_distinctive(symbol) and symbol.lower() in loose) or \
                    _misspelt(symbol, plain) or _clipped(symbol, plain):
                named.add(symbol)
        named.update(m for m in answer.members if m in code)
        # hyphenated, a class, function or method: not an imported "better_exceptions"
        named.update(answer.defined & hyphenated)
    for second in seconds:  # starlette history-07 kept "… on BaseHTTPMiddleware" as asked
        named.update(s for s in second.public if s in code or s.lower() in code)
    return Overlap(tuple(sorted(shared)), tuple(sorted(named)),
                   len(shared) / len(own) if own else 0.0)


_STRING = re.compile(r"""(["'])(.*?)(?<!\\)\1""")
_OPTION = re.compile(r"(?<![\w-])--[A-Za-z][\w-]*[A-Za-z0-9]")
#: A call that declares options (argparse, optparse, click, pytest's ``addoption``).
_DECLARES = re.compile(r"(?:add_?argument|add_?option|addoption|\boption|Option|Argument)\s*\(")


def options_in(text: str) -> set[str]:
    """The command-line options (``--name``) a line of code declares: string literals that
    are options (``"--format"``; ``"--override/--no-override"`` holds two) in a call that
    declares options, or opening a line (an argument of such a call on its own line); not
    an option read (``config.getoption("--tb")``: pytest-mock history-17 was kept), not a
    help text that mentions one (``"use --foo instead"``)."""
    declared = _DECLARES.search(text)
    start = declared.end() if declared else len(text) - len(text.lstrip())
    return {part for found in _STRING.finditer(text)
            if found.start() >= start and (declared or found.start() == start)
            and (literal := found.group(2)).startswith("--") and " " not in literal.strip()
            for part in re.split(r"[/,]", literal.split("=", 1)[0])
            if _OPTION.fullmatch(part)}


def options_stated(question: str, options: Iterable[str]) -> set[str]:
    """The ``options`` (``--name``) the question spells: a subject that states the option
    its change adds, "Add --override/--no-override flag to dotenv run", is found by keyword
    search (the paired reviews flagged 6 of the 8 "Add --name …" subjects drafted as
    give-aways: python-dotenv, pytest-xdist, virtualenv, pyparsing; a subject naming an
    option the change only uses, "Fix --line-ranges inserting a blank line …", was kept)."""
    return set(_OPTION.findall(question)) & set(options)


def overlaps(question: str, grades: Iterable[tuple[str, int]],
             names_of: dict[str, AnswerNames]) -> Overlap:
    """:func:`overlap` against the grade-3 modules among ``grades`` found in ``names_of``
    (and the public names of the grade-2 ones found there)."""
    graded = [(m, g) for m, g in grades if m in names_of]
    return overlap(question, [names_of[m] for m, g in graded if g == 3],
                   seconds=[names_of[m] for m, g in graded if g == 2])
