"""Hermetic runs (issue 20): a number moves only when the pull request moves it.

What is evaluated is defined once for both sides (git's tracked files; never the tool's own
output folders, ground truth or options file), NeuralMind's ``NEURALMIND_*`` variables are
pinned, what can still move a number is recorded and compared, and the project name is the
repository's. The matrix at the end runs the real model on the sample project in surroundings
that must not move any per-question value.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from evaluator.checkout_files import project_name
from evaluator.core.comparability import host_note, settings_differences
from evaluator.git_repo import GitRepo
from evaluator.host import host_class
from evaluator.model import ENV
from evaluator.neuralmind_index import PINS, ignored_variables, model_env
from evaluator.snapshot import OUTPUT_MARKER, checkout_files, is_output_folder
from tests.conftest import git, make_repo
from tests.factories import make_results
from tests.integration.test_robustness import FAST, IDENTITY


def commit_all(repo: Path, message: str) -> str:
    git(repo, *IDENTITY, "add", "-A")
    git(repo, *IDENTITY, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def values(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every per-question value but the latency: metrics (faithfulness and tokens among
    them), the facts found and missed, the ranked modules."""
    return {q["id"]: {k: v for k, v in q.items() if k != "latency_ms"} for q in doc["queries"]}


def moved(reference: dict[str, Any], other: dict[str, Any]) -> list[str]:
    a, b = values(reference), values(other)
    return [f"{qid}: {a.get(qid)} -> {b.get(qid)}" for qid in sorted(set(a) | set(b))
            if a.get(qid) != b.get(qid)]


def snapshot_files(cache: Path) -> set[str]:
    (tree,) = [p for p in (cache / "snapshots").glob("*/*") if p.is_dir()]
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()
            and p.relative_to(tree).parts[0] not in (".neuralmind", ".neuralmind.yaml")}


# ----------------------------------------------------------------- 1. what is evaluated


def test_untracked_files_are_left_out_listed_and_warned_about_in_ci(tmp_path, cli):
    repo = make_repo(tmp_path / "repo", {".gitignore": "build/\n"})
    (repo / "scratch.py").write_text("def scratch():\n    return 'only here'\n")
    (repo / "notes").mkdir()
    (repo / "notes" / "todo.md").write_text("- refund the invoices\n")
    (repo / "build").mkdir()
    (repo / "build" / "gen.py").write_text("x = 1\n")  # ignored: neither evaluated nor listed
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--output-dir", str(out), *FAST,
              env={"GITHUB_ACTIONS": "true"})
    assert run.code == 1, run.stderr
    sentence = ("2 untracked file(s) were not evaluated: notes/todo.md, scratch.py — git add "
                "them to include them")
    assert f"warning: {sentence}" in run.stderr
    assert f"::warning title=untracked files::{sentence}" in run.stdout
    doc = run.results(out)
    assert doc["run"]["untracked"] == ["notes/todo.md", "scratch.py"]
    tracked = git(repo, "ls-files").split()
    assert doc["run"]["index"]["files"] == len(tracked) - 1  # the ground truth is not
    assert f"> ⚠️ {sentence}." in (out / "report.md").read_text()
    snapshot = snapshot_files(tmp_path / "cache")
    assert "scratch.py" not in snapshot and "retrieval_queries.json" not in snapshot
    # Added to git, the file is evaluated; nothing is listed any more.
    git(repo, "add", "scratch.py", "notes/todo.md")
    again = cli("evaluate", str(repo), "--output-dir", str(out), *FAST)
    assert again.results(out)["run"]["untracked"] == []
    assert again.results(out)["run"]["index"]["files"] == len(tracked) + 1
    assert "were not evaluated" not in again.stderr


