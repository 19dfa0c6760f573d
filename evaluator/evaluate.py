"""One evaluation: ground truth + checkout → snapshot → index → questions → scored results.

This wires the pure core to the adapters it is given (:class:`evaluator.deps.Deps`: the
index factory, git, the model resolver, the clock); the application layer
(:mod:`evaluator.app`) wires it to the baseline and the gates. Timings split NeuralMind's own
work (build, query calls) from the evaluator's overhead.

The cache and output directories are left out of the checkout's files when they lie inside
it. Runs that share a cache directory take turns on a snapshot folder: ``evaluate`` holds
the snapshot's lock from the base side's sync to the head's last question, ``build_index``
until the returned index is closed (see :mod:`evaluator.snapshot`); the base export goes to
a folder of its own per run.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from evaluator import __version__
from evaluator.core.evidence import SpanIssue, drift, evidence_modules
from evaluator.core.floors import check_floors, thin_shapes
from evaluator.core.giveaway import AnswerNames, answer_names, overlap
from evaluator.core.groundtruth import (
    GroundTruth,
    Problem,
    Severity,
    fact_lines,
    load_ground_truth,
)
from evaluator.core.judge import judge_id
from evaluator.core.options import Settings
from evaluator.core.results import Results, RunInfo, untracked_sentence
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
from evaluator.core.systems import Answer, System, SystemRun, SystemSpec
from evaluator.core.universe import Universe, UniverseSpec, select_universe
from evaluator.deps import Deps, Git, Index, load_factory
from evaluator.errors import BuildError, GroundTruthError, InputError
from evaluator.host import host_class
from evaluator.judging import judge_answer, read_modules
from evaluator.model import ModelSource, model_fingerprint
from evaluator.neuralmind_index import (
    PINS,
    BuildInfo,
    code_suffixes,
    ignored_variables,
    onnxruntime_version,
)
from evaluator.progress import Progress, heartbeat
from evaluator.snapshot import (
    MAX_FILE_BYTES,
    own_file_names,
    read_source,
    snapshot_dir,
    snapshot_lock,
    sync_tree,
    tree_digest,
    without_folders,
)

if TYPE_CHECKING:
    from evaluator.judging import BatchEmbed


def default_cache_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neuralmind-retrieval-eval"


def cache_dir_of(options: Settings, env: Mapping[str, str]) -> Path:
    return Path(options.cache_dir) if options.cache_dir else default_cache_dir(env)


def _needs_model(options: Settings) -> bool:
    """Whether a run needs the embedding model: its backend, ``--embed``, or a ``--systems``
    variant embeds with it. A run that has the model judges with it too (the judge's
    similarity route), for every system of the run alike."""
    from evaluator.core.systems import SYSTEMS, parse_systems

    if options.backend != "in_memory" or options.embed:
        return True
    return any("model" in SYSTEMS[spec.name].needs
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


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def project_name(root: Path, env: Mapping[str, str], git: Git) -> str:
    """The repository's name, which NeuralMind's context calls the project (it is the name
    of the folder it indexes, so the snapshot folder is named so): the GitHub repository's
    name in a workflow, else the name of the repository's top folder (the same for a
    subfolder and in every snapshot), else the folder's own name; ``project`` when that
    is not a plain name."""
    repo = env.get("GITHUB_REPOSITORY", "").rpartition("/")[2]
    if not repo:
        prefix = git.repo_prefix(root)
        depth = 0 if prefix == "." else len(PurePosixPath(prefix).parts)
        top = root.resolve()
        repo = (top.parents[depth - 1] if depth else top).name
    return repo if _SAFE_NAME.fullmatch(repo) and repo.strip(".") else "project"


def _own_files(root: Path, qpath: Path, *, config: str | None) -> list[Path]:
    """The tool's own files that may lie in the checkout: the ground truth and the options
    file (the given one, and the default names)."""
    from evaluator.settings import CONFIG_NAMES

    own = [qpath, *(root / name for name in CONFIG_NAMES)]
    if config:
        own.append(Path(config))
    return own


def _own_folders(cache_dir: Path, *, output_dir: str | None) -> list[Path]:
    """The folders the evaluator writes to (the cache, the outputs: relative to the current
    directory, as the CLI writes them), to leave out when they are inside the checkout."""
    folders = [cache_dir.resolve()]
    if output_dir:
        folders.append(Path(output_dir).resolve())
    return folders


def ignored_sentence(names: Sequence[str]) -> str:
    """The note that names the ``NEURALMIND_*`` variables the evaluation does not apply."""
    return (f"{', '.join(names)} in the environment did not apply: the evaluation pins "
            "NeuralMind's settings so that runs compare")


def _list_checkout(root: Path, *, exclude: Sequence[Path], own: Sequence[Path],
                   select_files: Callable[[str], bool] | None, progress: Progress, git: Git
                   ) -> tuple[tuple[str, ...], tuple[str, ...], list[str]]:
    """The head's files, its untracked files (both within a section's ``select_files``) and
    the names skipped as not UTF-8; warns about what was left out."""
    skipped: list[str] = []
    unindexable: list[str] = []
    untracked: list[str] = []
    files = git.checkout_files(root, exclude=exclude, exclude_files=own, skipped=skipped,
                               unindexable=unindexable, untracked=untracked)
    files = tuple(f for f in files if select_files is None or select_files(f))
    left_out = tuple(f for f in untracked if select_files is None or select_files(f))
    _warn_skipped(progress, skipped)
    if left_out:
        progress.warn(untracked_sentence(left_out))
    _note_unindexable(progress, unindexable)
    if not files:
        raise InputError(f"{root} has no files to index (an empty repository?)"
                         if not left_out else
                         f"{root} has no tracked files to index: its {len(left_out)} "
                         "untracked file(s) are left out", hint="git add them to evaluate them")
    return files, left_out, skipped


def _warn_skipped(progress: Progress, skipped: Sequence[str], where: str = "") -> None:
    if not skipped:
        return
    shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5
                                      else "")
    progress.warn(f"{len(skipped)} file(s) with names that are not valid UTF-8 or hold "
                  f"control characters are not indexed{where}: {shown}")


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


#: Files that are plainly not code: skipped without a warning when NeuralMind cannot index
#: them (an image under docs/ is never a module).
MEDIA_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".bmp",
                            ".pdf", ".mp4", ".webm", ".mov", ".woff", ".woff2", ".ttf",
                            ".otf", ".eot"})


def _note_unindexable(progress: Progress, unindexable: Sequence[str]) -> None:
    """Files NeuralMind does not index (binary, or over the size limit): a warning naming
    them, except images, media and fonts, which get a plain progress line."""
    # Each entry is "path (why)".
    media = [f for f in unindexable
             if PurePosixPath(f.rsplit(" (", 1)[0]).suffix.lower() in MEDIA_SUFFIXES]
    other = [f for f in unindexable if f not in set(media)]
    if other:
        progress.warn(f"{len(other)} file(s) left out because NeuralMind does not index "
                      f"them (binary, or over the size limit): {_shown(other)}")
    if media:
        progress(f"checkout: {len(media)} image, media or font file(s) not indexed: "
                 f"{_shown(media)}")


def _on_wait(progress: Progress, snapshot: Path) -> Callable[[], None]:
    return lambda: progress(f"waiting for another run to finish with the snapshot {snapshot}")


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


def load_ground_truth_file(path: Path, *, present: tuple[str, ...] | None, strict: bool,
                           universe: Universe | None = None,
                           ) -> tuple[GroundTruth | None, tuple[Problem, ...]]:
    """Read and validate a ground-truth file: the ground truth (None on errors) and every
    problem. A missing or unreadable file raises :class:`InputError`."""
    if not path.is_file():
        raise InputError(f"ground-truth file {path} does not exist",
                         hint="pass --queries FILE (default retrieval_queries.json in PATH)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {path}: {err}") from None
    return load_ground_truth(text, str(path), present_modules=present, strict=strict,
                             universe=universe)


def read_ground_truth(path: Path, *, present: tuple[str, ...] | None, strict: bool,
                      universe: Universe | None = None) -> GroundTruth:
    """Load and validate; raise :class:`GroundTruthError` listing every error."""
    ground_truth, problems = load_ground_truth_file(path, present=present, strict=strict,
                                                    universe=universe)
    if ground_truth is None:
        errors = [p for p in problems if p.severity == "error"]
        raise GroundTruthError(
            f"{path}: {len(errors)} error(s) in the ground truth:\n  "
            + "\n  ".join(p.render() for p in problems), problems=tuple(problems))
    return ground_truth


def evidence_problems(ground_truth: GroundTruth, tree: Path, issues_of: Callable[
        [Mapping[str, str]], Sequence[SpanIssue]], *, severity: Severity) -> tuple[Problem, ...]:
    """Each span issue (``issues_of`` the needed modules' texts under ``tree``) as a problem
    located at its fact's line in the ground-truth file."""
    issues = issues_of(read_modules(tree, evidence_modules(ground_truth)))
    if not issues:
        return ()
    try:
        text = Path(ground_truth.source).read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = ""
    lines = fact_lines(text, ground_truth.source)
    return tuple(Problem(severity, i.message(), ground_truth.source, i.query_id,
                         f"gold_facts[{i.fact_index}].evidence",
                         lines.get((i.query_id, i.fact_index))) for i in issues)


BOTH_SIDES = "Both sides use the head's ground truth"


def both_sides_note(why: str = "") -> str:
    """The one note saying the base side was scored on the head's ground truth."""
    return f"{BOTH_SIDES}{f' ({why})' if why else ''}, so added queries are compared fairly."


@dataclass(frozen=True)
class BaseRequest:
    """The base side to evaluate: a commit of the same repository."""

    commit: str
    label: str
    ref: str | None = None


@dataclass(frozen=True)
class Evaluation:
    results: Results
    ground_truth: GroundTruth | None  # None for sections (each has its own)
    baseline: Results | None = None
    baseline_label: str | None = None
    notes: tuple[str, ...] = ()


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


def _ask_all(setup: _Setup, system: System, *, keep: Callable[[str], bool] | None = None,
             progress: Callable[[int, int], None] | None = None,
             ) -> tuple[dict[str, Retrieval], float]:
    """Every question, once: the system's answers, judged here (the one place every system's
    contexts are judged, alike), and the seconds the system took. ``keep`` filters each
    ranking; ``progress`` hears ``(asked, total)`` after each question."""
    retrievals: dict[str, Retrieval] = {}
    seconds = 0.0
    queries = setup.ground_truth.queries
    judge, columns = _judge_embed(setup), _columns_embed(setup)
    for i, query in enumerate(queries, start=1):
        answer = system.ask(query.question)
        if keep is not None:
            answer = replace(answer, ranked_modules=tuple(
                m for m in answer.ranked_modules if keep(m)))
        retrievals[query.id] = judge_answer(query, answer, embed=judge, columns=columns)
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
    )


