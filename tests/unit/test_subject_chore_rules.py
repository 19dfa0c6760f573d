"""The subject rules of issue 24's round 8 against look-alikes that are real changes (the
final review's cases): each pair a chore the rule must catch and a feature it must not."""

from __future__ import annotations

import pytest

from evaluator.core.commit_subject import dependency_upgrade, lint_chore
from evaluator.core.commits import python_drop


@pytest.mark.parametrize(("subject", "chore"), [
    ("Enable the rest of the rulesets we care about and fix minor things", True),
    ("Add a linter to the test run", True),
    ("Minor cleanup of the server state", True),
    ("Add rulesets for validating webhook payloads", False),
    ("Use rule sets to route websocket frames", False),
    ("Add support for websocket rules in the routing state", False),
])
def test_lint_chores(subject: str, chore: bool) -> None:
    assert lint_chore(subject) is chore


@pytest.mark.parametrize(("subject", "drop"), [
    ("Drop support for 3.8, which is near EOL", True),
    ("Drop Python 3.7", True),
    ("Remove support for py3.9", True),
    ("Remove 2.0 deprecation shims from the session API", False),
    ("Drop 3.0 compatibility aliases of the retry options", False),
])
def test_python_drops(subject: str, drop: bool) -> None:
    assert python_drop(subject) is drop


@pytest.mark.parametrize(("subject", "upgrade"), [
    ("Upgrade websockets to 13.1", True),
    ("Bump the minimum attrs version to 23.1", True),
    ("Upgrade websockets so closing frames carry a reason", False),
])
def test_dependency_upgrade_subjects(subject: str, upgrade: bool) -> None:
    assert dependency_upgrade(subject) is upgrade
