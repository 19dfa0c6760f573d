"""Benchmark for the issue "deltas against the base": what evaluating the base as well costs.

    .venv/bin/python benchmarks/bench_baseline.py [--rounds 2] [--phases] [--sdist click-X.tar.gz]

click is turned into a git repository with two commits: the base (the sdist as published)
and the head (one file, ``src/click/utils.py``, with one function's docstring and another
function's body edited). Each round measures, with the real CLI in a child process and the
default backend ``auto``:

  (i)   head only, cold:  ``evaluate REPO`` with a fresh cache;
  (iv)  warm re-run:      the same command again on the unchanged head, same cache (the
                          index is reused: ``run.index.cached`` is true);
  (ii)  base + head:      ``evaluate REPO --baseline ref:HEAD~1`` with a fresh cache (the
                          base is built cold, then the head from scratch, embedding only
                          the node texts the base did not: the run's vector memo);
  (iii) naive:            two independent cold evaluations, of a base checkout and of the
                          head checkout, each with its own fresh cache.

Ratios per round, then the median over rounds: base+head / head-only (target <= 1.3x),
naive / head-only (expected >= 2x), warm / cold (target < 10%). The primary figure is the
child's wall time (what a CI job waits for); the same ratios over the evaluator's own
``total_s`` (in-process, without process start and rendering) are shown beside it.
Each round also checks that the head's results of (ii) equal (i)'s, value for value (every
per-question value but the latency, and the aggregates): the memo must not move a number.
Nothing is asserted on time: the script prints figures and exits 0.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import pstats
import re
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchlib import (
    CLICK_QUERIES,
    CLICK_VERSION,
    Run,
    cli_command,
    fetch_click,
    git,
    machine_line,
    make_checkout,
    median,
    run_cli,
    table,
    versions,
)

EDITED = "src/click/utils.py"
# (old, new) pairs applied to EDITED for the head commit: a docstring and a function body.
EDITS = (
    ('def _posixify(name: str) -> str:\n    return "-".join(name.split()).lower()\n',
     'def _posixify(name: str) -> str:\n'
     '    """Lower-case ``name`` and join its words with dashes ("Foo Bar" -> foo-bar)."""\n'
     '    words = name.split()\n'
     '    return "-".join(words).lower()\n'),
    ("    is to return whatever is most appropriate for the operating system.\n",
     "    is to return whatever is most appropriate for the operating system.\n"
     "    The folder is not created: call ``os.makedirs`` on it before writing there.\n"),
)
TARGET_BOTH, EXPECT_NAIVE, TARGET_WARM = 1.3, 2.0, 0.10


def make_repo(tmp: Path, sdist: Path | None) -> tuple[Path, Path]:
    """The repository (checked out at the head) and a separate checkout of the base."""
    repo = fetch_click(tmp / "click", sdist)
    make_checkout(repo, f"base: click {CLICK_VERSION} sdist")
    target = repo / EDITED
    text = target.read_text(encoding="utf-8")
    for old, new in EDITS:
        if text.count(old) != 1:
            raise SystemExit(f"{EDITED} of click {CLICK_VERSION} no longer has {old!r}")
        text = text.replace(old, new)
    target.write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "head: edit _posixify and get_app_dir")
    base_checkout = tmp / "base-checkout"
    git(tmp, "clone", "-q", str(repo), str(base_checkout))
    git(base_checkout, "checkout", "-q", "HEAD~1")
    return repo, base_checkout


def snapshot_counts(run: Run, side: str) -> str:
    msg = next((m for _, m in run.progress if m.startswith(f"{side}") and "snapshot" in m), "")
    found = re.search(r"snapshot (\d+) copied, (\d+) unchanged", msg)
    return f"{found.group(1)} copied/{found.group(2)} unchanged" if found else "?"


def differing(a: Run, b: Run) -> int:
    """How many per-question values (all but the latency) and aggregates differ."""
    def values(run: Run) -> dict[str, Any]:
        doc = run.results
        out = {f"{q['id']}.{k}": v for q in doc["queries"] for k, v in q.items()
               if k != "latency_ms"}
        return out | {"overall": doc["overall"], "by_shape": doc["by_shape"]}

    va, vb = values(a), values(b)
    return sum(1 for key in set(va) | set(vb) if va.get(key) != vb.get(key))


def phases(both: Run) -> list[tuple[str, float]]:
    """Where a base+head run's wall time goes (from results, baseline-results and progress).
    With a baseline the head's ``overhead_s`` is the whole evaluate() call's: everything but
    the four NeuralMind calls, the base side's evaluator work among it (shown on its own)."""
    assert both.baseline is not None
    b, h = both.baseline["run"]["timings"], both.timings
    return [
        ("base: NeuralMind build (cold, every node embedded)", b["build_s"]),
        ("base: NeuralMind queries", b["queries_s"]),
        ("base: evaluator (snapshot sync, cache key, scoring)", b["overhead_s"]),
        ("head: NeuralMind build (from scratch; the memo's vectors)", h["build_s"]),
        ("head: NeuralMind queries", h["queries_s"]),
        ("head: evaluator; setup, git archive of the base, clean-up",
         h["overhead_s"] - b["overhead_s"]),
        ("CLI outside evaluate(): start, imports, comparison, render", both.wall_s
         - h["total_s"]),
    ]


