"""The judge/systems benchmark suites: the bundled example and hand-written ground truth for
packages from PyPI (``benchmarks/suites/<package>/``: ``suite.json`` pins the version,
``retrieval_queries.json`` holds the questions). The package source is fetched with
``pip download --no-deps --no-binary :all:`` into a cache and never committed.
"""

from __future__ import annotations

import json
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from benchlib import download_sdist

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SUITES = HERE / "suites"
sys.path.insert(0, str(REPO))

from evaluator.core.groundtruth import GroundTruth  # noqa: E402
from evaluator.core.groundtruth_check import load_ground_truth  # noqa: E402
from evaluator.neuralmind_index import example_root  # noqa: E402

DEFAULT_CACHE = Path.home() / ".cache" / "neuralmind-retrieval-eval" / "bench-sdists"


@dataclass(frozen=True)
class Suite:
    name: str
    root: Path
    ground_truth: GroundTruth


def _ground_truth(path: Path) -> GroundTruth:
    gt, problems = load_ground_truth(path.read_text(encoding="utf-8"), str(path),
                                     present_modules=None, strict=False)
    if gt is None:
        raise SystemExit("\n".join(p.render() for p in problems))
    return gt


def fetch_sdist(package: str, version: str, cache: Path) -> Path:
    """The extracted sdist root of ``package==version`` (downloaded once into ``cache``)."""
    root = cache / "src" / f"{package}-{version}"
    if root.is_dir():
        return root
    sdist = download_sdist(package, version, cache / "download")
    with tarfile.open(sdist) as archive:
        archive.extractall(cache / "src", filter="data")
    if not root.is_dir():
        raise SystemExit(f"{sdist} did not extract to {root}")
    return root


def suite_names() -> list[str]:
    return ["example", *sorted(p.name for p in SUITES.iterdir() if (p / "suite.json").is_file())]


def load_suite(name: str, cache: Path = DEFAULT_CACHE) -> Suite:
    if name == "example":
        return Suite(name, example_root(),
                     _ground_truth(REPO / "evaluator" / "data"
                                   / "sample_project.retrieval_queries.json"))
    folder = SUITES / name
    meta = json.loads((folder / "suite.json").read_text(encoding="utf-8"))
    root = fetch_sdist(meta["package"], meta["version"], cache)
    return Suite(f"{name} {meta['version']}", root,
                 _ground_truth(folder / "retrieval_queries.json"))
