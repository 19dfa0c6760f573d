"""The module universe: which files of a checkout are *modules* for grading and ranking.

NeuralMind indexes whatever it parses; the evaluator grades and ranks only the universe, so a
test file, a documentation page or a CI template retrieved for a question neither earns nor
costs anything, and a ground truth never has to grade a licence file.

Two options define it (globs, gitignore style, see :func:`glob_regex`):

* ``include`` — when empty (the default) every *source file* is a candidate (a file whose
  suffix is in ``source_suffixes``, NeuralMind's code suffixes); when given, exactly the
  files matched by one of its globs are candidates, source or not (``include: ["**"]``
  with ``exclude: []`` scores every file of the checkout, as the evaluator did before the
  universe existed);
* ``exclude`` — globs whose files are left out. The default is :data:`DEFAULT_EXCLUDES`
  (tests, docs, examples, benchmarks, CI and tool configuration, packaging, scripts, tools
  and extras, licences, generated and vendored files); a list given by the user *replaces* it,
  and the word ``default`` in that list stands for the whole default list
  (``[default, "build_tools/"]`` extends it, ``[]`` turns it off).

Every file left out carries its reason, so a run can say what it left out and why.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

#: The suffixes NeuralMind parses as code (``neuralmind.graphgen._CODE_SUFFIXES``, 4.22); the
#: adapter passes the installed library's own set, this is the fallback.
SOURCE_SUFFIXES: frozenset[str] = frozenset({
    ".c", ".cc", ".cjs", ".cpp", ".cs", ".cxx", ".go", ".h", ".hh", ".hpp", ".hxx", ".java",
    ".js", ".jsx", ".mjs", ".php", ".py", ".rb", ".rs", ".ts", ".tsx"})

DEFAULT_WORD = "default"


@dataclass(frozen=True)
class Rule:
    """One exclude glob and the category a file it matches is reported under.

    ``spares``: the glob names a folder that is never a Python package when it is what the
    rule means, so a folder it matches that holds an ``__init__.py`` in the checkout is not
    left out by it: ``"packages"`` spares any such package (build output, ``build/``,
    ``dist/``; a benchmark script folder, ``perf/``: pypa/build's ``src/build/``, a
    library's ``perf`` subpackage), ``"subpackages"`` only one inside another package (a
    folder of scripts, ``scripts/``, ``tools/``: pip-tools' ``piptools/scripts/``, never a
    top-level package of release tooling)."""

    pattern: str
    category: str
    spares: Literal["", "packages", "subpackages"] = ""


def _rules(category: str, *patterns: str) -> tuple[Rule, ...]:
    return tuple(Rule(p, category) for p in patterns)


#: The default exclude list, by category. Patterns without a slash match a file or folder
#: name at any depth; a trailing slash matches folders only.
DEFAULT_EXCLUDES: tuple[Rule, ...] = (
    *_rules("licences", "LICENSE", "LICENSE.*", "LICENCE", "LICENCE.*", "COPYING",
            "COPYING.*", "NOTICE", "NOTICE.*", "AUTHORS", "AUTHORS.*"),
    # ``_tests/``: tests inside a package (``src/trio/_tests/``); ``testing/``: a test
    # suite (pytest's) or a package's test support, even a subpackage (kept in the universe,
    # ``alembic.testing``'s fixtures took grade 3 from kept questions: issue 24 round 12)
    # ``/integration/``: a top-level integration-test suite (invoke's; issue 24's fourteenth
    # review: its scripts were asked as chores); a package's ``integration`` module stays
    *_rules("tests", "tests/", "test/", "testing/", "_tests/", "__tests__/", "test_*.py",
            "*_test.py", "conftest.py", "*_test.go", "*.test.js", "*.test.ts", "*.test.tsx",
            "*.spec.js", "*.spec.ts", "*.spec.tsx", "*Test.java", "*Tests.java",
            "/integration/"),
    # ``/sites/``: the Sphinx sites of invoke, fabric and paramiko (their ``conf.py`` files)
    *_rules("docs", "docs/", "doc/", "*.md", "*.rst", "*.txt", "*.adoc", "/sites/"),
    *_rules("examples", "examples/", "example/", "demo/", "demos/", "samples/",
            "docs_src/", "tutorial/", "tutorials/"),
    # ``performance/`` (marshmallow's benchmark script), ``asv_bench/`` (airspeed velocity);
    # a ``perf``/``performance`` *package* (an ``__init__.py``) is a library's own code
    *_rules("benchmarks", "benchmarks/", "benchmark/", "bench/", "benchmarking/",
            "asv_bench/"),
    Rule("performance/", "benchmarks", spares="packages"),
    Rule("perf/", "benchmarks", spares="packages"),
    # a task runner's file at the root (invoke's ``tasks.py``, fabric's ``fabfile.py``, doit's
    # ``dodo.py``) is the project's tooling; a package's ``tasks.py`` (celery's) stays
    *_rules("CI and tool configuration", ".*", ".github/", ".gitlab-ci.yml", ".circleci/",
            "azure-pipelines.yml", "tox.ini", "noxfile.py", "Makefile", "*.cfg", "*.toml",
            "*.ini", "*.yml", "*.yaml", "*.json", "*.lock", "/tasks.py", "/fabfile.py",
            "/dodo.py"),
    *_rules("packaging", "setup.py", "MANIFEST.in", "*.spec", "*.egg-info/"),
    *_rules("scripts", "extra/"),
    # a ``scripts/`` or ``tools/`` folder of scripts (alembic's ``tools/write_pyi.py``); such
    # a package inside a package is the library's own code (pip-tools' command line,
    # ``piptools/scripts/compile.py``: issue 24's eleventh review)
    Rule("scripts/", "scripts", spares="subpackages"),
    Rule("tools/", "scripts", spares="subpackages"),
    *_rules("generated", "*_pb2.py", "*_pb2_grpc.py", "*.pb.go", "*.min.js", "*.map",
            "*.generated.*", "__pycache__/", "*.pyc", "node_modules/"),
    Rule("build/", "generated", spares="packages"),
    Rule("dist/", "generated", spares="packages"),
    # ``*/**/packages/``: a package's bundled copies (``requests/packages/``, pip's
    # ``_vendor``); a top-level ``packages/`` (a monorepo's own code) stays.
    *_rules("vendored", "vendor/", "_vendor/", "third_party/", "thirdparty/",
            "*/**/packages/"),
)


@dataclass(frozen=True)
class LeftOut:
    """A file that is not a module, and why (``tests``, ``not source code`` …)."""

    path: str
    reason: str
    pattern: str | None = None


@dataclass(frozen=True)
class UniverseSpec:
    """The ``include``/``exclude`` settings; ``exclude=None`` is the default list."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] | None = None

    def exclude_rules(self) -> tuple[Rule, ...]:
        if self.exclude is None:
            return DEFAULT_EXCLUDES
        out: list[Rule] = []
        for pattern in self.exclude:
            if pattern.strip() == DEFAULT_WORD:
                out += DEFAULT_EXCLUDES
            else:
                out.append(Rule(pattern, f"excluded by {pattern!r}"))
        return tuple(out)

    def describe(self) -> dict[str, list[str]]:
        """The settings as recorded in results (``exclude`` spelled out, defaults included)."""
        return {"include": list(self.include),
                "exclude": [r.pattern for r in self.exclude_rules()]}


