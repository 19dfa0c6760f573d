"""Benchmark for the issue "ground truth worth keeping": what ``init`` drafts on real packages.

    .venv/bin/python benchmarks/bench_init.py [--packages click==8.1.7 requests==2.32.3]
        [--cache DIR] [--counts 5,12,20] [--repeat 1] [--keep DIR] [--show]

For each package (an sdist from the package index, fetched with
``pip download --no-deps --no-binary :all:`` into ``--cache``, extracted and committed to a
fresh git repository; never copied into this repository) it measures:

* **count**: for every ``--counts`` value, ``init --no-review`` drafts exactly that many
  questions (or the shortfall lines it printed), and which shapes;
* **facts**: every drafted fact occurs verbatim (case-insensitively) in the source of a module
  graded >= 2 for its question;
* **universe**: no graded module lies outside the default module universe;
* **validate**: ``validate --strict`` on the draft reports 0 errors;
* **time**: a cold ``init`` (real model, default backend, fresh cache directory, the largest
  count) against a cold index build alone of the same checkout in the same way (a child
  process calling ``build_index``); the goal is init <= 1.2x the build. On a loaded machine
  two cold builds of the same tree can differ by 30% or more, so the script also prints what
  init spent beyond its *own* build (its wall time minus the build time it reports): the
  drafting and review work proper, free of that noise.

``--keep DIR`` keeps the drafts (one JSON per package) for reading; ``--show`` prints every
drafted question with its facts and grades. Nothing is asserted: the script prints figures
and exits 0 (a failed CLI run stops it with the command's output).

The history route (issue 24): ``--history REPO [REPO ...]`` takes local git clones with
their history (e.g. clones of psf/requests, pallets/click, pallets/flask; never copied into
this repository) and, per clone, instead of the above:

* **drafted vs asked** and **skipped by reason**: ``init --from-history --no-review --count
  N`` (its ``history:`` progress line), with its wall time — no index is built with
  ``--no-review``, so this is the time beyond the index build (goal: <= 60 s on 5,000
  commits; the route reads at most the newest 5,000);
* the docstring route's draft of the same size (``init --no-review --count N``);
* **give-away share** of each draft: questions naming a grade-3 module's file or symbol
  (:mod:`evaluator.core.giveaway`, the rule ``validate`` warns with);
* **NeuralMind vs bm25** on each draft: ``evaluate --systems neuralmind,bm25`` (default
  backend, real model, one shared cache), nDCG@5 and recall@5 per system, and on the
  docstring draft split into the questions that name their answer and those that do not,
  and on the same docstring questions rewritten to name their answer as the route did
  before issue 24 ("… (`prompt` in `termui.py`)?": same grades and facts, only the names
  added), which isolates what give-away questions do to the scores.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from benchlib import (
    child_env,
    cli_command,
    download_sdist,
    machine_line,
    make_checkout,
    table,
)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluator.snapshot import checkout_files  # noqa: E402
from evaluator.validation import universe_of  # noqa: E402

DEFAULT_PACKAGES = ("click==8.1.7", "requests==2.32.3")
TARGET_RATIO = 1.2

BUILD_ONLY = """
import os, sys
from pathlib import Path
from evaluator.deps import real_deps
from evaluator.evaluate import build_index
from evaluator.progress import Progress
from evaluator.settings import settings_for
from evaluator.snapshot import checkout_files
root, cache = Path(sys.argv[1]), sys.argv[2]
files = checkout_files(root, exclude=[Path(cache).resolve()])
deps = real_deps(os.environ, sys.stdout, sys.stderr)
settings = settings_for("init", {"path": str(root), "cache_dir": cache})
index = build_index(root, files, settings, progress=Progress(quiet=True), deps=deps)
index.close()
"""

def fetch(spec: str, cache: Path) -> Path:
    """The package's sdist (cached), extracted into a fresh folder; its root."""
    name, _, version = spec.partition("==")
    sdist = download_sdist(name, version, cache / "sdists")
    work = Path(tempfile.mkdtemp(prefix=f"bench-init-{name}-"))
    with tarfile.open(sdist) as archive:
        archive.extractall(work, filter="data")
    root = work / f"{name}-{version}"
    if not root.is_dir():
        raise SystemExit(f"{sdist} did not extract to {root.name}")
    make_checkout(root, f"{spec} sdist")
    return root


