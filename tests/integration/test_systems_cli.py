"""``--systems`` and ``--judge-check`` through the command line (deterministic backend)."""

from __future__ import annotations

import json

import pytest

from evaluator.app import load_results
from evaluator.core.judge import judge_id
from evaluator.errors import EXIT_FLOORS, EXIT_INPUT, EXIT_OK
from evaluator.neuralmind_index import example_root


def expected_code(doc: dict) -> int:
    return EXIT_OK if doc["floors"]["passed"] else EXIT_FLOORS


def test_systems_side_by_side_on_the_example(cli, tmp_path):
    out = tmp_path / "out"
    run = cli("evaluate", "--example", "--backend", "in_memory", "--output-dir", str(out),
              "--systems", "neuralmind,bm25,neuralmind:backend=in_memory", "--quiet")
    doc = run.results(out)
    assert run.code == expected_code(doc), run.stderr
    labels = [s["label"] for s in doc["systems"]]
    assert labels == ["neuralmind", "bm25", "neuralmind:backend=in_memory"]
    first, bm25, variant = doc["systems"]
    # The first block is the evaluation itself; the identical configuration scores the same.
    assert [q["metrics"] for q in first["queries"]] == [q["metrics"] for q in doc["queries"]]
    assert [q["metrics"]["ndcg@5"] for q in variant["queries"]] == \
        [q["metrics"]["ndcg@5"] for q in doc["queries"]]
    modules = {p.relative_to(example_root()).as_posix() for p in example_root().rglob("*")
               if p.is_file()}
    assert len(bm25["queries"]) == len(doc["queries"])
    assert all(q["ranked_modules"] and set(q["ranked_modules"]) <= modules
               for q in bm25["queries"])
    assert first["overall"]["metrics"] == doc["overall"]["metrics"]
    assert doc["run"]["timings"]["systems_s"] >= 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "### Systems side by side" in report
    # bm25's five whole files are more than twice NeuralMind's context: not like for like
    assert "| bm25 ≠ |" in report and "**focused**" in report
    # The bundled example always runs the judge self-check, and it separates.
    assert doc["judge_check"]["separation"] >= 0.9
    assert "Judge self-check: the judge separates right from wrong source by" in report
    back = load_results(out / "results.json")
    assert [s.label for s in back.systems] == labels
    assert back.judge_check is not None
    assert back.judge_check.separation == doc["judge_check"]["separation"]


def test_default_run_adds_nothing(cli, sample_repo, tmp_path):
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--quiet")
    doc = run.results(out)
    assert run.code == expected_code(doc)
    assert "systems" not in doc and "judge_check" not in doc
    assert "systems_s" not in doc["run"]["timings"]
    assert "Systems side by side" not in (out / "report.md").read_text(encoding="utf-8")


def test_judge_check_on_a_checkout(cli, sample_repo, tmp_path):
    # The example's facts unanchored: false versions test the judge of plain-string facts
    # (an anchored fact's verdict is its span, whatever its words say).
    queries = sample_repo / "retrieval_queries.json"
    doc = json.loads(queries.read_text(encoding="utf-8"))
    for query in doc["queries"]:
        query["gold_facts"] = [f["fact"] if isinstance(f, dict) else f
                               for f in query["gold_facts"]]
    queries.write_text(json.dumps(doc), encoding="utf-8")
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--judge-check")
    doc = run.results(out)
    assert run.code == expected_code(doc)
    check = doc["judge_check"]
    assert len(check["queries"]) + len(check["skipped"]) == len(doc["queries"])
    assert check["separation"] == check["right_mean"] - check["wrong_mean"]
    assert "judge self-check" in run.stderr
    # beside the separation: false versions of the suite's own facts on the right source,
    # and the contexts the product retrieved (issue 22 item 4)
    total = sum(q["false_versions"] for q in check["queries"])
    assert total >= len(check["queries"])
    assert check["false_credit"] == sum(q["false_credited"] for q in check["queries"]) / total
    faith = [q["metrics"]["faithfulness"] for q in doc["queries"]]
    assert check["retrieved_mean"] == pytest.approx(sum(faith) / len(faith))
    assert "false versions of the facts" in run.stderr
    assert "the retrieved contexts score" in run.stderr


def test_bad_systems_exit_2(cli, sample_repo):
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--systems", "bm25")
    assert run.code == EXIT_INPUT
    assert "first system is the evaluated one" in run.stderr
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--systems",
              "neuralmind,elastic")
    assert run.code == EXIT_INPUT and "unknown system 'elastic'" in run.stderr
    assert "Traceback" not in run.stderr


def test_systems_from_the_options_file(cli, sample_repo, tmp_path):
    (sample_repo / ".retrieval-eval.yml").write_text("systems: neuralmind,bm25\n")
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--quiet")
    doc = run.results(out)
    assert run.code == expected_code(doc)
    assert [s["label"] for s in doc["systems"]] == ["neuralmind", "bm25"]
    assert json.dumps(doc)  # serialisable


def _record_judges(monkeypatch) -> tuple[list, list]:
    """Wrap the judging entry points: the model each context was judged with (``embed``),
    and the model each similarity route was built on (contexts and self-check alike)."""
    from evaluator import judging

    contexts, routes = [], []
    score, similarity = judging.score_context, judging.similarity_of

    def score_context(query, context, **kwargs):
        contexts.append(kwargs.get("embed"))
        return score(query, context, **kwargs)

    def similarity_of(embed):
        routes.append(embed)
        return similarity(embed)

    monkeypatch.setattr(judging, "score_context", score_context)
    monkeypatch.setattr(judging, "similarity_of", similarity_of)
    return contexts, routes


SYSTEMS = ("--systems", "neuralmind,bm25,neuralmind:backend=in_memory", "--judge-check")


def test_a_run_without_the_model_judges_every_system_by_terms(cli, sample_repo, tmp_path,
                                                              monkeypatch):
    contexts, routes = _record_judges(monkeypatch)
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--quiet", *SYSTEMS)
    doc = run.results(out)
    assert run.code == expected_code(doc), run.stderr
    n = len(doc["queries"])
    assert len(contexts) == 3 * n and set(contexts) == {None}  # three systems, no model
    assert routes == []
    assert doc["run"]["judge"] == judge_id(similarity=False)
    assert doc["run"]["model_fingerprint"] is None


@pytest.mark.model
def test_a_run_with_the_model_judges_every_system_with_the_same_one(cli, sample_repo,
                                                                    tmp_path, monkeypatch,
                                                                    model_dir):
    """in_memory + --embed: the run has the model, so NeuralMind, bm25, the in_memory variant
    and the self-check all take the similarity route through one embedder."""
    from evaluator.model import ENV

    monkeypatch.setenv(ENV, str(model_dir))
    contexts, routes = _record_judges(monkeypatch)
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--embed",
              "--output-dir", str(out), "--quiet", *SYSTEMS)
    doc = run.results(out)
    assert run.code == expected_code(doc), run.stderr
    n = len(doc["queries"])
    assert len(contexts) == 3 * n
    assert len({id(e) for e in contexts}) == 1 and contexts[0] is not None
    assert {id(e) for e in routes} == {id(contexts[0])}
    assert len(routes) == 3 * n + 1  # every context, and the self-check
    assert doc["run"]["judge"] == judge_id(similarity=True)
    assert doc["run"]["model_fingerprint"]  # the judge's model is a setting of the run