def _run_side(setup: _Setup, *, source: Path, files: tuple[str, ...], commit: str | None,
              ref: str | None, label: str, progress: Progress) -> tuple[Results, list[str]]:
    """Snapshot ``source`` into the shared tree, build (incrementally), ask, score."""
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
                                     graph_source=options.graph_source, model=setup.model)
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
        # The ranking is over the module universe: a retrieved test, doc or CI file
        # neither earns nor costs a rank (a base commit's files by the same rules).
        with heartbeat(progress, f"{label}: questions", pause=pause):
            retrievals, query_seconds = _ask_all(setup, index, keep=setup.universe.admits,
                                                 progress=_asked(label, progress))
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


def with_overlap(rows: Sequence[QueryResult], source: Path) -> tuple[QueryResult, ...]:
    """Each row with its question's overlap with the names of its grade-3 modules, read
    from ``source`` (:mod:`evaluator.core.giveaway`)."""
    names: dict[str, AnswerNames] = {}
    out = []
    for row in rows:
        for module in row.expected.get(3, ()):
            if module not in names:
                names[module] = answer_names(module, read_source(source, module))
        found = overlap(row.question, [names[m] for m in row.expected.get(3, ())])
        out.append(replace(row, overlap=found))
    return tuple(out)


def _universe_and_ground_truth(options: Settings, files: tuple[str, ...], qpath: Path,
                               progress: Progress) -> tuple[Universe, GroundTruth]:
    """The module universe of the checkout and the ground truth checked against it."""
    modules = select_universe(files, UniverseSpec(
        include=tuple(options.include),
        exclude=None if options.exclude is None else tuple(options.exclude)),
        source_suffixes=code_suffixes())
    progress(f"universe: {modules.summary()}")
    ground_truth = read_ground_truth(qpath, present=files, strict=options.strict,
                                     universe=modules)
    for problem in ground_truth.warnings:
        progress.warn(problem.render())
    progress(f"ground truth: {len(ground_truth.queries)} queries "
             f"({', '.join(ground_truth.shapes)}) from {qpath}")
    return modules, ground_truth


