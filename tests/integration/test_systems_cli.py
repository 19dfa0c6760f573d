"""``--systems`` and ``--judge-check`` through the command line (deterministic backend)."""

from __future__ import annotations

import json

from evaluator.app import load_results
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
    assert "| bm25 |" in report and "**focused**" in report
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
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--judge-check")
    doc = run.results(out)
    assert run.code == expected_code(doc)
    check = doc["judge_check"]
    assert len(check["queries"]) + len(check["skipped"]) == len(doc["queries"])
    assert check["separation"] == check["right_mean"] - check["wrong_mean"]
    assert "judge self-check" in run.stderr


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
