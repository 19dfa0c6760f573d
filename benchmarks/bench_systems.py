"""What the bm25 reference system and the judge cost beside a NeuralMind run, and how the
systems rank. Prints figures; asserts nothing.

On click (the whole sdist: ~2,500 NeuralMind nodes; ``--suite requests`` for requests) copied
into a temporary folder:

1. NeuralMind: a cold build (default backend, real MiniLM model), then every question of
   the click suite(s), read-only — the NeuralMind-only run;
2. the judge on each returned context: the headline (terms + similarity route, with its
   model load), the terms rule alone, and N-15's;
3. bm25 (``evaluator.bm25``) over the same files: build and questions.

Goals (issue 12): NeuralMind + bm25 ≤ 1.3× NeuralMind alone; the judge ≤ 5% of the run.
The ranking table gives nDCG@5 / recall@5 / MRR per system and suite.

``--repeat N`` repeats the cold NeuralMind build N times (median).

``--cli`` instead runs the real command line twice on a git checkout of click, cold each
time: ``evaluate`` and ``evaluate --systems neuralmind,bm25`` (``--systems`` and
``--budget`` set the second run's), and prints the wall-time and CPU-time ratios (CPU: the
child process's user + system time, less sensitive than wall time to the other load of a
shared machine) and the same-process estimate ``total_s / (total_s − systems_s)`` of the
second run (the load of a shared machine slows both parts of one run alike).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from suitelib import DEFAULT_CACHE, REPO, SUITES, _ground_truth, load_suite

sys.path.insert(0, str(REPO))

from neuralmind import project_eval

from evaluator.bm25 import BM25Index
from evaluator.core.groundtruth import GroundTruth
from evaluator.core.judge import judge
from evaluator.core.metrics import Gain, ndcg_at_k, recall_at_k, reciprocal_rank
from evaluator.judging import cached_embedder, n15_columns, similarity_of
from evaluator.model import resolve_model
from evaluator.neuralmind_index import NeuralMindIndex, cached_model_dir, model_env
from evaluator.snapshot import checkout_files


def metrics(rankings: dict[str, tuple[str, ...]], gt: GroundTruth) -> str:
    nd, rc, rr = [], [], []
    for q in gt.queries:
        ranking = rankings[q.id]
        nd.append(ndcg_at_k(ranking, q.grades, 5, gain=Gain.EXPONENTIAL))
        rc.append(recall_at_k(ranking, q.grades, 5, threshold=1))
        rr.append(reciprocal_rank(ranking, q.grades, 5, threshold=1))
    return (f"{statistics.fmean(nd):.3f} | {statistics.fmean(rc):.3f} | "
            f"{statistics.fmean(rr):.3f}")


def cli_ratio(cache: Path, systems: str = "neuralmind,bm25", budget: str | None = None) -> None:
    """NeuralMind-only vs NeuralMind + the ``systems`` references (at ``budget`` when
    given) through the CLI, each cold."""
    import json
    import resource
    import subprocess

    from benchlib import child_env, cli_command, make_checkout

    suite = load_suite("click", cache)
    work = Path(tempfile.mkdtemp(prefix="bench-systems-cli-"))
    try:
        repo = work / "click"
        shutil.copytree(suite.root, repo)
        make_checkout(repo, "click")
        queries = SUITES / "click" / "retrieval_queries.json"
        rows = []
        second = ["--systems", systems, *(["--budget", budget] if budget else [])]
        for label, extra in (("neuralmind", []), (" ".join(second), second)):
            out, cache_dir = work / f"out-{len(rows)}", work / f"cache-{len(rows)}"
            argv = [*cli_command(), "evaluate", str(repo), "--queries",
                    str(queries), "--cache-dir", str(cache_dir), "--output-dir", str(out),
                    "--quiet", *extra]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.perf_counter()
            proc = subprocess.run(argv, cwd=REPO, env=child_env(keep_model=True),
                                  capture_output=True, text=True, check=False)
            wall = time.perf_counter() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if proc.returncode not in (0, 1):
                raise SystemExit(proc.stderr)
            timings = json.loads((out / "results.json").read_text())["run"]["timings"]
            rows.append((label, wall, cpu, timings))
        print("| run | wall s | CPU s | total_s | build_s | systems_s |\n"
              "|---|---|---|---|---|---|")
        for label, wall, cpu, t in rows:
            print(f"| {label} | {wall:.1f} | {cpu:.1f} | {t['total_s']:.1f} | "
                  f"{t['build_s']:.1f} | {t.get('systems_s', 0.0):.2f} |")
        t2 = rows[1][3]
        print(f"\nwall-time ratio: {rows[1][1] / rows[0][1]:.3f}×; CPU-time ratio: "
              f"{rows[1][2] / rows[0][2]:.3f}×; same-process estimate: "
              f"{t2['total_s'] / (t2['total_s'] - t2['systems_s']):.3f}×")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--cli", action="store_true")
    parser.add_argument("--systems", default="neuralmind,bm25",
                        help="with --cli: the systems of the second run")
    parser.add_argument("--budget", metavar="N|neuralmind",
                        help="with --cli: the second run's --budget")
    parser.add_argument("--suite", default="click",
                        help="the benchmarks/suites suite (and sdist) to run on, e.g. requests")
    args = parser.parse_args(argv)
    if args.cli:
        cli_ratio(args.cache, args.systems, args.budget)
        return
    suite = load_suite(args.suite, args.cache)
    suites = {f"{args.suite} (hand-written, plain facts)": suite.ground_truth}
    if args.suite == "click":
        suites["click (benchmarks/click_queries.json)"] = _ground_truth(
            SUITES.parent / "click_queries.json")
    work = Path(tempfile.mkdtemp(prefix="bench-systems-"))
    try:
        model = resolve_model(work / "model-cache", os.environ,
                              cached_model_dir=cached_model_dir)
        builds, queries_s, judge_s, n15_s, terms_s = [], 0.0, 0.0, 0.0, 0.0
        asked = facts = 0
        load_s = model_s = 0.0
        similar = None
        rankings: dict[str, dict[str, tuple[str, ...]]] = {}
        nodes = 0
        for run in range(args.repeat):
            tree = work / f"tree{run}"
            shutil.copytree(suite.root, tree)
            index = NeuralMindIndex(tree, backend="auto", graph_source="builtin", model=model)
            t = time.perf_counter()
            nodes = index.build().nodes
            builds.append(time.perf_counter() - t)
            if run:
                index.close()
                continue
            # The judge's similarity route, set up as an evaluation does: after the build, in
            # the same process (NeuralMind's ONNX session for this model folder is shared).
            t = time.perf_counter()
            with model_env(model.path):
                loaded = cached_embedder(model.path)
                loaded(["probe"])
            load_s = time.perf_counter() - t
            judge_s += load_s

            def embed(texts: Sequence[str], loaded: Any = loaded) -> Any:
                nonlocal model_s
                t = time.perf_counter()
                with model_env(model.path):
                    out = loaded(texts)
                model_s += time.perf_counter() - t
                return out

            similar = similarity_of(embed)
            for name, gt in suites.items():
                rankings[name] = {}
                for q in gt.queries:
                    t = time.perf_counter()
                    with model_env(model.path):
                        result = index._mind.query(q.question, learn=False)
                        ranked = project_eval.rank_files(result.top_search_hits, index._mind)
                    queries_s += time.perf_counter() - t
                    rankings[name][q.id] = tuple(ranked)
                    context = str(result.context or "")
                    t = time.perf_counter()
                    judge(context, q.gold_facts)
                    terms_s += time.perf_counter() - t
                    t = time.perf_counter()
                    verdict = judge(context, q.gold_facts, similar=similar)
                    judge_s += time.perf_counter() - t
                    asked += sum(f.similarity is not None for f in verdict.facts)
                    facts += len(verdict.facts)
                    t = time.perf_counter()
                    n15_columns(context, q.gold_facts)
                    n15_s += time.perf_counter() - t
            index.close()
        build_s = statistics.median(builds)
        files = checkout_files(suite.root, exclude=[])
        t = time.perf_counter()
        bm25 = BM25Index(suite.root, files)
        bm25_build = time.perf_counter() - t
        bm25_rank: dict[str, dict[str, tuple[str, ...]]] = {}
        t = time.perf_counter()
        for name, gt in suites.items():
            bm25_rank[name] = {q.id: bm25.ask(q.question).ranked_modules for q in gt.queries}
        bm25_queries = time.perf_counter() - t
        nm = build_s + queries_s
        n_questions = sum(len(gt.queries) for gt in suites.values())
        print(f"{args.suite} {suite.root.name}: {nodes} NeuralMind nodes, {len(bm25.modules)} bm25 "
              f"modules, {n_questions} questions (median of {args.repeat} cold build(s))\n")
        print("| part | seconds | vs NeuralMind alone |")
        print("|---|---|---|")
        for label, sec in (("NeuralMind build", build_s), ("NeuralMind queries", queries_s),
                           ("bm25 build (tokenize + index)", bm25_build),
                           ("bm25 queries", bm25_queries),
                           ("headline judge (terms + similarity route), all contexts, "
                            "with its model load", judge_s),
                           ("  of which the model load", load_s),
                           ("  of which the model's embedding", model_s),
                           ("terms rule alone, all contexts", terms_s),
                           ("N-15 judge, all contexts", n15_s)):
            print(f"| {label} | {sec:.3f} | {100 * sec / nm:.2f}% |")
        print(f"\nfacts sent to the similarity route: {asked} of {facts}")
        print(f"\nNeuralMind + bm25 / NeuralMind alone: "
              f"{(nm + bm25_build + bm25_queries) / nm:.3f}×")
        print(f"judge share of a NeuralMind run with both judges: "
              f"{100 * (judge_s + n15_s) / (nm + judge_s + n15_s):.2f}% "
              f"(headline judge alone {100 * judge_s / (nm + judge_s):.2f}%)\n")
        print("| suite | system | nDCG@5 | recall@5 | MRR |")
        print("|---|---|---|---|---|")
        for name, gt in suites.items():
            print(f"| {name} | neuralmind | {metrics(rankings[name], gt)} |")
            print(f"| {name} | bm25 | {metrics(bm25_rank[name], gt)} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
