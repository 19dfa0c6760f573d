"""Shared helpers for the benchmarks: fetch click, make git checkouts, run the CLI, tabulate.

Every evaluation runs the real command line in a child process (``retrieval-eval`` beside
this interpreter, else ``python -m evaluator``), the way a user or CI runs it, with the
default backend (``auto``) and the real embedding model that the evaluator assembles from
the installed ``model`` extra into the (fresh) cache directory.

Nothing here gates on time: the figures are printed, never asserted.
"""

from __future__ import annotations

import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tarfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CLICK_VERSION = "8.5.1"  # pinned: the version `pip download click` fetched when this was written
CLICK_QUERIES = HERE / "click_queries.json"

# The evaluator resolves the model itself; a value inherited from the caller's shell would
# skip the per-cache-dir model assembly that a cold run includes. GitHub variables would make
# the runner write step summaries/outputs of the benchmark runs into a real workflow.
_DROP_ENV = ("NEURALMIND_ONNX_MODEL_DIR", "GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY",
             "GITHUB_OUTPUT", "GITHUB_EVENT_PATH", "GITHUB_EVENT_NAME", "RETRIEVAL_EVAL_DEBUG")
_PROGRESS = re.compile(r"^\[\s*([0-9.]+)s\] (.*)$")


def cli_command() -> list[str]:
    """How the CLI is started: the console script next to this interpreter if present."""
    script = Path(sys.executable).with_name("retrieval-eval")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "evaluator"]


def child_env(*, keep_model: bool = False) -> dict[str, str]:
    """The environment of a benchmarked child: no GitHub runner variables; with
    ``keep_model`` the caller's NEURALMIND_ONNX_MODEL_DIR stays (a ratio whose two sides use
    the same model folder, so its assembly is in neither)."""
    keep = ("NEURALMIND_ONNX_MODEL_DIR",) if keep_model else ()
    return {k: v for k, v in os.environ.items() if k not in _DROP_ENV or k in keep}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(cwd), "-c", "user.email=bench@example.com", "-c", "user.name=bench",
         "-c", "commit.gpgsign=false", *args],
        check=True, capture_output=True, text=True).stdout


def download_sdist(name: str, version: str, dest: Path) -> Path:
    """``name-version.tar.gz`` in ``dest``, fetched with ``pip download`` (source only, no
    dependencies) unless it is already there."""
    target = dest / f"{name}-{version}.tar.gz"
    if target.is_file():
        return target
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                           "--no-binary", ":all:", f"{name}=={version}", "-d", str(dest)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0 or not target.is_file():
        raise SystemExit(f"pip download {name}=={version} failed (no {target.name} in "
                         f"{dest}):\n{proc.stderr}")
    return target


def fetch_click(workdir: Path, sdist: Path | None = None) -> Path:
    """The click sdist (downloaded with pip unless ``sdist`` is given), extracted; its root."""
    if sdist is None:
        sdist = download_sdist("click", CLICK_VERSION, workdir / "download")
    with tarfile.open(sdist) as archive:
        archive.extractall(workdir / "src", filter="data")
    root = workdir / "src" / f"click-{CLICK_VERSION}"
    if not (root / "src" / "click" / "core.py").is_file():
        raise SystemExit(f"{sdist} is not the click {CLICK_VERSION} sdist")
    return root


def make_checkout(root: Path, message: str) -> str:
    """``git init`` + commit everything in ``root``; the commit sha."""
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)
    return git(root, "rev-parse", "HEAD").strip()


@dataclass
class Run:
    """One CLI run: wall and CPU time of the child process, its results and progress."""

    argv: list[str]
    code: int
    wall_s: float
    cpu_s: float
    stderr: str
    results: dict[str, Any]
    baseline: dict[str, Any] | None
    progress: list[tuple[float, str]] = field(default_factory=list)

    @property
    def timings(self) -> dict[str, float]:
        return dict(self.results["run"]["timings"])

    @property
    def index(self) -> dict[str, Any]:
        return dict(self.results["run"]["index"])

    def at(self, needle: str) -> float | None:
        """Progress timestamp (seconds since the CLI's progress clock started) of the first
        line containing ``needle`` (0.1 s resolution)."""
        return next((t for t, msg in self.progress if needle in msg), None)

    def last_progress(self) -> float:
        return self.progress[-1][0] if self.progress else 0.0


def run_cli(args: Sequence[str], out: Path, *, cwd: Path | None = None) -> Run:
    """Run ``retrieval-eval evaluate ... --output-dir out``; exit 0 or 1 (floors) is fine."""
    argv = [*cli_command(), *args, "--output-dir", str(out)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=child_env(), capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    base_file = out / "baseline-results.json"
    baseline = json.loads(base_file.read_text(encoding="utf-8")) if base_file.is_file() else None
    progress = [(float(m.group(1)), m.group(2)) for line in proc.stderr.splitlines()
                if (m := _PROGRESS.match(line))]
    return Run(argv, proc.returncode, wall, cpu, proc.stderr, results, baseline, progress)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def spread(values: Sequence[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if len(values) > 1 else ""


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(row, widths, strict=True))).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


def machine_line() -> str:
    """Context for reading the figures: CPUs and load (other work on the machine skews wall
    time, not the CPU-time column)."""
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "n/a"
    return (f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s), "
            f"load average {load}")


def versions() -> str:
    from importlib.metadata import version

    return (f"neuralmind-retrieval-eval {version('neuralmind-retrieval-eval')}, "
            f"neuralmind {version('neuralmind')}")
