"""Sharded evaluation of a real monorepo: per-job wall time for 1, 2 and 4 shards, and
whether the merged result equals the unsharded run.

The monorepo (:mod:`monorepo`) holds four packages from the package index — click, attrs,
itsdangerous, tomli — each a section with its own ground truth. Every job runs the real
CLI in a child process with a cache of its own (a fresh runner of a matrix, the cold case):

* **by section**: ``evaluate REPO --shard I/N`` — each job builds only its sections'
  indexes;
* **by question** (``--by-question``, click alone, no sections): each job builds the whole
  index and asks its share of the questions.

Then ``merge`` joins the parts, and the merged ``results.json`` is compared with the
unsharded one on everything but timings and start time. Nothing here gates on time.

    python benchmarks/bench_shards.py [--sdist-cache DIR] [--shards 1,2,4]
        [--backend auto|in_memory] [--by-question]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import monorepo
from benchlib import child_env, cli_command, machine_line, table

_NOT_METRICS = ("timings", "started_at")


def run(*args: str) -> float:
    """Run the CLI; its wall time. Exit 0 or 1 (a floor missed) is fine."""
    env = child_env(keep_model=True)
    start = time.perf_counter()
    proc = subprocess.run([*cli_command(), *args], env=env, capture_output=True, text=True,
                          check=False)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"retrieval-eval {' '.join(args)} exited {proc.returncode}:\n"
                         f"{proc.stderr}")
    return wall


def metrics_view(path: Path) -> dict[str, Any]:
    """A results file without what says when it ran and how long it took (start time,
    durations, per-query latency) or whether the index came from a cache."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for body in (data, *data.get("sections", {}).values()):
        body["run"] = {k: v for k, v in body["run"].items() if k not in _NOT_METRICS}
        body["run"].get("index", {}).pop("cached", None)
        for query in body.get("queries", []):
            query.pop("latency_ms", None)
    return dict(data)


def differences(a: Any, b: Any, where: str = "") -> list[str]:
    """Where two JSON values differ (the first few paths)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{where}.{k}: only on one side" for k in sorted(set(a) ^ set(b))]
        for key in a.keys() & b.keys():
            out += differences(a[key], b[key], f"{where}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True))
                for d in differences(x, y, f"{where}[{i}]")]
    return [] if a == b else [f"{where}: {str(a)[:60]} != {str(b)[:60]}"]


def series(repo: Path, work: Path, shard_counts: list[int], common: list[str],
           label: str) -> list[list[object]]:
    rows: list[list[object]] = []
    whole = work / f"{label}-whole"
    whole_wall = run("evaluate", str(repo), "--cache-dir", str(work / f"{label}-cache-whole"),
                     "--output-dir", str(whole), *common)
    for total in shard_counts:
        if total == 1:
            rows.append([label, 1, f"{whole_wall:.1f}", f"{whole_wall:.1f}",
                         f"{whole_wall:.1f}", "(the unsharded run)"])
            continue
        walls, parts = [], []
        for index in range(1, total + 1):
            out = work / f"{label}-{total}-{index}"
            walls.append(run("evaluate", str(repo), "--shard", f"{index}/{total}",
                             "--cache-dir", str(work / f"{label}-cache-{total}-{index}"),
                             "--output-dir", str(out), *common))
            parts += sorted(str(p) for p in out.glob("results.part-*.json"))
        merged = work / f"{label}-{total}-merged"
        run("merge", *parts, "--output-dir", str(merged))
        diff = differences(metrics_view(whole / "results.json"),
                           metrics_view(merged / "results.json"))
        same = not diff
        for line in diff[:10]:
            print(f"  differs: {line}", file=sys.stderr)
        rows.append([label, total, " ".join(f"{w:.1f}" for w in walls), f"{max(walls):.1f}",
                     f"{sum(walls):.1f}", "yes" if same else "NO"])
        print(f"  {label} {total} shards: {walls} merged==unsharded {same}", file=sys.stderr)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist-cache", type=Path, default=monorepo.default_sdist_cache())
    parser.add_argument("--shards", default="1,2,4")
    parser.add_argument("--backend", default="auto", choices=("auto", "in_memory"))
    parser.add_argument("--by-question", action="store_true",
                        help="also shard click's questions (no sections)")
    args = parser.parse_args()
    counts = sorted({int(c) for c in args.shards.split(",")} | {1})
    print(machine_line())
    work = Path(tempfile.mkdtemp(prefix="bench-shards-"))
    try:
        repo = work / "monorepo"
        commit = monorepo.build(repo, args.sdist_cache)
        print(f"monorepo {commit[:12]}: " + ", ".join(
            f"{p.name} {p.version} ({monorepo.section_path(p)})" for p in monorepo.PACKAGES))
        common = ["--backend", args.backend, "--quiet"]
        rows = series(repo, work, counts, common, "sections")
        if args.by_question:
            click = work / "click"
            monorepo.build(click, args.sdist_cache, monorepo.PACKAGES[:1], options=False)
            queries = click / "packages" / "click" / "retrieval_queries.json"
            rows += series(click / "packages" / "click" / "src" / "click", work, counts,
                           [*common, "--queries", str(queries)], "questions")
        print()
        print(table(["split", "shards", "per-job wall s", "slowest s", "sum s",
                     "merged == unsharded"], rows))
        print(f"\n{machine_line()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
