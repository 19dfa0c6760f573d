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
from tests.factories import example_answer


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
