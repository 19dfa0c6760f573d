"""Issue 21: the GitHub token is read once, by the settings layer, with one precedence.

The `github-token` input (``INPUT_GITHUB-TOKEN``) wins when it is not blank, else
``GITHUB_TOKEN``: the same environment gives the same token to every command. Before, the
Action preferred the input while ``comment``/``evaluate`` preferred ``GITHUB_TOKEN``, and the
comment step's "what is missing" sentence read only ``GITHUB_TOKEN``.
"""

from __future__ import annotations

import json

import pytest

from evaluator.settings import settings_for, token_of
from tests.fake_github import PR, REPO

INPUT_TOKEN = "ghp_input-token-DO-NOT-PRINT-11"
ENV_TOKEN = "ghs_env-token-DO-NOT-PRINT-22"
FAST = ("--backend", "in_memory", "--quiet")


@pytest.mark.parametrize(("env", "expected"), [
    ({"INPUT_GITHUB-TOKEN": INPUT_TOKEN, "GITHUB_TOKEN": ENV_TOKEN}, INPUT_TOKEN),
    ({"INPUT_GITHUB-TOKEN": "  ", "GITHUB_TOKEN": f" {ENV_TOKEN} "}, ENV_TOKEN),
    ({"GITHUB_TOKEN": ENV_TOKEN}, ENV_TOKEN),
    ({"INPUT_GITHUB-TOKEN": f"{INPUT_TOKEN}\n"}, INPUT_TOKEN),
    ({"GITHUB_TOKEN": ""}, None),
    ({}, None),
])
def test_one_precedence_the_input_then_github_token(env, expected):
    assert token_of(env) == expected
    assert settings_for("comment", {"results": "r.json"}, env=env).github_token == expected


def test_the_token_is_not_in_the_settings_repr():
    settings = settings_for("comment", {"results": "r.json"}, env={"GITHUB_TOKEN": ENV_TOKEN})
    assert settings.github_token == ENV_TOKEN
    assert ENV_TOKEN not in repr(settings) and ENV_TOKEN not in str(settings)


@pytest.fixture
def saved_results(sample_repo, cli, tmp_path):
    out = tmp_path / "out"
    assert cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(out)).code == 1
    return out / "results.json"


def _pr_env(server, tmp_path):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR}}))
    return {"GITHUB_API_URL": server.base_url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}


def test_comment_command_and_action_post_with_the_same_token(saved_results, cli, server,
                                                             tmp_path):
    both = {"INPUT_GITHUB-TOKEN": INPUT_TOKEN, "GITHUB_TOKEN": ENV_TOKEN}
    env = _pr_env(server, tmp_path) | both
    run = cli("comment", "--results", str(saved_results), "--no-fail-on-floors", env=env)
    assert run.code == 0, run.stderr
    action = env | {"GITHUB_WORKSPACE": str(saved_results.parent), "INPUT_MODE": "comment",
                    "INPUT_RESULTS": "results.json", "INPUT_FAIL-ON-FLOORS": "false"}
    second = cli("action", env=action)
    assert second.code == 0, second.stderr
    sent = [r.headers.get("Authorization") for r in server.sent() if r.method != "GET"]
    assert sent and set(sent) == {f"Bearer {INPUT_TOKEN}"}
    for out in (run, second):
        assert INPUT_TOKEN not in out.stdout + out.stderr
        assert ENV_TOKEN not in out.stdout + out.stderr


def test_what_is_missing_counts_the_token_input(saved_results, cli, tmp_path):
    """Without GITHUB_REPOSITORY the warning lists what is missing: a token given only as
    the input is not missing (before, that sentence read GITHUB_TOKEN alone)."""
    env = {"INPUT_GITHUB-TOKEN": INPUT_TOKEN, "GITHUB_ACTIONS": "true"}
    run = cli("comment", "--results", str(saved_results), "--pr", str(PR), env=env)
    assert run.code == 2
    assert "GITHUB_REPOSITORY is not set" in run.stderr
    assert "no GitHub token" not in run.stderr
    assert INPUT_TOKEN not in run.stdout + run.stderr
