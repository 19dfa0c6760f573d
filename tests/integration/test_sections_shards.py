"""Sections, shards and merge through the CLI, on a real three-package git repository.

The repository (tests/monorepo_tree.py) holds NeuralMind's sample project, requests and
markupsafe, each a section with its own ground truth. Every evaluation uses the
deterministic ``in_memory`` backend except the one real-model case. "Equal" means equal in
everything a results file says except wall-clock figures: ``run.timings``,
``run.started_at``, whether the index came from the cache, and each query's latency.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaluator.core.results import SECTIONS_SCHEMA_VERSION
from evaluator.core.results_reader import from_dict
from evaluator.model import ENV
from tests.monorepo_tree import SECTIONS, git, make_monorepo, options_yaml

FAST = ("--backend", "in_memory", "--quiet")


def view(path: Path) -> dict[str, Any]:
    """A results file without its wall-clock figures (see the module doc)."""
    data = json.loads(path.read_text())
    base = (data.get("report") or {}).get("baseline") or {}
    bodies = (data, *data.get("sections", {}).values(), *([base] if base else []),
              *base.get("sections", {}).values())
    for body in bodies:
        body["run"] = {k: v for k, v in body["run"].items() if k not in ("timings",
                                                                         "started_at")}
        body["run"].get("index", {}).pop("cached", None)
        for query in body.get("queries", []):
            query.pop("latency_ms", None)
    return dict(data)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Named like the fake GitHub repository: the project name NeuralMind indexes is the
    # repository's (GITHUB_REPOSITORY in the action, the folder's name for `whole`).
    root = tmp_path_factory.mktemp("mono") / "widgets"
    make_monorepo(root)
    return root


@pytest.fixture(scope="module")
def whole(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The unsharded run's output folder (one evaluation for the whole module)."""
    from tests.conftest import run_main

    out = tmp_path_factory.mktemp("whole")
    run = run_main("evaluate", str(repo), "--output-dir", str(out),
                   "--cache-dir", str(out / "cache"), *FAST)
    assert run.code == 1, run.stderr  # requests misses its floors
    return out


def shard_all(cli, repo: Path, parts: Path, total: int, *extra: str) -> list[Any]:
    runs = []
    for index in range(1, total + 1):
        run = cli("evaluate", str(repo), "--shard", f"{index}/{total}", "--output-dir",
                  str(parts), "--cache-dir", str(parts.parent / f"cache-{index}"), *FAST,
                  *extra)
        assert run.code == 0, run.stderr  # a part is never a verdict
        runs.append(run)
    return runs


def test_every_section_is_evaluated_and_pooled(whole: Path, repo: Path):
    doc = json.loads((whole / "results.json").read_text())
    assert doc["schema_version"] == SECTIONS_SCHEMA_VERSION
    assert list(doc["sections"]) == list(SECTIONS)
    results = from_dict(doc, "results.json")
    assert results.overall.n == 19 + 4 + 2
    for name, (path, _queries) in SECTIONS.items():
        section = results.sections[name]
        assert section.run.root == path
        assert section.run.commit == git(repo, "rev-parse", "HEAD").strip()
        assert {m for q in section.queries for m in q.ranked_modules} <= {
            p.relative_to(repo / path).as_posix() for p in (repo / path).rglob("*")}
    # requests misses the default floors, markupsafe meets them: each gates only itself.
    assert not results.sections["requests"].passed
    assert results.sections["markupsafe"].passed
    assert not results.passed
    assert all(v.scope.startswith("section ") for v in results.violations)
    report = (whole / "report.md").read_text()
    assert "### By section" in report
    assert "| markupsafe | ✅ pass | 2 |" in report
    assert "| requests | ❌ fail | 4 |" in report
    assert "<details><summary>❌ Section requests (packages/requests/src/requests)" in report


