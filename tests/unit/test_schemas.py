"""The published JSON Schemas are current and agree with the validator on real files."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from evaluator.cli import EXAMPLE_QUERIES
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.core.schemas import ground_truth_schema, options_schema, published

SCHEMAS = Path(__file__).resolve().parents[2] / "evaluator" / "schemas"


@pytest.mark.parametrize("name", sorted(published()))
def test_published_schema_is_current(name, request):
    text = json.dumps(published()[name], indent=2, ensure_ascii=False) + "\n"
    path = SCHEMAS / name
    if request.config.getoption("--update-golden"):
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run python -m evaluator.optiondocs"
    assert path.read_text(encoding="utf-8") == text, \
        f"{name} is stale: python -m evaluator.optiondocs"
    jsonschema.Draft202012Validator.check_schema(json.loads(text))


def test_bundled_ground_truth_matches_the_schema_and_the_validator():
    doc = json.loads(Path(EXAMPLE_QUERIES).read_text(encoding="utf-8"))
    jsonschema.validate(doc | {"$schema": "ground-truth.schema.json"}, ground_truth_schema())
    gt, problems = load_ground_truth(json.dumps(doc | {"$schema": "x.json"}), "gt.json")
    assert gt is not None, problems


@pytest.mark.parametrize("mutate", [
    lambda q: q.update(relevance_grades={"a.py": 4}),
    lambda q: q.update(relevance_grades={"a.py": "3"}),
    lambda q: q.pop("relevance_grades"),
    lambda q: q.update(source={"commit": "not a sha", "subject": "s"}),
    lambda q: q.update(id=""),
    lambda q: q.update(question="   "),
])
def test_schema_and_validator_both_refuse(mutate):
    query = {"id": "q1", "question": "Why?", "shape": "focused",
             "relevance_grades": {"a.py": 3}, "gold_facts": ["alpha beta", "gamma delta"]}
    mutate(query)
    doc = {"queries": [query]}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, ground_truth_schema())
    gt, _problems = load_ground_truth(json.dumps(doc), "gt.json")
    assert gt is None


@pytest.mark.parametrize("mutate", [
    lambda q: q.pop("gold_facts"),
    lambda q: q.update(gold_facts=[]),
    lambda q: q.update(question="Why does the session\ndrop cookies on a redirect?"),
    lambda q: q.update(source={"commit": "0123abc", "subject": "fix: keep cookies (#12)"}),
])
def test_schema_and_validator_both_accept(mutate):
    """Retrieval-only questions, multi-line questions and a history source (issue 24)."""
    query = {"id": "q1", "question": "Why?", "shape": "focused",
             "relevance_grades": {"a.py": 3}, "gold_facts": ["alpha beta", "gamma delta"]}
    mutate(query)
    doc = {"queries": [query]}
    jsonschema.validate(doc, ground_truth_schema())
    gt, problems = load_ground_truth(json.dumps(doc), "gt.json")
    assert gt is not None, [p.render() for p in problems]


def test_options_schema_accepts_the_documented_example_and_refuses_typos():
    good = {"$schema": "options.schema.json", "queries": "retrieval_queries.json",
            "k": [1, 3, 5, 10], "gain": "linear", "backend": "in_memory",
            "graph-source": "graphify", "relevance-threshold": 2,
            "floors": {"recall@5": 0.5, "contradiction": "<= 0.20"},
            "shape-floors": {"hit_rate": 0.7}, "zero-miss": True, "strict": True}
    jsonschema.validate(good, options_schema())
    for bad in ({"gain": "quadratic"}, {"graph-sorce": "builtin"}, {"floors": {"x": ">> 1"}},
                {"relevance-threshold": 4}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, options_schema())