def evaluate(root: Path, options: Settings, *, progress: Progress, deps: Deps,
             queries_path: Path | None = None, base: BaseRequest | None = None,
             select_files: Callable[[str], bool] | None = None,
             select_queries: Callable[[GroundTruth], GroundTruth] | None = None) -> Evaluation:
    """Evaluate the checkout at ``root`` (and, with ``base``, that commit first, in the same
    snapshot folder, each built from scratch); never writes into ``root``.

    ``select_files`` keeps the files of a section's universe (both sides); ``select_queries``
    keeps the questions of a shard (after the whole ground truth is validated)."""
    started_at = deps.clock().isoformat(timespec="seconds")
    t0 = time.perf_counter()
    root = root.resolve()
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout to evaluate as PATH")
    qpath = queries_path or (root / options.queries)
    cache_dir = cache_dir_of(options, deps.env)
    own = _own_files(root, qpath, config=options.config)
    listing = _list_checkout(root, exclude=_own_folders(cache_dir, output_dir=options.output_dir),
                             own=own,
                             select_files=select_files, progress=progress, git=deps.git)
    files, untracked, skipped = listing
    ignored = ignored_variables(deps.env)
    if ignored:
        progress.warn(ignored_sentence(ignored))
    rule = ("git's tracked files" if deps.git.head_commit(root) is not None
            else "not a git checkout: every file under it")
    progress(f"checkout: {len(files)} files in {root} ({rule}; never the tool's own files)")
    modules, ground_truth = _universe_and_ground_truth(options, files, qpath, progress)
    thin = _thin_shapes(options, ground_truth, progress)
    if select_queries is not None:
        ground_truth = select_queries(ground_truth)
    cache_dir = ensure_writable(cache_dir)
    model = model_for(options, cache_dir, deps)
    snapshot = _snapshot_for(cache_dir, root, backend=options.backend,
                             graph_source=options.graph_source)
    setup = _Setup(root=root, options=options, qpath=qpath, ground_truth=ground_truth,
                   queries_sha256=hashlib.sha256(qpath.read_bytes()).hexdigest(),
                   cache_dir=cache_dir, model=model,
                   tree=snapshot / project_name(root, deps.env, deps.git),
                   started_at=started_at, deps=deps, universe=modules,
                   select_files=select_files, judge_model=judge_model_dir(options, model),
                   own_names=own_file_names(root, own), untracked=untracked,
                   warnings=thin)
    backend = ("auto (NeuralMind picks it when it builds)" if options.backend == "auto"
               else options.backend)
    progress(f"index: backend {backend}, graph {options.graph_source}, "
             f"model {model.origin}, snapshot {setup.tree}")
    base_texts: dict[str, str] = {}
    with snapshot_lock(cache_dir, snapshot, on_wait=_on_wait(progress, snapshot)):
        baseline, notes = _run_base(setup, base, skipped=skipped, progress=progress,
                                    texts=base_texts)
        head_commit_sha = deps.git.head_commit(root)
        results, _head_notes = _run_side(setup, source=root, files=files,
                                         commit=head_commit_sha, ref=None, label="head",
                                         progress=progress)
    results = _finished(setup, results, files=files, baseline=baseline,
                        base_texts=base_texts if base else None, head_commit=head_commit_sha,
                        t0=t0, progress=progress, ignored=ignored)
    return Evaluation(results=results, ground_truth=ground_truth, baseline=baseline,
                      baseline_label=base.label if base else None, notes=tuple(notes))


