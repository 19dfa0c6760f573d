"""``init --from-history``, round 6 (issue 24's fourth fresh review of structlog, tenacity
and yarl): each rule on a commit of a real git repository built here, modelled on a
question that review edited or rejected (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_chores import SKIP_PIN_OR_COMPAT
from evaluator.core.commit_filters import SKIP_DOCS_SUBJECT
from evaluator.core.commits import SKIP_CHORE, SKIP_GIVEAWAY
from tests.history_repos import commit, draft, package_repo, skipped
from tests.history_repos import edit as _edit
from tests.history_repos import history_line as _line

DEV = '''"""Pretty console output for development."""


class ConsoleRenderer:
    """Renders an event dictionary for a terminal."""

    def __init__(self, styles):
        self._styles = styles

    @property
    def level_styles(self):
        return self._styles

    def render(self, event):
        return event

    def statistics(self):
        try:
            return self._local.statistics
        except AttributeError:
            self._local.statistics = {}
            return self._local.statistics


class AsyncRetrying:
    """Retries a coroutine."""

    def wrap(self, fn):
        return fn
'''
RETRYING = '''"""Retrying calls."""


class Retrying:
    """Calls a function until a strategy stops it."""

    def call(self, fn):
        return fn()
'''
STRATEGIES = '''"""When to retry."""


def retry_if_result(predicate):
    """Retry while ``predicate`` holds for the result."""
    return predicate


def build_requires(settings):
    """What building the extension needs."""
    deps = ['Cython >= 3.0.12']
    return deps
'''


@pytest.fixture
def round6_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {"pkg/__init__.py": '__version__ = "1.0"\n',
                                   "pkg/dev.py": DEV, "pkg/retrying.py": RETRYING,
                                   "pkg/strategies.py": STRATEGIES})
    shas: dict[str, str] = {}

    def change(name: str, subject: str, path: str = "pkg/dev.py",
               old: str = "        return event\n", lines: int = 1) -> None:
        indent = old[:len(old) - len(old.lstrip())]
        added = "".join(f"{indent}marker_{name}_{i} = {name!r}\n" for i in range(lines))
        _edit(repo, path, old, f"{added}{old}")
        if subject:
            shas[name] = commit(repo, subject)

    # wording the cleaning drops: yarl history-11/-15, structlog history-01, tenacity -13
    # (and, in tenacity's history, an issue label and an f-strings chore)
    change("emoji", "📦 Make release builds compile very optimized")
    change("gitmoji", ":bug: Raises meaningful exception when the address is malformed")
    change("issue", "Fix thread name in async methods (issue #710)")
    change("retry", "Support Trio out-of-the-box, take 2")
    change("again", "Allow salt=None again")  # itsdangerous history-08, kept as asked
    change("label", "Fix issue #288 : name and other attributes for async functions")
    change("fstrings", "Use f-strings instead of `str.format` as faster and easier to read")
    # give-aways: tenacity history-19 (a class of a module graded 2), structlog history-06
    # (hyphenated), tenacity history-17 (misspelt)
    change("graded2", "", path="pkg/strategies.py", old="    return predicate\n", lines=3)
    change("graded2", "Make `Retrying` picklable for multiprocessing", path="pkg/retrying.py",
           old="        return fn()\n")
    change("hyphen", "Add level-styles properties to the renderer")
    change("misspelt", "Remove __iter__ from AsyncRetring", old="        return fn\n")
    change("plain", "", path="pkg/strategies.py", old="    return predicate\n", lines=3)
    change("plain", "Let the retry strategies of Retrying be pickled",
           path="pkg/retrying.py", old="        return fn()\n")
    # chores: tenacity history-10 (a compatibility swap), yarl history-16 (a dependency
    # pin), structlog history-05 (a screenshot) and -08 (a tagged refactor); a real
    # version-dependent change is asked
    _edit(repo, "pkg/dev.py", """        try:
            return self._local.statistics
        except AttributeError:
            self._local.statistics = {}
            return self._local.statistics
""", """        if not hasattr(self._local, "statistics"):
            self._local.statistics = {}
        return self._local.statistics
""")
    shas["compat"] = commit(repo, "Support Python 3.14")
    _edit(repo, "pkg/strategies.py", "Cython >= 3.0.12", "Cython >= 3.1.2")
    shas["pin"] = commit(repo, "Use Cython 3.1 universally")
    change("screenshot", "Update demo screenshot")
    change("tagged", "Dev: refactor default columns configuration into a method")  # -08
    _edit(repo, "pkg/strategies.py", "    return deps\n",
          "    if sys.version_info >= (3, 12):\n        deps.append(settings.fast_parser)\n"
          "    return deps\n")
    shas["feature"] = commit(repo, "Build the fast parser on new interpreters")
    return repo, shas


def _asked(doc: dict) -> dict[str, str]:
    return {q["source"]["commit"]: q["question"] for q in doc["queries"]}


def test_emoji_emptied_references_and_retry_markers_are_dropped(round6_repo, cli,
                                                                  tmp_path):
    repo, shas = round6_repo
    doc, _ = draft(cli, repo, tmp_path, "--count", "40")
    asked = _asked(doc)
    assert asked[shas["emoji"]] == "Make release builds compile very optimized"
    assert asked[shas["gitmoji"]] == "Raises meaningful exception when the address is " \
                                     "malformed"
    assert asked[shas["issue"]] == "Fix thread name in async methods"
    assert asked[shas["retry"]] == "Support Trio out-of-the-box"
    assert asked[shas["again"]] == "Allow salt=None again"
    assert asked[shas["label"]] == "Name and other attributes for async functions"
    assert shas["fstrings"] not in asked  # a chore (tenacity's history, unreviewed)


def test_public_names_of_grade_2_modules_hyphens_and_misspellings_are_give_aways(
        round6_repo, cli, tmp_path):
    repo, shas = round6_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    asked = _asked(doc)
    for name in ("graded2", "hyphen", "misspelt"):
        assert shas[name] not in asked, name
    assert skipped(_line(stderr), SKIP_GIVEAWAY) == 3
    # the class as a word, not as code: starlette history-07, kept as asked
    assert asked[shas["plain"]] == "Let the retry strategies of Retrying be pickled"
    graded = next(q for q in doc["queries"] if q["source"]["commit"] == shas["plain"])
    assert graded["relevance_grades"]["pkg/strategies.py"] == 3
    assert graded["relevance_grades"]["pkg/retrying.py"] == 2


def test_pins_compatibility_swaps_and_screenshots_are_chores(round6_repo, cli, tmp_path):
    repo, shas = round6_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    asked = _asked(doc)
    for name in ("compat", "pin", "screenshot", "tagged"):
        assert shas[name] not in asked, name
    line = _line(stderr)
    assert skipped(line, SKIP_PIN_OR_COMPAT) == 2 and skipped(line, SKIP_DOCS_SUBJECT) == 1
    assert skipped(line, SKIP_CHORE) == 2  # a refactor behind a component tag, f-strings
    assert asked[shas["feature"]] == "Build the fast parser on new interpreters"
