"""`retrieval-eval action`: the Docker action's entry, driven by INPUT_* variables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_github import PR, REPO

TOKEN = "ghs_action-entry-token-SECRET-123"


def action_env(workspace: Path, tmp_path: Path, **inputs: str) -> dict[str, str]:
    env = {"GITHUB_WORKSPACE": str(workspace), "GITHUB_ACTIONS": "true",
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
           "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
           "INPUT_BACKEND": "in_memory", "INPUT_COMMENT": "false", "INPUT_BASELINE": "none"}
    env.update({f"INPUT_{k.upper().replace('_', '-')}": v for k, v in inputs.items()})
    return env


def outputs(tmp_path: Path) -> dict[str, str]:
    text = (tmp_path / "output.txt").read_text()
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_action_evaluates_the_workspace_and_writes_workspace_relative_outputs(
        sample_repo, cli, tmp_path):
    (sample_repo / ".retrieval-eval.yml").write_text("floors: {}\nshape-floors: {}\n"
                                                    "zero-miss: false\n")
    run = cli("action", env=action_env(sample_repo, tmp_path))
    assert run.code == 0, run.stderr
    out = outputs(tmp_path)
    assert out["results-path"] == ".retrieval-eval/results/results.json"
    assert (sample_repo / out["results-path"]).is_file()
    assert (sample_repo / out["report-path"]).is_file()
    assert out["passed"] == "true" and float(out["ndcg"]) > 0
    assert "| Metric | Value |" in (tmp_path / "summary.md").read_text()
    assert (sample_repo / ".retrieval-eval" / "cache").is_dir()


@pytest.mark.parametrize(("inputs", "needle"), [
    ({"backend": "gpu"}, "input backend: 'gpu' is not one of auto, in_memory"),
    ({"comment": "yes please"}, "input comment: 'yes please' is not one of always, on-change, "
                                   "on-failure, never, true, false"),
    ({"queries": "../outside.json"}, "input queries: '../outside.json' is outside the workspace"),
    ({"path": "/etc"}, "input path: '/etc' is outside the workspace"),
    ({"queries": "missing.json"}, "missing.json does not exist"),
    ({"baseline": "ref:no-such-ref"}, "unknown git ref 'no-such-ref'"),
    ({"k": "0"}, "must be positive integers"),
])
def test_bad_inputs_get_an_error_annotation_and_exit_2(sample_repo, cli, tmp_path, inputs,
                                                       needle):
    run = cli("action", env=action_env(sample_repo, tmp_path, **inputs))
    assert run.code == 2, (run.stdout, run.stderr)
    assert needle in run.stderr
    assert "::error" in run.stdout and needle.split("'")[0] in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


def test_missing_token_is_a_warning_and_the_gate_still_decides(sample_repo, cli, tmp_path):
    env = action_env(sample_repo, tmp_path, comment="true")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR}}))
    env |= {"GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event), "INPUT_GITHUB-TOKEN": ""}
    run = cli("action", env=env)
    assert run.code == 1
    assert "::warning::comment not posted: no GitHub token" in run.stdout
    assert outputs(tmp_path)["comment-url"] == ""


def test_non_pr_event_is_a_warning(sample_repo, cli, tmp_path, server):
    env = action_env(sample_repo, tmp_path, comment="true", baseline="auto")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}))
    env |= {"GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "push",
            "GITHUB_EVENT_PATH": str(event), "INPUT_GITHUB-TOKEN": TOKEN,
            "GITHUB_API_URL": server.base_url}
    run = cli("action", env=env)
    assert run.code == 1, run.stderr
    assert "not a pull-request event" in run.stdout
    assert "| Base | Δ |" not in (tmp_path / "summary.md").read_text()
    assert server.sent() == []
    assert TOKEN not in run.stdout + run.stderr


def test_action_token_input_posts_the_comment(sample_repo, cli, tmp_path, server):
    env = action_env(sample_repo, tmp_path, comment="true")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR}}))
    env |= {"GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": "pull_request",
            "GITHUB_EVENT_PATH": str(event), "INPUT_GITHUB-TOKEN": TOKEN,
            "GITHUB_API_URL": server.base_url}
    run = cli("action", env=env)
    assert run.code == 1, run.stderr
    assert len(server.on_issue(PR)) == 1
    assert server.sent("POST")[0].headers["Authorization"] == f"Bearer {TOKEN}"
    assert outputs(tmp_path)["comment-url"].startswith("https://github.com/")
    assert TOKEN not in run.stdout + run.stderr


def test_comment_mode_posts_a_saved_results_file(sample_repo, cli, tmp_path, server):
    """The fork-safe second stage: no build, only the saved results and the API."""
    saved = sample_repo / "artifact"
    first = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--quiet",
                "--output-dir", str(saved))
    assert first.code == 1
    env = {"GITHUB_WORKSPACE": str(sample_repo), "GITHUB_ACTIONS": "true",
           "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": server.base_url,
           "GITHUB_EVENT_NAME": "workflow_run", "INPUT_GITHUB-TOKEN": TOKEN,
           "INPUT_MODE": "comment", "INPUT_RESULTS": "artifact/results.json",
           "INPUT_PR": str(PR), "INPUT_FAIL-ON-FLOORS": "false",
           "GITHUB_OUTPUT": str(tmp_path / "output.txt")}
    run = cli("action", env=env)
    assert run.code == 0, run.stderr
    assert len(server.on_issue(PR)) == 1
    assert "building" not in run.stderr
    assert outputs(tmp_path)["comment-url"].endswith(str(server.on_issue(PR)[0]["id"]))


@pytest.mark.parametrize(("inputs", "needle"), [
    ({"MODE": "comment"}, "mode comment needs the path of a results.json"),
    ({"MODE": "comment", "RESULTS": "../r.json"}, "is outside the workspace"),
    ({"MODE": "comment", "RESULTS": "r.json", "PR": "7; rm -rf /"},
     "input pr: '7; rm -rf /' is not a whole number of at least 1"),
    ({"MODE": "publish"}, "input mode: 'publish' is not one of evaluate, comment"),
])
def test_comment_mode_bad_inputs(sample_repo, cli, inputs, needle):
    env = {"GITHUB_WORKSPACE": str(sample_repo), "GITHUB_ACTIONS": "true",
           **{f"INPUT_{k}": v for k, v in inputs.items()}}
    run = cli("action", env=env)
    assert run.code == 2
    assert needle in run.stderr
    assert "::error" in run.stdout


def test_input_behind_a_symlink_loop_is_an_input_error(sample_repo, cli, tmp_path):
    (sample_repo / "loop-a").symlink_to("loop-b")
    (sample_repo / "loop-b").symlink_to("loop-a")
    run = cli("action", env=action_env(sample_repo, tmp_path, queries="loop-a"))
    assert run.code == 2
    assert "input queries: cannot resolve 'loop-a'" in run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
