"""The askability score that chooses which history questions to draft (issue 24, rounds 14
and 16)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluator.core.askability import (
    BEHAVIOUR,
    CODE,
    CODE_SPAN,
    CONDITION,
    DOTTED,
    FIVE_OR_MORE,
    INTERCEPT,
    SHORT,
    THREE_OR_MORE,
    TWO_MODULES,
    askability,
    features,
    most_askable,
    opening_verb,
)

ONE = {"pkg/a.py": 3}


@pytest.mark.parametrize(("question", "verb"), [
    ("Fix a crash on empty input", "fix"),
    ("Fixes a crash on empty input", "fix"),
    ("Fixed the retry budget", "fix"),
    ("Handled empty bodies", "handle"),
    ("Don't follow redirects twice", "don't"),
    ("Cli: activate --debug for run", "activate"),        # after a scope
    ("http2: fix flow control", "fix"),
    ("Updates the pool size", "update"),
    ("Using the pool size", "use"),
    ("Dropped the legacy pool", "drop"),
    ("Raising on a closed pool", "raise"),
    ("Fixture loading order", "fixture"),               # no listed stem: the word itself
    ("`timeout` applies to reads", ""),
    ("", ""),
])
def test_the_opening_verb(question: str, verb: str) -> None:
    assert opening_verb(question) == verb


def test_each_feature_adds_its_weight() -> None:
    base = "Raise a clear error for a missing key"
    assert askability(base, ONE) == pytest.approx(INTERCEPT + BEHAVIOUR)
    two = {"pkg/a.py": 3, "pkg/b.py": 2}
    assert askability(base, two) == pytest.approx(INTERCEPT + BEHAVIOUR + TWO_MODULES)
    three = {f"pkg/{n}.py": 2 for n in "abc"}
    assert askability(base, three) == pytest.approx(INTERCEPT + BEHAVIOUR + THREE_OR_MORE)
    five = {f"pkg/{n}.py": 2 for n in "abcde"}
    assert askability(base, five) == pytest.approx(
        INTERCEPT + BEHAVIOUR + THREE_OR_MORE + FIVE_OR_MORE)
    assert askability("Update the pool size default", ONE) == pytest.approx(INTERCEPT + CODE)
    assert askability("Speed up header parsing", ONE) == pytest.approx(INTERCEPT + SHORT)
    assert askability("Support `timeout` in the pool", ONE) == pytest.approx(
        INTERCEPT + BEHAVIOUR + CODE_SPAN)
    assert askability("Don't crash when the body is empty", ONE) == pytest.approx(
        INTERCEPT + BEHAVIOUR + CONDITION)
    assert askability("Support os.path in the loader", ONE) == pytest.approx(
        INTERCEPT + BEHAVIOUR + DOTTED)


@pytest.mark.parametrize(("question", "condition", "dotted"), [
    ("Fix a crash when the pool is closed", True, False),
    ("Raise If the header is missing", True, False),         # any case
    ("Keep headers after a redirect", True, False),
    ("Whenever a pool closes", False, False),                # a word, not a part of one
    ("Drop support for Python 3.8", False, True),            # a version
    ("Read setup.cfg too", False, True),                     # a file name
    ("Stop. Then start again", False, False),                # a full stop and a space
])
def test_the_condition_and_dotted_features(question: str, condition: bool,
                                           dotted: bool) -> None:
    got = features(question, ONE)
    assert (got[-2], got[-1]) == (float(condition), float(dotted))


def test_grades_of_zero_are_no_modules() -> None:
    assert features("Fix a crash on empty input", {"pkg/a.py": 3, "pkg/b.py": 0}) == \
        features("Fix a crash on empty input", ONE)


def test_the_reviews_order() -> None:
    # a behaviour in one module first, a cross-file refactor last
    ranked = sorted([
        ("Refactor the pool into helpers", {"a.py": 3, "b.py": 2, "c.py": 2}),
        ("Preserve header order when merging", {"a.py": 3}),
        ("Add a retry budget to the session", {"a.py": 3, "b.py": 2}),
    ], key=lambda qg: -askability(*qg))
    assert [q for q, _ in ranked] == ["Preserve header order when merging",
                                      "Add a retry budget to the session",
                                      "Refactor the pool into helpers"]


def test_most_askable_keeps_the_given_order_and_breaks_ties_by_it() -> None:
    assert most_askable([0.1, 0.5, 0.5, -1.0, 0.5], 2) == [1, 2]
    assert most_askable([0.1, 0.5, 0.5, -1.0, 0.5], 4) == [0, 1, 2, 4]
    assert most_askable([0.3], 5) == [0]
    assert most_askable([0.3, 0.2], 0) == []
    assert most_askable([], 3) == []


@given(st.lists(st.floats(-5, 5), max_size=40), st.integers(0, 45))
def test_most_askable_is_the_top_count(scores: list[float], count: int) -> None:
    chosen = most_askable(scores, count)
    assert chosen == sorted(set(chosen))
    assert len(chosen) == min(count, len(scores))
    left = [s for i, s in enumerate(scores) if i not in chosen]
    assert all(scores[i] >= s for i in chosen for s in left)