def run(args: list[str], *, cwd: Path | None = None) -> tuple[subprocess.CompletedProcess[str],
                                                                float]:
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, env=child_env(keep_model=True), capture_output=True,
                          text=True, check=False)
    return proc, time.perf_counter() - start


def check_draft(root: Path, doc: dict[str, Any], universe: set[str]) -> dict[str, Any]:
    facts = verified = outside = 0
    for q in doc["queries"]:
        graded = [m for m, g in q["relevance_grades"].items() if g >= 2]
        sources = [(root / m).read_text(encoding="utf-8").lower() for m in graded]
        for entry in q["gold_facts"]:
            fact = entry["fact"] if isinstance(entry, dict) else entry  # anchored or plain
            facts += 1
            verified += any(fact.lower() in text for text in sources)
        outside += sum(1 for m, g in q["relevance_grades"].items() if m not in universe)
    shapes = sorted({q["shape"] for q in doc["queries"]})
    return {"drafted": len(doc["queries"]), "shapes": shapes, "facts": facts,
            "verified": verified, "outside": outside}


def show(doc: dict[str, Any]) -> None:
    for q in doc["queries"]:
        print(f"\n{q['id']}: {q['question']}")
        for fact in q["gold_facts"]:
            print(f"    fact: {fact}")
        for module, reason in q["review"]["grades"].items():
            print(f"    {module}: {reason}")
        for line in q["review"].get("retrieved", []):
            print(f"    retrieved {line}")


def bench(spec: str, cache: Path, counts: list[int], keep: Path | None,
          print_drafts: bool, repeat: int) -> list[list[object]]:
    root = fetch(spec, cache)
    files = checkout_files(root)
    universe = universe_of(files, None)
    print(f"\n== {spec}: {len(files)} files; universe {universe.summary()}")
    rows: list[list[object]] = []
    work = root.parent
    for count in counts:
        out = work / f"draft-{count}.json"
        proc, _wall = run([*cli_command(), "init", str(root), "--no-review", "--quiet",
                           "--count", str(count), "--output", str(out)])
        if proc.returncode != 0:
            raise SystemExit(f"init --count {count} failed on {spec}:\n{proc.stderr}")
        doc = json.loads(out.read_text(encoding="utf-8"))
        checked = check_draft(root, doc, set(universe.modules))
        valid, _ = run([*cli_command(), "validate", str(root), "--strict", "--queries",
                        str(out)])
        short = [line for line in proc.stderr.splitlines() if "slot" in line]
        rows.append([f"{spec} --count {count}", f"{checked['drafted']}/{count}",
                     ",".join(checked["shapes"]),
                     f"{checked['verified']}/{checked['facts']}", checked["outside"],
                     "ok" if valid.returncode == 0 else "FAIL", len(short)])
        for line in short:
            print(f"  {line}")
    # Timing: cold build alone vs cold init (largest count, with the index), both fresh,
    # alternated ``repeat`` times; medians.
    biggest = max(counts)
    builds, inits, beyond = [], [], []
    out = work / "draft-timed.json"
    for n in range(repeat):
        build_cache = work / f"cache-build-{n}"
        build, build_wall = run([sys.executable, "-c", BUILD_ONLY, str(root),
                                 str(build_cache)], cwd=ROOT)
        if build.returncode != 0:
            raise SystemExit(f"index build failed on {spec}:\n{build.stderr}")
        out.unlink(missing_ok=True)
        init, init_wall = run([*cli_command(), "init", str(root), "--count", str(biggest),
                               "--cache-dir", str(work / f"cache-init-{n}"), "--output",
                               str(out)])
        if init.returncode != 0:
            raise SystemExit(f"init failed on {spec}:\n{init.stderr}")
        inside = [float(m.group(1)) for line in init.stderr.splitlines()
                  if (m := re.search(r"index: \d+ nodes in ([0-9.]+)s", line))]
        builds.append(build_wall)
        inits.append(init_wall)
        beyond.append(init_wall - inside[0] if inside else float("nan"))
        shutil.rmtree(build_cache, ignore_errors=True)
        shutil.rmtree(work / f"cache-init-{n}", ignore_errors=True)
    build_wall, init_wall = statistics.median(builds), statistics.median(inits)
    drafting = statistics.median(beyond)
    doc = json.loads(out.read_text(encoding="utf-8"))
    checked = check_draft(root, doc, set(universe.modules))
    ratio = init_wall / build_wall
    rows.append([f"{spec} timed --count {biggest}", f"{checked['drafted']}/{biggest}",
                 ",".join(checked["shapes"]), f"{checked['verified']}/{checked['facts']}",
                 checked["outside"], f"{build_wall:.1f}s build, {init_wall:.1f}s init, "
                 f"ratio {ratio:.2f} (goal <= {TARGET_RATIO}); init beyond its own build "
                 f"{drafting:.1f}s ({100 * drafting / build_wall:.0f}% of a build)", ""])
    print("  init progress:")
    for line in init.stderr.splitlines():
        print(f"    {line}")
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        shutil.copy(out, keep / f"{spec.replace('==', '-')}.json")
    if print_drafts:
        show(doc)
    shutil.rmtree(work, ignore_errors=True)
    return rows