@pytest.mark.parametrize("total", [1, 2, 3, 4])
def test_merged_sections_equal_the_unsharded_run(cli, repo, whole, tmp_path, total):
    parts = tmp_path / "parts"
    shard_all(cli, repo, parts, total)
    names = sorted(p.name for p in parts.glob("*.json"))
    assert names == [f"results.part-{i}-of-{total}.json" for i in range(1, total + 1)]
    out = tmp_path / "merged"
    run = cli("merge", str(parts), "--output-dir", str(out), "--quiet")
    assert run.code == 1, run.stderr  # the merged verdict: requests fails
    assert view(out / "results.json") == view(whole / "results.json")
    strip = [line for line in (whole / "report.md").read_text().splitlines()
             if "retrieval-eval 0" not in line]
    assert [line for line in (out / "report.md").read_text().splitlines()
            if "retrieval-eval 0" not in line] == strip


def test_a_section_shard_builds_only_its_sections(cli, repo, tmp_path):
    parts = tmp_path / "parts"
    shard_all(cli, repo, parts, 3)
    held = {}
    for path in sorted(parts.glob("*.json")):
        doc = json.loads(path.read_text())
        held[doc["shard"]["index"]] = list(doc["sections"])
        assert doc["floors"]["passed"] is None
    assert sorted(n for names in held.values() for n in names) == sorted(SECTIONS)
    assert all(len(names) == 1 for names in held.values())
    # Each job's cache holds the snapshot of its own section only.
    for index in held:
        snapshots = list((tmp_path / f"cache-{index}").glob("snapshots/*"))
        assert len(snapshots) == 1, (index, snapshots)


def test_one_section_by_name(cli, repo, tmp_path):
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--section", "markupsafe", "--output-dir", str(out),
              *FAST)
    assert run.code == 0, run.stderr
    doc = json.loads((out / "results.json").read_text())
    assert list(doc["sections"]) == ["markupsafe"]
    bad = cli("evaluate", str(repo), "--section", "web", *FAST)
    assert bad.code == 2
    assert "no such section; declared: sample, requests, markupsafe" in bad.stderr


def test_a_section_floor_gates_only_that_section(cli, tmp_path):
    repo = tmp_path / "repo"
    make_monorepo(repo, ("sample", "markupsafe"), options=options_yaml(
        ("sample", "markupsafe"), extra="floors: {}\nshape-floors: {}\nzero-miss: false\n",
        section_extra={"markupsafe": "floors: {ndcg@5: 1.01}"}))
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stderr
    results = from_dict(json.loads((out / "results.json").read_text()), "r")
    assert results.sections["sample"].passed
    assert [v.message for v in results.violations] == [
        f"section markupsafe: overall: ndcg@5 = "
        f"{results.sections['markupsafe'].overall.metrics['ndcg@5']:.4f}, floor ndcg@5 >= 1.01"]


def test_merged_questions_equal_the_unsharded_run(cli, repo, tmp_path):
    """Without sections a shard asks its share of the questions (the whole index each)."""
    root, queries = repo / SECTIONS["sample"][0], repo / SECTIONS["sample"][1]
    common = ("--queries", str(queries), *FAST)
    whole = tmp_path / "whole"
    assert cli("evaluate", str(root), "--output-dir", str(whole), *common).code == 1
    parts = tmp_path / "parts"
    sizes = []
    for index in (1, 2, 3):
        run = cli("evaluate", str(root), "--shard", f"{index}/3", "--output-dir", str(parts),
                  *common)
        assert run.code == 0, run.stderr
        doc = json.loads((parts / f"results.part-{index}-of-3.json").read_text())
        sizes.append(len(doc["queries"]))
    assert sorted(sizes) == [6, 6, 7]
    out = tmp_path / "merged"
    assert cli("merge", *map(str, sorted(parts.glob("*.json"))), "--output-dir", str(out),
               "--quiet").code == 1
    assert view(out / "results.json") == view(whole / "results.json")


