"""The PR comment through the CLI against the fake GitHub API on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from tests.fake_github import PR, REPO, Scripted

TOKEN = "ghs_cli-test-token-DO-NOT-PRINT-99"
FAST = ("--backend", "in_memory", "--quiet")
LENIENT = "floors: {}\nshape-floors: {}\nzero-miss: false\n"


@pytest.fixture
def gh_env(server, tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR, "head": {"sha": "a" * 40}}}))
    return {"GITHUB_API_URL": server.base_url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_TOKEN": TOKEN, "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt")}


def _outputs(env) -> dict[str, str]:
    from pathlib import Path

    return dict(line.split("=", 1) for line in Path(env["GITHUB_OUTPUT"]).read_text()
                .splitlines() if "=" in line)


def test_evaluate_comment_is_sticky(sample_repo, cli, server, gh_env, tmp_path):
    config = tmp_path / "c.yml"
    config.write_text(LENIENT)
    first = cli("evaluate", str(sample_repo), *FAST, "--comment", "--config", str(config),
                env=gh_env)
    assert first.code == 0, first.stderr
    second = cli("evaluate", str(sample_repo), *FAST, "--comment", "--config", str(config),
                 env=gh_env)
    assert second.code == 0, second.stderr
    comments = server.on_issue(PR)
    assert len(comments) == 1
    body = comments[0]["body"]
    assert "neuralmind-retrieval-eval:comment-key=default" in body
    assert "| Metric | Value |" in body and "### By question shape" in body
    assert [r.method for r in server.sent() if r.method != "GET"] == ["POST", "PATCH"]
    assert all(r.headers.get("Authorization") == f"Bearer {TOKEN}" for r in server.sent())
    assert _outputs(gh_env)["comment-url"].endswith(f"#issuecomment-{comments[0]['id']}")
    for run in (first, second):
        assert TOKEN not in run.stdout + run.stderr


def test_comment_keys_keep_separate_comments(sample_repo, cli, server, gh_env, tmp_path):
    results = tmp_path / "out"
    cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(results), env={})
    for key in ("backend-a", "backend-b", "backend-a"):
        run = cli("comment", "--results", str(results / "results.json"), "--comment-key", key,
                  env=gh_env)
        assert run.code == 1, run.stderr
    assert len(server.on_issue(PR)) == 2


def test_comment_subcommand_with_baseline_shows_deltas(sample_repo, cli, server, gh_env,
                                                       tmp_path):
    out = tmp_path / "out"
    cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(out), env={})
    base = json.loads((out / "results.json").read_text())
    base["queries"][0]["metrics"]["ndcg@5"] = 0.0
    (tmp_path / "base.json").write_text(json.dumps(base))
    run = cli("comment", "--results", str(out / "results.json"), "--baseline",
              str(tmp_path / "base.json"), env=gh_env)
    assert run.code == 1, run.stderr
    body = server.on_issue(PR)[0]["body"]
    assert "| Base | Δ |" in body
    assert "compared with file" in body


def test_forbidden_token_is_a_warning_not_a_failure(sample_repo, cli, server, gh_env, tmp_path):
    server.script.append(Scripted("POST", 403, {"message": "Resource not accessible by "
                                                           "integration"}))
    config = tmp_path / "c.yml"
    config.write_text(LENIENT)
    run = cli("evaluate", str(sample_repo), *FAST, "--comment", "--config", str(config),
              env=gh_env)
    assert run.code == 0
    assert "comment not posted" in run.stderr and "pull-requests: write" in run.stderr
    assert "::warning::comment not posted" in run.stdout
    assert "| Metric | Value |" in (tmp_path / "summary.md").read_text()
    assert _outputs(gh_env)["comment-url"] == ""
    assert server.on_issue(PR) == []


def test_results_of_another_schema_version(cli, gh_env, tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema_version": 99, "queries": []}))
    run = cli("comment", "--results", str(old), env=gh_env)
    assert run.code == 2
    assert "schema_version 99 is not supported" in run.stderr
    assert "reads schema_version 1" in run.stderr


def test_results_file_that_is_not_json(cli, gh_env, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("<html>")
    run = cli("comment", "--results", str(bad), env=gh_env)
    assert run.code == 2
    assert "is not JSON" in run.stderr


def test_comment_needs_a_pull_request(sample_repo, cli, gh_env, tmp_path):
    out = tmp_path / "out"
    cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(out), env={})
    push = dict(gh_env, GITHUB_EVENT_NAME="push")
    (tmp_path / "push.json").write_text(json.dumps({"ref": "refs/heads/main"}))
    push["GITHUB_EVENT_PATH"] = str(tmp_path / "push.json")
    run = cli("comment", "--results", str(out / "results.json"), env=push)
    assert run.code == 2
    assert "not a pull-request event and no --pr was given" in run.stderr


def test_garbled_event_file(sample_repo, cli, gh_env, tmp_path):
    out = tmp_path / "out"
    cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(out), env={})
    with open(gh_env["GITHUB_EVENT_PATH"], "w") as handle:
        handle.write("{not json")
    run = cli("comment", "--results", str(out / "results.json"), env=gh_env)
    assert run.code == 2
    assert "event" in run.stderr.lower()
    assert "Traceback" not in run.stderr


def test_body_too_long_is_shrunk_not_retried_as_is(sample_repo, cli, server, gh_env, tmp_path):
    server.script.append(Scripted("POST", 422, {
        "message": "Validation Failed",
        "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                    "message": "Body is too long (maximum is 65536 characters)"}]}))
    config = tmp_path / "c.yml"
    config.write_text(LENIENT)
    run = cli("evaluate", str(sample_repo), *FAST, "--comment", "--config", str(config),
              env=gh_env)
    assert run.code == 0, run.stderr
    posts = [r for r in server.sent() if r.method == "POST"]
    assert len(posts) == 2
    assert len(posts[1].body["body"]) < len(posts[0].body["body"])
    assert "too long; shrinking" in run.stderr
    assert len(server.on_issue(PR)) == 1