def _thin_shapes(options: Settings, ground_truth: GroundTruth,
                 progress: Progress) -> tuple[str, ...]:
    """Warnings for shapes with too few questions for their per-shape floors, judged on the
    whole ground truth (a shard's share of it is gated as a whole after merging)."""
    thin = tuple(thin_shapes(options.floors, Counter(q.shape for q in ground_truth.queries)))
    for warning in thin:
        progress.warn(warning)
    return thin


def _finished(setup: _Setup, results: Results, *, files: tuple[str, ...],
              baseline: Results | None, base_texts: Mapping[str, str] | None,
              head_commit: str | None, t0: float, progress: Progress,
              ignored: Sequence[str]) -> Results:
    """The head's results with the reference systems, the checkout's state against its
    commit, the whole run's timings and the evidence drift (``base_texts``: the base's
    needed modules, ``None`` without a base side)."""
    results = _with_references(setup, files, results, progress)
    tree_differs, queries_differ = (setup.deps.git.worktree_state(setup.root, setup.qpath)
                                    if head_commit else (False, False))
    return replace(results, run=replace(results.run, timings=_timings(
        results.run.timings, baseline.run.timings if baseline else None,
        time.perf_counter() - t0), tree_differs=tree_differs, queries_differ=queries_differ,
        untracked=setup.untracked,
        warnings=results.run.warnings + ((ignored_sentence(ignored),) if ignored else ()),
        drift=_evidence_drift(setup, base_texts, progress)))


