"""``retrieval-eval judge``: every judge column of given contexts, as JSON, exit codes."""

from __future__ import annotations

import json

import pytest

from evaluator.cli import EXAMPLE_QUERIES
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.core.judge import judge_id
from evaluator.errors import EXIT_INPUT, EXIT_OK
from evaluator.judging import JUDGE_COLUMNS, judge_contexts, minilm_embedder
from evaluator.model import ENV
from evaluator.neuralmind_index import example_root


def example():
    gt, _ = load_ground_truth(EXAMPLE_QUERIES.read_text(encoding="utf-8"), str(EXAMPLE_QUERIES),
                              present_modules=None, strict=False)
    return gt


def unanchored(tmp_path):
    """The example's ground truth with every fact a plain string (its facts are anchored,
    and an anchored fact never takes the terms or similarity routes): its path and itself."""
    doc = json.loads(EXAMPLE_QUERIES.read_text(encoding="utf-8"))
    for query in doc["queries"]:
        query["gold_facts"] = [f["fact"] if isinstance(f, dict) else f
                               for f in query["gold_facts"]]
    path = tmp_path / "unanchored.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    gt, _ = load_ground_truth(path.read_text(encoding="utf-8"), str(path))
    return path, gt


def contexts_file(tmp_path, data):
    path = tmp_path / "contexts.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return str(path)


def test_judge_writes_every_column_to_stdout(cli, tmp_path):
    gt = example()
    first, second = gt.queries[0], gt.queries[1]
    text = (example_root() / first.modules_with_grade(3)[0]).read_text(encoding="utf-8")
    run = cli("judge", "--queries", str(EXAMPLE_QUERIES), "--contexts",
              contexts_file(tmp_path, {first.id: text, second.id: ""}))
    assert run.code == EXIT_OK, run.stderr
    report = json.loads(run.stdout)
    assert list(report["queries"]) == [first.id, second.id]  # ground-truth order
    for column in JUDGE_COLUMNS:
        assert column in report["queries"][first.id]
    assert report["queries"][second.id]["faithfulness"] == 0.0  # empty context
    assert report["queries"][first.id]["faithfulness"] > 0.0
    assert report["queries"][first.id]["context_recall"] is None  # no --embed


def test_judge_is_the_evaluators_code_path(cli, tmp_path):
    """Without the model (``--backend in_memory``) the judge is the terms rule alone."""
    gt = example()
    contexts = {q.id: f"context for {q.question}" for q in gt.queries[:4]}
    run = cli("judge", "--queries", str(EXAMPLE_QUERIES), "--contexts",
              contexts_file(tmp_path, contexts), "--backend", "in_memory")
    assert run.code == EXIT_OK, run.stderr
    expected = {r.query_id: r.to_json() for r in judge_contexts(gt, contexts)}
    report = json.loads(run.stdout)
    assert report["queries"] == expected
    assert report["judge"] == judge_id(similarity=False)


@pytest.mark.model
def test_judge_with_the_model_is_the_evaluators_code_path(cli, tmp_path, model_dir,
                                                          monkeypatch):
    """By default (the model found) the headline judge takes its similarity route, exactly
    as an evaluation does."""
    monkeypatch.setenv(ENV, str(model_dir))
    queries, gt = unanchored(tmp_path)
    contexts = {q.id: (example_root() / q.modules_with_grade(3)[0]).read_text(encoding="utf-8")
                for q in gt.queries[2:4]}
    assert gt.queries[11].id == "cross-05"  # "new user and return the created record"
    contexts["cross-05"] = "# builds a user record for the signup flow"  # key terms, in order
    run = cli("judge", "--queries", str(queries), "--contexts",
              contexts_file(tmp_path, contexts))
    assert run.code == EXIT_OK, run.stderr
    report = json.loads(run.stdout)
    assert report["judge"] == judge_id(similarity=True)
    expected = judge_contexts(gt, contexts, embed=minilm_embedder(model_dir))
    assert report["queries"] == {r.query_id: r.to_json() for r in expected}
    asked = [s for r in expected for s in r.fact_similarity if s is not None]
    assert asked  # the route was taken for some prose fact the terms missed


def test_judge_output_file(cli, tmp_path):
    gt = example()
    out = tmp_path / "judged.json"
    run = cli("judge", "--queries", str(EXAMPLE_QUERIES), "--contexts",
              contexts_file(tmp_path, {gt.queries[0].id: "x"}), "--output", str(out))
    assert run.code == EXIT_OK and run.stdout == ""
    assert json.loads(out.read_text(encoding="utf-8"))["n"] == 1


def test_judge_bad_input_exits_2_with_one_message(cli, tmp_path):
    run = cli("judge", "--queries", str(EXAMPLE_QUERIES), "--contexts",
              contexts_file(tmp_path, {"no-such-id": "x"}))
    assert run.code == EXIT_INPUT
    assert "'no-such-id'" in run.stderr and "Traceback" not in run.stderr
    run = cli("judge", "--queries", str(tmp_path / "missing.json"), "--contexts",
              contexts_file(tmp_path, {}))
    assert run.code == EXIT_INPUT and "does not exist" in run.stderr


def test_judge_without_a_model_says_it_used_the_terms_rule(cli, tmp_path, monkeypatch):
    """No model folder anywhere: the report names the terms judge and stderr says why."""
    from evaluator import model, neuralmind_index

    monkeypatch.setattr(model, "assemble_packaged", lambda cache_dir: None)
    monkeypatch.setattr(neuralmind_index, "cached_model_dir", lambda: None)
    gt = example()
    run = cli("judge", "--queries", str(EXAMPLE_QUERIES), "--contexts",
              contexts_file(tmp_path, {gt.queries[0].id: "x"}))
    assert run.code == EXIT_OK, run.stderr
    assert json.loads(run.stdout)["judge"] == judge_id(similarity=False)
    assert "terms rule alone" in run.stderr and "Traceback" not in run.stderr


def test_judge_with_a_model_folder_that_cannot_load_is_one_clear_message(cli, tmp_path,
                                                                        monkeypatch):
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "model.onnx").write_bytes(b"not an onnx model")
    (broken / "tokenizer.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv(ENV, str(broken))
    gt = example()
    run = cli("judge", "--queries", str(EXAMPLE_QUERIES), "--contexts",
              contexts_file(tmp_path, {gt.queries[0].id: "x"}))
    assert run.code == EXIT_INPUT, run.stderr
    assert "the faithfulness judge needs the embedding model" in run.stderr
    assert str(broken) in run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
