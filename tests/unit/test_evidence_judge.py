"""The anchored verdict: a fact with evidence is supported exactly when the context holds
its span (whitespace and Unicode normalised), and the per-fact audit says how each fact was
judged."""

from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evaluator.core.groundtruth import normalize_evidence
from evaluator.core.judge import FactAudit, anchored_share, audit, judge
from evaluator.core.results import to_dict
from evaluator.core.results_reader import from_dict
from tests.factories import make_results

CHARS = st.sampled_from(list("ab yz_(),=>\t\n\r.\u00e9\u00df\u2192\u6f22\u00a0"))
SPAN = "if max_age is not None and age > max_age:"
CONTEXT = """def unsign(self, value, max_age=None):
    age = self.get_timestamp() - ts
    if max_age is not None and age > max_age:
        raise SignatureExpired(f"Signature age {age} > {max_age} seconds")
"""


def test_a_context_holding_the_span_supports_the_fact() -> None:
    verdict = judge(CONTEXT, ["an old signature is refused"], evidence=[SPAN])
    (fact,) = verdict.facts
    assert (fact.found, fact.contradicted, fact.judged_by) == (True, False, "anchored")
    assert verdict.faithfulness == 1.0


@pytest.mark.parametrize("context", [
    CONTEXT.replace("age > max_age", "age >= max_age"),  # one character changed
    CONTEXT.replace("is not None", "is None"),  # the negation dropped
    CONTEXT.replace("max_age", "MAX_AGE"),  # case counts
    "max_age is not None age > max_age if and",  # the same words in another order
    "",
])
def test_a_context_without_the_exact_span_does_not(context: str) -> None:
    verdict = judge(context, ["an old signature is refused"], evidence=[SPAN])
    assert verdict.facts[0].found is False
    assert verdict.faithfulness == 0.0


@pytest.mark.parametrize("context", [
    CONTEXT.replace("    if max_age", "\tif  max_age"),  # tabs, double spaces
    CONTEXT.replace(" and age", "\n        and age"),  # the span wrapped over two lines
    CONTEXT.replace("\n", "\r\n"),
    CONTEXT.replace(" age > ", "\u00a0age\u2003>\u00a0"),  # no-break and em spaces
])
def test_whitespace_in_the_context_does_not_matter(context: str) -> None:
    assert judge(context, ["an old signature is refused"], evidence=[SPAN]).facts[0].found


def test_unicode_is_compared_in_one_normal_form() -> None:
    precomposed = "raise Error(\"caf\u00e9 closed\")"
    decomposed = "raise Error(\"cafe\u0301 closed\")"
    assert judge(f"x = 1\n{decomposed}\n", ["f"], evidence=[precomposed]).facts[0].found
    assert judge(f"x = 1\n{precomposed}\n", ["f"], evidence=[decomposed]).facts[0].found
    assert not judge("raise Error(\"cafe closed\")", ["f"], evidence=[precomposed]).facts[0].found


def test_anchored_and_plain_facts_are_each_judged_their_own_way() -> None:
    facts = ["an old signature is refused", "SignatureExpired", "the fact's words only"]
    verdict = judge(CONTEXT, facts, evidence=[SPAN, None, "age < max_age"])
    assert [(f.judged_by, f.found) for f in verdict.facts] == [
        ("anchored", True), ("terms", True), ("anchored", False)]
    assert verdict.faithfulness == pytest.approx(2 / 3)
    assert verdict.facts_found == ("an old signature is refused", "SignatureExpired")


def test_the_words_of_an_anchored_fact_do_not_count() -> None:
    # The fact's words are all in the context, but its span is not: unsupported.
    verdict = judge(CONTEXT, ["SignatureExpired max_age"], evidence=["raise BadSignature()"])
    assert not verdict.facts[0].found
    similar_calls: list[object] = []
    judge(CONTEXT, ["an old signature is refused"], evidence=[SPAN],
          similar=lambda pairs: similar_calls.append(pairs) or [1.0] * len(pairs))
    assert similar_calls == []  # the model is never asked about an anchored fact


@settings(max_examples=60, deadline=None)
@given(before=st.text(CHARS, max_size=40), after=st.text(CHARS, max_size=40),
       span=st.text(CHARS, min_size=1, max_size=30).filter(lambda s: s.strip()))
def test_precision_and_recall_are_exact(before: str, after: str, span: str) -> None:
    """1.0 / 1.0 (over characters that do not compose with a neighbour under NFC, which
    would change the text itself): any context holding the span supports the fact, and a
    context from which every occurrence of the span was removed does not."""
    assert judge(before + span + after, ["f"], evidence=[span]).facts[0].found
    without = before + " " + after
    assume(normalize_evidence(span) not in normalize_evidence(without))
    assert not judge(without, ["f"], evidence=[span]).facts[0].found


def test_the_audit_names_route_outcome_and_supporting_span() -> None:
    facts = ["an old signature is refused", "SignatureExpired", "nothing like this"]
    verdict = judge(CONTEXT, facts, evidence=[SPAN, None, None])
    rows = audit(CONTEXT, verdict)
    assert rows[0] == FactAudit(facts[0], "anchored", True, SPAN)
    assert rows[1].judged_by == "terms" and rows[1].found
    assert rows[1].span is not None and "raise SignatureExpired(" in rows[1].span
    assert "\n" not in rows[1].span
    assert rows[2] == FactAudit(facts[2], "terms", False, None)
    assert anchored_share(rows) == (1, 3)


def test_a_fact_the_model_was_asked_about_is_judged_by_the_model() -> None:
    # judge 3 asks the model only about a prose fact whose every key term is in one stretch
    context = "def purge():\n    # the nightly job purges expired sessions\n    db.clear()\n"
    fact = "The nightly job purges expired sessions and returns the given default value."
    verdict = judge(context, [fact], similar=lambda pairs: [0.9] * len(pairs))
    assert verdict.facts[0].judged_by == "model"
    (row,) = audit(context, verdict)
    assert row.judged_by == "model" and row.found
    assert row.span == "def purge(): # the nightly job purges expired sessions db.clear()"


def test_the_audit_survives_the_results_file() -> None:
    results = make_results(n=2, seed=1)
    rows = (FactAudit("a", "anchored", True, SPAN), FactAudit("b", "model", False, None))
    q = results.queries[0]
    from dataclasses import replace
    results = replace(results, queries=(replace(q, faithfulness=replace(
        q.faithfulness, facts=rows)), *results.queries[1:]))
    back = from_dict(json.loads(json.dumps(to_dict(results))), "r.json")
    assert back.queries[0].faithfulness.facts == rows
    assert back.queries[1].faithfulness.facts == ()