@dataclass(frozen=True)
class Universe:
    """The modules (sorted POSIX paths) and every file left out with its reason."""

    modules: tuple[str, ...]
    left_out: tuple[LeftOut, ...]
    spec: UniverseSpec = UniverseSpec()
    source_suffixes: frozenset[str] = SOURCE_SUFFIXES
    #: the checkout's Python package folders (those holding an ``__init__.py``)
    packages: frozenset[str] = frozenset()

    _members: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_members", frozenset(self.modules))

    def __contains__(self, module: object) -> bool:
        return module in self._members

    def reason(self, path: str) -> str | None:
        """Why ``path`` is not a module (``None`` when it is one or is not in the checkout)."""
        for item in self.left_out:
            if item.path == path:
                return item.reason
        return None

    def counts(self) -> dict[str, int]:
        """Files left out per reason, most first (ties by name)."""
        counted = Counter(item.reason for item in self.left_out)
        return dict(sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))

    def summary(self) -> str:
        """One line: ``17 modules; left out 122 files: 47 tests, 38 docs, …``."""
        head = f"{len(self.modules)} module{'s' if len(self.modules) != 1 else ''}"
        if not self.left_out:
            return head
        parts = ", ".join(f"{n} {reason}" for reason, n in self.counts().items())
        return f"{head}; left out {len(self.left_out)} file(s): {parts}"

    def admits(self, path: str) -> bool:
        """Whether ``path`` is a module by this universe's rules (for files of another
        commit too)."""
        return path in self._members or classify(
            path, self.spec, source_suffixes=self.source_suffixes,
            packages=self.packages) is None

    def split_ranking(self, ranked: Iterable[str]) -> tuple[tuple[str, ...], dict[str, int]]:
        """A system's ranking restricted to the modules this universe admits (order kept,
        for any commit's files: :meth:`admits`), and how many of its entries were filtered
        out, per reason (``{"tests": 3, "docs": 2}``, most first)."""
        kept: list[str] = []
        left: Counter[str] = Counter()
        for path in ranked:
            if self.admits(path):
                kept.append(path)
            else:
                out = classify(path, self.spec, source_suffixes=self.source_suffixes,
                               packages=self.packages)
                left[out.reason if out else "not a module"] += 1
        return tuple(kept), dict(sorted(left.items(), key=lambda kv: (-kv[1], kv[0])))

    def filter_ranking(self, ranked: Iterable[str]) -> tuple[str, ...]:
        """A ranked module list restricted to the universe's modules, order kept."""
        return tuple(m for m in ranked if m in self._members)

    def describe(self) -> dict[str, Any]:
        """What results record: the settings and the counts."""
        return {**self.spec.describe(), "modules": len(self.modules),
                "left_out": len(self.left_out)}


