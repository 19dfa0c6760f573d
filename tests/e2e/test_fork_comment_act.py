"""examples/fork-safe-comment.yml under act: the `workflow_run` stage fetches the artifact.

The example itself runs (its `uses:` points at the action under test, which a checkout step
puts into act's workspace), on a
`workflow_run` event for a fork's pull request (GitHub lists no pull requests for it). The
fake GitHub on 127.0.0.1 serves the run, its artifact list and the artifact zip, whose
download redirects to a second server standing in for the storage host: the action must
fetch it without the token, check it and post the comment. A second run on a tampered
artifact (it names another commit) must fail the job with exit 2 and post nothing.

Skips with the reason when no Docker engine or act is available (see conftest.py).
"""

from __future__ import annotations

import io
import json
import subprocess
import zipfile
from pathlib import Path

from evaluator.cli import IO, main
from tests.e2e.conftest import GIT_ID, ROOT, copy_action, git
from tests.fake_github import PR, REPO, FakeGitHub, running

TOKEN = "fake-token-fork-777"
RUN = 9001
SHA = "feed" + "5" * 36
ACTION = "OWNER/neuralmind-retrieval-eval@v1"


def _results(tmp_path: Path) -> bytes:
    out = tmp_path / "evaluated"
    code = main(["evaluate", "--example", "--backend", "in_memory", "--quiet", "--output-dir",
                 str(out), "--cache-dir", str(tmp_path / "cache")],
                io=IO(env={}, stdout=io.StringIO(), stderr=io.StringIO()))
    assert code in (0, 1)
    return (out / "results.json").read_bytes()


def _zip(results: bytes, sha: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("results.json", results)
        archive.writestr("pr.json", json.dumps({"pr_number": PR, "head_sha": sha}))
    return buffer.getvalue()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    copy_action(repo / "action-under-test")
    example = (ROOT / "examples" / "fork-safe-comment.yml").read_text()
    assert ACTION in example
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    # A local action must be in the workspace: act copies it there for actions/checkout
    # (this repository, the default branch, holds only the action; no pull-request code).
    assert example.count("    steps:\n") == 1
    workflow = example.replace(ACTION, "./action-under-test").replace(
        "    steps:\n", "    steps:\n      - uses: actions/checkout@v4\n")
    (workflows / "comment.yml").write_text(workflow)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, *GIT_ID, "commit", "-q", "-m", "the default branch with the comment workflow")
    event = {"action": "completed",
             "workflow_run": {"id": RUN, "head_sha": SHA, "event": "pull_request",
                              "conclusion": "failure", "pull_requests": []},
             "repository": {"full_name": REPO, "name": REPO.split("/")[1],
                            "owner": {"login": REPO.split("/")[0]}}}
    (tmp_path / "event.json").write_text(json.dumps(event))
    return repo


def _act(act: str, repo: Path, api: FakeGitHub) -> tuple[int, str]:
    proc = subprocess.run(
        [act, "workflow_run", "--pull=false", "-P", "ubuntu-latest=python:3.11-slim",
         "-e", str(repo.parent / "event.json"), "-s", f"GITHUB_TOKEN={TOKEN}",
         "--env", f"GITHUB_API_URL={api.base_url}", "--env", f"GITHUB_REPOSITORY={REPO}",
         "--no-cache-server", "-W", ".github/workflows/comment.yml"],
        cwd=repo, capture_output=True, text=True, timeout=1800)
    output = proc.stdout + proc.stderr
    (repo.parent / f"act-{len(list(repo.parent.glob('act-*.log')))}.log").write_text(output)
    return proc.returncode, output


# `image` is requested only to build first: act then builds the same Dockerfile, cached.
def test_act_fork_comment_fetches_the_artifact_and_posts(act: str, image: str,
                                                         tmp_path: Path,
                                                         api: FakeGitHub) -> None:
    results = _results(tmp_path)
    repo = _repo(tmp_path)
    api.add_run(RUN, head_sha=SHA, pull_requests=[],
                artifacts={"retrieval-eval": _zip(results, SHA)})
    api.pulls[PR] = {"number": PR, "head": {"sha": SHA}}
    with running(host="127.0.0.1") as storage:
        api.storage = storage
        code, output = _act(act, repo, api)
        assert code == 0, output[-4000:]
        assert "Job succeeded" in output
        downloads = storage.sent("GET")
        assert len(downloads) == 1 and downloads[0].path.startswith("/blobs/")
        assert "Authorization" not in downloads[0].headers
        ours = [c for c in api.on_issue(PR) if "comment-key=default" in c["body"]]
        assert len(ours) == 1 and "| Metric |" in ours[0]["body"]
        paths = [r.path.split("?")[0] for r in api.sent("GET")]
        assert f"/repos/{REPO}/actions/runs/{RUN}/artifacts" in paths
        assert f"/repos/{REPO}/pulls/{PR}" in paths
        assert TOKEN not in output

        # The same run whose artifact names another commit: refused, nothing posted.
        writes = len(api.writes())
        api.zips[api.artifacts[RUN][0]["id"]] = _zip(results, "0" * 40)
        code, output = _act(act, repo, api)
    assert code != 0, output[-4000:]
    assert "Job failed" in output
    assert f"pr.json names commit {'0' * 12}, but workflow run {RUN} evaluated" in output
    assert "exit with `FAILURE`: 2" in output, output[-4000:]
    assert len(api.writes()) == writes
    assert TOKEN not in output