def test_outside_git_every_file_but_the_tools_own_is_evaluated(tmp_path, cli):
    plain = tmp_path / "plain"
    shutil.copytree(make_repo(tmp_path / "repo"), plain, ignore=shutil.ignore_patterns(".git"))
    (plain / "scratch.py").write_text("def scratch():\n    return 1\n")
    run = cli("evaluate", str(plain), "--output-dir", str(tmp_path / "out"), "--backend",
              "in_memory")
    assert "not a git checkout: every file under it" in run.stderr
    doc = run.results(tmp_path / "out")
    assert doc["run"]["untracked"] == []
    assert "scratch.py" in snapshot_files(tmp_path / "cache")


def test_an_output_folder_is_marked_and_never_evaluated(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    reference = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "ref"), *FAST)
    assert (tmp_path / "ref" / OUTPUT_MARKER).is_file()
    for folder in ("reports/eval", "out"):  # a marked folder and an older unmarked one
        shutil.copytree(tmp_path / "ref", repo / folder)
    (repo / "out" / OUTPUT_MARKER).unlink()
    # Committed, so the tracked-files rule alone would evaluate them; also outside git.
    commit_all(repo, "commit the outputs of an earlier run")
    plain = tmp_path / "plain" / "repo"  # the same name: it is NeuralMind's project name
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    for i, root in enumerate((repo, plain)):
        cache, out = tmp_path / f"cache-{i}", tmp_path / f"o-{i}"
        run = cli("evaluate", str(root), "--output-dir", str(out), "--cache-dir", str(cache),
                  *FAST)
        assert moved(reference.results(tmp_path / "ref"), run.results(out)) == [], root
        assert not {f for f in snapshot_files(cache)
                    if f.startswith(("out/", "reports/eval/"))}, root
        assert run.results(out)["run"]["untracked"] == []


def test_older_output_folders_are_recognised_only_by_the_tools_files():
    assert is_output_folder({"results.json", "report.md"})
    assert is_output_folder({"results.json", "report.md", "qrels.trec", "run.trec",
                             "baseline-results.json", "run.base.trec"})
    assert is_output_folder({"qrels.trec", "run.trec"})
    assert is_output_folder({"results.part-1-of-3.json", "baseline-results.part-1-of-3.json"})
    assert is_output_folder({OUTPUT_MARKER, "anything.py"})
    # A folder of the project that happens to hold such a file is not an output folder.
    assert not is_output_folder({"results.json", "report.md", "analysis.py"})
    assert not is_output_folder({"results.json"})
    assert not is_output_folder({"report.md", "README.md"})


def test_ground_truth_and_options_file_are_left_out_of_both_sides(tmp_path, cli):
    repo = make_repo(tmp_path / "repo", {".retrieval-eval.yml": "k: [1, 5]\n"})
    tracked = set(git(repo, "ls-files").split())
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nMore.\n")
    commit_all(repo, "head")
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--baseline", "ref:HEAD~1", "--output-dir", str(out),
              *FAST)
    assert run.code == 1, run.stderr
    head = run.results(out)["run"]["index"]["files"]
    base = json.loads((out / "baseline-results.json").read_text())["run"]["index"]["files"]
    assert head == base == len(tracked) - 2
    snapshot = snapshot_files(tmp_path / "cache")
    assert not snapshot & {"retrieval_queries.json", ".retrieval-eval.yml"}
    # Files listed outside the tree are not looked for inside it.
    files = checkout_files(repo, exclude_files=[tmp_path / "retrieval_queries.json"])
    assert "retrieval_queries.json" in files


# ------------------------------------------------------- 2. pinned, recorded, compared