def _with_references(setup: _Setup, files: tuple[str, ...], results: Results,
                     progress: Progress) -> Results:
    """``--judge-check`` (always with ``--example``) and the ``--systems`` references."""
    from evaluator import references
    from evaluator.core.judgecheck import with_retrieved
    from evaluator.core.systems import parse_systems, system_run

    options, extra = setup.options, {}
    check = None
    if options.judge_check or options.example:
        t0 = time.perf_counter()
        with heartbeat(progress, "judge self-check", pause=setup.deps.pause):
            check = references.judge_check(setup.ground_truth, setup.root,
                                           embed=_judge_embed(setup))
        with_facts = {q.id for q in setup.ground_truth.queries if q.gold_facts}
        check = with_retrieved(check, [row.faithfulness.faithfulness
                                       for row in results.queries if row.id in with_facts])
        extra["judge_check_s"] = round(time.perf_counter() - t0, 4)
        progress(f"judge self-check: {check.sentence}")
        if check.warning:
            progress.warn(check.warning)
    specs = parse_systems(str(options.systems))
    runs = []
    if len(specs) > 1:
        t0 = time.perf_counter()
        runs.append(system_run(specs[0].label, results.queries, setup.ground_truth.shapes))
        for spec in specs[1:]:
            progress(f"system {spec.label}: evaluating")
            with heartbeat(progress, f"system {spec.label}", pause=setup.deps.pause):
                runs.append(_reference_run(setup, files, spec, progress))
        extra["systems_s"] = round(time.perf_counter() - t0, 4)
    run = replace(results.run, timings={**results.run.timings, **extra})
    return replace(results, run=run, judge_check=check, systems=tuple(runs))


