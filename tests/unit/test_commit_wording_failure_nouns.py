"""A failure noun (error, failure, crash, behaviour) is a vague word: "Fix retry error" says
that something failed, not what (issue 24 round 9, the seventh cold review). It still
counts as a content word, so a subject naming what the error is about stays asked."""

from __future__ import annotations

import pytest

from evaluator.core.commit_wording import SKIP_WORDING, content_words, wording_reason


@pytest.mark.parametrize("subject", [
    "Fix retry error",                 # getsentry/responses, edited for wording
    "Fix error message",               # marshmallow, edited for wording
    "Fix mypy errors",
    "Fix test failures",
    "Fix crash",
    "Fix parsing behaviour",
    "Fix the behavior",
])
def test_a_failure_noun_in_at_most_two_content_words_is_skipped(subject):
    assert wording_reason(subject) == SKIP_WORDING


@pytest.mark.parametrize("subject", [
    # kept by the seventh review: no failure noun and no code-work verb
    "Fix port-zero handling",
    "Fix missing header detection for the non-strict case",
    "Deduplicate content-type headers",
    "Reject invalid URL hosts",
    # kept: the failure noun is a content word, so three remain
    "Improve InvalidURL error message",
    "Improved the error for a missing backend",
    "Fix off-by-one error in slicing",
    "Raise an error on a negative timeout",
    # a failure noun inside a longer word or name is none
    "Fix errorlog rotation",
    "Add ErrorHandler",
])
def test_look_alikes_stay_asked(subject):
    assert wording_reason(subject) is None


def test_a_failure_noun_stays_a_content_word():
    assert content_words("Fix retry error") == ["retry", "error"]
    assert content_words("Improve InvalidURL error message") == ["invalidurl", "error", "message"]
