"""``init --from-history``, round 8 (issue 24, the ``wording`` edits of the cold reviews): a
subject that names work on the code or holds a vague phrase, in at most two content words,
is skipped with a counted reason and the next candidate drafted; a longer one is asked. Each
commit of a real git repository built here, modelled on a reviewed question (its repository
and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_wording import SKIP_WORDING, content_words, wording_reason
from tests.history_repos import commit, draft, edit, history_line, package_repo, skipped

HELP = '''"""Help output of a command line."""


def placeholder(param, usage):
    """The placeholder shown for ``param``."""
    return param.upper()


def signed(value, key):
    """``value`` signed with ``key``."""
    return value + key
'''


@pytest.fixture
def wording_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {"pkg/__init__.py": "", "pkg/help.py": HELP})
    shas: dict[str, str] = {}

    def change(name: str, subject: str, old: str = "    return param.upper()\n") -> None:
        edit(repo, "pkg/help.py", old, f"    marker_{name} = {name!r}\n{old}")
        shas[name] = commit(repo, subject)

    # skipped: work on the code, or a vague phrase, in at most two content words
    change("update", "Update metavar printing")                       # typer history-01
    change("use", "Use exception chaining", "    return value + key\n")  # itsdangerous
    change("version", "Fix 0.30.4 issue with connection close")       # uvicorn
    change("correctly", "Ensure that the mode is interpreted correctly")  # typer
    change("tagged", "Help: update the column defaults")  # structlog "Dev: refactor …"
    # asked: the same openings with a behaviour in more words, or no vague phrase
    change("perf", "Improve performance of query string parsing")     # httpx, kept
    change("three", "Use base64 instead of hex", "    return value + key\n")  # 3 words
    change("use_long", "Use proxy ssl context consistently", "    return value + key\n")
    change("brackets", "Ensure that an optional argument is shown in brackets")  # typer, kept
    change("recursion", "Fix unbounded recursion when a traceback refers to itself")
    return repo, shas


def test_vague_subjects_are_skipped_and_longer_ones_asked(wording_repo, cli, tmp_path):
    repo, shas = wording_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"]: q["question"] for q in doc["queries"]}
    for name in ("update", "use", "version", "correctly", "tagged"):
        assert shas[name] not in asked, name
    assert skipped(history_line(stderr), SKIP_WORDING) == 5
    assert asked[shas["perf"]] == "Improve performance of query string parsing"
    assert asked[shas["three"]] == "Use base64 instead of hex"
    assert asked[shas["use_long"]] == "Use proxy ssl context consistently"
    assert asked[shas["brackets"]] == "Ensure that an optional argument is shown in brackets"
    assert asked[shas["recursion"]] == \
        "Fix unbounded recursion when a traceback refers to itself"


@pytest.mark.parametrize(("subject", "content"), [
    ("Update metavar printing", ["metavar", "printing"]),
    ("Fix 0.30.4 issue with connection close header", ["connection", "close", "header"]),
    ("Allow salt=None again", ["allow", "salt", "none", "again"]),  # allow: a behaviour
])
def test_content_words_drop_generic_verbs_fillers_and_numbers(subject, content):
    assert content_words(subject) == content


def test_a_vague_phrase_needs_a_word_boundary():
    # "issue" inside a word, a dotted name or an IP-like token is no vague phrase
    assert wording_reason("Reissue tokens on expiry") is None
    assert wording_reason("Read the v1.2 schema") is None
    assert wording_reason("Fix the bug") == SKIP_WORDING