def test_neuralmind_sees_only_the_pins_and_the_model_folder(tmp_path, monkeypatch):
    """Every class of variable: the synapse switch, a retrieval knob, an unrelated one holding
    a secret, the model folder; all restored afterwards."""
    outside = {"NEURALMIND_SYNAPSE_INJECT": "0", "NEURALMIND_CODE_BOOST": "9",
               "NEURALMIND_AUDIT_KEY": "s3cret", ENV: "/elsewhere"}
    for name, value in outside.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("NEURALMIND_ORT_THREADS", raising=False)
    with model_env(tmp_path):
        inside = {k: v for k, v in os.environ.items() if k.startswith("NEURALMIND_")}
    assert inside == {**PINS, ENV: str(tmp_path)}
    assert PINS == {"NEURALMIND_SYNAPSE_INJECT": "1", "NEURALMIND_ORT_THREADS": "1"}
    assert {k: v for k, v in os.environ.items() if k.startswith("NEURALMIND_")} == outside
    with model_env(None):
        assert ENV not in os.environ
    assert os.environ[ENV] == "/elsewhere"
    assert ignored_variables(outside) == ("NEURALMIND_AUDIT_KEY", "NEURALMIND_CODE_BOOST",
                                          "NEURALMIND_SYNAPSE_INJECT")


def test_neuralmind_variables_in_the_environment_move_no_number(tmp_path, cli, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    reference = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "ref"), *FAST)
    knobs = {"NEURALMIND_SYNAPSE_INJECT": "0", "NEURALMIND_CONTEXT_BUDGET_TOKENS": "200",
             "NEURALMIND_L3_K": "1", "NEURALMIND_AUDIT_KEY": "s3cret-value"}
    for name, value in knobs.items():  # NeuralMind reads the process environment
        monkeypatch.setenv(name, value)
    run = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "env"), *FAST,
              "--cache-dir", str(tmp_path / "cache-env"), env=knobs)
    doc = run.results(tmp_path / "env")
    assert moved(reference.results(tmp_path / "ref"), doc) == []
    note = ("NEURALMIND_AUDIT_KEY, NEURALMIND_CONTEXT_BUDGET_TOKENS, NEURALMIND_L3_K, "
            "NEURALMIND_SYNAPSE_INJECT in the environment did not apply: the evaluation pins "
            "NeuralMind's settings so that runs compare")
    assert f"warning: {note}" in run.stderr and note in doc["run"]["warnings"]
    assert "s3cret" not in run.stdout + run.stderr + (tmp_path / "env" / "results.json"
                                                      ).read_text()
    assert doc["run"]["neuralmind_pins"] == PINS
    assert doc["run"]["host_class"] == host_class()


def test_onnxruntime_version_and_pins_are_compared_and_the_host_class_noted():
    run = make_results(n=2).run
    run = replace(run, onnxruntime_version="1.32.0", neuralmind_pins=dict(PINS),
                  host_class="x86_64 (avx2 fma avx)")
    assert settings_differences(run, run) == ()
    assert host_note(run, run) is None
    other = replace(run, onnxruntime_version="1.31.1")
    assert [d.message for d in settings_differences(other, run)] == [
        "onnxruntime version: baseline 1.31.1, head 1.32.0"]
    unpinned = replace(run, neuralmind_pins={})  # results from before the pins
    assert [d.message for d in settings_differences(unpinned, run)] == [
        "NeuralMind settings: baseline not recorded, head NEURALMIND_ORT_THREADS=1, "
        "NEURALMIND_SYNAPSE_INJECT=1"]
    elsewhere = replace(run, host_class="x86_64 (avx512f avx2 fma avx)")
    assert settings_differences(elsewhere, run) == ()  # a note, not a refusal
    note = host_note(elsewhere, run)
    assert note is not None and "x86_64 (avx512f avx2 fma avx)" in note
    assert "this run: x86_64 (avx2 fma avx)" in note


def test_a_file_baseline_from_another_host_class_gets_a_note(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    first = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "a"), *FAST)
    doc = first.results(tmp_path / "a")
    doc["run"]["host_class"] = "aarch64 (asimd)"
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(doc))
    run = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "b"), *FAST,
              "--baseline", f"file:{baseline}")
    assert run.code == 1, run.stderr
    report = (tmp_path / "b" / "report.md").read_text()
    assert "The baseline was measured on another host class (aarch64 (asimd); this run: " \
        f"{host_class()})" in report