def _skipped(stderr: str, marker: str) -> dict[str, int]:
    """The skip counts by reason of the progress line holding ``marker`` and "skipped: "."""
    line = next((x for x in stderr.splitlines() if marker in x and "skipped: " in x), "")
    skipped: dict[str, int] = {}
    for part in re.split(r", (?=\d+ )", line.split("skipped: ", 1)[1] if line else ""):
        count, _, reason = part.partition(" ")
        if count.isdigit():
            skipped[reason] = int(count)
    return skipped


def _history_line(stderr: str) -> tuple[str, dict[str, int]]:
    """The ``history:`` progress line and its skip counts by reason."""
    line = next((x for x in stderr.splitlines() if "history: read" in x), "")
    return line, _skipped(stderr, "history: read")


def _giveaways(root: Path, doc: dict[str, Any]) -> dict[str, bool]:
    from evaluator.authoring import read_source
    from evaluator.core.giveaway import AnswerNames, answer_names, overlaps

    names: dict[str, AnswerNames] = {}
    out = {}
    for q in doc["queries"]:
        for module, grade in q["relevance_grades"].items():
            if grade == 3 and module not in names:
                names[module] = answer_names(module, read_source(root, module))
        out[q["id"]] = overlaps(q["question"], q["relevance_grades"].items(),
                                names).names_answer
    return out


def _systems(root: Path, draft: Path, cache: Path, out: Path) -> dict[str, Any]:
    proc, wall = run([*cli_command(), "evaluate", str(root), "--queries", str(draft),
                      "--systems", "neuralmind,bm25", "--baseline", "none", "--quiet",
                      "--no-fail-on-floors", "--cache-dir", str(cache), "--output-dir",
                      str(out)])
    if proc.returncode != 0:
        raise SystemExit(f"evaluate failed on {root} with {draft}:\n{proc.stderr}")
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {"systems": results["systems"], "wall": wall}


def _mean(values: list[float]) -> str:
    return f"{statistics.fmean(values):.3f}" if values else "n/a"


def _split(systems: list[dict[str, Any]], keep: set[str], metric: str) -> list[str]:
    return [_mean([q["metrics"][metric] for q in s["queries"] if q["id"] in keep
                   and q["metrics"].get(metric) is not None]) for s in systems]


def _naming(doc: dict[str, Any]) -> dict[str, Any]:
    """The docstring draft with each question naming its answer, the way the route wrote
    them before issue 24 ("… (`prompt()` in `termui.py`)?"): the grade-3 module's file and
    the symbol its review reason says it defines. Same grades, same facts: only the names
    differ, which is the difference give-away questions make."""
    out = json.loads(json.dumps(doc))
    for q in out["queries"]:
        top = next(m for m, g in q["relevance_grades"].items() if g == 3)
        reason = q["review"]["grades"].get(top, "")
        found = re.search(r"defines `([^`]+)`", reason)
        name = f"`{found.group(1)}`" if found else "the code"
        q["question"] = f"{q['question'].rstrip('?')} ({name} in `{Path(top).name}`)?"
    return out