def _reference_run(setup: _Setup, files: tuple[str, ...], spec: SystemSpec,
                   progress: Progress) -> SystemRun:
    """One reference system's block on the head checkout, built from its registry entry: a
    system that needs a NeuralMind build (``graph``) is built like the evaluated index on a
    snapshot of its own, with its options over the run's; any other from the checkout's
    files, its answers judged and scored like the evaluated index's."""
    from evaluator.core.systems import SYSTEMS, system_run

    entry = SYSTEMS[spec.name]
    if "graph" not in entry.needs:
        from evaluator.refsystems import provided

        system = load_factory(entry)(setup.root, files, **dict(spec.options), **provided(
            entry.needs, model=setup.model, cache_dir=setup.cache_dir,
            ground_truth=setup.ground_truth))
        retrievals, _seconds = _ask_all(setup, system)
        scoring = ScoringOptions(k_values=effective_k(setup.options.k),
                                 gain=setup.options.gain,
                                 threshold=setup.options.relevance_threshold)
        rows = score_all(setup.ground_truth, retrievals, scoring)
        return system_run(spec.label, rows, setup.ground_truth.shapes)
    settings, options = dict(spec.options), setup.options
    variant = options.replace(backend=settings.get("backend", options.backend),
                              graph_source=settings.get("graph", options.graph_source))
    # The run's model, whatever the variant's backend: every system is judged alike.
    model = setup.model if setup.model.path is not None else model_for(
        variant, setup.cache_dir, setup.deps)
    snapshot = _snapshot_for(setup.cache_dir, setup.root, backend=variant.backend,
                             graph_source=variant.graph_source)
    vsetup = replace(setup, options=variant, model=model, tree=snapshot / setup.tree.name)
    with snapshot_lock(setup.cache_dir, snapshot, on_wait=_on_wait(progress, snapshot)):
        side, _notes = _run_side(vsetup, source=setup.root, files=files, commit=None, ref=None,
                                 label=spec.label, progress=progress)
    return system_run(spec.label, side.queries, setup.ground_truth.shapes)


def _evidence_drift(setup: _Setup, base_texts: Mapping[str, str] | None,
                    progress: Progress) -> tuple[Problem, ...]:
    """Anchored facts whose span is in none of their needed modules at the head, each a
    warning at its fact's line: ground-truth drift when the base commit held the span (the
    change deleted or rewrote it). Without a base side every missing span is reported
    plainly (``validate`` makes it an error)."""
    ground_truth = setup.ground_truth
    if not any(q.anchored for q in ground_truth.queries):
        return ()
    problems = evidence_problems(
        ground_truth, setup.root,
        lambda head: drift(ground_truth, base_texts or {}, head), severity="warning")
    for problem in problems:
        progress.warn(problem.render())
    return problems


def _run_base(setup: _Setup, base: BaseRequest | None, *, skipped: Sequence[str],
              progress: Progress, texts: dict[str, str]) -> tuple[Results | None, list[str]]:
    """The base side (with the snapshot locked): export the commit, then :func:`_run_side`;
    ``texts`` receives the base's text of every module an evidence span is looked for in."""
    if base is None:
        return None, []
    notes: list[str] = []
    root = setup.root
    exports = setup.cache_dir / "exports"
    exports.mkdir(parents=True, exist_ok=True)
    # A folder per run: runs on other snapshots may export the same commit meanwhile.
    export = Path(tempfile.mkdtemp(prefix=f"{base.commit[:16]}-", dir=exports))
    try:
        base_skipped: list[str] = []
        with heartbeat(progress, f"base {base.commit[:12]}: export",
                       pause=setup.deps.pause):
            base_files = setup.deps.git.export_commit(root, base.commit, export,
                                                      skipped=base_skipped)
        # The head's rule: the tool's own files are not evaluated on either side.
        base_files = tuple(f for f in base_files if f not in setup.own_names)
        if setup.select_files is not None:
            base_files = tuple(f for f in base_files if setup.select_files(f))
        known = set(skipped)  # a set: a checkout may hold thousands of skipped files
        _warn_skipped(progress, [n for n in base_skipped if n not in known],
                      " at the base commit")
        if not base_files:
            raise InputError(f"the base commit {base.commit[:12]} has no files to index")
        try:
            rel = setup.qpath.resolve().relative_to(root).as_posix()
        except ValueError:
            rel = None
        if rel is not None and not setup.deps.git.file_at(root, base.commit, rel):
            notes.append(both_sides_note(f"{rel} does not exist at the base commit"))
        texts.update(read_modules(export, evidence_modules(setup.ground_truth)))
        baseline, base_notes = _run_side(setup, source=export, files=base_files,
                                         commit=base.commit, ref=base.ref,
                                         label=f"base {base.commit[:12]}", progress=progress)
        notes += base_notes
    finally:
        shutil.rmtree(export, ignore_errors=True)
    return baseline, notes


