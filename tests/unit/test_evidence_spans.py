"""Evidence spans against source text: drafting a span, missing spans and drift."""

from __future__ import annotations

import json

import pytest

from evaluator.core.evidence import drift, missing_spans, source_span
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.drafting import anchored

SOURCE = '''import hmac


def verify(plain: str, hashed: str) -> bool:
    """Constant-time password verification
    against the stored hash."""
    # never compare with ==
    return hmac.compare_digest(plain.encode(), hashed.encode())
'''


@pytest.mark.parametrize(("phrase", "span"), [
    ("compare_digest(plain.encode()",
     "return hmac.compare_digest(plain.encode(), hashed.encode())"),
    ("(plain: str, hashed: str)", "def verify(plain: str, hashed: str) -> bool:"),
    ("verification against the stored", "Constant-time password verification\n"
                                         "against the stored hash."),
    ("never compare with", "never compare with =="),
    ('"""Constant-time', '"""Constant-time password verification'),
])
def test_a_span_is_the_whole_lines_holding_the_phrase(phrase: str, span: str) -> None:
    assert source_span(phrase, SOURCE) == span


def test_no_span_for_a_phrase_the_source_does_not_hold() -> None:
    assert source_span("compare_digest(hashed", SOURCE) is None
    assert source_span("", SOURCE) is None
    assert anchored("compare_digest(hashed", [SOURCE]) == "compare_digest(hashed"
    assert anchored("hmac.compare_digest", ["x = 1", SOURCE]) == {
        "fact": "hmac.compare_digest",
        "evidence": "return hmac.compare_digest(plain.encode(), hashed.encode())"}


def _gt(spans: list[str]):
    query = {"id": "q1", "question": "How are passwords checked?", "shape": "focused",
             "relevance_grades": {"auth.py": 3, "other.py": 1, "util.py": 2},
             "gold_facts": [{"fact": f"fact {i}", "evidence": s} for i, s in enumerate(spans)]}
    gt, problems = load_ground_truth(json.dumps({"queries": [query]}), "gt.json")
    assert gt is not None, problems
    return gt


def test_a_span_must_be_in_a_needed_module() -> None:
    gt = _gt(["hmac.compare_digest(plain.encode(),\n   hashed.encode())", "import hmac",
              "x = 1  # only in a grade-1 module"])
    texts = {"auth.py": SOURCE, "other.py": "x = 1  # only in a grade-1 module"}
    issues = missing_spans(gt, texts)
    assert [(i.query_id, i.fact_index, i.modules) for i in issues] == [
        ("q1", 2, ("auth.py", "util.py"))]
    assert "is not in any of its grade >= 2 modules (auth.py, util.py)" in issues[0].message()


def test_drift_is_a_span_the_base_held_and_the_head_does_not() -> None:
    gt = _gt(["return hmac.compare_digest(plain.encode(), hashed.encode())",
              "def verify(plain: str, hashed: str) -> bool:", "never held anywhere"])
    head = {"auth.py": SOURCE.replace("return hmac.compare_digest(", "return (")
            .replace("def verify(", "def check(")}
    issues = drift(gt, {"auth.py": SOURCE}, head)
    assert [(i.fact_index, i.drifted, i.was_in) for i in issues] == [
        (0, True, ("auth.py",)), (1, True, ("auth.py",)), (2, False, ())]
    assert issues[0].message().startswith("ground-truth drift: the evidence of fact 1 of "
                                          "question 'q1'")
    assert drift(gt, {"auth.py": SOURCE}, {"auth.py": SOURCE})[0].fact_index == 2
