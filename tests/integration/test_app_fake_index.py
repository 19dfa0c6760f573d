"""The application layer driven with a fake index: exact outcomes and exit codes."""

from __future__ import annotations

import io
from pathlib import Path

from evaluator import app
from evaluator.cli import _exit_code
from evaluator.deps import real_deps
from evaluator.errors import EXIT_FLOORS, EXIT_OK
from evaluator.neuralmind_index import BuildInfo
from evaluator.settings import settings_for
from tests.factories import example_answer, view_of


class FakeIndex:
    """Returns each query's graded modules, best first (perfect), or nothing (useless)."""

    def __init__(self, tree: Path, *, backend: str, graph_source: str, model: object,
                 perfect: bool) -> None:
        self.perfect = perfect

    def build(self, *, user_config=None, cache_key=None) -> BuildInfo:
        return BuildInfo("fake", "builtin", 3, 3, 0, "fake", 0.0)

    def ask(self, question):
        return example_answer(question, perfect=self.perfect)

    def close(self) -> None:
        pass


def deps_with(perfect: bool):
    from dataclasses import replace

    deps = real_deps({}, io.StringIO(), io.StringIO())
    return replace(deps, index_factory=lambda tree, **kw: FakeIndex(tree, **kw,
                                                                     perfect=perfect))


def test_a_perfect_index_passes_with_exit_0(sample_repo, tmp_path):
    settings = settings_for("evaluate", {"path": str(sample_repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "backend": "in_memory"})
    outcome = app.run_evaluate(settings, deps_with(perfect=True))
    assert outcome.results.overall.metrics["hit_rate"] == 1.0
    assert outcome.passed and outcome.comparison is None
    assert _exit_code(outcome) == EXIT_OK


def test_a_useless_index_misses_the_floors_with_exit_1(sample_repo, tmp_path):
    settings = settings_for("evaluate", {"path": str(sample_repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "backend": "in_memory"})
    outcome = app.run_evaluate(settings, deps_with(perfect=False))
    assert outcome.results.overall.metrics["hit_rate"] == 0.0
    assert not outcome.passed
    assert _exit_code(outcome) == EXIT_FLOORS
    assert _exit_code(app.Outcome(outcome.results, None,
                                  settings.replace(fail_on_floors=False))) == EXIT_OK


class RanksButFindsNoFact(FakeIndex):
    """Ranks every graded module first and hands over no context: no fact can be found
    (faithfulness 0 for any question that has facts)."""

    def ask(self, question):
        from dataclasses import replace

        return replace(super().ask(question), context="", documents=())


def test_retrieval_only_questions_are_scored_for_ranking_and_not_floored_on_facts(
        sample_repo, tmp_path):
    """Issue 24: questions without gold facts pass on ranking alone (the faithfulness floor
    failed them: "FAIL … nDCG@5 1.000"), and the report says why faithfulness is absent."""
    import json
    from dataclasses import replace

    from evaluator import render

    queries = sample_repo / "retrieval_queries.json"
    doc = json.loads(queries.read_text(encoding="utf-8"))
    for query in doc["queries"]:
        query.pop("gold_facts")
    queries.write_text(json.dumps(doc), encoding="utf-8")
    settings = settings_for("evaluate", {"path": str(sample_repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "backend": "in_memory"})
    deps = replace(real_deps({}, io.StringIO(), io.StringIO()),
                   index_factory=lambda tree, **kw: RanksButFindsNoFact(tree, **kw,
                                                                         perfect=True))
    outcome = app.run_evaluate(settings, deps)
    results = outcome.results
    assert results.overall.metrics["ndcg@5"] == 1.0
    assert results.overall.metrics["faithfulness"] is None
    assert all(q.metrics["faithfulness"] is None for q in results.queries)
    assert outcome.passed, [v.message for v in results.violations]
    n = len(doc["queries"])
    report = render.render(view_of(results))
    assert (f"{n} of {n} questions are retrieval-only (no gold facts): faithfulness is "
            "neither computed nor floored for them.") in report


def test_results_hold_each_questions_overlap_and_the_report_has_a_by_overlap_table(
        sample_repo, tmp_path):
    """Issue 24: give-away questions (naming a grade-3 file or symbol) are counted apart."""
    import json

    from evaluator import render
    from evaluator.core.results import to_dict
    from evaluator.core.results_reader import from_dict

    settings = settings_for("evaluate", {"path": str(sample_repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "backend": "in_memory"})
    results = app.run_evaluate(settings, deps_with(perfect=True)).results
    by_id = {q.id: q for q in results.queries}
    assert by_id["identity-01"].overlap.named == ("TokenExpiredError",)
    assert by_id["focused-01"].overlap.names_answer is False
    assert "jwts" not in by_id["focused-01"].overlap.shared
    named = sum(q.overlap.names_answer for q in results.queries)
    assert 0 < named < len(results.queries)
    again = from_dict(json.loads(json.dumps(to_dict(results))), "results.json")
    assert [q.overlap for q in again.queries] == [q.overlap for q in results.queries]
    report = render.render(view_of(results))
    assert "### By overlap" in report
    assert f"| name their answer | {named} | 1.000 |" in report
    assert f"| do not name it | {len(results.queries) - named} | 1.000 |" in report
