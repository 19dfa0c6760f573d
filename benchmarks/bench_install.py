"""A fresh installation, the way the README's first command does it: time, size, contents.

    python benchmarks/bench_install.py [--spec '.[model]'] [--wheel] [--keep DIR]

Creates a fresh virtual environment with ``python3 -m venv`` and installs the project into it
with pip (``--spec``, default ``<repo>[model]``; ``--wheel`` first builds the sdist and the
wheel with ``python -m build`` and installs the wheel, then the sdist into a second
environment). Prints, for each environment:

* the wall time of ``pip install`` (run it twice for a warm package cache: the first run of
  the day also downloads), against the goal of at most 60 s on a warm cache;
* its size on disk (``du``), against the goal of at most 700 MB;
* the number of distributions, and any torch / CUDA (nvidia-*) / triton / pandas /
  matplotlib distribution (there should be none);
* ``retrieval-eval --version`` and the exit code and time of ``retrieval-eval evaluate
  --example`` run from an empty folder.

Figures are printed, never asserted (see benchmarks/README.md).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MB = 700
GOAL_S = 60
FORBIDDEN = ("torch", "triton", "pandas", "matplotlib", "nvidia-")


def du_mb(path: Path) -> float:
    out = subprocess.run(["du", "-sk", str(path)], capture_output=True, text=True, check=True)
    return int(out.stdout.split()[0]) / 1024


def measure(spec: str, venv: Path, label: str) -> None:
    started = time.monotonic()
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True)
    proc = subprocess.run([str(venv / "bin" / "pip"), "install", "-q", spec],
                          capture_output=True, text=True)
    took = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"pip install {spec} failed:\n{proc.stderr[-3000:]}")
    size = du_mb(venv)
    listed = subprocess.run([str(venv / "bin" / "pip"), "list", "--format", "freeze"],
                            capture_output=True, text=True, check=True).stdout.split()
    names = [line.split("==")[0].lower() for line in listed]
    bad = [n for n in names if n.startswith(FORBIDDEN)]
    print(f"\n{label}: pip install {spec}")
    print(f"  venv + install: {took:6.1f} s   (goal ≤ {GOAL_S} s on a warm cache)")
    print(f"  size on disk:   {size:6.0f} MB  (goal ≤ {GOAL_MB} MB)")
    print(f"  distributions:  {len(names):6d}     GPU/data-science stack: {bad or 'none'}")
    exe = venv / "bin" / "retrieval-eval"
    version = subprocess.run([str(exe), "--version"], capture_output=True, text=True)
    print(f"  --version:      {version.stdout.strip() or version.stderr.strip()}")
    with tempfile.TemporaryDirectory() as empty:
        started = time.monotonic()
        example = subprocess.run([str(exe), "evaluate", "--example", "--quiet", "--cache-dir",
                                  str(Path(empty) / "cache")], cwd=empty,
                                 capture_output=True, text=True)
        print(f"  evaluate --example: exit {example.returncode} in "
              f"{time.monotonic() - started:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", default=f"{ROOT}[model]")
    parser.add_argument("--wheel", action="store_true",
                        help="build with python -m build and install the wheel and the sdist")
    parser.add_argument("--keep", type=Path, help="create the environments here and keep them")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-install-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        if not args.wheel:
            measure(args.spec, work / "venv", "source tree")
            return 0
        dist = work / "dist"
        subprocess.run([sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)],
                       check=True, capture_output=True)
        for kind, pattern in (("wheel", "*.whl"), ("sdist", "*.tar.gz")):
            built = next(dist.glob(pattern))
            print(f"{kind}: {built.name} ({built.stat().st_size / 1024:.0f} KiB)")
            measure(f"{built}[model]", work / f"venv-{kind}", kind)
        return 0
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
