"""The token budget's cut (evaluator.core.budget): whole passages in rank order, the last
one truncated, every system counted alike."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluator.core.budget import (
    SEPARATOR,
    cut,
    estimate_tokens,
    fixed_limit,
    recount,
    within_budget,
)
from evaluator.core.systems import Answer


def passages(*texts: str) -> Answer:
    return Answer(ranked_modules=("a.py", "b.py", "c.py"), context=SEPARATOR.join(texts),
                  tokens=999, seconds=0.5, documents=texts)


def test_the_estimate_is_characters_over_four():
    assert estimate_tokens("") == 0
    assert estimate_tokens("abc") == 1  # a non-empty text is at least one token
    assert estimate_tokens("x" * 400) == 100
    assert estimate_tokens("x" * 403) == 100


def test_whole_passages_in_rank_order_then_the_last_truncated():
    answer = passages("a" * 40, "b" * 40, "c" * 40)  # 10 tokens each, 2 for a separator
    out = cut(answer, 25)
    assert out.documents == ("a" * 40, "b" * 40, "c" * 19)
    assert out.context == SEPARATOR.join(out.documents)
    assert out.tokens == estimate_tokens(out.context) == 25
    assert out.ranked_modules == answer.ranked_modules and out.seconds == 0.5
    # one passage over the limit: its beginning
    assert cut(answer, 5).documents == ("a" * 23,)
    # within the limit: whole, only recounted
    whole = cut(answer, 1000)
    assert whole.context == answer.context and whole.tokens == estimate_tokens(answer.context)
    assert cut(answer, 0).context == "" and cut(answer, 0).tokens == 0


def test_a_context_laid_out_by_the_system_is_cut_as_one_passage():
    answer = Answer(ranked_modules=("a.py",), context="## Layer 1\n" + "x" * 200, tokens=7,
                    seconds=0.0, documents=("hit one", "hit two"))
    out = cut(answer, 10)
    assert out.context == answer.context[:43] and out.tokens == 10
    assert out.documents == answer.documents  # not the context's passages: left as they are


@given(st.lists(st.text(min_size=0, max_size=300), min_size=1, max_size=6),
       st.integers(min_value=0, max_value=400))
def test_the_cut_never_exceeds_the_limit_and_keeps_a_prefix(texts, limit):
    answer = passages(*texts)
    out = cut(answer, limit)
    assert out.tokens <= limit
    assert answer.context.startswith(out.context)
    if estimate_tokens(answer.context) <= limit:
        assert out.context == answer.context
    else:  # filled: within a token of the limit
        assert out.tokens >= limit - 1


def test_within_budget_follows_the_option():
    answer = passages("a" * 400, "b" * 400)
    assert within_budget(answer, "q1", None, None) is answer  # no budget: untouched
    assert within_budget(answer, "q1", "50", None).tokens == 50
    # neuralmind: the evaluated index is recounted, not cut; a reference is cut to its count
    assert within_budget(answer, "q1", "neuralmind", None) == recount(answer)
    assert within_budget(answer, "q1", "neuralmind", {"q1": 30, "q2": 7}).tokens == 30
    assert fixed_limit("800") == 800 and fixed_limit("neuralmind") is None
    assert fixed_limit(None) is None


@pytest.mark.parametrize("value", ["0", "-5", "lots", "1.5", True])
def test_a_bad_budget_is_named(value):
    from evaluator.core.options import ConfigError
    from evaluator.settings import settings_for

    with pytest.raises(ConfigError, match="must be a number of tokens"):
        settings_for("evaluate", {"path": ".", "budget": value})
    assert settings_for("evaluate", {"path": ".", "budget": " NeuralMind "}).budget \
        == "neuralmind"


def test_a_baseline_with_another_budget_is_a_settings_difference():
    from dataclasses import replace

    from evaluator.core.comparability import settings_differences
    from tests.factories import make_run

    run = make_run()
    assert settings_differences(run, run) == ()
    [difference] = settings_differences(run, replace(run, budget="neuralmind"))
    assert (difference.setting, difference.head) == ("token budget", "neuralmind")
