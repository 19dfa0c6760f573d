"""Evidence-anchored facts in the ground-truth model, its validation and its JSON Schema."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from evaluator.core.groundtruth import normalize_evidence
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.core.schemas import ground_truth_schema

SPAN = "def sign(self, value: bytes) -> bytes:"


def doc(facts: list[Any]) -> str:
    query = {"id": "q1", "question": "How is a value signed?", "shape": "focused",
             "relevance_grades": {"a.py": 3}, "gold_facts": facts}
    return json.dumps({"queries": [query]}, indent=2)


def test_anchored_and_plain_facts_load_side_by_side() -> None:
    gt, problems = load_ground_truth(
        doc([{"fact": "sign takes bytes", "evidence": f"  {SPAN}\n"}, "returns the signature"]),
        "gt.json")
    assert gt is not None, problems
    q = gt.queries[0]
    assert q.gold_facts == ("sign takes bytes", "returns the signature")
    assert q.evidence == (f"  {SPAN}", None)
    assert (q.evidence_of(0), q.evidence_of(1), q.anchored) == (f"  {SPAN}", None, 1)
    assert problems == ()


def test_an_unanchored_suite_keeps_its_old_reading() -> None:
    gt, _ = load_ground_truth(doc(["sign takes bytes", "returns the signature"]), "gt.json")
    assert gt is not None
    q = gt.queries[0]
    assert (q.evidence, q.anchored, q.evidence_of(0)) == ((), 0, None)


@pytest.mark.parametrize(("entry", "words"), [
    ({"fact": "sign takes bytes"}, "missing evidence"),
    ({"evidence": SPAN}, "missing fact"),
    ({"fact": "sign takes bytes", "evidence": SPAN, "line": 3}, "unknown key(s) 'line'"),
    ({"fact": "sign takes bytes", "evidence": 42}, "must both be strings"),
    ({"fact": "sign takes bytes", "evidence": "  \n "}, "evidence is empty"),
    ({"fact": "sign takes bytes", "evidence": "def sign(\x1b[2J"}, "control character"),
    ({"fact": "  ", "evidence": SPAN}, "empty fact"),
    (42, "must be a string, or an object"),
])
def test_a_malformed_fact_is_one_error_at_its_place(entry: Any, words: str) -> None:
    text = doc(["returns the signature", entry])
    gt, problems = load_ground_truth(text, "gt.json")
    assert gt is None
    errs = [p for p in problems if p.severity == "error"]
    assert len(errs) == 1, [p.render() for p in problems]
    assert errs[0].field == "gold_facts[1]" and words in errs[0].message
    lines = [line.strip() for line in text.splitlines()]
    assert errs[0].line == lines.index('"returns the signature",') + 2


def test_a_very_short_span_warns_and_generic_words_are_not_asked_of_an_anchored_fact() -> None:
    gt, problems = load_ground_truth(
        doc([{"fact": "it is a set", "evidence": "x = 1"}, {"fact": "the code", "evidence": SPAN}]),
        "gt.json")
    assert gt is not None
    assert [(p.field, "shorter than 8 characters" in p.message) for p in problems] == [
        ("gold_facts[0]", True)]


@pytest.mark.parametrize(("a", "b"), [
    ("def  sign(self,\n        value)", "def sign(self, value)"),
    ("\tx = 1\r\n", "x = 1"),
    ("caf\u00e9 = 1", "cafe\u0301 = 1"),
    ("a\u00a0b", "a b"),
])
def test_spans_are_compared_with_whitespace_and_unicode_normalised(a: str, b: str) -> None:
    assert normalize_evidence(a) == normalize_evidence(b)


def test_normalisation_keeps_case_and_punctuation() -> None:
    assert normalize_evidence("Sign()") != normalize_evidence("sign()")
    assert normalize_evidence("a.b") != normalize_evidence("a b")


def test_schema_accepts_an_anchored_fact_and_refuses_what_the_validator_refuses() -> None:
    good = json.loads(doc([{"fact": "sign takes bytes", "evidence": SPAN}, "plain fact"]))
    jsonschema.validate(good, ground_truth_schema())
    for bad in ({"fact": "sign takes bytes"}, {"fact": "x y", "evidence": SPAN, "why": "z"},
                {"fact": "sign takes bytes", "evidence": ""}):
        document = json.loads(doc([bad, "plain fact"]))
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(document, ground_truth_schema())
        gt, _problems = load_ground_truth(json.dumps(document), "gt.json")
        assert gt is None
