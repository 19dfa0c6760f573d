"""Issue 19 item 1 below the CLI: the one confinement rule keeps version-control state and
the runner's own files out of reach, without refusing the project's ordinary dot-files."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from evaluator.errors import InputError
from evaluator.paths import confine, runner_owned
from evaluator.scrub import secret_forms as _secret_forms
from evaluator.settings import action_values

TOKEN = "ghs_Reach0Test1Token2ABCdef"


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel in (".git/config", ".git/hooks/post-checkout", ".hg/hgrc", ".svn/entries",
                ".github/workflows/ci.yml", ".gitignore", "git/notes.txt", "sub/.git"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    (root / "meta").symlink_to(".git")
    (root / "cfg").symlink_to(".git/config")
    return root


@pytest.mark.parametrize("path", [
    ".git/config", ".GIT/config", "./.git/config", "a/../.git/config", ".git",
    ".git/hooks/post-checkout", "meta/config", "cfg", "sub/.git", ".hg/hgrc", ".Svn/entries",
    "docs/../.git/hooks/new-hook"])
def test_version_control_state_is_refused(checkout: Path, path: str) -> None:
    with pytest.raises(InputError, match=r"template: .*version-control folder"):
        confine(path, checkout, setting="template")


@pytest.mark.parametrize("path", [".github/workflows/ci.yml", ".gitignore", "git/notes.txt",
                                  "new/report.md"])
def test_ordinary_dot_files_stay_reachable(checkout: Path, path: str) -> None:
    assert confine(path, checkout, setting="template") == (checkout / path).resolve()


def test_the_runner_files_and_their_folders_are_reserved(tmp_path: Path) -> None:
    root = tmp_path / "work" / "repo"
    root.mkdir(parents=True)
    env = {"RUNNER_TEMP": str(root / "_temp"),
           "GITHUB_OUTPUT": str(root / "_cmds" / "set_output_1"),
           "GITHUB_EVENT_PATH": str(tmp_path / "work" / "event.json"),  # its folder holds root
           "GITHUB_STEP_SUMMARY": "relative/ignored"}
    owned = runner_owned(env, root)
    assert root / "_temp" in owned and root / "_cmds" in owned
    assert tmp_path / "work" / "event.json" in owned and tmp_path / "work" not in owned
    for path in ("_temp/x.json", "_cmds/set_output_1", "_cmds/other"):
        with pytest.raises(InputError, match=r"history: .*runner's own"):
            confine(path, root, setting="history", reserved=owned)
    assert confine("report.md", root, setting="history", reserved=owned) == root / "report.md"


def test_a_runner_temp_folder_that_holds_the_checkout_does_not_reserve_it(tmp_path: Path) -> None:
    """act runs a job with RUNNER_TEMP=/tmp and the checkout under /tmp: the checkout is the
    project's (its own rules, .git included, apply inside it), so its paths stay reachable;
    the runner's files inside it stay reserved."""
    root = tmp_path / "repo"
    root.mkdir()
    env = {"RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(root / "out" / "set_output")}
    owned = runner_owned(env, root)
    assert tmp_path not in owned and root / "out" / "set_output" in owned
    assert confine("project", root, setting="path", reserved=owned) == root / "project"
    with pytest.raises(InputError, match="runner's own"):
        confine("out/set_output", root, setting="history", reserved=owned)
    with pytest.raises(InputError):
        confine(".git/config", root, setting="template", reserved=owned)


def test_an_action_input_into_the_runner_temp_folder_is_refused(tmp_path: Path) -> None:
    env = {"GITHUB_WORKSPACE": str(tmp_path), "RUNNER_TEMP": str(tmp_path / "_temp"),
           "INPUT_HISTORY": "_temp/history.json"}
    with pytest.raises(InputError, match=r"input history: .*runner's own"):
        action_values(env)


@pytest.mark.parametrize("user", ["x", "xy", "xyz", "x-access-token", "octocat", ""])
@pytest.mark.parametrize("urlsafe", [False, True])
def test_the_scrubber_finds_the_token_in_basic_auth_at_every_alignment(user: str,
                                                                       urlsafe: bool) -> None:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    for tail in ("", "\n", "ab"):
        header = "AUTHORIZATION: basic " + encode(f"{user}:{TOKEN}{tail}".encode()).decode()
        for pattern in _secret_forms(TOKEN):
            header = pattern.sub("***", header)
        assert "***" in header
        assert not re.search(r"[A-Za-z0-9+/_-]{12,}\*\*\*|\*\*\*[A-Za-z0-9+/_-]{12,}", header)
