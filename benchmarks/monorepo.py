"""A real multi-package repository for the shard and scale benchmarks (and their tests).

Four packages from the package index, pinned, each fetched once as its sdist with
``pip download --no-deps --no-binary :all: NAME==VERSION`` into a cache folder (default
``~/.cache/neuralmind-retrieval-eval-bench/sdists``, or ``--sdist-cache``) and extracted
into ``packages/NAME/`` of a fresh git repository. Their source is never committed here.

Each package is a section indexing its source folder (``.py`` files only), with a small
ground truth authored for it (``benchmarks/monorepo/NAME.json``; click's is derived from
``benchmarks/click_queries.json``, whose paths are relative to the sdist root).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from benchlib import download_sdist

HERE = Path(__file__).resolve().parent
GROUND_TRUTH = HERE / "monorepo"


@dataclass(frozen=True)
class Package:
    name: str  # the project on the package index (and the section name)
    version: str
    source: str  # the section's folder inside the sdist

    @property
    def sdist(self) -> str:
        return f"{self.name}-{self.version}.tar.gz"


PACKAGES = (
    Package("click", "8.5.1", "src/click"),
    Package("attrs", "26.1.0", "src/attr"),
    Package("itsdangerous", "2.2.0", "src/itsdangerous"),
    Package("tomli", "2.5.0", "src/tomli"),
)


def default_sdist_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neuralmind-retrieval-eval-bench" / "sdists"


def fetch(package: Package, cache: Path) -> Path:
    """The package's sdist in ``cache``, downloaded with pip the first time."""
    return download_sdist(package.name, package.version, cache)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), "-c", "user.email=bench@example.com", "-c", "user.name=bench",
         "-c", "commit.gpgsign=false", *args],
        check=True, capture_output=True, text=True).stdout


def ground_truth(package: Package) -> dict[str, object]:
    """The section's ground truth (module paths relative to the section's folder)."""
    if package.name == "click":
        doc = json.loads((HERE / "click_queries.json").read_text(encoding="utf-8"))
        prefix = package.source + "/"
        for query in doc["queries"]:
            query["relevance_grades"] = {m[len(prefix):]: g for m, g in
                                         query["relevance_grades"].items()
                                         if m.startswith(prefix)}
        return dict(doc)
    return dict(json.loads((GROUND_TRUTH / f"{package.name}.json").read_text(encoding="utf-8")))


def section_path(package: Package) -> str:
    return f"packages/{package.name}/{package.source}"


def options_yaml(packages: tuple[Package, ...] = PACKAGES, *, extra: str = "") -> str:
    lines = ["sections:"]
    for p in packages:
        lines += [f"  {p.name}:", f"    path: {section_path(p)}",
                  f"    queries: packages/{p.name}/retrieval_queries.json",
                  "    include: ['**/*.py']"]
    return "\n".join(lines) + "\n" + extra


def build(dest: Path, cache: Path, packages: tuple[Package, ...] = PACKAGES, *,
          options: bool = True) -> str:
    """A git repository at ``dest`` holding every package's sdist under ``packages/NAME``,
    each package's ground truth beside it and (with ``options``) the options file declaring
    one section per package; the commit sha."""
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "packages").mkdir(parents=True)
    for package in packages:
        with tarfile.open(fetch(package, cache)) as archive:
            archive.extractall(dest / "packages", filter="data")
        folder = dest / "packages" / package.name
        (dest / "packages" / f"{package.name}-{package.version}").rename(folder)
        if not (folder / package.source).is_dir():
            raise SystemExit(f"{package.sdist} has no {package.source}")
        (folder / "retrieval_queries.json").write_text(
            json.dumps(ground_truth(package), indent=2) + "\n", encoding="utf-8")
    if options:
        (dest / ".retrieval-eval.yml").write_text(options_yaml(packages), encoding="utf-8")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "monorepo of " + ", ".join(p.name for p in packages))
    return git(dest, "rev-parse", "HEAD").strip()
