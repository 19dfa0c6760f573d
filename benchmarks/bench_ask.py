"""Benchmark for issue 21 item 2: what asking a question and judging its answer costs, per
question, in one process — to check that moving the judging out of the NeuralMind adapter
into the evaluator (``ask(question) -> Answer``, then ``judging.judge_answer``) left the
cost unchanged.

    .venv/bin/python benchmarks/bench_ask.py [--rounds 5] [--before DIR]

The bundled example is indexed once with NeuralMind's deterministic ``in_memory`` backend
(no model); then every ground-truth question is asked and judged (the terms judge and
NeuralMind's ``neuralmind.ragas`` columns, as in a run without the model), ``--rounds``
times in fresh child processes, each asking every question :data:`PASSES` times after a
warm-up pass. The figure is the CPU time (``time.process_time``) of one pass over the
questions, median over rounds, so that other work on the machine moves it less than wall
time. With ``--before DIR`` (another checkout of this repository) each round alternates
between a child process on that tree (``PYTHONPATH=DIR``) and one on this tree; a tree
whose NeuralMind index still judges inside ``ask(query, judge=…)`` is driven that way.
Nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, shutil, sys, tempfile, time
from pathlib import Path
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.model import ModelSource
from evaluator.neuralmind_index import NeuralMindIndex, example_root
queries_file = Path(sys.argv[1])
gt, _ = load_ground_truth(queries_file.read_text(encoding="utf-8"), str(queries_file),
                          present_modules=None, strict=False)
tree = Path(tempfile.mkdtemp()) / "tree"
shutil.copytree(example_root(), tree, ignore=shutil.ignore_patterns("__pycache__", ".neuralmind"))
index = NeuralMindIndex(tree, backend="in_memory", graph_source="builtin",
                        model=ModelSource(None, "not needed"))
index.build()
try:
    from evaluator.judging import judge_answer
    def one(query):
        return judge_answer(query, index.ask(query.question))
    api = "ask(question) -> Answer, judged by the evaluator"
except ImportError:
    def one(query):
        return index.ask(query)[0]
    api = "ask(query) judging inside the adapter"
for query in gt.queries:  # warm-up: imports, NeuralMind's caches
    one(query)
passes = int(sys.argv[2])
start = time.process_time()
for _ in range(passes):
    rows = [one(query) for query in gt.queries]
cpu = (time.process_time() - start) / passes
index.close()
shutil.rmtree(tree.parent, ignore_errors=True)
print(json.dumps({"api": api, "cpu": cpu, "n": len(rows),
                  "faithfulness": sum(r.faithfulness.faithfulness for r in rows) / len(rows)}))
"""


PASSES = 10  # each child asks and judges every question this many times after a warm-up


def run(tree: Path | None, queries: Path, work: Path) -> dict[str, object]:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    proc = subprocess.run([sys.executable, "-c", CHILD, str(queries), str(PASSES)], env=env,
                          cwd=work,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    result: dict[str, object] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout to compare with")
    args = parser.parse_args(argv)
    from benchlib import machine_line, versions

    from evaluator.paths import EXAMPLE_QUERIES

    trees: dict[str, Path | None] = {"this tree": None}
    if args.before is not None:
        trees = {"before": args.before.resolve(), **trees}
    work = Path(tempfile.mkdtemp(prefix="bench-ask-"))
    results: dict[str, list[dict[str, object]]] = {label: [] for label in trees}
    try:
        for _ in range(args.rounds):
            for label, tree in trees.items():
                results[label].append(run(tree, EXAMPLE_QUERIES, work))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"bench_ask: {versions()}")
    print(machine_line())
    print(f"bundled example, backend in_memory, {args.rounds} rounds, CPU seconds per round "
          "(every question asked and judged once)\n")
    print("| tree | interface | questions | CPU s per round (median) | range | mean "
          "faithfulness |")
    print("|---|---|---|---|---|---|")
    for label, rows in results.items():
        cpus = [float(str(r["cpu"])) for r in rows]
        print(f"| {label} | {rows[0]['api']} | {rows[0]['n']} | "
              f"{statistics.median(cpus):.3f} | {min(cpus):.3f}-{max(cpus):.3f} | "
              f"{float(str(rows[0]['faithfulness'])):.4f} |")


if __name__ == "__main__":
    main()