def test_the_host_class_names_the_floating_point_features(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx avx2 fma avx512f bmi2\n")
    assert host_class(cpuinfo, "x86_64") == "x86_64 (avx512f avx2 fma avx)"
    cpuinfo.write_text("processor\t: 0\nFeatures\t: fp asimd evtstrm\n")
    assert host_class(cpuinfo, "aarch64") == "aarch64 (asimd)"
    assert host_class(tmp_path / "absent", "arm64") == "arm64 (features unknown)"


# ------------------------------------------------------------------- 3. project name


def test_the_project_name_is_the_repositorys(tmp_path):
    repo = make_repo(tmp_path / "my-service")
    git_ = GitRepo({"PATH": os.environ["PATH"]})
    assert project_name(repo, {}, git_) == "my-service"
    assert project_name(repo / "billing", {}, git_) == "my-service"  # a subfolder
    assert project_name(repo, {"GITHUB_REPOSITORY": "acme/payments"}, git_) == "payments"
    assert project_name(tmp_path, {}, git_) == tmp_path.name  # not a repository
    for hostile in ("acme/..", "acme/a b", "acme/$(x)", "acme/" + "x" * 200):
        assert project_name(repo, {"GITHUB_REPOSITORY": hostile}, git_) == "project"


def test_the_snapshot_folder_neuralmind_indexes_carries_the_project_name(tmp_path, cli):
    repo = make_repo(tmp_path / "my-service")
    run = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "o"), *FAST)
    assert run.code == 1, run.stderr
    trees = [p.name for p in (tmp_path / "cache" / "snapshots").glob("*/*") if p.is_dir()]
    assert trees == ["my-service"]


# --------------------------------------------------------- 4. the reproducibility matrix


@pytest.mark.model
@pytest.mark.slow
def test_reproducibility_matrix(tmp_path, cli, model_dir, monkeypatch):
    """The same commit and ground truth in every surrounding a user can reach: every
    per-question value equals the cold run's, or the failure names the cell."""
    monkeypatch.setenv(ENV, str(model_dir))
    repo = make_repo(tmp_path / "repo")
    gt = tmp_path / "gt.json"
    shutil.move(repo / "retrieval_queries.json", gt)
    older = commit_all(repo, "the ground truth lives outside")
    users = repo / "users" / "crud.py"
    users.write_text(users.read_text() + "\n\ndef count_users(db):\n"
                     "    \"\"\"How many users there are.\"\"\"\n    return len(db)\n")
    commit_all(repo, "count users")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "billing" / "refunds.py").write_text(
        "def refund(invoice):\n    \"\"\"Refund an invoice in full.\"\"\"\n"
        "    return -invoice.total\n")
    commit_all(repo, "refunds, on another branch")
    git(repo, "checkout", "-q", "main")
    n = iter(range(100))

    def run(*args: str, cache: Path | None = None, queries: Path | None = gt,
            env: dict[str, str] | None = None) -> dict[str, Any]:
        out = tmp_path / f"out-{next(n)}"
        argv = ["evaluate", str(repo), "--output-dir", str(out), "--quiet",
                "--no-fail-on-floors", "--cache-dir", str(cache or tmp_path / f"c-{out.name}")]
        result = cli(*argv, *(["--queries", str(queries)] if queries else []), *args, env=env)
        assert result.code == 0, result.stderr
        return result.results(out)

    def at(ref: str, cache: Path) -> None:
        git(repo, "checkout", "-q", ref)
        try:
            run(cache=cache)
        finally:
            git(repo, "checkout", "-q", "main")

    def older_cache() -> dict[str, Any]:
        at(older, tmp_path / "c-older")
        return run(cache=tmp_path / "c-older")

    def branch_cache() -> dict[str, Any]:
        at("other", tmp_path / "c-branch")
        return run(cache=tmp_path / "c-branch")

    def old_outputs() -> dict[str, Any]:
        shutil.copytree(tmp_path / "out-0", repo / "out")  # the cold run's outputs
        (repo / "out" / OUTPUT_MARKER).unlink()  # as before the marker existed
        try:
            return run()
        finally:
            shutil.rmtree(repo / "out")

    def gt_inside() -> dict[str, Any]:
        shutil.copy(gt, repo / "retrieval_queries.json")
        try:
            return run(queries=None)
        finally:
            (repo / "retrieval_queries.json").unlink()

    def reversed_order() -> dict[str, Any]:
        doc = json.loads(gt.read_text())
        doc["queries"].reverse()
        flipped = tmp_path / "reversed.json"
        flipped.write_text(json.dumps(doc))
        return run(cache=tmp_path / "c-cold", queries=flipped)  # compared by id

    cold = run(cache=tmp_path / "c-cold")
    cells: dict[str, Callable[[], dict[str, Any]]] = {
        "warm (same cache)": lambda: run(cache=tmp_path / "c-cold"),
        "cache first built at an older commit": older_cache,
        "cache that has seen another branch": branch_cache,
        "old output folder untracked inside the tree": old_outputs,
        "ground truth inside the tree": gt_inside,
        "questions in reverse order": reversed_order,
        "NEURALMIND_SYNAPSE_INJECT=0 in the environment":
            lambda: run(env={"NEURALMIND_SYNAPSE_INJECT": "0"}),
    }
    failures = {}
    for cell, make in cells.items():
        if cell.startswith("NEURALMIND"):
            monkeypatch.setenv("NEURALMIND_SYNAPSE_INJECT", "0")
        changed = moved(cold, make())
        monkeypatch.delenv("NEURALMIND_SYNAPSE_INJECT", raising=False)
        if changed:
            failures[cell] = changed[:3]
    assert failures == {}, "values moved in: " + json.dumps(failures, indent=1)


