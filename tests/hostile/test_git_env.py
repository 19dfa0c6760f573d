"""Issue 19 item 6: git runs with a minimal environment built from ``Deps.env`` — never the
token, the Action's inputs, ACTIONS_* or a GIT_* variable that redirects git — and without
``safe.directory=*``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator import git_command, git_repo
from evaluator.cli import main
from tests.conftest import make_repo
from tests.hostile.cases import FAST

TOKEN = "ghs_GitEnv0Test1Token2XYZ"
HOSTILE_ENV = {
    "GITHUB_TOKEN": TOKEN, "INPUT_GITHUB-TOKEN": TOKEN, "ACTIONS_RUNTIME_TOKEN": TOKEN,
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN": TOKEN, "INPUT_TEMPLATE": "x",
    "GIT_CONFIG_GLOBAL": "/nonexistent/gitconfig", "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_EXEC_PATH": "/nonexistent", "GIT_SSH_COMMAND": "false",
}


def _forbidden(name: str) -> bool:
    return (name.startswith(("GIT_", "INPUT_", "ACTIONS_")) and name != "GIT_TERMINAL_PROMPT"
            and name != "GIT_INDEX_FILE") or name.endswith("TOKEN")


def test_git_gets_only_a_minimal_environment(tmp_path: Path, monkeypatch) -> None:
    ws = make_repo(tmp_path / "ws")
    other = make_repo(tmp_path / "other", {"other.py": "x = 1\n"}, sample=False)
    pwned = tmp_path / "pwned"
    for name, value in {**HOSTILE_ENV, "GIT_DIR": str(other / ".git"),
                        "GIT_WORK_TREE": str(other), "GIT_CONFIG_COUNT": "1",
                        "GIT_CONFIG_KEY_0": "core.fsmonitor",
                        "GIT_CONFIG_VALUE_0": f"touch {pwned}; false"}.items():
        monkeypatch.setenv(name, value)
    calls: list[tuple[list[str], dict[str, str] | None]] = []
    library: list[tuple[list[str], list[str]]] = []  # NeuralMind's git: what it inherits
    real_run = subprocess.run
    real_popen = subprocess.Popen  # run_git streams through Popen; subprocess.run uses it too

    def spy(argv, *args, **kwargs):
        # The evaluator's own git calls (NeuralMind's, in its snapshot, are the library's).
        caller = sys._getframe(1).f_globals["__name__"]
        if argv and argv[0] == "git" and caller == git_command.__name__:
            calls.append((list(argv), kwargs.get("env")))
        elif argv and argv[0] == "git":
            seen = kwargs.get("env") or os.environ
            library.append((list(argv), [k for k in seen if _forbidden(k)]))
        return real_popen(argv, *args, **kwargs)

    monkeypatch.setattr(git_command.subprocess, "Popen", spy)
    out = tmp_path / "out"
    code = main(["evaluate", str(ws), *FAST, "--cache-dir", str(tmp_path / "cache"),
                 "--output-dir", str(out)])  # the real process environment, as in the Action
    assert code == 0
    assert calls, "git was not run"
    for argv, env in calls:
        assert env is not None, f"git {argv[1:4]} inherited the whole process environment"
        assert not [k for k in env if _forbidden(k)], (argv, sorted(env))
        assert "PATH" in env and env["GIT_TERMINAL_PROMPT"] == "0"
        assert not any(a.startswith("safe.directory=*") for a in argv), argv
    assert not [(argv, bad) for argv, bad in library if bad]
    assert not pwned.exists()
    head = real_run(["git", "-C", str(ws), "rev-parse", "HEAD"], capture_output=True,
                    text=True, check=True, env={"PATH": os.environ["PATH"]}).stdout.strip()
    assert json.loads((out / "results.json").read_text())["run"]["commit"] == head


def test_git_env_keeps_path_home_and_locale_only() -> None:
    env = {"PATH": "/usr/bin", "HOME": "/home/me", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "HTTPS_PROXY": "http://proxy:3128", **HOSTILE_ENV, "GIT_DIR": "/x",
           "RUNNER_TEMP": "/t", "GITHUB_WORKSPACE": "/w"}
    assert git_command.git_env(env) == {
        "PATH": "/usr/bin", "HOME": "/home/me", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "HTTPS_PROXY": "http://proxy:3128", "GIT_TERMINAL_PROMPT": "0"}


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX ownership")
def test_safe_directory_is_exactly_the_repository_and_only_when_needed(tmp_path: Path,
                                                                        monkeypatch) -> None:
    repo = make_repo(tmp_path / "ws")
    (repo / "sub").mkdir()
    assert git_command._safe_directory(repo / "sub") == []  # ours: nothing to allow
    assert git_command._safe_directory(tmp_path) == []  # no repository: nothing to allow
    monkeypatch.setattr(os, "getuid", lambda: repo.stat().st_uid + 1)  # the Action's root
    assert git_command._safe_directory(repo / "sub") == ["-c", f"safe.directory={repo.resolve()}"]
    git = git_repo.GitRepo({"PATH": os.environ["PATH"]})
    assert git.head_commit(repo / "sub") is not None
