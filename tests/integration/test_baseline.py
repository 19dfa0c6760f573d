"""Baselines end to end: real temporary git repositories with real commits, through the CLI.

Covers ``ref:``, ``auto`` (pull-request event and local default branch), ``file:``, renamed
and deleted files, shallow clones, bad baselines, regression gates, the index cache, and
that a head built after its base (in the same snapshot) equals a fresh build. Every baseline run
checks that the user's checkout is left exactly as it was.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from evaluator.core.compare import check_gates, compare_results
from evaluator.core.results import SCHEMA_VERSION, Results, to_dict
from evaluator.core.results_reader import from_dict
from evaluator.core.scoring import aggregate, by_shape
from evaluator.git_repo import export_commit
from evaluator.model import ENV
from tests.conftest import git, make_repo
from tests.factories import make_results

FAST = ("--backend", "in_memory", "--quiet")
IDENTITY = ("-c", "user.email=t@example.com", "-c", "user.name=t")
LABELS = {"recall@5": "Recall@5", "precision@5": "Precision@5", "mrr": "MRR@5",
          "ndcg@5": "nDCG@5", "hit_rate": "Hit rate@5", "faithfulness": "Faithfulness"}
NO_FLOORS = "floors: {}\nshape-floors: {}\nzero-miss: false\n"


# ----------------------------------------------------------------------------- helpers


def commit_all(repo: Path, message: str) -> str:
    git(repo, *IDENTITY, "add", "-A")
    git(repo, *IDENTITY, "commit", "-q", "-m", message)
    return sha(repo)


def sha(repo: Path, ref: str = "HEAD") -> str:
    return git(repo, "rev-parse", ref).strip()


def checkout_state(repo: Path) -> tuple[str, ...]:
    """Everything a baseline run must leave alone: files, HEAD, branch, stash, worktrees."""
    return (git(repo, "status", "--porcelain", "--ignored"), sha(repo),
            git(repo, "branch", "--show-current"), git(repo, "stash", "list"),
            git(repo, "worktree", "list", "--porcelain"),
            git(repo, "for-each-ref", "--format=%(refname) %(objectname)"))


def evaluate(cli, repo: Path, *args: str, env: dict[str, str] | None = None):
    """Run ``evaluate repo ...`` and assert the checkout was not modified."""
    before = checkout_state(repo)
    run = cli("evaluate", str(repo), *args, env=env)
    assert checkout_state(repo) == before, "the baseline run modified the checkout"
    assert not (repo / ".neuralmind").exists()
    assert "Traceback" not in run.stdout + run.stderr
    return run


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def queries_doc(repo: Path) -> dict:
    return load(repo / "retrieval_queries.json")


def write_queries(repo: Path, doc: dict) -> None:
    (repo / "retrieval_queries.json").write_text(json.dumps(doc, indent=2) + "\n")


def rename_module(doc: dict, old: str, new: str) -> None:
    for query in doc["queries"]:
        grades = query["relevance_grades"]
        grades[new] = grades.pop(old)


def drop_module(doc: dict, module: str) -> None:
    for query in doc["queries"]:
        del query["relevance_grades"][module]


def report_row(report: str, label: str) -> list[str]:
    line = next(x for x in report.splitlines() if x.startswith(f"| {label} |"))
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def shown_delta(cell: str) -> float:
    if "±0" in cell or not cell:  # a blank Δ: nothing moved at three decimals
        return 0.0
    match = re.search(r"[+−-]\d+\.\d+", cell)
    assert match, cell
    return float(match.group().replace("−", "-"))


def per_query(doc: dict, metric: str) -> dict[str, float]:
    return {q["id"]: q["metrics"][metric] for q in doc["queries"]}


def rewrite(results: Results, change) -> Results:
    """``results`` with each query's metrics replaced by ``change(query)`` and the overall
    and per-shape aggregates recomputed from them (a consistent results document)."""
    rows = tuple(replace(q, metrics=change(q)) for q in results.queries)
    return replace(results, queries=rows, overall=aggregate(rows),
                   shapes=by_shape(rows, list(results.shapes)))


def write_results(results: Results, path: Path) -> Path:
    path.write_text(json.dumps(to_dict(results), indent=2))
    return path


def move_jwt_code(repo: Path) -> None:
    """Move the JWT code into ``auth/tokens.py``; ``auth/jwt_utils.py`` re-exports it."""
    source = (repo / "auth" / "jwt_utils.py").read_text()
    (repo / "auth" / "tokens.py").write_text(source)
    (repo / "auth" / "jwt_utils.py").write_text(
        '"""Compatibility re-exports; the code moved to auth.tokens."""\n\n'
        "from auth.tokens import decode_token, encode_token  # noqa: F401\n")
    doc = queries_doc(repo)
    for query in doc["queries"]:
        grades = query["relevance_grades"]
        grades["auth/tokens.py"] = grades["auth/jwt_utils.py"]
        grades["auth/jwt_utils.py"] = min(grades["auth/jwt_utils.py"], 1)
    write_queries(repo, doc)


@pytest.fixture
def two_commits(tmp_path: Path) -> Path:
    """The sample project, then a head commit that moves the JWT code to another file."""
    repo = make_repo(tmp_path / "repo")
    move_jwt_code(repo)
    commit_all(repo, "move the JWT code to auth/tokens.py")
    return repo


@pytest.fixture
def branched(tmp_path: Path) -> tuple[Path, str]:
    """main → feature branch with one commit; main then moves on. Returns (repo, branch point)."""
    repo = make_repo(tmp_path / "repo")
    point = sha(repo)
    git(repo, "checkout", "-q", "-b", "feature")
    move_jwt_code(repo)
    commit_all(repo, "feature: move the JWT code")
    git(repo, "checkout", "-q", "main")
    crud = repo / "users" / "crud.py"
    crud.write_text(crud.read_text() + "\n\ndef count_users():\n    return 0\n")
    commit_all(repo, "main moves on")
    git(repo, "checkout", "-q", "feature")
    return repo, point


def pr_event(tmp_path: Path, base: str, head: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7, "base": {"sha": base},
                                                  "head": {"sha": head}}}))
    return {"GITHUB_EVENT_PATH": str(event), "GITHUB_EVENT_NAME": "pull_request"}


def assert_clean_failure(run, *needles: str) -> None:
    assert run.code == 2, (run.code, run.stdout, run.stderr)
    assert "Traceback" not in run.stdout + run.stderr
    for needle in needles:
        assert needle in run.stderr, run.stderr


# ----------------------------------------------------------------------------- ref:


def test_ref_baseline_evaluates_both_commits_and_reports_consistent_deltas(two_commits, cli,
                                                                           tmp_path):
    repo, out = two_commits, tmp_path / "out"
    run = evaluate(cli, repo, "--baseline", "ref:HEAD~1", "--output-dir", str(out),
                   "--backend", "in_memory")
    assert run.code == 1, run.stderr
    head, base = load(out / "results.json"), load(out / "baseline-results.json")
    assert head["run"]["commit"] == sha(repo)
    assert base["run"]["commit"] == sha(repo, "HEAD~1")
    assert base["run"]["ref"] == "HEAD~1"
    # Both sides are scored against the head's ground truth.
    assert base["run"]["queries_sha256"] == head["run"]["queries_sha256"]
    assert [q["id"] for q in base["queries"]] == [q["id"] for q in head["queries"]]
    head_files = set(git(repo, "ls-files").split())
    base_files = set(git(repo, "ls-tree", "-r", "--name-only", "HEAD~1").split())
    for row in head["queries"]:
        assert set(row["ranked_modules"]) <= head_files, row["id"]
    for row in base["queries"]:
        assert set(row["ranked_modules"]) <= base_files, row["id"]
        assert "auth/tokens.py" not in row["ranked_modules"]
    assert any("auth/tokens.py" in q["ranked_modules"] for q in head["queries"])

    assert f"vs HEAD~1 ({sha(repo, 'HEAD~1')[:12]})" in run.stdout.splitlines()[0]
    report = (out / "report.md").read_text()
    assert "| Base | Δ |" in report
    for metric, label in LABELS.items():
        b, h = base["overall"]["metrics"][metric], head["overall"]["metrics"][metric]
        _label, value, base_shown, delta, *_floor = report_row(report, label)
        assert value == f"{h:.3f}", (metric, value)
        assert base_shown == f"{b:.3f}", (metric, base_shown)
        assert shown_delta(delta) == pytest.approx(h - b, abs=5e-4 + 1e-9), (metric, delta)
        if abs(h - b) >= 1e-3:
            assert ("better" if h > b else "worse") in delta, (metric, delta)
    # The primary metric's paired delta is the mean of the per-query deltas of the two files.
    b_ndcg, h_ndcg = per_query(base, "ndcg@5"), per_query(head, "ndcg@5")
    paired = sum(h_ndcg[i] - b_ndcg[i] for i in h_ndcg) / len(h_ndcg)
    match = re.search(r"nDCG@5: delta ([+-]\d+\.\d+)", run.stdout)
    assert match, run.stdout
    assert float(match.group(1)) == pytest.approx(paired, abs=5e-4 + 1e-9)
    # Newly failing / passing queries are exactly the hit-rate flips between the two files.
    b_hit, h_hit = per_query(base, "hit_rate"), per_query(head, "hit_rate")
    failing = {i for i in h_hit if b_hit[i] == 1.0 and h_hit[i] == 0.0}
    passing = {i for i in h_hit if b_hit[i] == 0.0 and h_hit[i] == 1.0}
    assert set(re.findall(r"newly failing: (\S+)", run.stdout)) == failing
    assert set(re.findall(r"newly passing: (\S+)", run.stdout)) == passing
    assert "Both sides use the head's ground truth" in report


def test_ref_baseline_with_identical_commits_has_zero_deltas(sample_repo, cli, tmp_path):
    (sample_repo / "NOTES.txt").write_text("nothing the index reads differently\n")
    commit_all(sample_repo, "a second commit")
    (sample_repo / "NOTES.txt").unlink()
    commit_all(sample_repo, "and back")
    out = tmp_path / "out"
    run = evaluate(cli, sample_repo, "--baseline", "ref:HEAD~2", "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stderr
    head, base = load(out / "results.json"), load(out / "baseline-results.json")
    assert [q["ranked_modules"] for q in head["queries"]] == [
        q["ranked_modules"] for q in base["queries"]]
    assert head["overall"]["metrics"] == base["overall"]["metrics"]
    assert "newly failing" not in run.stdout and "newly passing" not in run.stdout


# ----------------------------------------------------------------------------- auto


def test_auto_with_a_pull_request_event_evaluates_the_merge_base(branched, cli, tmp_path):
    repo, point = branched
    main_tip, feature_tip = sha(repo, "main"), sha(repo, "feature")
    assert git(repo, "merge-base", "main", "feature").strip() == point != main_tip
    out = tmp_path / "out"
    run = evaluate(cli, repo, "--baseline", "auto", "--output-dir", str(out), *FAST,
                   env=pr_event(tmp_path, main_tip, feature_tip))
    assert run.code == 1, run.stderr
    assert load(out / "baseline-results.json")["run"]["commit"] == point
    assert load(out / "results.json")["run"]["commit"] == feature_tip
    assert f"the merge base {point[:12]} of the PR's base and head" in run.stdout


def test_auto_without_an_event_uses_the_merge_base_with_main(branched, cli, tmp_path):
    repo, point = branched
    out = tmp_path / "out"
    run = evaluate(cli, repo, "--baseline", "auto", "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stderr
    assert load(out / "baseline-results.json")["run"]["commit"] == point
    assert load(out / "baseline-results.json")["run"]["ref"] == "main"
    assert f"the merge base {point[:12]} with main" in run.stdout


def test_auto_without_an_event_or_a_default_branch_is_a_clear_error(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    git(repo, "branch", "-m", "trunk")
    run = evaluate(cli, repo, "--baseline", "auto", *FAST)
    assert_clean_failure(run, "baseline auto needs a pull-request event or a default branch",
                         "ref:<git-ref>")


# ----------------------------------------------------------------------------- renames


def test_renamed_and_deleted_files_base_side_uses_the_heads_ground_truth(sample_repo, cli,
                                                                         tmp_path):
    repo = sample_repo
    git(repo, "mv", "billing/invoices.py", "billing/invoicing.py")
    git(repo, "rm", "-q", "users/__init__.py", "db/__init__.py")
    doc = queries_doc(repo)
    rename_module(doc, "billing/invoices.py", "billing/invoicing.py")
    drop_module(doc, "users/__init__.py")
    drop_module(doc, "db/__init__.py")
    write_queries(repo, doc)
    commit_all(repo, "rename invoices, delete two package markers")
    out = tmp_path / "out"
    run = evaluate(cli, repo, "--baseline", "ref:HEAD~1", "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stdout + run.stderr
    assert "error" not in run.stderr.lower()
    head, base = load(out / "results.json"), load(out / "baseline-results.json")
    graded = {q["id"] for q in doc["queries"]
              if q["relevance_grades"]["billing/invoicing.py"] >= 1}
    assert graded
    for row in base["queries"]:
        # The base is graded by the head's ground truth: the module that exists only in the
        # head is expected there too, and the base simply cannot retrieve it.
        assert "billing/invoicing.py" not in row["ranked_modules"]
        if row["id"] in graded:
            assert "billing/invoicing.py" in [m for ms in row["expected"].values() for m in ms]
    assert any("billing/invoices.py" in q["ranked_modules"] for q in base["queries"])
    for row in head["queries"]:
        assert not {"billing/invoices.py", "users/__init__.py", "db/__init__.py"} & set(
            row["ranked_modules"])
    assert any("billing/invoicing.py" in q["ranked_modules"] for q in head["queries"])
    focused = next(q["id"] for q in doc["queries"]
                   if q["relevance_grades"]["billing/invoicing.py"] == 3
                   and q["shape"] == "focused")
    base_row = next(q for q in base["queries"] if q["id"] == focused)
    assert {"module": "billing/invoicing.py", "rank": None} in base_row["diagnostics"][
        "missed_top"]


def test_a_typo_in_the_heads_ground_truth_is_still_caught(sample_repo, cli):
    git(sample_repo, "mv", "billing/invoices.py", "billing/invoicing.py")
    commit_all(sample_repo, "rename without updating the ground truth")
    run = evaluate(cli, sample_repo, "--baseline", "ref:HEAD~1", *FAST)
    assert_clean_failure(run, "'billing/invoices.py' does not exist")


@pytest.mark.parametrize("graph_source", ["builtin", "graphify"])
def test_in_memory_head_with_a_baseline_equals_the_head_alone(two_commits, cli, tmp_path,
                                                              graph_source):
    """The head's results do not depend on the base indexed before it in the same snapshot."""
    if graph_source == "graphify" and not (Path(sys.executable).with_name("graphify").is_file()
                                           or shutil.which("graphify")):
        pytest.skip("the graphify command (package graphifyy) is not installed")
    flags = (*FAST, "--graph-source", graph_source)
    out = tmp_path / "with-base"
    run = evaluate(cli, two_commits, "--baseline", "ref:HEAD~1", "--output-dir", str(out), *flags)
    # The deterministic backend misses a floor with the builtin graph, meets them with graphify's.
    expected = {"builtin": 1, "graphify": 0}[graph_source]
    assert run.code == expected, run.stderr
    alone = cli("evaluate", str(two_commits), "--output-dir", str(tmp_path / "alone"), *flags,
                "--cache-dir", str(tmp_path / "other-cache"))
    assert alone.code == expected, alone.stderr
    _same_results(load(out / "results.json"), load(tmp_path / "alone" / "results.json"))


