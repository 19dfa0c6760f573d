"""One evaluation: ground truth + checkout → snapshot → index → questions → scored results.

This wires the pure core to the adapters; the CLI wires this to files and GitHub.
Timings split NeuralMind's own work (build, query calls) from the evaluator's overhead.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evaluator import __version__
from evaluator.core.floors import check_floors
from evaluator.core.groundtruth import GroundTruth, Problem, load_ground_truth
from evaluator.core.options import Options
from evaluator.core.results import Results, RunInfo
from evaluator.core.scoring import (
    Retrieval,
    ScoringOptions,
    aggregate,
    by_shape,
    effective_k,
    score_all,
)
from evaluator.errors import BuildError, GroundTruthError, InputError
from evaluator.model import ModelSource, resolve_model
from evaluator.neuralmind_index import NeuralMindIndex, neuralmind_version
from evaluator.progress import Progress
from evaluator.snapshot import checkout_files, head_commit, snapshot_dir, sync_tree


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neuralmind-retrieval-eval"


def ensure_writable(cache_dir: Path) -> Path:
    """The cache directory, created and checked for writing; a clear error otherwise."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache_dir, prefix=".probe-"):
            pass
    except OSError as err:
        raise InputError(f"the cache directory {cache_dir} is not writable "
                         f"({err.strerror or err})",
                         hint="pass --cache-dir with a writable folder") from None
    return cache_dir


def read_ground_truth(path: Path, *, present: tuple[str, ...] | None,
                      strict: bool) -> GroundTruth:
    """Load and validate; raise :class:`GroundTruthError` listing every error."""
    if not path.is_file():
        raise InputError(f"ground-truth file {path} does not exist",
                         hint="pass --queries FILE (default retrieval_queries.json in PATH)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {path}: {err}") from None
    ground_truth, problems = load_ground_truth(text, str(path), present_modules=present,
                                               strict=strict)
    if ground_truth is None:
        errors = [p for p in problems if p.severity == "error"]
        raise GroundTruthError(
            f"{path}: {len(errors)} error(s) in the ground truth:\n  "
            + "\n  ".join(p.render() for p in problems), problems=tuple(problems))
    return ground_truth


@dataclass(frozen=True)
class Evaluation:
    results: Results
    ground_truth: GroundTruth
    problems: tuple[Problem, ...]


def evaluate(root: Path, options: Options, *, progress: Progress,
             queries_path: Path | None = None, ref: str | None = None) -> Evaluation:
    """Evaluate the checkout at ``root`` with ``options``; never writes into ``root``."""
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    root = root.resolve()
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout to evaluate as PATH")
    qpath = queries_path or (root / options.queries)
    files = checkout_files(root)
    if not files:
        raise InputError(f"{root} has no files to index (an empty repository?)")
    progress(f"checkout: {len(files)} files in {root}")
    ground_truth = read_ground_truth(qpath, present=files, strict=options.strict)
    for problem in ground_truth.warnings:
        progress.warn(problem.render())
    progress(f"ground truth: {len(ground_truth.queries)} queries "
             f"({', '.join(ground_truth.shapes)}) from {qpath}")

    cache_dir = ensure_writable(Path(options.cache_dir) if options.cache_dir
                                else default_cache_dir())
    needs_model = options.backend != "in_memory" or options.embed
    model = resolve_model(cache_dir) if needs_model else ModelSource(None, "not needed")
    flavour = f"{options.backend}-{options.graph_source}"
    tree = snapshot_dir(cache_dir, root, flavour=flavour) / "tree"
    try:
        stats = sync_tree(root, files, tree)
    except OSError as err:
        raise BuildError(f"cannot write the snapshot under {cache_dir}: "
                         f"{err.strerror or err}", hint="choose a writable --cache-dir") from None
    progress(f"snapshot: {stats.copied} copied, {stats.unchanged} unchanged, "
             f"{stats.removed} removed ({tree})")

    index = NeuralMindIndex(tree, backend=options.backend, graph_source=options.graph_source,
                            model=model)
    progress(f"building the NeuralMind index (backend {options.backend}, graph "
             f"{options.graph_source}, model {model.origin})")
    user_config = root / ".neuralmind.yaml"
    build = index.build(user_config=user_config if user_config.is_file() else None)
    progress(f"index: {build.nodes} nodes ({build.nodes_embedded} embedded, "
             f"{build.nodes_reused} reused) in {build.seconds:.1f}s")

    retrievals: dict[str, Retrieval] = {}
    query_seconds = 0.0
    try:
        for i, query in enumerate(ground_truth.queries, start=1):
            retrieval, seconds = index.ask(query, embed=options.embed)
            retrievals[query.id] = retrieval
            query_seconds += seconds
            if i == len(ground_truth.queries) or i % 5 == 0:
                progress(f"queries: {i}/{len(ground_truth.queries)} asked")
    finally:
        index.close()

    scoring = ScoringOptions(k_values=effective_k(options.k), gain=options.gain,
                             threshold=options.relevance_threshold)
    rows = score_all(ground_truth, retrievals, scoring)
    overall = aggregate(rows)
    shapes = by_shape(rows, ground_truth.shapes)
    violations = check_floors(options.floors, overall=overall, shapes=shapes, rows=rows)
    total = time.perf_counter() - t0
    run = RunInfo(
        tool_version=__version__,
        neuralmind_version=neuralmind_version(),
        backend=build.backend if options.backend == "auto" else options.backend,
        graph_source=options.graph_source,
        k_values=scoring.k_values,
        gain=options.gain.value,
        threshold=options.relevance_threshold,
        queries_file=_display(qpath, root),
        queries_sha256=hashlib.sha256(qpath.read_bytes()).hexdigest(),
        root=root.name,
        commit=head_commit(root),
        ref=ref,
        model=model.describe() if options.backend != "in_memory" else None,
        started_at=started_at,
        draft=ground_truth.draft,
        index={"nodes": build.nodes, "nodes_embedded": build.nodes_embedded,
               "nodes_reused": build.nodes_reused, "graph_kind": build.graph_kind,
               "files": len(files)},
        timings={"build_s": round(build.seconds, 4), "queries_s": round(query_seconds, 4),
                 "total_s": round(total, 4),
                 "overhead_s": round(max(total - build.seconds - query_seconds, 0.0), 4)},
        warnings=tuple(p.render() for p in ground_truth.warnings),
    )
    results = Results(run=run, overall=overall, shapes=shapes, queries=rows,
                      violations=violations)
    return Evaluation(results=results, ground_truth=ground_truth,
                      problems=ground_truth.problems)


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)
