"""The dogfood workflow (.github/workflows/dogfood.yml) as this repository's pull requests run
it, under ``act``: the repository's own files at the root, `uses: ./` built from its
Dockerfile, the bundled example unpacked from the neuralmind wheel, and the sticky comment
posted to the fake GitHub API (tests/fake_github.py) on 127.0.0.1.

Skips with the reason when no Docker engine is reachable or act is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import GIT_ID, copy_action, git
from tests.fake_github import PR, REPO, FakeGitHub

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "fake-dogfood-token"
MARKER = "neuralmind-retrieval-eval:comment-key=dogfood"


def test_dogfood_runs_the_action_on_the_bundled_example(act: str, image: str, tmp_path: Path,
                                                        api: FakeGitHub) -> None:
    repo = copy_action(tmp_path / "repo")  # action.yml, Dockerfile, evaluator/, the lock…
    (repo / ".github" / "workflows").mkdir(parents=True)
    shutil.copy(ROOT / ".github" / "workflows" / "dogfood.yml",
                repo / ".github" / "workflows" / "dogfood.yml")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    git(repo, "add", "-A")
    git(repo, *GIT_ID, "commit", "-q", "-m", "the pull request's head")
    head = git(repo, "rev-parse", "HEAD").strip()
    event = {"action": "synchronize", "number": PR,
             "pull_request": {"number": PR, "head": {"sha": head, "ref": "feature"},
                              "base": {"sha": head, "ref": "main"}},
             "repository": {"full_name": REPO, "name": REPO.split("/")[1],
                            "owner": {"login": REPO.split("/")[0]}}}
    (tmp_path / "event.json").write_text(json.dumps(event))

    proc = subprocess.run([act, "pull_request", "--pull=false",
                           "-P", "ubuntu-latest=python:3.11-slim",
                           "-e", str(tmp_path / "event.json"), "-s", f"GITHUB_TOKEN={TOKEN}",
                           "--env", f"GITHUB_API_URL={api.base_url}", "--no-cache-server",
                           "-W", ".github/workflows/dogfood.yml"],
                          cwd=repo, capture_output=True, text=True, timeout=1800)
    output = proc.stdout + proc.stderr
    (tmp_path / "act.log").write_text(output)
    assert proc.returncode == 0, output[-4000:]
    assert "Job succeeded" in output
    assert "passed=true ndcg@5=0." in output, output[-4000:]
    ours = [c for c in api.on_issue(PR) if MARKER in c["body"]]
    assert len(ours) == 1
    assert "| Metric |" in ours[0]["body"] and "all floors met" in ours[0]["body"]
    assert TOKEN not in output
