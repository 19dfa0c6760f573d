"""What ``--budget`` does and costs on a real repository. Prints figures; asserts nothing.

On the ``requests`` suite (the sdist pinned in ``benchmarks/suites/requests``, its
hand-written questions; neither written for this benchmark) made a git checkout in a
temporary folder, the real command line runs, each with a cold cache:

1. ``evaluate`` (NeuralMind alone);
2. ``evaluate --systems neuralmind,bm25,neuralmind:synapses=off`` (no budget);
3. the same with ``--budget neuralmind``;
4. the same with ``--budget N`` (``--fixed``, default 400).

For runs 3 and 4 it prints each system's mean context tokens against the budget (goal:
within 10 %), and for every run the wall time, ``total_s`` and ``systems_s``: the budget's
cost is run 3 against run 2 (the cut, and the frontier's judging at five budgets) and run 3
against run 1 (goal ≤ 1.5×). Quality per system (nDCG@5, faithfulness) is printed for the
closing note.

``--backend in_memory`` runs without the model (deterministic, faster); the default is
NeuralMind's own backend with the real MiniLM model from the ``model`` extra.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from suitelib import DEFAULT_CACHE, REPO, SUITES, load_suite

sys.path.insert(0, str(REPO))

from evaluator.cli import IO, main

SYSTEMS = "neuralmind,bm25,neuralmind:synapses=off"


def checkout(root: Path, into: Path) -> Path:
    shutil.copytree(root, into)
    env = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com",
           "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "sdist"]):
        subprocess.run(["git", "-C", str(into), *args], check=True, env=env,
                       capture_output=True)
    return into


def run(repo: Path, queries: Path, work: Path, name: str, *args: str,
        backend: str) -> dict:
    out, cache = work / f"out-{name}", work / f"cache-{name}"
    argv = ["evaluate", str(repo), "--queries", str(queries), "--backend", backend,
            "--output-dir", str(out), "--cache-dir", str(cache), "--baseline", "none",
            "--no-fail-on-floors", "--quiet", *args]
    started = time.perf_counter()
    code = main(argv, io=IO(env=dict(__import__("os").environ), stdout=io.StringIO(),
                            stderr=(err := io.StringIO())))
    wall = time.perf_counter() - started
    if code not in (0, 1):
        raise SystemExit(f"{name}: exit {code}\n{err.getvalue()}")
    doc = json.loads((out / "results.json").read_text(encoding="utf-8"))
    doc["wall_s"] = wall
    return doc


def tokens(block: dict) -> list[float]:
    return [q["metrics"]["context_tokens"] for q in block["queries"]]


def report(name: str, doc: dict) -> None:
    t = doc["run"]["timings"]
    print(f"\n{name}: wall {doc['wall_s']:.1f} s, total_s {t['total_s']:.1f}, "
          f"build_s {t['build_s']:.1f}, systems_s {t.get('systems_s', 0.0):.1f} "
          f"({doc['run']['index']['nodes']:,} nodes)")
    blocks = doc.get("systems") or [{"label": "neuralmind", "queries": doc["queries"],
                                     "overall": doc["overall"]}]
    budget = statistics.fmean(tokens(blocks[0]))
    print("| system | nDCG@5 | faithfulness | mean context tokens | vs the first's |")
    print("|---|---:|---:|---:|---:|")
    for block in blocks:
        m = block["overall"]["metrics"]
        mean = statistics.fmean(tokens(block))
        faith = m.get("faithfulness")
        print(f"| {block['label']} | {m['ndcg@5']:.3f} | "
              f"{'—' if faith is None else f'{faith:.3f}'} | {mean:,.0f} | "
              f"{(mean - budget) / budget:+.1%} |")
    for block in blocks:
        if block.get("frontier"):
            points = ", ".join(f"{p['scale']:g}x: {p['quality']:.3f} at {p['tokens']:.0f}"
                               for p in block["frontier"])
            print(f"  frontier {block['label']}: {points}")


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", default="requests", choices=sorted(
        p.name for p in SUITES.iterdir() if (p / "suite.json").is_file()))
    parser.add_argument("--backend", default="auto")
    parser.add_argument("--fixed", type=int, default=400)
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args(argv)
    suite = load_suite(args.suite, args.cache)
    with tempfile.TemporaryDirectory(prefix="bench-budget-") as tmp:
        work = Path(tmp)
        repo = checkout(suite.root, work / args.suite)
        queries = SUITES / args.suite / "retrieval_queries.json"
        print(f"suite {suite.name}: {len(suite.ground_truth.queries)} questions, backend "
              f"{args.backend}")
        alone = run(repo, queries, work, "alone", backend=args.backend)
        report("1. NeuralMind alone", alone)
        plain = run(repo, queries, work, "systems", "--systems", SYSTEMS,
                    backend=args.backend)
        report(f"2. --systems {SYSTEMS}", plain)
        budget = run(repo, queries, work, "budget", "--systems", SYSTEMS, "--budget",
                     "neuralmind", backend=args.backend)
        report("3. ... --budget neuralmind", budget)
        fixed = run(repo, queries, work, "fixed", "--systems", SYSTEMS, "--budget",
                    str(args.fixed), backend=args.backend)
        report(f"4. ... --budget {args.fixed}", fixed)
        for name, doc, limit in (("neuralmind", budget, None), (str(args.fixed), fixed,
                                                                 args.fixed)):
            first = statistics.fmean(tokens(doc["systems"][0]))
            target = first if limit is None else limit
            worst = max(abs(statistics.fmean(tokens(b)) - target) / target
                        for b in doc["systems"])
            print(f"\n--budget {name}: target {target:,.0f} tokens; the largest deviation "
                  f"of a system's mean context from it: {worst:.1%} (goal ≤ 10 %)")
        a, p, b = (d["run"]["timings"] for d in (alone, plain, budget))
        print(f"\ncost: --budget neuralmind run / NeuralMind alone: total_s "
              f"{b['total_s'] / a['total_s']:.2f}x, wall {budget['wall_s'] / alone['wall_s']:.2f}x"
              f" (goal ≤ 1.5x); same-process estimate total_s / (total_s − systems_s) "
              f"{b['total_s'] / (b['total_s'] - b['systems_s']):.2f}x")
        print(f"cost of the budget itself (run 3 against run 2): systems_s "
              f"{b['systems_s']:.1f} s against {p['systems_s']:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
