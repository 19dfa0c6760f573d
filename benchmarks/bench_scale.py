"""How evaluation time and peak memory grow with the index size and the number of questions.

Two series, each run through the real CLI in a child process (the way CI runs it), with the
default backend and the real embedding model:

1. **Index size.** Roots made of 1, 2, 3 and 4 whole sdists (tomli; + itsdangerous;
   + attrs; + click — source, tests and docs), each evaluated cold (fresh cache) with the
   same number of questions. Prints files, nodes, build and query time, wall time and the
   child's peak resident memory.
2. **Questions.** The largest root with its index warm in the cache (so the build is a
   cache hit), asked 10, 100 and 400 questions (``--questions``).

The questions are generated from the tree, deterministically: one per function, "What does
NAME do?", graded 3 on the module that defines it, gold facts ``def NAME(`` and the module
name. They measure cost, not quality. Nothing here gates on time.

    python benchmarks/bench_scale.py [--sdist-cache DIR] [--questions 10,100,400]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import monorepo
from benchlib import child_env, cli_command, machine_line, table

ORDER = ("tomli", "itsdangerous", "attrs", "click")  # small to large
_DEF = re.compile(r"^\s*def ([A-Za-z_][A-Za-z0-9_]*)\(", re.MULTILINE)
# The child's own peak RSS: a tiny wrapper process reports RUSAGE_CHILDREN of its one child.
_WRAP = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
         "print('maxrss_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, "
         "file=sys.stderr); sys.exit(p.returncode)")


def questions(root: Path, count: int) -> dict[str, Any]:
    """``count`` questions, one per function, spread over the tree's modules."""
    found: list[tuple[str, str]] = []
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [(module, name) for name in dict.fromkeys(_DEF.findall(text))]
    if len(found) < count:
        raise SystemExit(f"{root} has only {len(found)} functions; ask fewer questions")
    step = len(found) / count
    picked = [found[int(i * step)] for i in range(count)]
    universe = sorted({m for m, _ in picked})
    return {"queries": [
        {"id": f"q{i:04d}", "question": f"What does {name} do?",
         "shape": ("focused", "cross-file", "identity")[i % 3],
         "relevance_grades": {m: 3 if m == module else 0 for m in universe},
         "gold_facts": [f"def {name}(", Path(module).stem]}
        for i, (module, name) in enumerate(picked)]}


def evaluate(root: Path, queries: Path, cache: Path, out: Path) -> dict[str, Any]:
    env = child_env(keep_model=True)
    argv = [sys.executable, "-c", _WRAP, *cli_command(), "evaluate", str(root), "--queries",
            str(queries), "--cache-dir", str(cache), "--output-dir", str(out), "--quiet",
            "--no-fail-on-floors"]
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    rss = next(int(line.split()[1]) for line in reversed(proc.stderr.splitlines())
               if line.startswith("maxrss_kb "))
    run = json.loads((out / "results.json").read_text(encoding="utf-8"))["run"]
    return {"wall_s": wall, "peak_mb": rss / 1024, "nodes": run["index"]["nodes"],
            "files": run["index"]["files"], "build_s": run["timings"]["build_s"],
            "queries_s": run["timings"]["queries_s"], "total_s": run["timings"]["total_s"]}


def tree(work: Path, cache: Path, names: tuple[str, ...]) -> Path:
    root = work / ("+".join(names))
    packages = tuple(p for p in monorepo.PACKAGES if p.name in names)
    monorepo.build(root, cache, packages, options=False)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sdist-cache", type=Path, default=monorepo.default_sdist_cache())
    parser.add_argument("--questions", default="10,100,400")
    parser.add_argument("--size-questions", type=int, default=10,
                        help="questions asked in the index-size series")
    args = parser.parse_args()
    counts = [int(c) for c in args.questions.split(",")]
    print(machine_line())
    work = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    try:
        rows, largest = [], None
        for n in range(1, len(ORDER) + 1):
            root = tree(work, args.sdist_cache, ORDER[:n])
            qfile = work / f"q-size-{n}.json"
            qfile.write_text(json.dumps(questions(root, args.size_questions)))
            cache = work / f"cache-size-{n}"
            fig = evaluate(root, qfile, cache, work / f"out-size-{n}")
            rows.append(["+".join(ORDER[:n]), fig["files"], fig["nodes"], args.size_questions,
                         f"{fig['build_s']:.1f}", f"{fig['queries_s']:.1f}",
                         f"{fig['wall_s']:.1f}", f"{fig['peak_mb']:.0f}"])
            largest = (root, cache)
            print(f"  size {n}: {fig}", file=sys.stderr)
        print("\nIndex size (cold build, fresh cache each):")
        print(table(["root", "files", "nodes", "questions", "build s", "queries s", "wall s",
                     "peak MB"], rows))
        assert largest is not None
        root, cache = largest
        rows = []
        for count in counts:
            qfile = work / f"q-count-{count}.json"
            qfile.write_text(json.dumps(questions(root, count)))
            fig = evaluate(root, qfile, cache, work / f"out-count-{count}")
            rows.append([count, fig["nodes"], f"{fig['build_s']:.1f}", f"{fig['queries_s']:.1f}",
                         f"{1000 * fig['queries_s'] / count:.0f}", f"{fig['wall_s']:.1f}",
                         f"{fig['peak_mb']:.0f}"])
            print(f"  questions {count}: {fig}", file=sys.stderr)
        print(f"\nQuestions ({root.name}, index warm in the cache):")
        print(table(["questions", "nodes", "build s", "queries s", "ms/question", "wall s",
                     "peak MB"], rows))
        print(f"\n{machine_line()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