def head_side_and_export(both: Run) -> float:
    """What base+head adds to a head-only run: the head side and the base export."""
    assert both.baseline is not None
    b, h = both.baseline["run"]["timings"], both.timings
    return float(h["total_s"] - b["total_s"])


# (label, file suffix, function) of NeuralMind 4.x build phases, read from a profile of each
# NeuralMind.build call; a name that is gone in another version shows as n/a.
BUILD_PHASES = (
    ("graph regeneration (_resolve_graph)", "neuralmind/core.py", "_resolve_graph"),
    ("type edges (augment_graph)", "neuralmind/type_verifier.py", "augment_graph"),
    ("IR materialisation (_materialize_ir)", "neuralmind/core.py", "_materialize_ir"),
    ("BM25 index (_write_unified_bm25)", "neuralmind/core.py", "_write_unified_bm25"),
    ("freshness check (graph_freshness)", "neuralmind/freshness.py", "graph_freshness"),
    ("embedding step (embed_nodes)", "neuralmind/turbovec_backend.py", "embed_nodes"),
    ("  in it: model load (ONNX session)", "neuralmind/onnx_embedder.py", "_session_factory"),
    ("  in it: encoding texts (embed, incl. load)", "neuralmind/onnx_embedder.py", "embed"),
)


def _cumulative(stats: pstats.Stats, suffix: str, name: str) -> float | None:
    table_ = stats.stats  # type: ignore[attr-defined]
    found = [v[3] for k, v in table_.items() if k[0].endswith(suffix) and k[2] == name]
    return sum(found) if found else None


@contextlib.contextmanager
def profiled_builds() -> Iterator[list[tuple[float, pstats.Stats]]]:
    """Profile every ``NeuralMind.build`` call made in this process (wall s, stats)."""
    from neuralmind.core import NeuralMind

    original = NeuralMind.build
    calls: list[tuple[float, pstats.Stats]] = []

    def build(self: object, *args: object, **kwargs: object) -> object:
        profile = cProfile.Profile()
        start = time.perf_counter()
        try:
            return profile.runcall(original, self, *args, **kwargs)
        finally:
            calls.append((time.perf_counter() - start, pstats.Stats(profile)))

    NeuralMind.build = build
    try:
        yield calls
    finally:
        NeuralMind.build = original