def test_the_base_is_what_the_commit_holds_despite_export_attributes_and_links(tmp_path, cli):
    """``export-ignore`` / ``export-subst`` (honoured by ``git archive``) do not change the
    base, and a symlink pointing outside the tree does not break the export."""
    repo = make_repo(tmp_path / "repo", {
        ".gitattributes": "billing/** export-ignore\nREADME.md export-subst\n"})
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\n$Format:%H$\n")
    (repo / "etc-link").symlink_to("/etc/hostname")
    (repo / "auth" / "up-link").symlink_to("../../outside")
    base = commit_all(repo, "attributes and links")
    (repo / "CHANGELOG.md").write_text("# Changes\n")
    commit_all(repo, "head")
    out = tmp_path / "out"
    run = evaluate(cli, repo, "--baseline", "ref:HEAD~1", "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stdout + run.stderr
    regular = [line.split("\t", 1)[1] for line in
               git(repo, "ls-tree", "-r", base).splitlines() if not line.startswith("120000")]
    base_doc, head_doc = load(out / "baseline-results.json"), load(out / "results.json")
    # Both sides leave the ground truth out (it is committed in the repository).
    assert "retrieval_queries.json" in regular
    assert base_doc["run"]["index"]["files"] == len(regular) - 1
    assert head_doc["run"]["index"]["files"] == len(regular)
    assert any(m.startswith("billing/") for q in base_doc["queries"] for m in q["ranked_modules"])
    exported = export_commit(repo, base, tmp_path / "export")
    assert sorted(exported) == sorted(regular)
    assert (tmp_path / "export" / "README.md").read_text().endswith("\n$Format:%H$\n")


def repo_with_project_below(tmp_path):
    """A repository whose first commit has only other files; the second adds ``project/``."""
    repo = make_repo(tmp_path / "repo", {"other/notes.txt": "not part of the project\n"},
                     sample=False)
    project = repo / "project"
    make_repo(tmp_path / "tmp-sample")
    shutil.copytree(tmp_path / "tmp-sample", project, ignore=shutil.ignore_patterns(".git"))
    commit_all(repo, "add the project")
    return repo, project


def test_a_subfolder_that_did_not_exist_at_the_base(tmp_path, cli):
    _repo, project = repo_with_project_below(tmp_path)
    run = evaluate(cli, project, "--baseline", "ref:HEAD~1", *FAST)
    assert_clean_failure(run, "has no files to index")


# ----------------------------------------------------------------------------- shallow


def test_shallow_clone_explains_fetch_depth(two_commits, cli, tmp_path):
    clone = tmp_path / "clone"
    subprocess_git = ["clone", "-q", "--depth", "1", f"file://{two_commits}", str(clone)]
    git(tmp_path, *subprocess_git)
    assert git(clone, "rev-parse", "--is-shallow-repository").strip() == "true"
    run = evaluate(cli, clone, "--baseline", "ref:HEAD~1", *FAST)
    assert_clean_failure(run, "unknown git ref 'HEAD~1'", "fetch-depth: 0")


# ----------------------------------------------------------------------------- bad input


def test_unknown_ref(sample_repo, cli):
    run = evaluate(cli, sample_repo, "--baseline", "ref:no-such-branch", *FAST)
    assert_clean_failure(run, "unknown git ref 'no-such-branch'")


def test_baseline_file_that_is_not_json(sample_repo, cli, tmp_path):
    bad = tmp_path / "baseline.json"
    bad.write_text("{not json")
    run = evaluate(cli, sample_repo, "--baseline", f"file:{bad}", *FAST)
    assert_clean_failure(run, "is not JSON")


def test_baseline_file_of_another_schema_version(sample_repo, cli, tmp_path):
    out = tmp_path / "out"
    assert cli("evaluate", str(sample_repo), "--output-dir", str(out), *FAST).code == 1
    doc = load(out / "results.json")
    doc["schema_version"] = SCHEMA_VERSION + 98
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    run = evaluate(cli, sample_repo, "--baseline", f"file:{old}", *FAST)
    assert_clean_failure(run, f"schema_version {SCHEMA_VERSION + 98}",
                         f"schema_version {SCHEMA_VERSION}")


def test_baseline_file_from_another_ground_truth_pairs_the_common_queries(sample_repo, cli,
                                                                          tmp_path):
    out = tmp_path / "first"
    assert cli("evaluate", str(sample_repo), "--output-dir", str(out), *FAST).code == 1
    doc = load(out / "results.json")
    doc["queries"] = [q for q in doc["queries"] if q["id"] != "cross-07"]
    doc["queries"][0]["id"] = "retired-01"
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    out2 = tmp_path / "second"
    run = evaluate(cli, sample_repo, "--baseline", f"file:{old}", "--output-dir", str(out2),
                   *FAST)
    assert run.code == 1, run.stderr
    report = (out2 / "report.md").read_text()
    assert re.search(r"added questions \(no baseline\): (`focused-01`, `cross-07`|`cross-07`, "
                     r"`focused-01`)", report), report
    assert "removed questions (only in the baseline): `retired-01`" in report
    assert "deltas are paired over the 17 queries on both sides; 2 added, 1 removed" in report
    assert "paired over the 17 queries" in run.stdout


def test_base_commit_without_the_ground_truth_file(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    queries = (repo / "retrieval_queries.json").read_text()
    git(repo, "rm", "-q", "retrieval_queries.json")
    commit_all(repo, "no ground truth yet")
    (repo / "retrieval_queries.json").write_text(queries)
    commit_all(repo, "add the ground truth")
    out = tmp_path / "out"
    run = evaluate(cli, repo, "--baseline", "ref:HEAD~1", "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stderr
    note = ("Both sides use the head's ground truth (retrieval_queries.json does not exist "
            "at the base commit), so added queries are compared fairly.")
    report = (out / "report.md").read_text()
    assert note in report
    assert note in run.stdout
    assert report.count("Both sides use the head's ground truth") == 1  # one note, not two
    assert load(out / "baseline-results.json")["run"]["commit"] == sha(repo, "HEAD~1")
    assert len(load(out / "baseline-results.json")["queries"]) == 19


def test_ground_truth_in_a_subfolder_checkout(tmp_path, cli):
    """PATH below the top of the repository: the base is the same subfolder at the base."""
    repo, project = repo_with_project_below(tmp_path)
    crud = project / "users" / "crud.py"
    crud.write_text(crud.read_text() + "\n# a comment\n")
    commit_all(repo, "touch crud")
    out = tmp_path / "out"
    run = evaluate(cli, project, "--baseline", "ref:HEAD~1", "--output-dir", str(out), *FAST)
    assert run.code == 1, run.stderr
    assert "does not exist at the base commit" not in run.stdout
    base = load(out / "baseline-results.json")
    assert base["run"]["index"]["files"] == load(out / "results.json")["run"]["index"]["files"]
    for row in base["queries"]:
        assert not any(m.startswith(("project/", "other/")) for m in row["ranked_modules"])


def test_stale_file_baseline_is_reported(sample_repo, cli, tmp_path):
    first = tmp_path / "first"
    assert cli("evaluate", str(sample_repo), "--output-dir", str(first), *FAST).code == 1
    evaluated_at = sha(sample_repo)
    (sample_repo / "CHANGELOG.md").write_text("# Changes\n")
    head = commit_all(sample_repo, "a later commit")
    baseline = first / "results.json"
    stale = evaluate(cli, sample_repo, "--baseline", f"file:{baseline}", "--output-dir",
                     str(tmp_path / "stale"), *FAST, env=pr_event(tmp_path, head, head))
    assert stale.code == 1, stale.stderr
    message = (f"The baseline file is stale: it was evaluated at {evaluated_at[:12]}, not at "
               f"the PR's base {head[:12]}.")
    assert message in (tmp_path / "stale" / "report.md").read_text()
    fresh = evaluate(cli, sample_repo, "--baseline", f"file:{baseline}", "--output-dir",
                     str(tmp_path / "fresh"), *FAST,
                     env=pr_event(tmp_path, evaluated_at, head))
    assert fresh.code == 1, fresh.stderr
    assert "The baseline file is stale" not in (tmp_path / "fresh" / "report.md").read_text()
    assert f"vs file {baseline}" in fresh.stdout


# ----------------------------------------------------------------------------- checkout


def test_a_dirty_checkout_is_left_exactly_as_it_was(two_commits, cli, tmp_path):
    repo = two_commits
    (repo / ".gitignore").write_text("build/\n*.log\n")
    commit_all(repo, "ignore build output")
    (repo / "build").mkdir()
    (repo / "build" / "artifact.txt").write_text("ignored\n")
    (repo / "debug.log").write_text("ignored too\n")
    (repo / "scratch.py").write_text("def scratch():\n    return 'untracked'\n")
    crud = repo / "users" / "crud.py"
    crud.write_text(crud.read_text() + "\n# uncommitted edit\n")
    git(repo, "add", "scratch.py")
    (repo / "scratch.py").write_text("def scratch():\n    return 'staged, then edited'\n")
    contents = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in
                p.parts}
    status = checkout_state(repo)
    assert "!! build/" in status[0] and "AM scratch.py" in status[0]
    for spec in ("ref:HEAD~1", "ref:HEAD~2", "auto"):
        run = evaluate(cli, repo, "--baseline", spec, "--output-dir", str(tmp_path / "o"),
                       *FAST)
        assert run.code == 1, (spec, run.stderr)
    assert checkout_state(repo) == status
    assert {p: p.read_bytes() for p in repo.rglob("*") if p.is_file() and ".git" not in
            p.parts} == contents
    # The head side is git's tracked files with their working-tree content (the uncommitted
    # edit, the staged new file), but not the ground truth, which is never evaluated.
    head = load(tmp_path / "o" / "results.json")
    tracked = git(repo, "ls-files", "--cached").split()
    assert "scratch.py" in tracked and "retrieval_queries.json" in tracked
    assert head["run"]["index"]["files"] == len(tracked) - 1


# ----------------------------------------------------------------------------- gates


@pytest.fixture
def real_run(sample_repo, cli, tmp_path) -> tuple[Path, Results]:
    """One real in-memory run of the sample project (no floors) and its results."""
    out = tmp_path / "real"
    run = cli("evaluate", str(sample_repo), "--output-dir", str(out), *FAST,
              "--no-fail-on-floors")
    assert run.code == 0, run.stderr
    return sample_repo, from_dict(load(out / "results.json"), "results.json")


def gate_run(cli, repo: Path, tmp_path: Path, baseline: Results, options: str, name: str):
    config = tmp_path / f"{name}.yml"
    config.write_text(NO_FLOORS + options)
    path = write_results(baseline, tmp_path / f"{name}-baseline.json")
    return evaluate(cli, repo, "--baseline", f"file:{path}", "--config", str(config), *FAST)


def raised(results: Results, amount: float, *, only: str | None = None) -> Results:
    def change(q):
        value = q.metrics["ndcg@5"]
        if (only is not None and q.id != only) or value + amount > 1.0:
            return q.metrics
        return {**q.metrics, "ndcg@5": value + amount}
    return rewrite(results, change)


def test_max_drop_fails_when_the_head_is_worse_than_the_baseline(real_run, cli, tmp_path):
    repo, head = real_run
    better = raised(head, 0.1)
    base_value, head_value = better.overall.metrics["ndcg@5"], head.overall.metrics["ndcg@5"]
    assert base_value > head_value
    run = gate_run(cli, repo, tmp_path, better, "max-drop: {ndcg@5: 0.0}\n", "drop")
    assert run.code == 1, run.stdout + run.stderr
    line = next(x for x in run.stdout.splitlines() if "regression: ndcg@5" in x)
    assert f"ndcg@5 = {head_value:.4f}" in line
    assert f"from the baseline {base_value:.4f}" in line
    assert "may worsen by at most 0" in line
    assert f"worsened by {base_value - head_value:.4f}" in line
    # A drop within the allowance passes.
    allowed = gate_run(cli, repo, tmp_path, better,
                       f"max-drop: {{ndcg@5: {base_value - head_value + 0.001:.4f}}}\n",
                       "allowed")
    assert allowed.code == 0, allowed.stdout


def test_max_drop_significant_only_ignores_a_tiny_or_noisy_drop(real_run, cli, tmp_path):
    repo, head = real_run
    gate = "max-drop: {ndcg@5: 0.0}\n"
    tiny = raised(head, 0.005)  # consistent, but below the minimum effect
    assert gate_run(cli, repo, tmp_path, tiny, gate, "tiny").code == 1
    run = gate_run(cli, repo, tmp_path, tiny, gate + "max-drop-significant-only: true\n",
                   "tiny-sig")
    assert run.code == 0, run.stdout
    weakest = min(head.queries, key=lambda q: q.metrics["ndcg@5"] or 0.0)
    noisy = raised(head, 0.9, only=weakest.id)  # one query: large mean drop, p = 1
    assert gate_run(cli, repo, tmp_path, noisy, gate, "noisy").code == 1
    assert gate_run(cli, repo, tmp_path, noisy, gate + "max-drop-significant-only: true\n",
                    "noisy-sig").code == 0
    real = raised(head, 0.1)  # a large drop on most queries
    run = gate_run(cli, repo, tmp_path, real, gate + "max-drop-significant-only: true\n",
                   "real-sig")
    assert run.code == 1, run.stdout
    assert re.search(r"regression: ndcg@5 = .*significant: p = 0\.0\d\d", run.stdout)


def test_fail_on_new_failures(real_run, cli, tmp_path):
    repo, head = real_run
    missed = [q.id for q in head.queries if q.metrics["hit_rate"] == 0.0]
    assert missed, "the sample run should have a query without a hit in the top 5"
    target = missed[0]
    had_hit = rewrite(head, lambda q: {**q.metrics, "hit_rate": 1.0} if q.id == target
                      else q.metrics)
    run = gate_run(cli, repo, tmp_path, had_hit, "fail-on-new-failures: true\n", "newfail")
    assert run.code == 1, run.stdout
    assert f"query {target}: hit_rate = 0.0000, gate newly failing" in run.stdout
    assert f"newly failing: {target}" in run.stdout
    off = gate_run(cli, repo, tmp_path, had_hit, "fail-on-new-failures: false\n", "newfail-off")
    assert off.code == 0, off.stdout
    same = gate_run(cli, repo, tmp_path, head, "fail-on-new-failures: true\n", "same")
    assert same.code == 0, same.stdout


def _shifted(results: Results, metric: str, amount: float) -> Results:
    return rewrite(results, lambda q: {**q.metrics, metric: (q.metrics[metric] or 0.0) + amount})


@pytest.mark.parametrize(("metric", "allowed", "amount"), [
    ("contradiction", 0.05, 0.1),
    ("context_tokens", 50.0, 100.0),
])
def test_check_gates_lower_is_better_metrics(metric, allowed, amount):
    base = make_results(n=12)
    metrics = [metric, "ndcg@5"]

    def gates(head: Results, **kw):
        comparison = compare_results(base, head, source="test", metrics=metrics)
        return check_gates(comparison, base, head, max_drop={metric: allowed}, **kw)

    higher = _shifted(base, metric, amount)  # higher is worse
    found = gates(higher)
    assert [(v.scope, v.metric) for v in found] == [("regression", metric)]
    assert found[0].value == pytest.approx(higher.overall.metrics[metric])
    assert f"worsened by {amount:.4f}" in found[0].rule
    assert f"from the baseline {base.overall.metrics[metric]:.4f}" in found[0].rule
    assert gates(_shifted(base, metric, -amount)) == ()  # lower is better: no regression
    assert gates(_shifted(base, metric, allowed * 0.9)) == ()  # within the allowance
    # Consistent over every query: significant as well.
    assert len(gates(higher, significant_only=True, min_effect=0.0)) == 1


def test_check_gates_higher_is_better_and_metrics_outside_the_comparison():
    base = make_results(n=12)
    worse = _shifted(base, "recall@5", -0.2)
    comparison = compare_results(base, worse, source="test", metrics=["ndcg@5"])
    found = check_gates(comparison, base, worse, max_drop={"recall@5": 0.1})
    assert [(v.scope, v.metric) for v in found] == [("regression", "recall@5")]
    better = _shifted(base, "recall@5", 0.2)
    comparison = compare_results(base, better, source="test", metrics=["ndcg@5"])
    assert check_gates(comparison, base, better, max_drop={"recall@5": 0.0}) == ()


# ----------------------------------------------------------------------------- real model


def _same_results(a: dict, b: dict) -> None:
    assert [q["id"] for q in a["queries"]] == [q["id"] for q in b["queries"]]
    for qa, qb in zip(a["queries"], b["queries"], strict=True):
        assert qa["ranked_modules"] == qb["ranked_modules"], qa["id"]
        assert qa["metrics"] == qb["metrics"], qa["id"]
    assert a["overall"] == b["overall"]
    assert a["by_shape"] == b["by_shape"]


@pytest.mark.model
def test_head_after_its_base_equals_a_fresh_build(sample_repo, cli, model_dir, tmp_path,
                                               monkeypatch):
    """The head is built from scratch after its base (nothing of the base's index carries
    over, issue 20), yet embeds only the node texts the base did not (the run's vector memo,
    issue 21 item 7): its rankings, metrics and contexts are those of a head-only run from
    a fresh cache, byte for byte."""
    from evaluator.neuralmind_index import NeuralMindIndex

    monkeypatch.setenv(ENV, str(model_dir))
    invoices = sample_repo / "billing" / "invoices.py"
    invoices.write_text(invoices.read_text() + '\n\ndef invoice_total_cents(items):\n'
                        '    """Sum of the line items, in cents."""\n'
                        '    return sum(item["cents"] for item in items)\n')
    commit_all(sample_repo, "add invoice_total_cents")
    # (index, question, context, tokens): the index object itself, not its id(), which
    # CPython reuses once the base's index is freed, so the base's answers could pass for
    # the head's (seen once under load)
    asked: list[tuple[object, str, str, int]] = []
    real_ask = NeuralMindIndex.ask

    def ask(self, question):
        answer = real_ask(self, question)
        asked.append((self, question, answer.context, answer.tokens))
        return answer

    monkeypatch.setattr(NeuralMindIndex, "ask", ask)
    out = tmp_path / "with-base"
    run = evaluate(cli, sample_repo, "--baseline", "ref:HEAD~1", "--output-dir", str(out))
    assert run.code == 0, run.stderr  # the real model meets the floors on the sample
    with_base = [a[1:] for a in asked if a[0] is asked[-1][0]]  # the head's index
    asked.clear()
    fresh_out = tmp_path / "fresh"
    fresh = cli("evaluate", str(sample_repo), "--output-dir", str(fresh_out),
                "--cache-dir", str(tmp_path / "new-cache"))
    assert fresh.code == 0, fresh.stderr
    assert with_base == [a[1:] for a in asked]  # contexts and tokens, question by question
    assert len(with_base) == len(queries_doc(sample_repo)["queries"])
    incremental, alone = load(out / "results.json"), load(fresh_out / "results.json")
    _same_results(incremental, alone)
    assert values(incremental) == values(alone)
    index, fresh_index = incremental["run"]["index"], alone["run"]["index"]
    assert index["cached"] is False
    assert index["nodes"] == fresh_index["nodes"] > 100
    # A run starts with an empty memo: the head-only run and the base embed every node.
    base_index = load(out / "baseline-results.json")["run"]["index"]
    for whole in (fresh_index, base_index):
        assert whole["nodes_embedded"] == whole["nodes"] and whole["nodes_reused"] == 0
    # The head's build embeds the new function's node and the module node that holds it.
    assert (index["nodes_embedded"], index["nodes_reused"]) == (2, index["nodes"] - 2), index
    assert (f"head: index {index['nodes']} nodes, backend turbovec (2 embedded, "
            f"{index['nodes'] - 2} reused)") in run.stderr


def values(doc: dict) -> dict:
    """Every per-question value but the latency, and the aggregates."""
    return {"queries": {q["id"]: {k: v for k, v in q.items() if k != "latency_ms"}
                        for q in doc["queries"]},
            "overall": doc["overall"], "by_shape": doc["by_shape"]}


@pytest.mark.model
def test_index_cache_reuses_an_unchanged_tree_and_a_content_change_invalidates_it(
        sample_repo, cli, model_dir, tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(model_dir))
    cache = tmp_path / "shared-cache"

    def run(name: str) -> dict:
        result = cli("evaluate", str(sample_repo), "--output-dir", str(tmp_path / name),
                     "--quiet", "--cache-dir", str(cache))
        assert result.code == 0, result.stderr
        return load(tmp_path / name / "results.json")

    first, second = run("first"), run("second")
    assert first["run"]["index"]["cached"] is False
    assert second["run"]["index"]["cached"] is True
    assert second["run"]["index"]["nodes"] == first["run"]["index"]["nodes"]
    _same_results(first, second)
    crud = sample_repo / "users" / "crud.py"
    crud.write_text(crud.read_text().replace("def ", "def  ", 1))  # same files, new content
    third = run("third")
    assert third["run"]["index"]["cached"] is False
    assert third["run"]["index"]["nodes_embedded"] == third["run"]["index"]["nodes"]
    assert run("fourth")["run"]["index"]["cached"] is True
