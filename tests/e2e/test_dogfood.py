"""The dogfood workflow (.github/workflows/dogfood.yml) as this repository's pull requests run
it, under ``act``: the repository's own files at the root, `uses: ./` built from its
Dockerfile, the bundled example unpacked from the neuralmind wheel, and the sticky comment
posted to the fake GitHub API (tests/fake_github.py) on 127.0.0.1.

Skips with the reason when no Docker engine is reachable or act is missing.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.conftest import commit_pull_request, copy_action, git
from tests.fake_github import PR, FakeGitHub

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
    commit_pull_request(repo, tmp_path / "event.json", "the pull request's head")

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
