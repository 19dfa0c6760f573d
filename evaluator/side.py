"""One side of an evaluation (the head, a base commit or a NeuralMind variant): snapshot the
checkout, build the index (incrementally, cached by content), ask every question, judge
every system's answers alike and score them; the model the run embeds and judges with."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator import __version__
from evaluator.core.budget import within_budget
from evaluator.core.depth import depth_reach, ranking_depth, short_of_depth
from evaluator.core.floors import check_floors
from evaluator.core.giveaway import AnswerNames, answer_names, overlaps
from evaluator.core.groundtruth import (
    GroundTruth,
)
from evaluator.core.judge import judge_id
from evaluator.core.options import Settings
from evaluator.core.results import Results, RunInfo
from evaluator.core.scoring import (
    QueryResult,
    Retrieval,
    ScoringOptions,
    aggregate,
    by_shape,
    effective_k,
    score_all,
)
from evaluator.core.stats import SignificanceTest
from evaluator.core.systems import Answer, System
from evaluator.core.universe import Universe
from evaluator.deps import Deps, Index
from evaluator.errors import BuildError
from evaluator.host import host_class
from evaluator.judging import judge_answer
from evaluator.model import ModelSource, model_fingerprint
from evaluator.neuralmind_index import (
    PINS,
    BuildInfo,
    onnxruntime_version,
)
from evaluator.progress import Progress, heartbeat
from evaluator.snapshot import (
    MAX_FILE_BYTES,
    read_source,
    snapshot_dir,
    sync_tree,
    tree_digest,
)

if TYPE_CHECKING:
    from evaluator.judging import BatchEmbed


def _needs_model(options: Settings) -> bool:
    """Whether a run needs the embedding model: its backend, ``--embed``, or a ``--systems``
    variant embeds with it. A run that has the model judges with it too (the judge's
    similarity route), for every system of the run alike."""
    from evaluator.core.systems import SYSTEMS, parse_systems

    if options.backend != "in_memory" or options.embed:
        return True
    return any("model" in SYSTEMS[spec.name].needs_for(spec.options)
               and ("backend" not in SYSTEMS[spec.name].options  # it embeds whatever the run's
                    or dict(spec.options).get("backend", options.backend) != "in_memory")
               for spec in parse_systems(str(options.systems)))


def judge_model_dir(options: Settings, model: ModelSource) -> Path | None:
    """The model folder the run's judge embeds with (its similarity route), or ``None``
    (the terms rule alone). Decided once per run, so every system, side and self-check of
    the run is judged alike: the run needs the model (:func:`_needs_model`) and it resolved
    to a folder on disk (the ``model`` extra, ``NEURALMIND_ONNX_MODEL_DIR`` or NeuralMind's
    cache). A model NeuralMind would download during the build is not used by the judge:
    whether it is there must not depend on what the build fetched."""
    return model.path if _needs_model(options) and model.path is not None else None


def planned_judge(options: Settings, model: ModelSource) -> str:
    """The judge a run with these options and this model will record (for the baseline
    precheck, before any work)."""
    return judge_id(similarity=judge_model_dir(options, model) is not None)


def model_for(options: Settings, cache_dir: Path, deps: Deps) -> ModelSource:
    """The embedding model, resolved only when the run needs it (:func:`_needs_model`)."""
    if _needs_model(options):
        return deps.resolve_model(cache_dir)
    return ModelSource(None, "not needed")


def _judge_embed(setup: _Setup) -> BatchEmbed | None:
    """The embedder of the run's judge (:func:`judge_model_dir`), or ``None``."""
    if setup.judge_model is None:
        return None
    from evaluator.judging import checked_embedder

    return checked_embedder(setup.judge_model, purpose="the faithfulness judge")


def _columns_embed(setup: _Setup) -> BatchEmbed | None:
    """The embedder of the ``--embed`` columns (the run's model), or ``None``."""
    if not setup.options.embed:
        return None
    from evaluator.judging import checked_embedder

    return checked_embedder(setup.model.path, purpose="--embed")


def _snapshot_for(cache_dir: Path, root: Path, *, backend: str, graph_source: str) -> Path:
    return snapshot_dir(cache_dir, root, flavour=f"{backend}-{graph_source}")


@dataclass(frozen=True)
class _Setup:
    root: Path
    options: Settings
    qpath: Path
    ground_truth: GroundTruth
    queries_sha256: str
    cache_dir: Path
    model: ModelSource
    tree: Path
    started_at: str
    deps: Deps
    universe: Universe
    select_files: Callable[[str], bool] | None = None  # a section's module universe
    judge_model: Path | None = None  # the run's judge model folder (judge_model_dir)
    own_names: frozenset[str] = frozenset()  # the tool's files, relative to root
    untracked: tuple[str, ...] = ()  # left out of the head (see evaluator.snapshot)
    warnings: tuple[str, ...] = ()  # about the ground truth against the floors (thin shapes)
    # a NeuralMind variant's options beyond graph and backend (synapses), for its index
    index_options: Mapping[str, str] = field(default_factory=dict)
    # ``--budget neuralmind``: the evaluated index's tokens per question, which a reference
    # system's contexts are cut to (None: the evaluated index itself, or a fixed budget)
    limits: Mapping[str, int] | None = None


