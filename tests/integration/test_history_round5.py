"""``init --from-history``, round 5 (issue 24's third fresh review of starlette, packaging
and cattrs): each rule on a commit of a real git repository built here, modelled on a
question that review rejected or edited (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_filters import (
    SKIP_DOCS_SUBJECT,
    SKIP_NO_CODE,
    SKIP_TESTS_SUBJECT,
)
from evaluator.core.commits import SKIP_CHORE, SKIP_GIVEAWAY, SKIP_VERSION
from evaluator.core.giveaway import answer_names, overlap
from tests.history_repos import (
    commit_edits,
    draft,
    history_line,
    package_repo,
    skipped,
)

MIDDLEWARE = '''"""Middleware running around the application."""


class BaseHTTPMiddleware:
    """Calls the application and its dispatch function."""

    def dispatch(self, request):
        return request


def configure_tagged_union(union, converter):
    """Register hooks for a tagged union."""
    return converter


def pure_python_tags(interpreter):
    """The tags of a pure Python distribution."""
    return [interpreter]


class MultiPartParser:
    """Parses a multipart form body."""

    spool_max_size = 1024 * 1024

    def parse(self, body):
        return body
'''
SETTINGS = '''"""Settings, read from the environment."""
from typing import TypedDict


class Options(TypedDict):
    timeout: int
    """Seconds to wait."""


def load(environ):
    """The options in ``environ``."""
    return {"timeout": int(environ.get("TIMEOUT", "5"))}
'''


@pytest.fixture
def round5_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {
        "pkg/__init__.py": '__version__ = "1.0"\n',
        "pkg/middleware.py": MIDDLEWARE,
        "pkg/settings.py": SETTINGS,
    })
    shas: dict[str, str] = {}

    def change(name: str, subject: str, path: str = "pkg/middleware.py",
               old: str = "        return request\n") -> None:
        indent = old[:len(old) - len(old.lstrip())]
        shas[name] = commit_edits(repo, subject,
                (path, old, f"{indent}marker_{name} = {name!r}\n{old}"))

    # give-aways: starlette history-05/-10, cattrs history-10, packaging history-10
    change("camel", "Prevents reraising of exception from BaseHttpMiddleware")
    change("plural", "Configure_tagged_unions: fix recursive type aliases",
           old="    return converter\n")
    change("words", "Add pure Python tag generator", old="    return [interpreter]\n")
    change("member", "Rename `max_file_size` to `spool_max_size`",
           old="        return body\n")
    # conventional-commit types read before the subject is cleaned: packaging history-04/-11
    for kind, subject in (("refactor", "refactor: Make the dispatch flow easier to follow"),
                          ("style", "style: Spell out the dispatch return values"),
                          ("chore", "chore: Simplify dataclasses constructors"),
                          ("ci", "ci: Run the middleware on every supported platform"),
                          ("build", "build: Ship the middleware in the binary wheel"),
                          ("docs", "docs: Add missing versionadded/versionchanged "
                                   "directives"),
                          ("test", "test: Make the middleware cover chunked requests"),
                          ("tests", "tests: Cover requests without any body at all")):
        change(kind, subject)
    for kind, subject in (("fix", "fix: Keep the request body when dispatch fails"),
                          ("feat", "feat: Let dispatch return a streaming response"),
                          ("perf", "perf: Avoid copying the request on every dispatch")):
        change(kind, subject)
    # version bumps: packaging history-08
    for name, subject in (("bump_dev", "Bump for development"),
                          ("back_dev", "Back to development"),
                          ("bump_version", "Bump version")):
        shas[name] = commit_edits(repo, subject,
                ("pkg/__init__.py", '__version__ = "', f'{name} = True\n__version__ = "'))
    # an attribute docstring after a TypedDict field is documentation (starlette)
    shas["attr_doc"] = commit_edits(repo, "Explain how long a request waits for its answer",
            ("pkg/settings.py", '    """Seconds to wait."""\n',
             '    """Seconds to wait before giving up on the request."""\n'))
    return repo, shas


def test_names_spelt_loosely_are_give_aways(round5_repo, cli, tmp_path):
    repo, shas = round5_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    for name in ("camel", "plural", "words", "member"):
        assert shas[name] not in asked, name
    assert skipped(history_line(stderr), SKIP_GIVEAWAY) == 4


def test_conventional_commit_types_are_read_before_cleaning(round5_repo, cli, tmp_path):
    repo, shas = round5_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    for name in ("refactor", "style", "chore", "ci", "build", "docs", "test", "tests"):
        assert shas[name] not in asked, name
    line = history_line(stderr)
    assert skipped(line, SKIP_CHORE) == 5
    assert skipped(line, SKIP_DOCS_SUBJECT) == 1 and skipped(line, SKIP_TESTS_SUBJECT) == 2
    for name in ("fix", "feat", "perf"):
        assert shas[name] in asked, name


def test_development_bumps_are_version_bumps(round5_repo, cli, tmp_path):
    repo, shas = round5_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    for name in ("bump_dev", "back_dev", "bump_version"):
        assert shas[name] not in asked, name
    assert skipped(history_line(stderr), SKIP_VERSION) == 3


def test_an_attribute_docstring_is_documentation(round5_repo, cli, tmp_path):
    repo, shas = round5_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "40")
    assert shas["attr_doc"] not in {q["source"]["commit"] for q in doc["queries"]}
    assert skipped(history_line(stderr), SKIP_NO_CODE) == 1


def test_a_backticked_parameter_is_not_a_give_away():
    """attrs history-16/-20 and click history-17, kept: "Make `kw_only=True` behavior
    consistent …" states the behaviour asked about by its parameter, not the answer."""
    source = "def define(cls, kw_only=False, field_transformer=None):\n    return cls\n"
    names = answer_names("pkg/_make.py", source)
    for question in ("Make `kw_only=True` behavior consistent with dataclasses",
                     "Cope with `field_transformer` being a generator"):
        assert not overlap(question, [names]).names_answer, question
    attribute = answer_names("pkg/parsers.py", MIDDLEWARE)
    assert overlap("Rename `max_file_size` to `spool_max_size`", [attribute]).named == \
        ("spool_max_size",)
