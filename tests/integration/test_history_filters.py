"""``init --from-history`` reads each candidate's diff (issue 24's cold review): chores,
removals, superseded changes and test subjects are skipped with a counted reason; grades
follow surviving added code; facts are never moved lines or version markers. Each case is
a commit of a real git repository built here, modelled on a question the review rejected or
edited (its id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

import evaluator.authoring as authoring
from evaluator.core.askability import SKIP_OUTRANKED
from evaluator.core.commit_filters import (
    SKIP_NO_CODE,
    SKIP_REMOVAL,
    SKIP_SUPERSEDED,
    SKIP_TESTS_SUBJECT,
)
from evaluator.core.commits import SKIP_MERGE
from tests.history_repos import commit, draft, new_repo, skipped, write
from tests.history_repos import edit as _edit

CLIENT = '''"""The client."""

from typing import Any


def check_versions(version):
    """Check the installed version is supported."""
    parts = version.split(".")
    assert (1, 0) <= tuple(int(p) for p in parts[:2]) < (5, 0)
    return parts


def open_spool(path, encoding):
    handle = open(path, mode="wb")
    return handle


class Pool:
    """Connections kept open between requests."""

    def acquire(self, key):
        # Reuse a connection when one is free.
        return self.reuse(key)

    def reuse(self, key):
        free = self.free_connections()
        if key in free:
            connection = free.pop(key)
            self.acquired.append(connection)
            return connection
        connection = self.connect(key)
        self.acquired.append(connection)
        return connection

    def free_connections(self):
        return {}
'''
HELPERS = '''"""Helpers."""

from pkg.archive import (
    extract_bundle,
    read_bundle,
)


def cert_location(bundle):
    return extract_bundle(bundle)


def load_bundle(bundle):
    return read_bundle(bundle)
'''


@pytest.fixture
def review_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = new_repo(tmp_path / "repo")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/client.py", CLIENT)
    write(repo, "pkg/helpers.py", HELPERS)
    write(repo, "pkg/archive.py", "def extract_bundle(b):\n    return b\n\n\n"
                                  "def read_bundle(b):\n    return b\n")
    write(repo, "tests/test_client.py", "def test_it():\n    assert True\n")
    commit(repo, "Initial import of the package")
    shas: dict[str, str] = {}
    # kept later, though its line was renamed and reformatted since (requests history-08)
    _edit(repo, "pkg/client.py", 'parts = version.split(".")\n',
          'parts = version.split(".")[:3]\n')
    shas["renamed"] = commit(repo, "Consider that versions have three numbers at most")
    # superseded: the bound it sets is raised by a later commit (requests history-17)
    _edit(repo, "pkg/client.py", "< (5, 0)", "< (7, 0)")
    shas["bound7"] = commit(repo, "Raise the supported version bound to seven")
    # kept, though its call was reflowed over three lines since (click history-05)
    _edit(repo, "pkg/client.py", 'mode="wb"', 'mode="w"')
    shas["reflowed"] = commit(repo, "Open the spool file in text mode for writing")
    # a docstring-only change (click history-13, flask history-10)
    _edit(repo, "pkg/client.py", "Connections kept open between requests.",
          "Connections that stay open from one request to the next.")
    shas["docstring"] = commit(repo, "Update the pool documentation after the rework")
    # type hints, a typing import and a "# type: ignore" only (requests history-02)
    _edit(repo, "pkg/client.py", "def acquire(self, key):", "def acquire(self, key: str) -> "
          "Any:  # type: ignore[override]")
    shas["typing"] = commit(repo, "Annotate the arguments of the connection pool")
    # a call taken out, and the helper's import with it (requests history-15)
    _edit(repo, "pkg/helpers.py", "    extract_bundle,\n", "")
    _edit(repo, "pkg/helpers.py", "return extract_bundle(bundle)", "return bundle")
    shas["removal"] = commit(repo, "Stop extracting the certificate bundle")
    # about tests, with a side cleanup in a module (requests history-19)
    _edit(repo, "pkg/helpers.py", "    return read_bundle(bundle)",
          "    found_bundle = read_bundle(bundle)\n    return found_bundle")
    write(repo, "tests/test_client.py", "def test_it():\n    assert True\n\n\n"
                                        "def test_more():\n    assert True\n")
    shas["tests"] = commit(repo, "Add more tests to prevent a regression of the bundle bug")
    # GitHub's one-parent security merge (requests history-14)
    _edit(repo, "pkg/helpers.py", "found_bundle = read_bundle(bundle)",
          "found_bundle = read_bundle(str(bundle))")
    shas["fork"] = commit(repo, "Merge commit from fork")
    # grades by surviving added code, not deletions (flask history-04): the pool's reuse
    # logic moves out of client.py (most changed lines, all deleted) into tracking.py; the
    # pool's docstring moved unchanged (flask history-03) and a version marker (flask
    # history-06) are no facts
    text = (repo / "pkg/client.py").read_text(encoding="utf-8")
    kept = text[:text.index("    def reuse(self, key):")]
    write(repo, "pkg/client.py", kept.rstrip() + "\n")
    doc = '''    """Connections that stay open from one request to the next."""\n\n'''
    _edit(repo, "pkg/client.py", doc, "")
    _edit(repo, "pkg/client.py", "return self.reuse(key)",
          "return track_acquired_connection(self, key)")
    write(repo, "pkg/tracking.py", '''"""Connection tracking."""


def track_acquired_connection(pool, key):
    """Connections that stay open from one request to the next."""
    acquired_connection_key = pool.connect(key)
    pool.acquired.append(acquired_connection_key)
    return acquired_connection_key


def acquired_count(pool):
    """How many connections a request holds.

    .. versionadded:: 2.0
    """
    return len(pool.acquired)
''')
    shas["tracking"] = commit(repo, "Track which connections a request acquired")
    # later: the bound raised again, the version line renamed, the spool call reflowed
    _edit(repo, "pkg/client.py", "< (7, 0)", "< (8, 0)")
    commit(repo, "Raise the supported version bound to eight")
    _edit(repo, "pkg/client.py", '''    parts = version.split(".")[:3]
    assert (1, 0) <= tuple(int(p) for p in parts[:2]) < (8, 0)
    return parts''', '''    version_parts = version.split(".")[:3]
    assert (1, 0) <= tuple(int(p) for p in version_parts[:2]) < (8, 0)
    return version_parts''')
    _edit(repo, "pkg/client.py", 'handle = open(path, mode="w")', '''handle = open(
        path, mode="w", encoding=encoding
    )''')
    commit(repo, "Pass the spool encoding through and name the version parts")
    return repo, shas


def _skipped(stderr: str) -> str:
    (line,) = [line for line in stderr.splitlines() if "history: read" in line]
    return line


def test_the_reviews_rejects_are_skipped_with_a_counted_reason(review_repo, cli, tmp_path):
    repo, shas = review_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    for name in ("bound7", "docstring", "typing", "removal", "tests", "fork"):
        assert shas[name] not in asked, name
    line = _skipped(stderr)
    # "Merge commit from fork" (one parent) is a merge of branches (core/commits.py).
    for reason in (SKIP_SUPERSEDED, SKIP_NO_CODE, SKIP_REMOVAL, SKIP_TESTS_SUBJECT, SKIP_MERGE):
        assert reason in line, reason
    assert skipped(line, SKIP_NO_CODE) == 2
    assert skipped(line, SKIP_SUPERSEDED) == 1 and skipped(line, SKIP_REMOVAL) == 1


def test_renamed_and_reflowed_lines_survive(review_repo, cli, tmp_path):
    repo, shas = review_repo
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    assert shas["renamed"] in asked        # parts → version_parts since
    assert shas["reflowed"] in asked       # open(…) spread over three lines since


def test_grades_follow_surviving_added_code_and_facts_are_not_moved_lines(review_repo, cli,
                                                                          tmp_path):
    repo, shas = review_repo
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "20")
    (tracking,) = [q for q in doc["queries"] if q["source"]["commit"] == shas["tracking"]]
    graded = {m: g for m, g in tracking["relevance_grades"].items() if g}
    # client.py carries most changed lines (deletions); tracking.py the added code
    assert graded == {"pkg/tracking.py": 3, "pkg/client.py": 2}
    facts = [f["fact"] for f in tracking["gold_facts"]]
    assert "pool.acquired.append(acquired_connection_key)" in facts
    assert not any("versionadded" in f for f in facts)
    assert not any("stay open from one request" in f for f in facts)  # moved, not written


def test_count_is_met_by_mining_further_back(review_repo, cli, tmp_path):
    repo, shas = review_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "4")
    assert len(doc["queries"]) == 4
    assert "short of --count" not in stderr
    # five of the candidates make a question (the pool of 3 x 4 is not full, so every one
    # is judged); the four likeliest to be kept are drafted, newest first: the cross-file
    # one (tracking, two modules) is outranked by the four focused ones
    asked = [q["source"]["commit"] for q in doc["queries"]]
    assert asked[2:] == [shas["reflowed"], shas["renamed"]]
    assert shas["tracking"] not in asked
    line = _skipped(stderr)
    assert "5 make a question, 4 drafted; skipped: " in line
    assert f"1 {SKIP_OUTRANKED}" in line
    assert "not judged" not in line


def test_the_pool_stops_at_pool_factor_times_count(review_repo, cli, tmp_path, monkeypatch):
    repo, _shas = review_repo
    # the shipped pool (5 x --count) holds every candidate that makes a question here
    doc, stderr = draft(cli, repo, tmp_path, "--count", "1")
    (query,) = doc["queries"]
    assert query["question"] == "Raise the supported version bound to eight"
    line = _skipped(stderr)
    assert "5 make a question, 1 drafted; skipped: " in line
    assert f"4 {SKIP_OUTRANKED}" in line
    assert "not judged" not in line
    # a pool of 3 x --count: the newest three that make a question are judged, the six
    # older candidates not read; "Raise the supported version bound to eight" opens with a
    # behaviour and grades one module: the likeliest of the three
    monkeypatch.setattr(authoring, "POOL_FACTOR", 3)
    doc, stderr = draft(cli, repo, tmp_path, "--count", "1")
    (query,) = doc["queries"]
    assert query["question"] == "Raise the supported version bound to eight"
    line = _skipped(stderr)
    assert "3 make a question (the 6 older candidate(s) not judged: 3 × --count make one), " \
           "1 drafted; skipped: " in line
    assert f"2 {SKIP_OUTRANKED}" in line
    assert SKIP_SUPERSEDED not in line
