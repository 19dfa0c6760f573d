"""``--budget N|neuralmind`` through the command line on a real git checkout: every
system's context is cut before it is judged, and counted alike."""

from __future__ import annotations

import pytest

from evaluator.app import load_results
from evaluator.core.budget import estimate_tokens
from evaluator.errors import EXIT_FLOORS, EXIT_INPUT, EXIT_OK


def tokens_of(block: dict) -> dict[str, float]:
    return {q["id"]: q["metrics"]["context_tokens"] for q in block["queries"]}


def test_every_system_at_neuralminds_own_count(cli, sample_repo, tmp_path):
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", "neuralmind,bm25,neuralmind:synapses=off", "--budget",
              "neuralmind", "--quiet")
    doc = run.results(out)
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    assert doc["run"]["budget"] == "neuralmind"
    first, bm25, off = doc["systems"]
    limits = tokens_of(first)
    assert all(v > 0 for v in limits.values())
    for block in (bm25, off):
        mine = tokens_of(block)
        assert all(mine[q] <= limits[q] for q in limits), block["label"]
    # bm25's five whole files are far more than NeuralMind's context: cut to it, filled
    assert all(tokens_of(bm25)[q] >= limits[q] - 1 for q in limits)
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "cut to the evaluated index's own context size" in report
    # the frontier: each system at 1/4 to 4x the budget, kept in results.json
    back = load_results(out / "results.json")
    assert [p.scale for p in back.systems[1].frontier] == [0.25, 0.5, 1.0, 2.0, 4.0]
    at_budget = back.systems[1].frontier[2]
    assert at_budget.tokens == pytest.approx(sum(tokens_of(bm25).values()) / len(limits))
    assert "xychart-beta" in report and "#### Quality and context size" in report


def test_a_fixed_budget_cuts_every_system_the_evaluated_one_too(cli, sample_repo, tmp_path):
    out = tmp_path / "out"
    plain = tmp_path / "plain"
    common = ("evaluate", str(sample_repo), "--backend", "in_memory", "--systems",
              "neuralmind,bm25", "--quiet")
    run = cli(*common, "--output-dir", str(out), "--budget", "60")
    doc = run.results(out)
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    for block in doc["systems"]:
        assert all(0 < v <= 60 for v in tokens_of(block).values()), block["label"]
    cli(*common, "--output-dir", str(plain))
    before = run.results(plain)
    # without a budget bm25 hands over far more, and NeuralMind is counted by its own count
    assert min(tokens_of(before["systems"][1]).values()) > 60
    assert before["run"]["budget"] is None
    # the rankings do not move: only the contexts are cut
    assert [q["ranked_modules"] for q in before["queries"]] == \
        [q["ranked_modules"] for q in doc["queries"]]


def test_a_bad_budget_exits_2(cli, sample_repo):
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--budget", "lots")
    assert run.code == EXIT_INPUT
    assert "must be a number of tokens (at least 1) or neuralmind" in run.stderr
    assert "Traceback" not in run.stderr
    assert estimate_tokens("x" * 8) == 2
