"""The module universe wired through the application: evaluate ranks over it and records it,
validate and init use the same one, the options reach it from flags and the options file."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from evaluator import app, authoring_commands
from evaluator.core.options import build_settings
from evaluator.deps import real_deps
from evaluator.errors import ConfigError
from evaluator.neuralmind_index import BuildInfo
from evaluator.settings import settings_for
from evaluator.validation import run_validate
from tests.conftest import make_repo
from tests.factories import example_answer

NOISE = ("README.md", "tests/test_auth.py", "docs/conf.py")


class NoisyIndex:
    """Ranks a README, a test and a docs file first, then the graded modules (best first)."""

    def __init__(self, tree: Path, **_kw: object) -> None:
        self.asked: list[str] = []

    def build(self, *, user_config=None, cache_key=None) -> BuildInfo:
        return BuildInfo("fake", "builtin", 3, 3, 0, "fake", 0.0)

    def ask(self, question):
        """A question of the ground truth: its graded modules after the noise; any other
        (a drafted one): two fixed modules after the noise."""
        self.asked.append(question)
        return example_answer(question, before=NOISE,
                              otherwise=("auth/handlers.py", "users/crud.py"))

    def close(self) -> None:
        pass


def _deps():
    deps = real_deps({}, io.StringIO(), io.StringIO())
    return replace(deps, index_factory=NoisyIndex)


@pytest.fixture
def noisy_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "r", {"tests/test_auth.py": "def test_x():\n    assert 1\n",
                                      "docs/conf.py": "project = 'x'\n"})


def _evaluate(repo: Path, tmp_path: Path, **extra: object):
    settings = settings_for("evaluate", {"path": str(repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "backend": "in_memory", **extra})
    return app.run_evaluate(settings, _deps())


def test_evaluate_ranks_over_the_universe_and_records_it(noisy_repo, tmp_path):
    outcome = _evaluate(noisy_repo, tmp_path)
    results = outcome.results
    for row in results.queries:
        assert not set(row.ranked_modules) & set(NOISE), row.ranked_modules
    # The graded modules come first once the noise is out: a perfect ranking.
    assert results.overall.metrics["hit_rate"] == 1.0
    assert results.overall.metrics["mrr"] == 1.0
    universe = results.run.universe
    assert universe["include"] == [] and "tests/" in universe["exclude"]
    assert universe["modules"] == 13
    assert universe["left_out"] >= 3


def test_scoring_every_file_counts_the_noise(noisy_repo, tmp_path):
    """include ** / exclude nothing: the README, test and docs files take the first ranks."""
    path = noisy_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    every = [*sorted(doc["queries"][0]["relevance_grades"]), *NOISE]
    for q in doc["queries"]:
        q["relevance_grades"] = {m: q["relevance_grades"].get(m, 0) for m in every}
    path.write_text(json.dumps(doc))
    (noisy_repo / ".retrieval-eval.yml").write_text('include: ["**"]\nexclude: []\n')
    outcome = _evaluate(noisy_repo, tmp_path)
    assert outcome.results.queries[0].ranked_modules[:3] == NOISE
    assert outcome.results.overall.metrics["mrr"] < 1.0
    assert outcome.results.run.universe["exclude"] == []


def test_validate_uses_the_same_universe(noisy_repo):
    path = noisy_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    doc["queries"][0]["relevance_grades"]["tests/test_auth.py"] = 2
    path.write_text(json.dumps(doc, indent=2))
    settings = settings_for("validate", {"path": str(noisy_repo)})
    (validation,) = run_validate(settings, _deps())  # one file: no sections
    assert validation.ground_truth is not None
    (problem,) = [p for p in validation.problems if "outside the module universe" in p.message]
    assert "(tests)" in problem.message and problem.line is not None
    (strict,) = run_validate(settings.replace(strict=True), _deps())
    assert strict.ground_truth is None
    # Excluding the auth folder leaves its graded modules out as well.
    (narrowed,) = run_validate(settings_for("validate", {"path": str(noisy_repo),
                                                         "exclude": "default,auth/"}),
                               _deps())
    assert any("auth/handlers.py" in p.message and "excluded by 'auth/'" in p.message
               for p in narrowed.problems)


def test_validate_reads_the_options_file_config_names(noisy_repo, cli):
    """A project whose workflow says `config: ci/eval.yml` validates against that file's
    universe, as the evaluation does."""
    (noisy_repo / "ci").mkdir()
    (noisy_repo / "ci" / "eval.yml").write_text("exclude: [default, auth/]\n")
    plain = cli("validate", str(noisy_repo))
    named = cli("validate", str(noisy_repo), "--config", str(noisy_repo / "ci" / "eval.yml"))
    assert plain.code == 0 and "excluded by 'auth/'" not in plain.stdout + plain.stderr
    assert "excluded by 'auth/'" in named.stdout + named.stderr, named.stdout + named.stderr


def test_init_review_ranks_within_the_universe(noisy_repo, tmp_path):
    settings = settings_for("init", {"path": str(noisy_repo), "cache_dir": str(tmp_path / "c"),
                                     "backend": "in_memory",
                                     "review": str(noisy_repo / "retrieval_queries.json")})
    lines = authoring_commands.run_review(settings, _deps())
    assert not any(n in line for line in lines for n in NOISE)
    # The fake ranks the noise, then the question's graded modules: #1 is its grade-3 module.
    assert lines[1] == "  #1 auth/jwt_utils.py  grade 3"


def test_init_drafts_over_the_universe_with_a_fake_index(noisy_repo, tmp_path):
    (noisy_repo / "retrieval_queries.json").unlink()
    settings = settings_for("init", {"path": str(noisy_repo), "count": "6",
                                     "cache_dir": str(tmp_path / "c"), "backend": "in_memory"})
    drafted = authoring_commands.run_init(settings, _deps())
    rows = drafted.document["queries"]
    assert len(rows) == 6
    assert not set(rows[0]["relevance_grades"]) & set(NOISE)
    assert all(not any(n in r for n in NOISE) for q in rows
               for r in q["review"].get("retrieved", []))
    assert "6 draft question(s) of 6 asked" in drafted.summary


@pytest.mark.parametrize(("layer", "expected"), [
    ({"include": "src/**, lib/"}, ("src/**", "lib/")),
    ({"include": ["src/**"]}, ("src/**",)),
    ({"include": "src/**\nlib/"}, ("src/**", "lib/")),
])
def test_globs_from_flags_and_files(layer, expected):
    assert build_settings([("command line", layer)]).include == expected


@pytest.mark.parametrize(("value", "needle"), [
    ("../x", "'..'"), (3, "list of globs"), ("a\\b", "'/'"),
])
def test_bad_globs_are_refused_with_the_option_named(value, needle):
    with pytest.raises(ConfigError, match="exclude") as err:
        build_settings([("f.yml", {"exclude": value})], file_layer=0)
    assert needle in str(err.value)


def test_options_file_accepts_its_schema_key(tmp_path):
    settings = build_settings([("f.yml", {"$schema": "./options.schema.json", "k": [1, 5]})],
                              file_layer=0)
    assert settings.k == (1, 5)
