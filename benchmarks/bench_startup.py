"""Benchmark for issue 21 item 7: how long the CLI takes to start for commands that need
little, and which heavy libraries it imports on the way.

    .venv/bin/python benchmarks/bench_startup.py [--repeat 15] [--before DIR]

Each command runs in a fresh child process (the console script next to this interpreter):
``--version``, ``--help``, ``evaluate --help`` and ``validate`` on a copy of the bundled
example with its ground truth. The wall time and the child's CPU time (user + system) are
the medians over ``--repeat`` runs; a second child per command lists which of requests,
jinja2 and neuralmind were imported and how many modules were loaded. With ``--before DIR``
(another checkout of this repository, e.g. ``git archive main | tar -x -C DIR``) each
command also runs with ``PYTHONPATH=DIR`` — that tree's ``evaluator`` — interleaved with
the current one, so both see the same machine load. Nothing is asserted on time: the script
prints figures and exits 0.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import child_env, cli_command, machine_line, median, table, versions

HEAVY = ("requests", "jinja2", "neuralmind")
PROBE = """
import contextlib, io, json, sys
from evaluator.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
heavy = {m.split('.')[0] for m in sys.modules} & {"requests", "jinja2", "neuralmind"}
print(json.dumps({"heavy": sorted(heavy), "modules": len(sys.modules)}))
"""


def sample_checkout(work: Path) -> Path:
    """The bundled example with its ground truth, as a checkout ``validate`` can read."""
    from evaluator.neuralmind_index import example_root
    from evaluator.paths import EXAMPLE_QUERIES

    root = work / "sample"
    shutil.copytree(example_root(), root, ignore=shutil.ignore_patterns("__pycache__",
                                                                        ".neuralmind"))
    shutil.copy(EXAMPLE_QUERIES, root / "retrieval_queries.json")
    return root


def env_for(tree: Path | None) -> dict[str, str]:
    env = child_env()
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def imported(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """Which heavy libraries the command imported (run from ``cwd``, outside any checkout:
    ``python -c`` puts the current folder first on the path)."""
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, check=False, cwd=cwd)
    try:
        found = json.loads(proc.stdout.splitlines()[-1])
    except (IndexError, ValueError):
        return f"probe failed: {proc.stderr.strip()[-200:]}"
    return f"{', '.join(found['heavy']) or 'none'} ({found['modules']} modules)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        sample = sample_checkout(work)
        commands = {"--version": ["--version"], "--help": ["--help"],
                    "evaluate --help": ["evaluate", "--help"],
                    "validate": ["validate", str(sample)]}
        trees: dict[str, Path | None] = {"this tree": None}
        if args.before is not None:
            trees = {"before": args.before.resolve(), **trees}
        walls: dict[tuple[str, str], list[float]] = {}
        cpus: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.repeat):
            for name, command in commands.items():
                for label, tree in trees.items():
                    wall, cpu = timed([*cli_command(), *command], env_for(tree))
                    walls.setdefault((name, label), []).append(wall)
                    cpus.setdefault((name, label), []).append(cpu)
        print(f"bench_startup: {versions()}")
        print(machine_line())
        print(f"CLI: {' '.join(cli_command())}; median of {args.repeat} runs, interleaved\n")
        rows = []
        for name, command in commands.items():
            for label, tree in trees.items():
                rows.append([f"{name} ({label})", f"{median(walls[name, label]):.3f}",
                             f"{median(cpus[name, label]):.3f}",
                             imported(command, env_for(tree), work)])
        print(table(["command", "wall s", "CPU s", "heavy imports"], rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
