"""The reproducibility matrix on real third-party packages: does a number move when nothing
the pull request controls moved?

For each package (a PyPI sdist, committed into a fresh git repository in a temporary folder
with some history: an older commit and another branch) the same commit is evaluated with the
same ground truth under different surroundings, each compared with a cold run. Every
per-question value is compared: every metric (faithfulness and tokens included), the facts
found and missed, and the ranked modules. The figures are printed, never asserted; the test
suite's matrix (tests/integration/test_hermetic.py) asserts the same cells on the
bundled sample project.

The ground truth is drafted by ``retrieval-eval init --no-review`` (machine-written from the
code, not by the author of this benchmark); its content does not matter for the question asked
here, only that it is the same in every cell.

Run: ``python benchmarks/bench_hermetic.py [--packages itsdangerous==2.2.0,attrs==25.3.0]``.
To measure another version of the evaluator (e.g. ``main`` before a fix), put its source
first on ``PYTHONPATH``: the runs are child processes of ``python -m evaluator``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchlib import child_env, download_sdist, git, machine_line, table, versions

DEFAULT_PACKAGES = "itsdangerous==2.2.0,attrs==25.3.0"
# Values that are measurements of time, not of retrieval.
_NOT_COMPARED = frozenset({"latency_ms"})


def evaluate(repo: Path, out: Path, cache: Path, *, queries: Path | None,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``python -m evaluator evaluate repo`` in a child; its results.json."""
    argv = [sys.executable, "-m", "evaluator", "evaluate", str(repo), "--output-dir", str(out),
            "--cache-dir", str(cache), "--no-comment", "--quiet", "--no-fail-on-floors"]
    if queries is not None:
        argv += ["--queries", str(queries)]
    proc = subprocess.run(argv, env=child_env() | dict(env or {}), capture_output=True,
                          text=True, check=False, cwd=repo)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}:\n{proc.stderr}")
    return dict(json.loads((out / "results.json").read_text(encoding="utf-8")))