def test_shards_with_a_baseline_merge_into_the_same_comparison(cli, tmp_path):
    repo = tmp_path / "repo"
    make_monorepo(repo, ("sample", "markupsafe"))
    target = repo / SECTIONS["markupsafe"][0] / "_native.py"
    target.write_text(target.read_text() + "\n# a change\n")
    git(repo, "commit", "-qam", "the head's change")
    whole = tmp_path / "whole"
    assert cli("evaluate", str(repo), "--baseline", "ref:HEAD~1", "--output-dir", str(whole),
               *FAST).code == 1
    parts = tmp_path / "parts"
    shard_all(cli, repo, parts, 2, "--baseline", "ref:HEAD~1")
    assert len(list(parts.glob("baseline-results.part-*.json"))) == 2
    out = tmp_path / "merged"
    assert cli("merge", str(parts), "--output-dir", str(out), "--quiet").code == 1
    assert view(out / "results.json") == view(whole / "results.json")
    assert view(out / "baseline-results.json") == view(whole / "baseline-results.json")
    report = (out / "report.md").read_text()
    assert "compared with HEAD\\~1" in report  # every ~ escaped; GitHub shows HEAD~1
    assert "Worse / better" in report
    assert [line for line in report.splitlines() if "retrieval-eval 0" not in line] == [
        line for line in (whole / "report.md").read_text().splitlines()
        if "retrieval-eval 0" not in line]


# ----------------------------------------------------------------------------- refusals


