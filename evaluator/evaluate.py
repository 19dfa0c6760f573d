"""One evaluation: ground truth + checkout → snapshot → index → questions → scored results.

This wires the pure core to the adapters it is given (:class:`evaluator.deps.Deps`: the
index factory, git, the model resolver, the clock); the application layer
(:mod:`evaluator.app`) wires it to the baseline and the gates. Timings split NeuralMind's own
work (build, query calls) from the evaluator's overhead.

Its parts live beside it, one duty each: :mod:`evaluator.checkout_files` (the checkout's files
and what is left out), :mod:`evaluator.ground_truth_file` (the ground truth read against
them), :mod:`evaluator.side` (one side: snapshot, build, ask, judge, score) and
:mod:`evaluator.system_runs` (the ``--systems`` references and ``--judge-check``).

The cache and output directories are left out of the checkout's files when they lie inside
it. Runs that share a cache directory take turns on a snapshot folder: ``evaluate`` holds
the snapshot's lock from the base side's sync to the head's last question, ``build_index``
until the returned index is closed (see :mod:`evaluator.snapshot`); the base export goes to
a folder of its own per run.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from evaluator import embedding_memo
from evaluator.checkout_files import (
    _list_checkout,
    _on_wait,
    _own_files,
    _own_folders,
    _warn_skipped,
    cache_dir_of,
    ensure_writable,
    ignored_sentence,
    project_name,
)
from evaluator.core.evidence import drift, evidence_modules
from evaluator.core.groundtruth import (
    GroundTruth,
    Problem,
)
from evaluator.core.options import Settings
from evaluator.core.results import Results
from evaluator.core.systems import Answer
from evaluator.deps import Deps, Index
from evaluator.errors import InputError
from evaluator.ground_truth_file import (
    _thin_shapes,
    _universe_and_ground_truth,
    both_sides_note,
    evidence_problems,
)
from evaluator.judging import read_modules
from evaluator.neuralmind_index import (
    BuildInfo,
    ignored_variables,
)
from evaluator.progress import Progress, heartbeat
from evaluator.side import _run_side, _Setup, _snapshot_for, judge_model_dir, model_for
from evaluator.snapshot import (
    own_file_names,
    snapshot_lock,
    sync_tree,
    without_folders,
)
from evaluator.system_runs import IndexSearches, _with_references


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



@embedding_memo.per_run  # base, head and variants share one memo of vectors
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
    files, untracked, skipped = _list_checkout(
        root, exclude=_own_folders(cache_dir, output_dir=options.output_dir), own=own,
        select_files=select_files, progress=progress, git=deps.git)
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
                   own_names=own_file_names(root, own), untracked=untracked, warnings=thin)
    backend = ("auto (NeuralMind picks it when it builds)" if options.backend == "auto"
               else options.backend)
    progress(f"index: backend {backend}, graph {options.graph_source}, "
             f"model {model.origin}, snapshot {setup.tree}")
    base_texts: dict[str, str] = {}
    with snapshot_lock(cache_dir, snapshot, on_wait=_on_wait(progress, snapshot)):
        baseline, notes = _run_base(setup, base, skipped=skipped, progress=progress,
                                    texts=base_texts)
        head_commit_sha = deps.git.head_commit(root)
        answers: dict[str, Answer] = {}  # the head's, for the --budget frontier
        searched = IndexSearches(setup, files)  # the references that search its build
        results, _head_notes = _run_side(setup, source=root, files=files,
                                         commit=head_commit_sha, ref=None, label="head",
                                         progress=progress, answers=answers, on_index=searched)
    results = _finished(setup, results, files=files, baseline=baseline, answers=answers,
                        base_texts=base_texts if base else None, head_commit=head_commit_sha,
                        t0=t0, progress=progress, ignored=ignored, searched=searched)
    return Evaluation(results=results, ground_truth=ground_truth, baseline=baseline,
                      baseline_label=base.label if base else None, notes=tuple(notes))




def _finished(setup: _Setup, results: Results, *, files: tuple[str, ...],
              baseline: Results | None, base_texts: Mapping[str, str] | None,
              head_commit: str | None, t0: float, progress: Progress,
              ignored: Sequence[str], answers: Mapping[str, Answer],
              searched: IndexSearches | None = None) -> Results:
    """The head's results with the reference systems, the checkout's state against its
    commit, the whole run's timings and the evidence drift (``base_texts``: the base's
    needed modules, ``None`` without a base side)."""
    results = _with_references(setup, files, results, progress, answers=answers,
                               searched=searched)
    tree_differs, queries_differ = (setup.deps.git.worktree_state(setup.root, setup.qpath)
                                    if head_commit else (False, False))
    return replace(results, run=replace(results.run, timings=_timings(
        results.run.timings, baseline.run.timings if baseline else None,
        time.perf_counter() - t0), tree_differs=tree_differs, queries_differ=queries_differ,
        untracked=setup.untracked,
        warnings=results.run.warnings + ((ignored_sentence(ignored),) if ignored else ()),
        drift=_evidence_drift(setup, base_texts, progress)))



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

