"""An "edge case" or "corner case" says that some case went wrong, not which: a vague phrase
whose words are no content words (issue 24 round 11, the eighth cold review: httpcore
"Fix pool timeout edge-case" was edited to say which case)."""

from __future__ import annotations

import pytest

from evaluator.core.commit_wording import SKIP_WORDING, content_words, wording_reason


@pytest.mark.parametrize("subject", [
    "Fix pool timeout edge-case",      # encode/httpcore, edited for wording
    "Fix pool timeout edge case",
    "Fixed several cancellation corner cases",
    "Handle URL corner-cases",
    "Fix edge cases",
])
def test_an_edge_case_in_at_most_two_content_words_is_skipped(subject: str) -> None:
    assert wording_reason(subject) == SKIP_WORDING


@pytest.mark.parametrize("subject", [
    # the case is named: three content words or more remain
    "Fix corner case with unknown=RAISE and index_errors=False",
    "Fix pep440 edge case in SpecifierSet.filter",
    "Fix corner-case where wrapped lines are one character longer than max width",
    # "edge" or "corner" that is no case
    "Add rounded corner option",
    "Support edge runtime",
])
def test_look_alikes_stay_asked(subject: str) -> None:
    assert wording_reason(subject) is None


def test_the_case_words_are_no_content_words() -> None:
    assert content_words("Fix pool timeout edge-case") == ["pool", "timeout"]
    assert content_words("Fixed several cancellation corner cases") == \
        ["several", "cancellation"]