def build_phases(repo: Path, cache: Path) -> None:
    """One base+head evaluation in this process, each NeuralMind.build profiled: what the
    head's build (from scratch since issue 20) spends its time on, next to the base's cold build."""
    from evaluator.cli import IO, main

    out, err = io.StringIO(), io.StringIO()
    with profiled_builds() as calls:
        code = main(["evaluate", str(repo), "--queries", str(CLICK_QUERIES), "--cache-dir",
                     str(cache), "--baseline", "ref:HEAD~1"],
                    io=IO(env={}, stdout=out, stderr=err))
    if code not in (0, 1) or len(calls) != 2:
        print(f"  phase probe failed (exit {code}, {len(calls)} builds):\n{err.getvalue()}")
        return
    rows = []
    for label, suffix, name in BUILD_PHASES:
        cells = [_cumulative(stats, suffix, name) for _, stats in calls]
        rows.append([label, *("n/a" if c is None else f"{c:.2f}" for c in cells)])
    rows.append(["NeuralMind.build total (profiled)", *(f"{w:.2f}" for w, _ in calls)])
    print("\nPhases of NeuralMind.build, in-process under cProfile (seconds, cumulative; "
          "profiling inflates Python-heavy phases, not ONNX inference):")
    print(table(["phase", "base (cold)", "head (from scratch)"], rows))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2, help="rounds of (i)-(iv) (median)")
    parser.add_argument("--sdist", type=Path, help=f"a local click-{CLICK_VERSION}.tar.gz "
                                                   "instead of downloading it with pip")
    parser.add_argument("--phases", action="store_true",
                        help="also profile one base+head run in-process: where NeuralMind's "
                             "build time goes (graph, IR, BM25, embedding, model load)")
    args = parser.parse_args()

    print(f"bench_baseline: {versions()}; click {CLICK_VERSION}")
    print(f"machine: {machine_line()}")
    print(f"CLI: {' '.join(cli_command())} (child process per evaluation, backend auto)")
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp_name:
        tmp = Path(tmp_name)
        repo, base_checkout = make_repo(tmp, args.sdist)
        diff = git(repo, "diff", "--shortstat", "HEAD~1", "HEAD").strip()
        print(f"repository: base = the sdist, head = {EDITED} edited ({diff})\n")
        queries = ["--queries", str(CLICK_QUERIES)]
        rows, both_runs = [], []
        for r in range(args.rounds):
            def cold(root: Path, name: str, *extra: str, r: int = r) -> Run:
                return run_cli(["evaluate", str(root), *queries, "--cache-dir",
                                str(tmp / f"cache-{name}-{r}"), *extra],
                               tmp / f"out-{name}-{r}")

            head = cold(repo, "head")
            warm = cold(repo, "head")  # same cache dir, unchanged tree
            both = cold(repo, "both", "--baseline", "ref:HEAD~1")
            naive_base = cold(base_checkout, "naive-base")
            naive_head = cold(repo, "naive-head")
            if not warm.index["cached"]:
                print(f"  warning: round {r + 1}: the warm run did not reuse the index")
            for run, what in ((head, "head"), (both, "base+head"), (naive_base, "naive base"),
                              (naive_head, "naive head")):
                if run.index["cached"]:
                    print(f"  warning: round {r + 1}: {what} reused an index; not cold")
            assert both.baseline is not None
            rows.append({
                "head": head.wall_s, "both": both.wall_s,
                "naive": naive_base.wall_s + naive_head.wall_s, "warm": warm.wall_s,
                "head_t": head.timings["total_s"],
                "both_t": both.timings["total_s"],  # with a baseline: all of evaluate()
                "naive_t": naive_base.timings["total_s"] + naive_head.timings["total_s"],
                "warm_t": warm.timings["total_s"],
                "head_c": head.cpu_s, "both_c": both.cpu_s,
                "naive_c": naive_base.cpu_s + naive_head.cpu_s, "warm_c": warm.cpu_s,
                # Same-process estimate: this run's base side (a cold build of nearly the same
                # tree) stands in for a head-only run, so machine load hits both alike.
                "both_est": both.wall_s / (both.wall_s - head_side_and_export(both)),
                "one": 1.0,
            })
            both_runs.append(both)
            moved = differing(head, both)
            if moved:
                print(f"  WARNING: round {r + 1}: {moved} head value(s) of base+head differ "
                      "from the head-only run")
            hi, bi = both.index, both.baseline["run"]["index"]
            print(f"  round {r + 1}: head-only {head.wall_s:.2f}s | base+head {both.wall_s:.2f}s "
                  f"(base {bi['nodes_embedded']} embedded; head {hi['nodes_embedded']} "
                  f"embedded, {hi['nodes_reused']} reused; head values = head-only: "
                  f"{'yes' if not moved else 'NO'}; head snapshot "
                  f"{snapshot_counts(both, 'head')}) | naive {naive_base.wall_s:.2f}s + "
                  f"{naive_head.wall_s:.2f}s | warm {warm.wall_s:.2f}s "
                  f"(cached={warm.index['cached']}, total_s {warm.timings['total_s']:.3f}s) "
                  f"| CPU head {head.cpu_s:.1f}s, base+head {both.cpu_s:.1f}s, "
                  f"naive {naive_base.cpu_s + naive_head.cpu_s:.1f}s", flush=True)
        print(f"\nMachine after the runs: {machine_line()}\n")

        def ratio(num: str, den: str) -> float:
            return median([row[num] / row[den] for row in rows])

        def med(key: str) -> str:
            return f"{median([row[key] for row in rows]):.2f}"

        def x(num: str, den: str) -> str:
            return f"{ratio(num, den):.2f}x"

        def pc(num: str, den: str) -> str:
            return f"{100 * ratio(num, den):.1f}%"

        print(f"Median of {args.rounds} round(s) (of 2 = the mean); ratios are per round, "
              "then the median:")
        print(table(
            ["measure", "wall_s", "vs (i), wall", "total_s*", "vs (i), total_s", "cpu_s",
             "vs (i), CPU", "target"],
            [["(i)   head only, cold", med("head"), "1.00x", med("head_t"), "1.00x",
              med("head_c"), "1.00x", ""],
             ["(ii)  base+head, --baseline ref:HEAD~1", med("both"), x("both", "head"),
              med("both_t"), x("both_t", "head_t"), med("both_c"), x("both_c", "head_c"),
              f"<= {TARGET_BOTH}x"],
             ["(iii) naive: two cold evaluations", med("naive"), x("naive", "head"),
              med("naive_t"), x("naive_t", "head_t"), med("naive_c"), x("naive_c", "head_c"),
              f">= {EXPECT_NAIVE:.0f}x (expected)"],
             ["(iv)  warm re-run, same cache", med("warm"), pc("warm", "head"), med("warm_t"),
              pc("warm_t", "head_t"), med("warm_c"), pc("warm_c", "head_c"),
              f"< {100 * TARGET_WARM:.0f}%"]]))
        print("  * total_s from results.json: the whole evaluate() call (for base+head: base "
              "side, head side, setup, base export); naive = the sum of the two runs' total_s")

        both_ratio, est = ratio("both", "head"), ratio("both_est", "one")
        print(f"\nbase+head / head-only = {both_ratio:.2f}x by wall time "
              f"({'met' if both_ratio <= TARGET_BOTH else 'MISSED'}: target <= {TARGET_BOTH}x); "
              f"same-process estimate {est:.2f}x "
              f"({'met' if est <= TARGET_BOTH else 'MISSED'}; the base side of each base+head "
              "run stands in for the head-only run, so machine load cancels)")
        print(f"naive / head-only = {ratio('naive', 'head'):.2f}x "
              f"(expected >= {EXPECT_NAIVE:.0f}x)")
        warm_ratio = ratio("warm", "head")
        print(f"warm / cold = {100 * warm_ratio:.1f}% "
              f"({'met' if warm_ratio < TARGET_WARM else 'MISSED'}: target < "
              f"{100 * TARGET_WARM:.0f}%)")

        print("\nWhere the base+head run's wall time goes (median over rounds):")
        names = [name for name, _ in phases(both_runs[0])]
        values = [[dict(phases(run))[name] for run in both_runs] for name in names]
        wall = median([run.wall_s for run in both_runs])
        print(table(["phase", "seconds", "% of wall"],
                    [[name, f"{median(v):.2f}", f"{100 * median(v) / wall:.1f}%"]
                     for name, v in zip(names, values, strict=True)]
                    + [["wall (median)", f"{wall:.2f}", "100%"]]))
        if args.phases:
            build_phases(repo, tmp / "cache-phases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