def _segment_regex(segment: str) -> str:
    out = []
    i = 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = segment.find("]", i + 2 if segment[i + 1:i + 2] in ("!", "]") else i + 1)
            if end < 0:
                out.append(re.escape(c))
            else:
                body = segment[i + 1:end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\").replace("/", "") + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


@lru_cache(maxsize=512)
def glob_regex(pattern: str) -> tuple[re.Pattern[str], bool]:
    """A glob as a regex over POSIX paths, and whether it matches folders only.

    Gitignore style: ``*`` and ``?`` stay inside one path segment, ``**`` spans any number
    of segments, ``[abc]``/``[!abc]`` are character classes; a pattern without a slash
    (other than a trailing one) matches a name at any depth, one with a slash is anchored at
    the root (a leading ``/`` is allowed); a trailing slash matches folders only. A pattern
    that matches a folder matches every file below it.
    """
    text = pattern.strip()
    dir_only = text.endswith("/")
    text = text.rstrip("/") if dir_only else text
    anchored = "/" in text  # "/build/" is anchored, "build/" is not
    text = text.lstrip("/")
    segments = text.split("/") if text else [""]
    if not anchored:
        segments = ["**", *segments]
    parts: list[str] = []
    for n, segment in enumerate(segments):
        last = n == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_segment_regex(segment) + ("" if last else "/"))
    return re.compile("".join(parts) + r"\Z"), dir_only


def glob_matches(pattern: str, path: str) -> bool:
    """Whether ``pattern`` matches the file ``path`` or one of the folders above it."""
    return _matches(pattern, path, _folders(path))


def _folders(path: str) -> tuple[str, ...]:
    """The folders above ``path`` (``a/b/c.py`` → ``a``, ``a/b``)."""
    parts = path.split("/")
    return tuple("/".join(parts[:i]) for i in range(1, len(parts)))


def _matches(pattern: str, path: str, folders: tuple[str, ...],
             spared: frozenset[str] = frozenset()) -> bool:
    """``pattern`` matches ``path`` or a folder above it that is not one of ``spared``."""
    regex, dir_only = glob_regex(pattern)
    if any(regex.match(folder) and folder not in spared for folder in folders):
        return True
    return not dir_only and regex.match(path) is not None


def _rule_applies(rule: Rule, path: str, folders: tuple[str, ...],
                  packages: frozenset[str]) -> bool:
    """Whether ``rule`` leaves ``path`` out: it matches, and (for a rule that spares
    packages) it matches a folder above ``path`` that is not a package it spares."""
    spared = packages if rule.spares == "packages" else \
        _subpackages(packages) if rule.spares == "subpackages" else frozenset()
    return _matches(rule.pattern, path, folders, spared)