def per_question(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every compared value of every question: metrics, facts, ranked modules."""
    values: dict[str, dict[str, Any]] = {}
    for query in results["queries"]:
        row = {f"metrics.{k}": v for k, v in query["metrics"].items()}
        row |= {k: v for k, v in query.items()
                if k not in ("metrics", "id", "diagnostics") and k not in _NOT_COMPARED}
        values[query["id"]] = row
    return values


def differences(reference: Mapping[str, Any], other: Mapping[str, Any]) -> list[str]:
    """``"query-id value: a -> b"`` for every per-question value that moved."""
    ref, got = per_question(reference), per_question(other)
    moved = []
    for qid in sorted(set(ref) | set(got)):
        a, b = ref.get(qid, {}), got.get(qid, {})
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                moved.append(f"{qid} {key}: {_short(a.get(key))} -> {_short(b.get(key))}")
    return moved


def _short(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def build_repo(sdist: Path, work: Path) -> tuple[Path, str, str]:
    """The package as a git repository: an older commit (every second source module cut to
    two thirds), the current commit (the sdist as released) on ``main``, and a branch
    ``other`` with one module added and one changed. Returns (repo, older sha, main sha)."""
    with tarfile.open(sdist) as archive:
        archive.extractall(work / "src", filter="data")
    repo = next((work / "src").iterdir())
    sources = sorted(p for p in repo.rglob("*.py") if "tests" not in p.parts)
    pristine = {p: p.read_text(encoding="utf-8") for p in sources}
    for path in sources[::2]:
        lines = pristine[path].splitlines(keepends=True)
        path.write_text("".join(lines[: max(1, 2 * len(lines) // 3)]), encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "older")
    older = git(repo, "rev-parse", "HEAD").strip()
    for path, text in pristine.items():
        path.write_text(text, encoding="utf-8")
    git(repo, "commit", "-q", "-am", "current")
    current = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "other")
    first = sources[0]
    (first.parent / "_only_on_other_branch.py").write_text(
        "def rotate_signing_keys(keys, secret):\n"
        "    \"\"\"Rotate the signing keys and return the new secret key list.\"\"\"\n"
        "    return [secret, *keys]\n", encoding="utf-8")
    first.write_text(pristine[first] + "\n\ndef branch_helper():\n    return 'other'\n",
                     encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "another branch")
    git(repo, "checkout", "-q", "main")
    return repo, older, current


def matrix(repo: Path, older: str, work: Path, gt: Path) -> list[tuple[str, list[str]]]:
    """The cells: (surroundings, the values that moved from the cold run)."""
    counter = iter(range(1000))

    def fresh(name: str) -> tuple[Path, Path]:
        n = next(counter)
        return work / f"out-{n}-{name}", work / f"cache-{n}-{name}"

    out, cold_cache = fresh("cold")
    cold = evaluate(repo, out, cold_cache, queries=gt)

    def warm() -> dict[str, Any]:
        return evaluate(repo, fresh("warm")[0], cold_cache, queries=gt)

    def cache_that_saw(ref: str, name: str) -> dict[str, Any]:
        """A run on ``main`` with a cache that first evaluated ``ref``."""
        o, c = fresh(name)
        git(repo, "checkout", "-q", ref)
        try:
            evaluate(repo, o.with_name(o.name + "-first"), c, queries=gt)
        finally:
            git(repo, "checkout", "-q", "main")
        return evaluate(repo, o, c, queries=gt)

    def old_outputs() -> dict[str, Any]:
        _o, c = fresh("outputs")
        shutil.copytree(out, repo / "out")  # the cold run's folder, left untracked
        try:
            return evaluate(repo, repo / "out2", c, queries=gt)
        finally:
            shutil.rmtree(repo / "out")
            shutil.rmtree(repo / "out2", ignore_errors=True)

    def gt_inside() -> dict[str, Any]:
        o, c = fresh("gt-inside")
        shutil.copy(gt, repo / "retrieval_queries.json")
        try:
            return evaluate(repo, o, c, queries=None)
        finally:
            (repo / "retrieval_queries.json").unlink()

    def gt_committed() -> dict[str, Any]:
        o, c = fresh("gt-committed")
        git(repo, "checkout", "-q", "-b", "with-gt")
        shutil.copy(gt, repo / "retrieval_queries.json")
        git(repo, "add", "retrieval_queries.json")
        git(repo, "commit", "-q", "-m", "ground truth")
        try:
            return evaluate(repo, o, c, queries=None)
        finally:
            git(repo, "checkout", "-q", "main")
            git(repo, "branch", "-q", "-D", "with-gt")

    def reversed_order() -> dict[str, Any]:
        doc = json.loads(gt.read_text(encoding="utf-8"))
        doc["queries"] = doc["queries"][::-1]
        flipped = work / "reversed.json"
        flipped.write_text(json.dumps(doc), encoding="utf-8")
        return evaluate(repo, fresh("reversed")[0], cold_cache, queries=flipped)

    def synapse_env() -> dict[str, Any]:
        o, c = fresh("synapse-env")
        return evaluate(repo, o, c, queries=gt, env={"NEURALMIND_SYNAPSE_INJECT": "0"})

    cells: list[tuple[str, Callable[[], dict[str, Any]]]] = [
             ("warm (same cache)", warm),
             ("cache first built at an older commit", lambda: cache_that_saw(older, "older")),
             ("cache that has seen another branch", lambda: cache_that_saw("other", "branch")),
             ("old output folder untracked inside the tree, --output-dir inside", old_outputs),
             ("ground truth inside the tree, untracked", gt_inside),
             ("ground truth inside the tree, committed", gt_committed),
             ("questions in reverse order", reversed_order),
             ("NEURALMIND_SYNAPSE_INJECT=0 in the environment", synapse_env)]
    return [(name, differences(cold, run())) for name, run in cells]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--packages", default=DEFAULT_PACKAGES,
                        help="comma-separated name==version sdists (default %(default)s)")
    parser.add_argument("--count", type=int, default=10, help="questions to draft per package")
    parser.add_argument("--sdist-dir", type=Path, default=None,
                        help="where the sdists are (downloaded with pip when missing)")
    args = parser.parse_args(argv)
    print(versions())
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="bench-hermetic-") as tmp:
        root = Path(tmp)
        for spec in args.packages.split(","):
            name, _, version = spec.partition("==")
            sdist = download_sdist(name, version, args.sdist_dir or root / "download")
            work = root / name
            work.mkdir()
            repo, older, _current = build_repo(sdist, work)
            gt = work / "gt.json"
            subprocess.run([sys.executable, "-m", "evaluator", "init", str(repo), "--no-review",
                            "--count", str(args.count), "--output", str(gt), "--quiet"],
                           env=child_env(), check=True, capture_output=True)
            count = len(json.loads(gt.read_text(encoding="utf-8"))["queries"])
            rows = []
            for cell, moved in matrix(repo, older, work, gt):
                shown = "; ".join(moved[:3]) + (f"; … {len(moved) - 3} more"
                                                if len(moved) > 3 else "")
                rows.append((cell, len(moved), shown or "-"))
            print(f"\n{name} {version}: {count} drafted questions; per-question values that "
                  "differ from a cold run")
            print(table(["surroundings", "values moved", "examples"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