def _timings(head: Mapping[str, float], base: Mapping[str, float] | None,
             total: float) -> dict[str, float]:
    """The run's timings, the same in every mode.

    ``snapshot_s`` is copying the head's files into the snapshot, ``build_s``/``queries_s``
    NeuralMind's own work for the head (``base_snapshot_s``/``base_build_s``/
    ``base_queries_s`` for the base, when there is one); ``total_s`` is the whole
    evaluation from reading the checkout to the last score; ``overhead_s`` is everything
    that is not a NeuralMind build or query call (listing, ground truth, model resolution,
    snapshots, the base export, faithfulness judging, scoring, and the ``--judge-check`` and
    ``--systems`` work, also given alone as ``judge_check_s`` and ``systems_s``).
    """
    out = {"snapshot_s": head["snapshot_s"], "build_s": head["build_s"],
           "queries_s": head["queries_s"]}
    out |= {k: head[k] for k in ("judge_check_s", "systems_s") if k in head}
    library = head["build_s"] + head["queries_s"]
    if base is not None:
        out |= {"base_snapshot_s": base["snapshot_s"], "base_build_s": base["build_s"],
                "base_queries_s": base["queries_s"]}
        library += base["build_s"] + base["queries_s"]
    out |= {"total_s": round(total, 4), "overhead_s": round(max(total - library, 0.0), 4)}
    return out


def _display(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return str(path)


class _LockedIndex:
    """An index whose snapshot folder stays locked until :meth:`close`."""

    def __init__(self, index: Index, tree: Path, release: Callable[[], None]) -> None:
        self._index = index
        self.tree = tree  # the snapshot folder it indexes
        self._release = release

    def build(self, *, user_config: Path | None = None,
              cache_key: str | None = None) -> BuildInfo:
        return self._index.build(user_config=user_config, cache_key=cache_key)

    def ask(self, question: str) -> Answer:
        return self._index.ask(question)

    def close(self) -> None:
        try:
            self._index.close()
        finally:
            release, self._release = self._release, lambda: None
            release()


def build_index(root: Path, files: tuple[str, ...], options: Settings, *,
                progress: Progress, deps: Deps) -> _LockedIndex:
    """A built index of ``root`` in its snapshot (for drafting ground truth).

    The snapshot stays locked until the caller closes the index. ``files`` inside the cache
    directory are left out (a cache inside the checkout would copy itself)."""
    cache_dir = ensure_writable(cache_dir_of(options, deps.env))
    model = model_for(options, cache_dir, deps)
    snapshot = _snapshot_for(cache_dir, root.resolve(), backend=options.backend,
                             graph_source=options.graph_source)
    files = without_folders(root, files, [cache_dir.resolve()])
    tree = snapshot / project_name(root, deps.env, deps.git)
    lock = contextlib.ExitStack()
    lock.enter_context(snapshot_lock(cache_dir, snapshot, on_wait=_on_wait(progress, snapshot)))
    try:
        sync_tree(root, files, tree)
        index = _LockedIndex(deps.index_factory(tree, backend=options.backend,
                                                graph_source=options.graph_source,
                                                model=model), tree, release=lock.close)
        info = index.build()
    except BaseException:
        lock.close()
        raise
    progress(f"index: {info.nodes} nodes in {info.seconds:.1f}s")
    return index