def project_config(source: Path) -> Path | None:
    """The checkout's ``.neuralmind.yaml`` (NeuralMind's project settings), when it is a
    small regular file: a committed link is never followed, like any other file of the
    checkout (:func:`evaluator.snapshot.checkout_files`)."""
    path = source / ".neuralmind.yaml"
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
    except OSError:
        return None
    return path


def index_cache_key(source: Path, files: tuple[str, ...], setup: _Setup) -> str:
    """What the built index depends on: file contents, NeuralMind version, backend, graph
    source, model and NeuralMind's project config."""
    config = project_config(source)
    parts = {
        "tree": tree_digest(source, files),
        "neuralmind": setup.deps.library_version(),
        "backend": setup.options.backend,
        "graph_source": setup.options.graph_source,
        "model": model_fingerprint(setup.model),
        "config": hashlib.sha256(config.read_bytes()).hexdigest() if config else "",
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


def _ask_all(setup: _Setup, system: System, *,
             progress: Callable[[int, int], None] | None = None,
             answers: dict[str, Answer] | None = None,
             reach: int | None = None) -> tuple[dict[str, Retrieval], float]:
    """Every question, once: the system's answers, judged here (the one place every system's
    contexts are judged, alike), and the seconds the system took. Every ranking is over the
    module universe, here for every system (:meth:`Universe.split_ranking`, a base
    commit's files by the same rules): a retrieved test, doc or CI file neither earns nor
    costs a rank, and each retrieval records how many were filtered out and why. Under
    ``--budget`` each context is cut before it is judged (:func:`within_budget`).
    ``progress`` hears ``(asked, total)`` after each question; ``answers`` receives each
    answer as the system gave it (its ranking filtered, its context not cut), for the
    frontier. ``reach``: how many modules of the universe a ranking must hold to reach the
    run's depth (:func:`evaluator.core.depth.depth_reach`; ``None``: the system ranks
    everything it has); a ranking with fewer is recorded as short of depth."""
    retrievals: dict[str, Retrieval] = {}
    seconds = 0.0
    queries = setup.ground_truth.queries
    judge, columns = _judge_embed(setup), _columns_embed(setup)
    for i, query in enumerate(queries, start=1):
        given = system.ask(query.question)
        ranked, filtered = setup.universe.split_ranking(given.ranked_modules)
        given = replace(given, ranked_modules=ranked)
        if answers is not None:
            answers[query.id] = given
        answer = within_budget(given, query.id, setup.options.budget, setup.limits)
        retrieval = judge_answer(query, answer, embed=judge, columns=columns)
        retrievals[query.id] = replace(retrieval, filtered_out=filtered,
                                       short_of_depth=short_of_depth(len(ranked), reach))
        seconds += answer.seconds
        if progress is not None:
            progress(i, len(queries))
    return retrievals, seconds


def _asked(label: str, progress: Progress) -> Callable[[int, int], None]:
    """The progress line of a side's questions (every tenth of them, and the last)."""
    def report(i: int, total: int) -> None:
        if i == total or i % max(10, total // 10) == 0:
            progress(f"{label}: {i}/{total} questions asked")
    return report


def _run_info(setup: _Setup, build: BuildInfo, *, files: int, commit: str | None,
              ref: str | None, timings: dict[str, float], notes: Sequence[str]) -> RunInfo:
    options = setup.options
    uses_model = options.backend != "in_memory" or setup.judge_model is not None
    return RunInfo(
        tool_version=__version__,
        neuralmind_version=setup.deps.library_version(),
        backend=build.backend if options.backend == "auto" else options.backend,
        graph_source=options.graph_source,
        k_values=effective_k(options.k),
        gain=options.gain.value,
        threshold=options.relevance_threshold,
        queries_file=_display(setup.qpath, setup.root),
        queries_sha256=setup.queries_sha256,
        root=setup.root.name,
        commit=commit,
        ref=ref,
        # The model is a setting of the run when the index or the judge embeds with it.
        model=setup.model.describe() if uses_model else None,
        model_fingerprint=model_fingerprint(setup.model) if uses_model else None,
        judge=judge_id(similarity=setup.judge_model is not None),
        significance=SignificanceTest(alpha=options.alpha,
                                      min_effect=options.min_effect).as_dict(),
        started_at=setup.started_at,
        draft=setup.ground_truth.draft,
        index={"nodes": build.nodes, "nodes_embedded": build.nodes_embedded,
               "nodes_reused": build.nodes_reused, "graph_kind": build.graph_kind,
               "files": files, "cached": build.cached},
        timings=timings,
        warnings=(tuple(p.render() for p in setup.ground_truth.warnings) + setup.warnings
                  + tuple(notes)),
        universe=setup.universe.describe(),
        onnxruntime_version=onnxruntime_version() if uses_model else None,
        neuralmind_pins=dict(PINS),
        host_class=host_class(),
        budget=options.budget,
        depth=ranking_depth(options.depth, effective_k(options.k)),
    )


def _run_side(setup: _Setup, *, source: Path, files: tuple[str, ...], commit: str | None,
              ref: str | None, label: str, progress: Progress,
              answers: dict[str, Answer] | None = None,
              on_index: Callable[[Index], None] | None = None) -> tuple[Results, list[str]]:
    """Snapshot ``source`` into the shared tree, build (from scratch, or load the cached
    build), ask, score (``answers``: see :func:`_ask_all`; ``on_index`` is handed the built
    index after the questions, before it is closed: the references that search it)."""
    t0 = time.perf_counter()
    options = setup.options
    pause = setup.deps.pause
    try:
        with heartbeat(progress, f"{label}: snapshot", pause=pause):
            stats = sync_tree(source, files, setup.tree)
        snapshot_s = time.perf_counter() - t0
    except OSError as err:
        raise BuildError(f"cannot write the snapshot under {setup.cache_dir}: "
                         f"{err.strerror or err}", hint="choose a writable --cache-dir") from None
    progress(f"{label}: snapshot {stats.copied} copied, {stats.unchanged} unchanged, "
             f"{stats.removed} removed")
    index = setup.deps.index_factory(setup.tree, backend=options.backend,
                                     graph_source=options.graph_source, model=setup.model,
                                     **setup.index_options)
    try:
        key = index_cache_key(source, files, setup) if options.backend != "in_memory" else None
        with heartbeat(progress, f"{label}: index build", pause=pause):
            build = index.build(user_config=project_config(source), cache_key=key)
        notes = [build.fallback] if build.fallback else []
        if build.fallback:
            progress.warn(build.fallback)
        how = "reused from the cache" if build.cached else (
            f"{build.nodes_embedded} embedded, {build.nodes_reused} reused")
        resolved = build.backend if options.backend == "auto" else options.backend
        progress(f"{label}: index {build.nodes} nodes, backend {resolved} ({how}) in "
                 f"{build.seconds:.1f}s")
        with heartbeat(progress, f"{label}: questions", pause=pause):
            retrievals, query_seconds = _ask_all(
                setup, index, progress=_asked(label, progress), answers=answers,
                reach=index_reach(setup, files))
        if on_index is not None:
            on_index(index)
    finally:
        index.close()
    scoring = ScoringOptions(k_values=effective_k(options.k), gain=options.gain,
                             threshold=options.relevance_threshold)
    rows = with_overlap(score_all(setup.ground_truth, retrievals, scoring), source)
    overall = aggregate(rows)
    shapes = by_shape(rows, setup.ground_truth.shapes)
    violations = check_floors(options.floors, overall=overall, shapes=shapes, rows=rows)
    total = time.perf_counter() - t0
    timings = {"snapshot_s": round(snapshot_s, 4), "build_s": round(build.seconds, 4),
               "queries_s": round(query_seconds, 4),
               "total_s": round(total, 4),
               "overhead_s": round(max(total - build.seconds - query_seconds, 0.0), 4)}
    run = _run_info(setup, build, files=len(files), commit=commit, ref=ref, timings=timings,
                    notes=notes)
    results = Results(run=run, overall=overall, shapes=shapes, queries=rows,
                      violations=violations)
    return results, notes


def index_reach(setup: _Setup, files: Sequence[str]) -> int | None:
    """The depth a NeuralMind ranking must reach on ``files``' module universe (its registry
    entry says how deep it ranks: what its query returns)."""
    from evaluator.core.systems import SYSTEMS

    entry = next(e for e in SYSTEMS.values() if e.evaluated)
    options = setup.options
    return depth_reach(ranking_depth(options.depth, effective_k(options.k)),
                       sum(1 for f in files if setup.universe.admits(f)),
                       ranks_all=entry.depth is None)


def with_overlap(rows: Sequence[QueryResult], source: Path) -> tuple[QueryResult, ...]:
    """Each row with its question's overlap with the names of its grade-3 modules (and
    the public ones of its grade-2 modules), read
    from ``source`` (:mod:`evaluator.core.giveaway`)."""
    names: dict[str, AnswerNames] = {}
    out = []
    for row in rows:
        graded = [(m, g) for g in (3, 2) for m in row.expected.get(g, ())]
        for module, _ in graded:
            if module not in names:
                names[module] = answer_names(module, read_source(source, module))
        out.append(replace(row, overlap=overlaps(row.question, graded, names)))
    return tuple(out)



def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)

