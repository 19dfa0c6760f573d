"""A commit subject is text a pull request writes: the history route's cleaning must never
run its expressions over more of it than a question may hold.

Several of the cleaning's regular expressions are quadratic in the worst case (measured here:
a subject of 10,000 characters of repeated ``GH-`` took 0.23 s, 40,000 took 3.8 s), and
``clean_subject`` ran on every commit read, before the length check that skips a subject
over ``MAX_SUBJECT_CHARS``: a pull request could stall a run with one long commit subject. The
tests count what the cleaning is handed instead of timing it.
"""

from __future__ import annotations

import pytest

from evaluator.core import commits
from evaluator.core.commits import (
    MAX_SUBJECT_CHARS,
    SKIP_LONG,
    Commit,
    FileChange,
    clean_subject,
    mine,
)


@pytest.mark.parametrize("unit", ["GH-", "a", "fix #1 ", "📦 "])
def test_clean_subject_reads_no_more_than_a_question_may_hold(
        monkeypatch: pytest.MonkeyPatch, unit: str) -> None:
    seen: list[int] = []

    def recorded(text: str) -> str:
        seen.append(len(text))
        return text

    monkeypatch.setattr(commits, "drop_emoji", recorded)
    monkeypatch.setattr(commits, "drop_retry", recorded)
    clean_subject(unit * (20_000 // len(unit)))
    assert seen and max(seen) <= MAX_SUBJECT_CHARS + 1


def test_a_short_subject_is_cleaned_as_before() -> None:
    assert clean_subject("fix(core): Stop the retry loop on a closed socket (#123)") == \
        "Stop the retry loop on a closed socket"


@pytest.mark.parametrize("parents", [("b" * 40,), ("b" * 40, "c" * 40)])
def test_a_long_subject_is_still_skipped_as_long(parents: tuple[str, ...]) -> None:
    # The cleaning reads a prefix only; the skip is decided on the whole subject, for a
    # plain commit and for a merge whose subject is a pull request's title with (#N).
    subject = "Fix " + "the socket " * MAX_SUBJECT_CHARS + " (#12)"
    commit = Commit(sha="a" * 40, parents=parents, subject=subject,
                    changes=(FileChange(path="pkg/net.py", added=3, deleted=1),))
    mined = mine([commit, Commit(sha=parents[0], parents=(), subject="Start", changes=())],
                 is_module_path=lambda p: p.endswith(".py"), modules=["pkg/net.py"])
    assert mined.reasons["a" * 40] == SKIP_LONG