@lru_cache(maxsize=8)
def _subpackages(packages: frozenset[str]) -> frozenset[str]:
    """The ``packages`` inside another of ``packages``."""
    return frozenset(p for p in packages if posixpath.dirname(p) in packages)


def python_packages(files: Iterable[str]) -> frozenset[str]:
    """The folders of ``files`` that are Python packages (hold an ``__init__.py``)."""
    return frozenset(posixpath.dirname(f) for f in files
                     if posixpath.basename(f) == "__init__.py" and "/" in f)


def invalid_globs(patterns: Sequence[str]) -> list[str]:
    """Why each bad pattern is bad (empty, absolute outside the root, a ``..`` segment)."""
    problems = []
    for pattern in patterns:
        text = pattern.strip()
        if not text:
            problems.append("an empty glob matches nothing")
        elif ".." in text.split("/"):
            problems.append(f"{pattern!r}: '..' cannot match a file inside the checkout")
        elif "\\" in text:
            problems.append(f"{pattern!r}: use '/' between folders, not '\\'")
    return problems


def classify(path: str, spec: UniverseSpec, *,
             source_suffixes: frozenset[str] = SOURCE_SUFFIXES,
             rules: tuple[Rule, ...] | None = None,
             packages: frozenset[str] = frozenset()) -> LeftOut | None:
    """Why ``path`` is not a module (``None`` when it is one). A file is a module when it
    is a candidate (matched by ``include``, or a source file when ``include`` is empty) and
    no exclude rule matches it; the reason is the first exclude rule that matches, else
    ``not source code`` / ``not matched by include``. The decision depends on the path and
    on ``packages`` (the checkout's Python package folders, :func:`python_packages`, which a
    build-output rule spares), so it holds for any commit's files."""
    folders = _folders(path)  # once per path, for every rule
    rule = next((r for r in (rules if rules is not None else spec.exclude_rules())
                 if _rule_applies(r, path, folders, packages)), None)
    if rule is not None:
        return LeftOut(path, rule.category, rule.pattern)
    if spec.include:
        if not any(_matches(p, path, folders) for p in spec.include):
            return LeftOut(path, "not matched by include")
    elif posixpath.splitext(path)[1].lower() not in source_suffixes:
        return LeftOut(path, "not source code")
    return None


def select_universe(files: Iterable[str], spec: UniverseSpec | None = None, *,
                    source_suffixes: frozenset[str] = SOURCE_SUFFIXES) -> Universe:
    """Split ``files`` (POSIX, relative) into modules and the files left out, with reasons
    (see :func:`classify`). Paths are put in Unicode NFC, like the ground truth's and the
    ranking's, so a checkout made on macOS (NFD names) matches them."""
    spec = spec or UniverseSpec()
    rules = spec.exclude_rules()
    modules: list[str] = []
    left: list[LeftOut] = []
    paths = sorted({unicodedata.normalize("NFC", f) for f in files})
    packages = python_packages(paths)
    for path in paths:
        out = classify(path, spec, source_suffixes=source_suffixes, rules=rules,
                       packages=packages)
        if out is None:
            modules.append(path)
        else:
            left.append(out)
    return Universe(tuple(modules), tuple(left), spec, source_suffixes, packages)


def filtered_sentence(filtered_out: Mapping[str, int]) -> str:
    """``5 filtered out: tests`` / ``5 filtered out: 3 tests, 2 docs`` (``""`` for none)."""
    total = sum(filtered_out.values())
    if not total:
        return ""
    why = (next(iter(filtered_out)) if len(filtered_out) == 1
           else ", ".join(f"{n} {reason}" for reason, n in filtered_out.items()))
    return f"{total} filtered out: {why}"


def returned_sentence(returned: int, filtered_out: Mapping[str, int]) -> str:
    """What a system's ranking held after the universe's filter:
    ``returned 3 modules (5 filtered out: tests)``."""
    filtered = filtered_sentence(filtered_out)
    return (f"returned {returned} module{'' if returned == 1 else 's'}"
            + (f" ({filtered})" if filtered else ""))
