"""Every judge column of a context (evaluator.judging): the contexts file, the N-15 column,
and the embedding columns on the real model (none is 1.0 for another question's context)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator import judging
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.core.judge import judge_id
from evaluator.errors import InputError
from evaluator.judging import (
    judge_contexts,
    judge_report,
    minilm_embedder,
    read_contexts,
    score_context,
)
from evaluator.neuralmind_index import example_root

EXAMPLE_QUERIES = (Path(__file__).resolve().parents[2] / "evaluator" / "data"
                   / "sample_project.retrieval_queries.json")


@pytest.fixture(scope="module")
def example():
    gt, problems = load_ground_truth(EXAMPLE_QUERIES.read_text(encoding="utf-8"),
                                     str(EXAMPLE_QUERIES), present_modules=None, strict=False)
    assert gt is not None, problems
    return gt


def module_text(module: str) -> str:
    return (example_root() / module).read_text(encoding="utf-8")


def right_and_wrong(gt):
    """Per query: its grade ≥ 2 modules' text, and another query's grade-3 module it grades 0
    (the self-check's definition)."""
    out = []
    queries = gt.queries
    for i, query in enumerate(queries):
        right = "\n\n".join(module_text(m) for g in (3, 2) for m in query.modules_with_grade(g))
        wrong = next(module_text(m) for step in range(1, len(queries))
                     for m in queries[(i + step) % len(queries)].modules_with_grade(3)
                     if query.grade(m) == 0)
        out.append((query, right, wrong))
    return out


def write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "contexts.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_read_contexts_accepts_a_subset(tmp_path, example):
    first = example.queries[0].id
    assert read_contexts(write(tmp_path, {first: "text"}), example) == {first: "text"}


@pytest.mark.parametrize(("data", "message"), [
    ([1, 2], "must hold a JSON object"),
    ({"no-such-query": "x"}, "'no-such-query'"),
    ({"focused-01": 3}, "is not a string"),
])
def test_read_contexts_refuses_bad_input(tmp_path, example, data, message):
    with pytest.raises(InputError, match=message):
        read_contexts(write(tmp_path, data), example)


def test_read_contexts_refuses_invalid_json_missing_and_oversize(tmp_path, example, monkeypatch):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        read_contexts(bad, example)
    with pytest.raises(InputError, match="cannot read"):
        read_contexts(tmp_path / "absent.json", example)
    monkeypatch.setattr(judging, "MAX_CONTEXTS_BYTES", 4)
    with pytest.raises(InputError, match="larger than"):
        read_contexts(write(tmp_path, {"focused-01": "long text"}), example)


def test_every_column_without_embeddings(example):
    results = judge_contexts(example, {q.id: r for q, r, _ in right_and_wrong(example)})
    assert len(results) == len(example.queries)
    for result in results:
        columns = result.columns()
        assert columns["context_recall"] is None
        assert columns["faithfulness_embed"] is None
        assert columns["context_precision"] is None
        assert columns["answer_relevance"] is None
        assert 0.0 <= columns["faithfulness"] <= columns["fact_recall"] <= 1.0
        assert 0.0 <= columns["faithfulness_n15"] <= 1.0
    report = judge_report(results, judge=judge_id(similarity=False))
    assert report["judge"] == judge_id(similarity=False)
    assert {r.judge for r in results} == {judge_id(similarity=False)}
    assert report["n"] == len(results)
    assert set(report["queries"]) == {q.id for q in example.queries}
    json.dumps(report)  # serialisable


def test_the_judge_separates_right_from_wrong_on_the_example(example):
    """The calibration goal on the bundled example (≥ 0.9), computed, not hard-coded."""
    pairs = right_and_wrong(example)
    right = [score_context(q, r).faithfulness for q, r, _ in pairs]
    wrong = [score_context(q, w).faithfulness for q, _, w in pairs]
    separation = sum(right) / len(right) - sum(wrong) / len(wrong)
    assert separation >= 0.9
    assert sum(wrong) / len(wrong) <= 0.1


@pytest.mark.model
def test_no_embedding_column_is_one_for_another_questions_context(example, model_dir):
    embed = minilm_embedder(model_dir)
    pairs = right_and_wrong(example)[::3]  # every third query: the model is slow on 2 CPUs
    right_recall = []
    for query, right, wrong in pairs:
        got = score_context(query, wrong, documents=[wrong], embed=embed, columns=embed)
        assert got.context_recall is not None and got.context_recall < 1.0, query.id
        assert got.context_precision is not None and got.context_precision < 1.0, query.id
        assert got.answer_relevance is None
        assert got.faithfulness_embed is not None and got.faithfulness_embed < 1.0, query.id
        right_recall.append(score_context(query, right, embed=embed,
                                          columns=embed).context_recall)
    assert sum(r or 0 for r in right_recall) / len(right_recall) > 0.5


@pytest.mark.model
def test_the_headline_judge_with_the_model_separates_on_the_example(example, model_dir):
    """With the model (the similarity route on) the example's goals still hold: the route
    is calibrated to add no fact to another question's source there."""
    check = judging.self_check(example, example_root(), embed=minilm_embedder(model_dir))
    assert check.separation is not None and check.separation >= 0.9
    assert check.wrong_mean is not None and check.wrong_mean <= 0.1
    plain = judging.self_check(example, example_root())
    assert check.wrong_mean == plain.wrong_mean  # no fact added to a wrong context


@pytest.mark.model
def test_the_similarity_route_finds_a_paraphrase_the_terms_miss(example, model_dir):
    """A prose fact whose key words the context holds, stated by it in other words (its
    generic words — "called", "given", "value" — are not there, so the terms miss it)."""
    from evaluator.core.groundtruth import Query

    fact = "the nightly cleanup is called to delete login sessions given the TTL value"
    query = Query(id="q", question="what happens to old sessions?", shape="focused",
                  grades={}, gold_facts=(fact,))
    context = ("def nightly_cleanup():\n"
               "    # Every night, delete the login sessions that have timed out.\n"
               "    db.delete_sessions(older_than=SESSION_TTL)\n")
    embed = minilm_embedder(model_dir)
    plain = score_context(query, context)
    routed = score_context(query, context, embed=embed)
    assert plain.faithfulness == 0.0
    assert routed.faithfulness == 1.0
    assert routed.found_by == ("similarity",)
    assert routed.judge == judge_id(similarity=True)
    unrelated = score_context(query, "def add(a, b):\n    return a + b  # sum two numbers\n",
                              embed=embed)
    assert unrelated.faithfulness == 0.0
    # a paraphrase whose key words ("expired", "purged") are absent is never credited:
    # precision first (evaluator-judge 2 credited it by cosine)
    other = Query(id="q", question="what happens to old sessions?", shape="focused",
                  grades={}, gold_facts=("expired sessions are purged every night",))
    assert score_context(other, context, embed=embed).faithfulness == 0.0


def test_run_judge(tmp_path, example):
    first = example.queries[0]
    right = "\n\n".join(module_text(m) for m in first.modules_with_grade(3))
    report = judging.run_judge(ground_truth=example,
                               contexts_path=write(tmp_path, {first.id: right}))
    assert list(report["queries"]) == [first.id]
    entry = report["queries"][first.id]
    assert set(judging.JUDGE_COLUMNS) <= set(entry)
    assert entry["faithfulness"] == report["mean"]["faithfulness"]


def test_self_check_on_the_bundled_example(example):
    check = judging.self_check(example, example_root())
    assert check.separation is not None and check.separation >= 0.9
    assert check.wrong_mean is not None and check.wrong_mean <= 0.1
    # Every example fact is anchored: its verdict is its span's presence, whatever its words
    # say, so the check judges no false version (they test the unanchored judge) and warns
    # about nothing.
    assert all(q.anchored == len(q.gold_facts) for q in example.queries)
    assert check.false_credit is None and not check.problems and check.warning is None
    assert len(check.rows) + len(check.skipped) == len(example.queries)


def test_read_modules_is_confined(tmp_path):
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "a.py").write_text("a = 1\n", encoding="utf-8")
    (tmp_path / "secret.py").write_text("secret\n", encoding="utf-8")
    (tmp_path / "tree" / "link.py").symlink_to(tmp_path / "secret.py")
    texts = judging.read_modules(tmp_path / "tree", ["a.py", "../secret.py", "link.py",
                                                     "missing.py", "."])
    assert texts == {"a.py": "a = 1\n"}


SUITES = sorted((Path(__file__).resolve().parents[2] / "benchmarks" / "suites").glob(
    "*/retrieval_queries.json"))


@pytest.mark.parametrize("path", SUITES, ids=lambda p: p.parent.name)
def test_benchmark_suites_are_valid_and_their_facts_are_sentences(path):
    meta = json.loads((path.parent / "suite.json").read_text(encoding="utf-8"))
    assert meta["package"] == path.parent.name and meta["version"].count(".") >= 1
    gt, problems = load_ground_truth(path.read_text(encoding="utf-8"), str(path),
                                     present_modules=None, strict=False)
    assert gt is not None, [p.render() for p in problems]
    assert 12 <= len(gt.queries) <= 16
    for query in gt.queries:
        assert any(g == 3 for g in query.grades.values()), query.id
        for fact in query.gold_facts:
            assert fact[0].isupper() and fact.endswith(".") and len(fact.split()) >= 5, fact
