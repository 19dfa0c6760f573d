"""Unit tests for the history route's port/backport unwrapping (issue 24, round 9).

A cold review edited urllib3's ``Port "Reject CR/LF in HTTP tunnel request headers"
(#5091)`` to the quoted title: a commit that ports, backports or cherry-picks a change asks
that change's title; the wrapper is noise. Look-alikes (a port number, "Import", "Report",
a quote inside a longer sentence) stay as they are.
"""

from __future__ import annotations

import pytest

from evaluator.core.commit_subject import (
    drop_backport_label,
    drop_backport_mark,
    ported_title,
)
from evaluator.core.commits import (
    MAX_SUBJECT_CHARS,
    SKIP_DUPLICATE,
    SKIP_IN_PULL,
    SKIP_MERGE,
    SKIP_REVERT,
    Commit,
    FileChange,
    clean_subject,
    mine,
)

A, B, C, D = "a" * 40, "b" * 40, "c" * 40, "d" * 40
FILES = (FileChange("pkg/a.py", 3, 1),)


@pytest.mark.parametrize(("subject", "question"), [
    # urllib3 e18a0d1a, the review's edit
    ('Port "Reject CR/LF in HTTP tunnel request headers" (#5091)',
     "Reject CR/LF in HTTP tunnel request headers"),
    ('Backport "Keep cookies across redirects"', "Keep cookies across redirects"),
    ('Back-port "Keep cookies across redirects" to 2.x (#12)',
     "Keep cookies across redirects"),
    ('backport "remove lazy importer" to 0.16', "Remove lazy importer"),    # werkzeug PR
    ("Backported \u201cKeep cookies across redirects\u201d into 1.26.x",
     "Keep cookies across redirects"),
    ("Cherry-pick \"Keep cookies across redirects\" from main (#9)",
     "Keep cookies across redirects"),
    ("Cherry pick 'Don't drop cookies on redirects'", "Don't drop cookies on redirects"),
    ("cherry-picked \u2018Keep cookies across redirects\u2019 to the 3.x branch",
     "Keep cookies across redirects"),
    ('Backport of "Keep cookies across redirects" to `stable`',
     "Keep cookies across redirects"),
    # the title is cleaned in turn, and keeps its own quotes
    ('fix: Backport "feat(core): add a retry budget (#4)"', "Add a retry budget"),
    ('Port "Use "utf-8" as the default encoding"', 'Use "utf-8" as the default encoding'),
    ('Port "Backport "Keep cookies across redirects""', "Keep cookies across redirects"),
    # a trailing marker (cattrs 64f6305, mergify's "(backport #123)")
    ("Fix include_subclasses strategy with a generic parent and tagged_union (backport) "
     "(#683)", "Fix include_subclasses strategy with a generic parent and tagged_union"),
    ("Keep cookies across redirects (backport of #123)", "Keep cookies across redirects"),
    ("Keep cookies across redirects (backport #123)", "Keep cookies across redirects"),
    ("Keep cookies across redirects [backport]", "Keep cookies across redirects"),
    ("Keep cookies across redirects (cherry picked from commit 1a2b3c4)",
     "Keep cookies across redirects"),
    # a leading label (marshmallow, flask pull request titles)
    ("Backport #982: Allow username without password in basic auth part of the url.",
     "Allow username without password in basic auth part of the url"),
    ("backport 2.2.x: set `Vary: Cookie` header consistently for session",
     "Set `Vary: Cookie` header consistently for session"),
    ("Backport: Correctly use error attribute for Boolean",
     "Correctly use error attribute for Boolean"),
    ("Backport to 1.x - Keep cookies across redirects", "Keep cookies across redirects"),
])
def test_a_ported_change_asks_its_title(subject: str, question: str) -> None:
    assert clean_subject(subject) == question


@pytest.mark.parametrize(("subject", "question"), [
    ("[3.x] Keep cookies across redirects", "Keep cookies across redirects"),
    ("[backport 1.26] Keep cookies across redirects", "Keep cookies across redirects"),
    ("[1.26.x] Keep cookies across redirects (#3)", "Keep cookies across redirects"),
    ("[backport] Prevent TypeError for non-collection with many=True",
     "Prevent TypeError for non-collection with many=True"),
])
def test_a_leading_branch_label_in_brackets_stays_dropped(subject: str,
                                                          question: str) -> None:
    # dropped before this round as any leading [tag]; kept so by the unwrapping
    assert clean_subject(subject) == question