@pytest.fixture(scope="module")
def three_parts(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import run_main

    parts = tmp_path_factory.mktemp("three") / "parts"
    for index in (1, 2, 3):
        run = run_main("evaluate", str(repo), "--shard", f"{index}/3", "--output-dir",
                       str(parts), "--cache-dir", str(parts.parent / f"c{index}"), *FAST)
        assert run.code == 0, run.stderr
    return parts


def _part(parts: Path, index: int) -> str:
    return str(parts / f"results.part-{index}-of-3.json")


def test_a_missing_part_is_named(cli, three_parts, tmp_path):
    run = cli("merge", _part(three_parts, 1), _part(three_parts, 3), "--output-dir",
              str(tmp_path / "m"))
    assert run.code == 2
    assert "shard 2/3 is missing" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (tmp_path / "m" / "results.json").exists()


def test_a_duplicate_part_is_named(cli, three_parts, tmp_path):
    copy = tmp_path / "copy-of-1.json"
    copy.write_text(Path(_part(three_parts, 1)).read_text())
    run = cli("merge", str(three_parts), str(copy), "--output-dir", str(tmp_path / "m"))
    assert run.code == 2
    assert f"shard 1/3 is given more than once: {_part(three_parts, 1)}, {copy}" in run.stderr


def test_a_part_of_another_commit_is_named(cli, three_parts, tmp_path):
    doc = json.loads(Path(_part(three_parts, 2)).read_text())
    doc["run"]["commit"] = "f" * 40
    other = tmp_path / "other.json"
    other.write_text(json.dumps(doc))
    run = cli("merge", _part(three_parts, 1), str(other), _part(three_parts, 3))
    assert run.code == 2
    assert f"{other}: the commit differs from {_part(three_parts, 1)}'s" in run.stderr


def test_parts_of_other_settings_are_refused(cli, repo, three_parts, tmp_path):
    parts = tmp_path / "k-parts"
    run = cli("evaluate", str(repo), "--shard", "2/3", "--k", "1,5", "--output-dir", str(parts),
              *FAST)
    assert run.code == 0, run.stderr
    run = cli("merge", _part(three_parts, 1), str(parts / "results.part-2-of-3.json"),
              _part(three_parts, 3))
    assert run.code == 2
    assert "the settings hash differs" in run.stderr


def test_whole_results_and_empty_folders_are_refused(cli, whole, tmp_path):
    run = cli("merge", str(whole / "results.json"))
    assert run.code == 2
    assert "not a part of a sharded evaluation" in run.stderr
    empty = tmp_path / "empty"
    empty.mkdir()
    run = cli("merge", str(empty))
    assert run.code == 2
    assert "holds no parts" in run.stderr
    run = cli("merge", str(tmp_path / "nope.json"))
    assert run.code == 2
    assert "does not exist" in run.stderr


@pytest.mark.parametrize(("args", "needle"), [
    (("--shard", "3/2"), "must be I/N with 1 <= I <= N"),
    (("--shard", "x"), "must be I/N"),
])
def test_bad_shard_flags(cli, repo, args, needle):
    run = cli("evaluate", str(repo), *args, *FAST)
    assert run.code == 2
    assert needle in run.stderr


def test_bad_sections_are_refused_with_every_problem(cli, tmp_path):
    repo = tmp_path / "repo"
    make_monorepo(repo, ("markupsafe",), options=(
        "sections:\n  a:\n    path: /abs\n  b:\n    path: packages\n"
        "  c:\n    path: packages/markupsafe\n    colour: red\n"))
    run = cli("evaluate", str(repo), *FAST)
    assert run.code == 2
    for needle in ("sections.a.path", "sections 'b' (packages) and 'c' (packages/markupsafe) "
                   "overlap", "unknown key(s) colour"):
        assert needle in run.stderr


@pytest.mark.model
def test_real_model_merged_equals_unsharded(cli, tmp_path, model_dir, monkeypatch):
    """The default backend and the real MiniLM model: two shards merge into the same result."""
    monkeypatch.setenv(ENV, str(model_dir))
    repo = tmp_path / "repo"
    make_monorepo(repo, ("markupsafe", "requests"))
    whole = tmp_path / "whole"
    run = cli("evaluate", str(repo), "--output-dir", str(whole), "--quiet")
    assert run.code in (0, 1) and "error" not in run.stderr, run.stderr
    doc = json.loads((whole / "results.json").read_text())
    assert doc["run"]["backend"] == "turbovec"
    parts = tmp_path / "parts"
    for index in (1, 2):
        part = cli("evaluate", str(repo), "--shard", f"{index}/2", "--output-dir", str(parts),
                   "--cache-dir", str(tmp_path / f"cache-{index}"), "--quiet")
        assert part.code == 0, part.stderr
    out = tmp_path / "merged"
    assert cli("merge", str(parts), "--output-dir", str(out), "--quiet").code == run.code
    assert view(out / "results.json") == view(whole / "results.json")


# ----------------------------------------------------------------------------- the action


def test_action_shard_jobs_and_merge_mode_post_one_comment(cli, repo, whole, tmp_path,
                                                           server):
    """The matrix as the example workflow runs it: `shard` inputs write parts into the
    workspace, then `mode: merge` merges them and posts the single sticky comment."""
    from tests.fake_github import PR, REPO
    from tests.integration.test_action_entry import action_env, outputs

    event = tmp_path / "event.json"
    event.write_text(json.dumps({"number": PR, "pull_request": {"number": PR}}))
    github = {"GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
              "GITHUB_EVENT_PATH": str(event), "GITHUB_API_URL": server.base_url,
              "GITHUB_TOKEN": "ghs_sharded-token"}
    for index in (1, 2):
        env = action_env(repo, tmp_path / f"job-{index}", shard=f"{index}/2",
                         output_dir=".retrieval-eval/parts",
                         cache_dir=f".retrieval-eval/cache-{index}") | github
        (tmp_path / f"job-{index}").mkdir()
        run = cli("action", env=env)
        assert run.code == 0, run.stderr
        assert outputs(tmp_path / f"job-{index}")["results-path"] == (
            f".retrieval-eval/parts/results.part-{index}-of-2.json")
    assert not server.writes()  # the shard jobs never comment
    (tmp_path / "merge").mkdir()
    env = action_env(repo, tmp_path / "merge", mode="merge", parts=".retrieval-eval/parts",
                     comment="true") | github
    run = cli("action", env=env)
    assert run.code == 1, run.stderr  # requests misses its floors: the check fails
    out = outputs(tmp_path / "merge")
    assert out["passed"] == "false"
    merged = repo / out["results-path"]
    assert view(merged) == view(whole / "results.json")
    comments = [c for c in server.on_issue(PR) if "By section" in c["body"]]
    assert len(comments) == 1 and [r.method for r in server.writes()] == ["POST"]
    body = comments[0]["body"]
    for name in SECTIONS:
        assert f"Section {name} (" in body
    assert f"{float(out['ndcg']):.3f}" in body


def test_a_part_is_not_a_results_file_for_comment_or_baseline(cli, repo, three_parts,
                                                              tmp_path):
    part = _part(three_parts, 1)
    run = cli("comment", "--results", part, "--pr", "1")
    assert run.code == 2
    assert "one part of a sharded evaluation (shard 1/3)" in run.stderr
    assert "merge the parts first" in run.stderr
    run = cli("evaluate", str(repo), "--baseline", f"file:{part}", *FAST)
    assert run.code == 2
    assert "one part of a sharded evaluation" in run.stderr


def test_validate_checks_every_section_against_its_own_folder(cli, tmp_path):
    repo = tmp_path / "repo"
    make_monorepo(repo, ("requests", "markupsafe"), options=options_yaml(
        ("requests", "markupsafe"), section_extra={"markupsafe": "include: ['__init__.py']"}))
    run = cli("validate", str(repo))
    # markupsafe grades _native.py, which its universe (include) leaves out.
    assert run.code == 2, run.stdout + run.stderr
    assert "packages/requests/retrieval_queries.json: 4 queries, 0 error(s)" in run.stdout
    assert "module '_native.py' does not exist in the indexed root" in run.stdout
    (repo / ".retrieval-eval.yml").write_text(options_yaml(("requests", "markupsafe")))
    assert cli("validate", str(repo)).code == 0


def test_a_section_indexes_only_its_universe(cli, tmp_path):
    repo = tmp_path / "repo"
    make_monorepo(repo, ("requests",), options=options_yaml(
        ("requests",), section_extra={"requests": "exclude: ['help.py', '**/*.typed']"}))
    out = tmp_path / "out"
    assert cli("evaluate", str(repo), "--output-dir", str(out), *FAST).code in (0, 1)
    section = from_dict(json.loads((out / "results.json").read_text()), "r").sections["requests"]
    folder = repo / SECTIONS["requests"][0]
    kept = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    kept -= {"help.py", "py.typed"}
    assert section.run.index["files"] == len(kept)
    assert not {m for q in section.queries for m in q.ranked_modules} & {"help.py"}


def test_regression_gates_fail_only_the_section_that_regressed():
    """max-drop is checked per section, like floors: a drop in one section fails it alone
    (a pooled mean could hide it behind the others)."""
    from dataclasses import replace as _replace

    from evaluator.app import compare_with_baseline, gate
    from evaluator.core.floors import FloorPolicy
    from evaluator.core.options import Settings
    from evaluator.core.results import combine_sections, pooled_index
    from tests.factories import make_results

    lenient = FloorPolicy(aggregate=(), per_shape=(), zero_miss=False)

    def sectioned(cli_quality: float):
        sections = {"api": make_results(n=12, seed=1, quality=0.9, policy=lenient),
                    "cli": make_results(n=3, seed=2, quality=cli_quality, policy=lenient)}
        run = _replace(sections["api"].run, index=pooled_index([s.run for s in
                                                                sections.values()]))
        return combine_sections(run, sections)

    base, head = sectioned(0.95), sectioned(0.2)
    settings = Settings().replace(max_drop={"ndcg@5": 0.05})
    comparison = compare_with_baseline(head, base, "base", settings)
    assert comparison is not None and set(comparison.sections) == {"api", "cli"}
    gated = gate(head, base, comparison, settings)
    assert gated.sections["api"].passed
    assert not gated.sections["cli"].passed
    assert [v.scope for v in gated.violations] == ["section cli: regression"]
    assert all(v.kind == "gate" for v in gated.violations)