def bench_history(repo: Path, count: int, keep: Path | None,
                  print_drafts: bool) -> tuple[list[list[object]], list[list[object]]]:
    """The history route on one clone: the draft table rows and the systems table rows."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-history-{repo.name}-"))
    commits = subprocess.run(["git", "-C", str(repo), "rev-list", "--count", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
    history, docstring = work / "history.json", work / "docstring.json"
    proc, wall = run([*cli_command(), "init", str(repo), "--from-history", "--no-review",
                      "--count", str(count), "--output", str(history)])
    if proc.returncode != 0:
        raise SystemExit(f"init --from-history failed on {repo}:\n{proc.stderr}")
    line, skipped = _history_line(proc.stderr)
    print(f"\n== {repo.name}: {commits} commits\n  {line.strip()}")
    drafts, _ = run([*cli_command(), "init", str(repo), "--no-review", "--count",
                     str(count), "--output", str(docstring)])
    if drafts.returncode != 0:
        raise SystemExit(f"init failed on {repo}:\n{drafts.stderr}")
    docs = {"history": json.loads(history.read_text(encoding="utf-8")),
            "docstring": json.loads(docstring.read_text(encoding="utf-8"))}
    named = work / "named.json"
    docs["docstring, naming"] = _naming(docs["docstring"])
    named.write_text(json.dumps(docs["docstring, naming"]), encoding="utf-8")
    flags = {route: _giveaways(repo, doc) for route, doc in docs.items()}
    facts = sum(bool(q["gold_facts"]) for q in docs["history"]["queries"])
    draft_rows: list[list[object]] = [[
        repo.name, commits, f"{len(docs['history']['queries'])}/{count}",
        f"{facts}/{len(docs['history']['queries'])}", f"{wall:.1f}s",
        f"{sum(flags['history'].values())}/{len(flags['history'])}",
        f"{sum(flags['docstring'].values())}/{len(flags['docstring'])}",
        "; ".join(f"{n} {r}" for r, n in skipped.items()),
        "; ".join(f"{n} {r}" for r, n in _skipped(drafts.stderr, "drafting: ").items())]]
    system_rows: list[list[object]] = []
    cache = work / "cache"
    for route, path in (("history", history), ("docstring", docstring),
                        ("docstring, naming", named)):
        got = _systems(repo, path, cache, work / f"out-{route.replace(', ', '-')}")
        systems = got["systems"]
        labels = [s["label"] for s in systems]
        for metric in ("ndcg@5", "recall@5"):
            system_rows.append([f"{repo.name} {route} (all {len(flags[route])})", metric,
                                *[f"{label} {s['overall']['metrics'][metric]:.3f}"
                                  for label, s in zip(labels, systems, strict=True)]])
        if route == "docstring":
            naming = {q for q, flag in flags[route].items() if flag}
            for label, ids in (("naming their answer", naming),
                               ("not naming it", set(flags[route]) - naming)):
                cells = _split(systems, ids, "ndcg@5")
                system_rows.append([f"{repo.name} {route} ({label}: {len(ids)})", "ndcg@5",
                                    *[f"{lab} {c}" for lab, c in zip(labels, cells,
                                                                     strict=True)]])
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        for route, path in (("history", history), ("docstring", docstring),
                            ("naming", named)):
            shutil.copy(path, keep / f"{repo.name}-{route}.json")
    if print_drafts:
        show(docs["history"])
    shutil.rmtree(work, ignore_errors=True)
    return draft_rows, system_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--packages", nargs="+", default=list(DEFAULT_PACKAGES))
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "bench-init-cache",
                        help="where the sdists are kept between runs")
    parser.add_argument("--counts", default="5,12,20")
    parser.add_argument("--keep", type=Path, default=None, help="keep the drafts here")
    parser.add_argument("--show", action="store_true", help="print every drafted question")
    parser.add_argument("--repeat", type=int, default=1,
                        help="timed build/init pairs per package (medians)")
    parser.add_argument("--history", type=Path, nargs="+", default=None, metavar="REPO",
                        help="benchmark the history route on these git clones instead")
    args = parser.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    print(machine_line())
    if args.history:
        drafts: list[list[object]] = []
        systems: list[list[object]] = []
        for repo in args.history:
            d, s = bench_history(repo.resolve(), max(counts), args.keep, args.show)
            drafts += d
            systems += s
        print()
        print(table(["repository", "commits", "drafted/asked", "with facts",
                     "time (no index)", "give-away: history", "give-away: docstring",
                     "history: skipped by reason", "docstring: skipped by reason"], drafts))
        print()
        print(table(["draft", "metric", "reference", "other"], systems))
        return
    rows: list[list[object]] = []
    for spec in args.packages:
        rows += bench(spec, args.cache, counts, args.keep, args.show, args.repeat)
    print()
    print(table(["run", "drafted", "shapes", "facts verbatim", "outside universe",
                 "validate --strict / time", "short slots"], rows))


if __name__ == "__main__":
    main()