def test_a_history_trend_from_another_host_class_gets_a_note():
    from evaluator.core import history
    from evaluator.render import render
    from evaluator.report_views import Extras
    from tests.factories import view_of

    head = make_results(n=3)
    head = replace(head, run=replace(head.run, commit="f" * 40, host_class="x86_64 (avx2)"))
    h = history.History()
    for i, host in enumerate(("x86_64 (avx2)", "x86_64 (avx512f avx2)", None)):
        h = history.append(h, history.Entry(f"{i + 10:07x}", "2026-01-01", 3,
                                            {"ndcg@5": 0.5 + i / 10}, host_class=host))
    recorded = history.entry_for(head)
    assert recorded is not None and recorded.host_class == "x86_64 (avx2)"
    h = history.append(h, recorded)
    assert history.parse(history.dumps(h), "h.json") == h  # written and read back
    note = ("2 of these commits were measured on another host class than this run "
            "(x86_64 (avx2)), or recorded none: 000000b, 000000c; their values can differ "
            "in about the fourth decimal.")
    assert history.host_classes_note(h, history.trend(h, "ndcg@5", 10), "x86_64 (avx2)") \
        == note
    assert f"> {note}" in render(view_of(head, extras=Extras(history=h, history_count=10)))
    same = history.History(tuple(replace(e, host_class="x86_64 (avx2)") for e in h.entries))
    assert history.host_classes_note(same, history.trend(same, "ndcg@5", 10),
                                     "x86_64 (avx2)") is None
    bad = history.dumps(h).replace('"x86_64 (avx2)"', '"<script>"', 1)
    with pytest.raises(history.HistoryError, match="host_class"):
        history.parse(bad, "h.json")


def test_an_output_folder_is_recognised_alike_in_git_and_in_an_export(tmp_path):
    """The head (git's list, read from the disk) and a base export (a walk) apply one rule:
    a folder's files decide, not its subfolders."""
    repo = make_repo(tmp_path / "repo", {"old/results.json": "{}", "old/report.md": "# r\n",
                                         "old/sub/notes.py": "x = 1\n"})
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    assert checkout_files(repo) == checkout_files(plain, use_git=False)
    assert not [f for f in checkout_files(repo) if f.startswith("old/")]