@pytest.mark.parametrize("subject", [
    "Port the tests to pytest",
    "Support port zero",
    "Fix port-zero handling",
    'Import "foo"',
    'Report "timeout" in errors',
    "Deport the old workers",
    'Use "utf-8" as default',
    'Fixed issue with port "0" returning None',          # urllib3 b984f4fb
    'Port "a" and "b" to the new API',                   # two quotes, no wrapped title
    'Port "foo" to Python 3',                            # a module, not a branch
    'Port "foo" in errors',
    "Port bpo-39057 to Requests",                        # requests a4f9a599: no title
    "Backport fixes for autocompletion on chained commands",  # click: no delimited title
    "Backport decref_socketios from Python 3",
    "Add the ipaddress backport (Python 2)",             # a bracket, not a marker
    "Remove backported socket.makefile()",
    "Backported PR to the 3.x branch",
    'Revert "Keep cookies across redirects"',
])
def test_look_alikes_keep_their_wording(subject: str) -> None:
    assert clean_subject(subject) == subject


def test_the_pieces_alone() -> None:
    assert ported_title('Port "X y z"') == "X y z"
    assert ported_title('Port " "') is None
    assert ported_title("Port the tests") is None
    assert drop_backport_label("Backport #3504 from main to stable") == \
        "Backport #3504 from main to stable"
    assert drop_backport_mark("Fix (backport) handling in the loader") == \
        "Fix (backport) handling in the loader"


def _mine(*commits: Commit) -> tuple[dict[str, str], list[str]]:
    mined = mine(list(commits), is_module_path=lambda p: True, modules=["pkg/a.py"])
    return dict(mined.reasons), [c.question for c in mined.candidates]


def test_a_ported_commit_on_the_main_line_is_asked_by_its_title() -> None:
    # urllib3 e18a0d1a: a squash on the main line, the only place the change is
    port = Commit(A, (B,), 'Port "Reject CR/LF in HTTP tunnel request headers" (#5091)',
                  FILES)
    reasons, questions = _mine(port, Commit(B, (), "Start", FILES))
    assert questions == ["Reject CR/LF in HTTP tunnel request headers"]
    assert A not in reasons


def test_a_backport_pull_request_wrapping_a_title_asks_it() -> None:
    """A pull request titled ``Backport "X"`` asks X (its commits are its own, skipped); one
    titled ``Backport #3504 from main to stable`` wraps no title and still merges
    branches (its commits are asked)."""
    merge = Commit(A, (B, C), "Merge pull request #7 from dev/backport-x", FILES,
                   'Backport "Keep cookies across redirects" to 2.x')
    own = Commit(C, (B,), "Keep cookies across redirects", FILES)
    root = Commit(B, (), "Start", FILES)
    reasons, questions = _mine(merge, own, root)
    assert questions == ["Keep cookies across redirects"]
    assert reasons[C] == SKIP_IN_PULL
    branches = Commit(A, (B, C), "Merge pull request #7 from dev/backport-x", FILES,
                      "Backport #3504 from `main` to `stable` branch")
    reasons, questions = _mine(branches, own, root)
    assert reasons[A] == SKIP_MERGE and questions == ["Keep cookies across redirects"]


def test_a_backport_of_a_change_asked_already_is_a_duplicate() -> None:
    backport = Commit(A, (B,), 'Backport "Keep cookies across redirects" (#9)', FILES)
    original = Commit(B, (C,), "Keep cookies across redirects (#8)", FILES)
    reasons, questions = _mine(backport, original, Commit(C, (), "Start", FILES))
    assert questions == ["Keep cookies across redirects"] and reasons[B] == SKIP_DUPLICATE


def test_reverting_a_port_is_still_a_revert() -> None:
    revert = Commit(A, (B,), 'Revert "Port "Keep cookies across redirects" (#9)"', FILES)
    port = Commit(B, (C,), 'Port "Keep cookies across redirects" (#9)', FILES)
    reasons, questions = _mine(revert, port, Commit(C, (D,), "Start here now", FILES),
                               Commit(D, (), "Root", FILES))
    assert reasons[A] == SKIP_REVERT and reasons[B] == SKIP_REVERT
    assert questions == ["Start here now"]


def test_nested_wrappers_end() -> None:
    # Each pass unwraps a shorter title, so the cleaning ends; a pattern that backtracked
    # without bound would hang here (the CI job's time limit, not a wall-clock assertion,
    # catches that). A title that holds its own quotes, or is cut by the length cap, is no
    # single quoted title and stays wrapped.
    subject = 'Port "' * (MAX_SUBJECT_CHARS // 6) + "Keep cookies" + '"' * 50
    assert clean_subject(subject).startswith('Port "Port "')
    assert clean_subject('Port "' + "a" * MAX_SUBJECT_CHARS + '"').startswith('Port "a')
