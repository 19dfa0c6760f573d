"""The verdict through the CLI: preview = posted, comparability, outputs, annotations, modes,
PR-touched files, history; on a real git repository with the fake GitHub on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.core.judge import judge_id
from tests.conftest import git
from tests.fake_github import PR, REPO
from tests.integration.test_click_scenario import IDENTITY, TOKEN, strip_docstrings

MODULE = "billing/stripe_client.py"
FAST = ("--backend", "in_memory", "--quiet")


@pytest.fixture
def pr_repo(sample_repo: Path) -> Path:
    git(sample_repo, "checkout", "-qb", "strip")
    path = sample_repo / MODULE
    path.write_text(strip_docstrings(path.read_text()))
    git(sample_repo, *IDENTITY, "commit", "-qam", "strip docstrings")
    return sample_repo


def _env(tmp_path: Path, server, repo: Path, **extra: str) -> dict[str, str]:
    event = tmp_path / "event.json"
    base = git(repo, "rev-parse", "main").strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    event.write_text(json.dumps({"pull_request": {"number": PR, "head": {"sha": head},
                                                  "base": {"sha": base}}}))
    return {"GITHUB_API_URL": server.base_url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_TOKEN": TOKEN, "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt")} | extra


def _outputs(env) -> dict[str, str]:
    return dict(line.split("=", 1) for line in Path(env["GITHUB_OUTPUT"]).read_text()
                .splitlines() if "=" in line)


def _evaluate(cli, repo, env, *args, flag: tuple[str, ...] = ("--comment",)):
    return cli("evaluate", str(repo), *FAST, "--baseline", "ref:main", *flag,
               "--output-dir", str(repo.parent / "out"), *args, env=env)


def test_outputs_annotations_touched_files_and_preview_equal_the_posted_comment(
        pr_repo, cli, server, tmp_path):
    env = _env(tmp_path, server, pr_repo)
    run = _evaluate(cli, pr_repo, env)
    assert run.code in (0, 1), run.stderr
    [posted] = server.on_issue(PR)
    outputs = _outputs(env)
    assert outputs["comment-id"] == str(posted["id"])
    assert outputs["verdict"] == ("pass" if run.code == 0 else "fail")
    worse = int(outputs["questions-worse"])
    assert worse >= 1
    assert worse + int(outputs["questions-better"]) + int(outputs["questions-unchanged"]) == 19
    assert float(outputs["primary-delta"]) != 0.0
    # one ::warning per worse question, on its line of the ground truth
    doc_lines = (pr_repo / "retrieval_queries.json").read_text().splitlines()
    annotations = [line for line in run.stdout.splitlines()
                   if line.startswith("::warning file=") and "question got worse" in line]
    assert len(annotations) == worse
    for line in annotations:
        number = int(line.split("line=")[1].split(",")[0])
        qid = line.split("::question ")[1].split(" got worse")[0]
        assert f'"{qid}"' in doc_lines[number - 1]
    # the PR touched billing/stripe_client.py: its questions are listed with links
    head = git(pr_repo, "rev-parse", "HEAD").strip()
    body = posted["body"]
    assert "### Questions grading files this PR changed" in body
    assert f"(https://github.com/{REPO}/blob/{head}/{MODULE})" in body
    # preview prints exactly what `comment` posts, without token or network
    results = pr_repo.parent / "out" / "results.json"
    base = pr_repo.parent / "out" / "baseline-results.json"
    requests_before = len(server.requests)
    shown = cli("comment", "--results", str(results), "--baseline", f"file:{base}",
                "--preview", env={})
    assert shown.code in (0, 1), shown.stderr
    assert len(server.requests) == requests_before
    assert shown.stdout.startswith("<!-- neuralmind-retrieval-eval:comment-key=default -->")
    posted_again = cli("comment", "--results", str(results), "--baseline", f"file:{base}",
                       "--no-fail-on-floors", env=env)
    assert posted_again.code == 0, posted_again.stderr
    [updated] = server.on_issue(PR)
    assert updated["body"] == shown.stdout


def test_on_change_leaves_the_comment_alone_when_nothing_moved(pr_repo, cli, server,
                                                               tmp_path):
    env = _env(tmp_path, server, pr_repo)
    config = tmp_path / "c.yml"
    config.write_text("comment: on-change\n")
    assert _evaluate(cli, pr_repo, env, "--config", str(config), flag=()).code in (0, 1)
    writes = len(server.writes())
    assert writes == 1
    second = cli("evaluate", str(pr_repo), "--backend", "in_memory", "--baseline",
                 "ref:main", "--config", str(config), "--output-dir", str(tmp_path / "o2"),
                 env=env)
    assert second.code in (0, 1)
    assert len(server.writes()) == writes
    assert "nothing changed since the last comment" in second.stderr


def test_hide_previous_through_the_options_file(pr_repo, cli, server, tmp_path):
    env = _env(tmp_path, server, pr_repo)
    config = tmp_path / "c.yml"
    config.write_text("hide-previous: true\n")
    for _ in range(2):
        assert _evaluate(cli, pr_repo, env, "--config", str(config)).code in (0, 1)
    assert len(server.on_issue(PR)) == 2
    comments = server.on_issue(PR)
    assert [c["minimized"] for c in comments] == ["OUTDATED", None]


def test_mismatched_baseline_file_is_refused_then_warned(pr_repo, cli, tmp_path):
    out = tmp_path / "base-out"
    git(pr_repo, "checkout", "-q", "main")
    assert cli("evaluate", str(pr_repo), *FAST, "--output-dir", str(out)).code in (0, 1)
    git(pr_repo, "checkout", "-q", "strip")
    doc = json.loads((out / "results.json").read_text())
    doc["run"]["gain"] = "linear"
    doc["run"]["graph_source"] = "graphify"
    baseline = tmp_path / "base.json"
    baseline.write_text(json.dumps(doc))
    refused = cli("evaluate", str(pr_repo), *FAST, "--baseline", f"file:{baseline}",
                  "--output-dir", str(tmp_path / "o1"))
    assert refused.code == 2, refused.stderr
    assert "graph source: baseline graphify, head builtin" in refused.stderr
    assert "gain: baseline linear, head exponential" in refused.stderr
    assert "baseline-mismatch: warn" in refused.stderr
    assert not (tmp_path / "o1" / "results.json").exists()  # refused before any work
    config = tmp_path / "warn.yml"
    config.write_text("baseline-mismatch: warn\n")
    warned = cli("evaluate", str(pr_repo), *FAST, "--baseline", f"file:{baseline}",
                 "--config", str(config), "--output-dir", str(tmp_path / "o2"))
    assert warned.code in (0, 1), warned.stderr
    assert warned.stderr.count("warning: the baseline is not comparable") == 2
    report = (tmp_path / "o2" / "report.md").read_text()
    assert "The baseline is not comparable" in "\n".join(report.splitlines()[:8])


@pytest.mark.parametrize("old_judge", ["neuralmind.ragas 4.22", None,
                                       "evaluator-judge 3 (terms+minilm)",
                                       "evaluator-judge 2 (terms)",
                                       "evaluator-judge 3 (terms)"])
def test_a_baseline_scored_by_another_judge_is_refused_before_any_work(pr_repo, cli, tmp_path,
                                                                        old_judge):
    """FAST runs in_memory (the terms judge); a baseline from NeuralMind's judge (recorded,
    or not recorded at all by older versions), from the model's judge or from the previous
    version of this judge (issue 22 changed its definition) is refused."""
    out = tmp_path / "base-out"
    assert cli("evaluate", str(pr_repo), *FAST, "--output-dir", str(out)).code in (0, 1)
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["judge"] == judge_id(similarity=False)
    if old_judge is None:
        del doc["run"]["judge"]
    else:
        doc["run"]["judge"] = old_judge
    baseline = tmp_path / "base.json"
    baseline.write_text(json.dumps(doc))
    refused = cli("evaluate", str(pr_repo), *FAST, "--baseline", f"file:{baseline}",
                  "--output-dir", str(tmp_path / "o1"))
    assert refused.code == 2, refused.stderr
    shown = old_judge or "not recorded"
    assert f"judge: baseline {shown}, head {judge_id(similarity=False)}" in refused.stderr
    assert not (tmp_path / "o1" / "results.json").exists()  # refused before any work


def test_comment_and_evaluate_agree_outside_actions(pr_repo, cli, tmp_path):
    out = tmp_path / "o"
    evaluated = cli("evaluate", str(pr_repo), *FAST, "--comment", "--output-dir", str(out),
                    env={})
    commented = cli("comment", "--results", str(out / "results.json"), env={})
    assert evaluated.code == commented.code == 2
    for run in (evaluated, commented):
        assert "no GitHub token" in run.stderr
        assert "GITHUB_REPOSITORY is not set" in run.stderr
        assert "not a pull-request event" in run.stderr
        assert "--preview" in run.stderr
        assert "Traceback" not in run.stderr
    assert evaluated.stderr.splitlines()[-2:] == commented.stderr.splitlines()[-2:]
    assert (out / "results.json").exists()  # evaluate still wrote its results


def test_history_is_recorded_on_default_branch_pushes_and_drawn(sample_repo, cli, server,
                                                                tmp_path):
    history = sample_repo / ".retrieval-eval" / "history.json"  # ignored by the index
    config = tmp_path / "c.yml"
    config.write_text("history: .retrieval-eval/history.json\n")
    event = tmp_path / "push.json"
    event.write_text(json.dumps({"repository": {"default_branch": "main"}}))
    push = {"GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REF": "refs/heads/main"}
    for i in range(3):
        (sample_repo / "NOTES.txt").write_text(f"change {i}\n")
        git(sample_repo, *IDENTITY, "add", "-A")
        git(sample_repo, *IDENTITY, "commit", "-qm", f"c{i}")
        run = cli("evaluate", str(sample_repo), *FAST, "--config", str(config),
                  "--output-dir", str(tmp_path / f"o{i}"), env=push)
        assert run.code in (0, 1), run.stderr
    doc = json.loads(history.read_text())
    assert len(doc["entries"]) == 3
    report = (tmp_path / "o2" / "report.md").read_text()
    assert "on the default branch" in report and "over the last 3 commits" in report
    # a pull request reads the history but never writes it
    pr = cli("evaluate", str(sample_repo), *FAST, "--config", str(config),
             "--output-dir", str(tmp_path / "pr"), env={"GITHUB_EVENT_NAME": "pull_request"})
    assert pr.code in (0, 1)
    assert len(json.loads(history.read_text())["entries"]) == 3


def test_a_saved_results_file_shows_its_own_violations_not_default_floor_margins(
        sample_repo, cli, tmp_path):
    config = tmp_path / "c.yml"
    config.write_text("floors: {mrr: 0.99}\nshape-floors: {}\nzero-miss: false\n")
    out = tmp_path / "o"
    run = cli("evaluate", str(sample_repo), *FAST, "--config", str(config), "--output-dir",
              str(out))
    assert run.code == 1
    evaluated = (out / "report.md").read_text()
    assert "floors met" not in evaluated and "floor ≥ 0.99" in evaluated
    # The file records the policy it was checked against: the preview is the report.
    shown = cli("comment", "--results", str(out / "results.json"), "--preview", env={})
    assert shown.stdout.split("\n", 2)[2] == evaluated
    assert "margin" not in shown.stdout  # the default floors were not what it was checked on
    # A file from before the policy was saved shows its own violations, not guessed margins.
    doc = json.loads((out / "results.json").read_text())
    del doc["report"]
    (tmp_path / "old.json").write_text(json.dumps(doc))
    old = cli("comment", "--results", str(tmp_path / "old.json"), "--preview", env={})
    assert "mrr ≥ 0.99" in old.stdout
    assert "margin" not in old.stdout
