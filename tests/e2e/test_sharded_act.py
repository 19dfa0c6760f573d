"""End to end under ``act``: a two-job matrix of shards and a merge job, one comment.

The workflow is examples/sharded.yml's shape on a real three-package repository
(tests/monorepo_tree.py) with the fast ``in_memory`` backend: two ``evaluate`` jobs
(``shard: 1/2`` and ``2/2``) write their parts, a ``merge`` job (``mode: merge``) merges them
and posts the sticky comment to the loopback fake GitHub. ``act --bind`` shares the
workspace between the jobs, which stands in for actions/upload-artifact and
download-artifact (they need github.com, which this machine cannot reach).

The merged result must equal a single-job evaluation of the same commit run on the host
(the evaluator in-process), and the comment's numbers the report that run renders.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.conftest import commit_pull_request, copy_action, host_env
from tests.e2e.test_docker_action import MARKER, TOKEN, ActRun, _run
from tests.fake_github import PR, REPO, FakeGitHub
from tests.monorepo_tree import SECTIONS, make_monorepo

pytestmark = pytest.mark.docker

WORKFLOW = """\
name: retrieval-eval sharded e2e
on: pull_request
jobs:
  evaluate:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        shard: [1, 2]
    steps:
      - uses: actions/checkout@v4
      - uses: ./action-under-test
        with:
          shard: "${{ matrix.shard }}/2"
          backend: in_memory
          baseline: none
          comment: "false"
          output-dir: .retrieval-eval/parts
          cache-dir: .retrieval-eval/cache-${{ matrix.shard }}
  merge:
    needs: evaluate
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - id: eval
        uses: ./action-under-test
        with:
          mode: merge
          parts: .retrieval-eval/parts
          baseline: none
          output-dir: .retrieval-eval/merged
      - name: Print the outputs
        if: always()
        run: |
          echo "out:passed=${{ steps.eval.outputs.passed }}"
          echo "out:ndcg=${{ steps.eval.outputs.ndcg }}"
          echo "out:results-path=${{ steps.eval.outputs.results-path }}"
          echo "out:comment-url=${{ steps.eval.outputs.comment-url }}"
"""


def _view(path: Path) -> dict:
    data = json.loads(path.read_text())
    for body in (data, *data.get("sections", {}).values()):
        body["run"] = {k: v for k, v in body["run"].items()
                       if k not in ("timings", "started_at", "tool_version")}
        body["run"].get("index", {}).pop("cached", None)
        for query in body.get("queries", []):
            query.pop("latency_ms", None)
    return data


def _tables(markdown: str) -> list[str]:
    """The table rows of a report (numbers and verdicts), without the footer."""
    return [line for line in markdown.splitlines() if line.startswith("|")]


@pytest.fixture
def sharded_repo(tmp_path: Path) -> Path:
    # Named like the repository the event names (act sets GITHUB_REPOSITORY from it): the
    # project name NeuralMind's context carries is the repository's, so the single job on
    # the host, outside Actions, takes the same name from the folder (README,
    # Reproducibility).
    repo = tmp_path / REPO.split("/")[1]
    make_monorepo(repo)
    copy_action(repo / "action-under-test")
    (repo / ".gitignore").write_text(".retrieval-eval/\n")
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "sharded.yml").write_text(WORKFLOW)
    commit_pull_request(repo, tmp_path / "event.json", "the action and the sharded workflow")
    return repo


def test_act_matrix_then_merge_posts_one_comment_equal_to_a_single_job(
        act: str, image: str, sharded_repo: Path, api: FakeGitHub, tmp_path: Path) -> None:
    repo = sharded_repo
    proc = _run([act, "pull_request", "--bind", "--pull=false",
                 "-P", "ubuntu-latest=python:3.11-slim", "-e", str(tmp_path / "event.json"),
                 "-s", f"GITHUB_TOKEN={TOKEN}", "--env", f"GITHUB_API_URL={api.base_url}",
                 "--no-cache-server", "-W", ".github/workflows/sharded.yml"],
                cwd=repo, timeout=2400)
    run = ActRun(proc.returncode, proc.stdout + proc.stderr)
    (tmp_path / "act.log").write_text(run.output)
    # requests misses the default floors, so the merged verdict fails the merge job (exit 1).
    assert "exit with `FAILURE`: 1" in run.output, run.output[-4000:]
    assert run.outputs.get("passed") == "false", run.outputs
    parts = sorted(p.name for p in (repo / ".retrieval-eval" / "parts").glob("*.json"))
    assert parts == ["results.part-1-of-2.json", "results.part-2-of-2.json"]
    ours = [c for c in api.on_issue(PR) if MARKER in c["body"]]
    assert len(ours) == 1, [c["body"][:200] for c in api.on_issue(PR)]
    assert [r.method for r in api.writes()] == ["POST"]
    assert TOKEN not in run.output

    # The single-job run of the same commit, on the host.
    from tests.conftest import run_main

    single = tmp_path / "single"
    env = host_env(tmp_path / "home")
    (tmp_path / "home").mkdir()
    code = run_main("evaluate", str(repo), "--backend", "in_memory", "--output-dir",
                    str(single), "--cache-dir", str(tmp_path / "host-cache"), "--quiet",
                    env=env).code
    assert code == 1
    merged = repo / ".retrieval-eval" / "merged" / "results.json"
    assert _view(merged) == _view(single / "results.json")
    body = ours[0]["body"]
    assert "### By section" in body
    for name in SECTIONS:
        assert f"Section {name} (" in body
    assert _tables(body) == _tables((single / "report.md").read_text())
    assert re.search(rf"\| nDCG@5 \| {run.outputs['ndcg'][:5]}", body)
