"""The ``--systems`` references beside the evaluated index and ``--judge-check``: each
reference system built from its registry entry, asked the run's questions on the same
module universe, judged and scored like the evaluated index."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any, cast

from evaluator.checkout_files import _on_wait
from evaluator.core.budget import FRONTIER_SCALES, NEURALMIND, base_limit, cut, scaled
from evaluator.core.depth import depth_reach, ranking_depth
from evaluator.core.results import Results
from evaluator.core.scoring import (
    ScoringOptions,
    effective_k,
    score_all,
)
from evaluator.core.systems import (
    Answer,
    FrontierPoint,
    System,
    SystemEntry,
    SystemRun,
    SystemSpec,
)
from evaluator.deps import load_factory
from evaluator.judging import judge_answer
from evaluator.progress import Progress, heartbeat
from evaluator.side import _ask_all, _judge_embed, _run_side, _Setup, _snapshot_for, model_for
from evaluator.snapshot import (
    snapshot_lock,
)


class IndexSearches:
    """The ``--systems`` references that search the evaluated index's own build (registry
    need ``index``: ``embedding``), asked every question while the head's build is open
    (:func:`evaluator.side._run_side`'s ``on_index``), so nothing is built twice; their
    answers are judged and scored later, like every reference's (:func:`_reference_run`)."""

    def __init__(self, setup: _Setup, files: tuple[str, ...]) -> None:
        from evaluator.core.systems import SYSTEMS, parse_systems

        self._setup = setup
        self._files = tuple(f for f in files if setup.universe.admits(f))
        self.specs = tuple(s for s in parse_systems(str(setup.options.systems))[1:]
                           if "index" in SYSTEMS[s.name].needs_for(s.options))
        self.answers: dict[str, dict[str, Answer]] = {}  # label -> question -> answer
        self.seconds = 0.0

    def __call__(self, index: Any) -> None:
        from evaluator.core.systems import SYSTEMS

        t0 = time.perf_counter()
        for spec in self.specs:
            system = _built(self._setup, self._files, spec, SYSTEMS[spec.name], index=index)
            self.answers[spec.label] = {q.question: system.ask(q.question)
                                        for q in self._setup.ground_truth.queries}
        self.seconds += time.perf_counter() - t0


class _Replay:
    """A reference's answers given while the evaluated build was open, asked again."""

    def __init__(self, answers: Mapping[str, Answer]) -> None:
        self._answers = answers

    def ask(self, question: str) -> Answer:
        return self._answers[question]


def _built(setup: _Setup, files: tuple[str, ...], spec: SystemSpec, entry: SystemEntry, *,
           index: Any = None) -> System:
    """A reference system from its entry's factory, on the universe's ``files``."""
    from evaluator.refsystems import provided

    factory = load_factory(entry)
    return cast(System, factory(setup.root, files, **dict(spec.options), **provided(
        entry.needs_for(spec.options), model=setup.model, cache_dir=setup.cache_dir,
        ground_truth=setup.ground_truth, index=index), **depth_for(factory, _depth(setup))))


def _depth(setup: _Setup) -> int:
    return ranking_depth(setup.options.depth, effective_k(setup.options.k))


def _with_references(setup: _Setup, files: tuple[str, ...], results: Results,
                     progress: Progress, *, answers: Mapping[str, Answer],
                     searched: IndexSearches | None = None) -> Results:
    """``--judge-check`` (always with ``--example``) and the ``--systems`` references
    (``answers``: the evaluated index's, for its frontier under ``--budget``; ``searched``:
    the answers of those that searched its build)."""
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
    if options.budget == NEURALMIND:  # the evaluated index's own count, question by question
        setup = replace(setup, limits={row.id: int(row.metrics.get("context_tokens") or 0)
                                       for row in results.queries})
    if len(specs) > 1:
        t0 = time.perf_counter()
        runs.append(replace(system_run(specs[0].label, results.queries,
                                       setup.ground_truth.shapes),
                            frontier=frontier(replace(setup, limits=None), answers)))
        for spec in specs[1:]:
            progress(f"system {spec.label}: evaluating")
            with heartbeat(progress, f"system {spec.label}", pause=setup.deps.pause):
                runs.append(_reference_run(setup, files, spec, progress, searched=searched))
        extra["systems_s"] = round(time.perf_counter() - t0
                                   + (searched.seconds if searched else 0.0), 4)
    run = replace(results.run, timings={**results.run.timings, **extra})
    return replace(results, run=run, judge_check=check, systems=tuple(runs))


def _reference_run(setup: _Setup, files: tuple[str, ...], spec: SystemSpec,
                   progress: Progress, *, searched: IndexSearches | None = None) -> SystemRun:
    """One reference system's block on the head checkout, built from its registry entry: a
    system that needs a NeuralMind build (``graph``) is built like the evaluated index on a
    snapshot of its own, with its options over the run's; one that searches the evaluated
    build (``index``) gives the answers it gave while that build was open (``searched``);
    any other is built from the head checkout's files in the module universe (the
    candidates that are scored). Its answers are filtered, judged and scored like the
    evaluated index's (:func:`_ask_all`)."""
    from evaluator.core.systems import SYSTEMS, system_run

    entry = SYSTEMS[spec.name]
    answers: dict[str, Answer] = {}  # as given, for the frontier
    if "graph" not in entry.needs:
        # The universe's files: every system ranks the candidates that are scored.
        modules = tuple(f for f in files if setup.universe.admits(f))
        depth = _depth(setup)
        if "index" in entry.needs_for(spec.options):
            if searched is None or spec.label not in searched.answers:
                raise RuntimeError(f"{spec.label} was not asked while the build was open")
            system: System = _Replay(searched.answers[spec.label])
        else:
            system = _built(setup, modules, spec, entry)
        retrievals, _seconds = _ask_all(setup, system, answers=answers, reach=depth_reach(
            depth, len(modules), ranks_all=entry.depth is None))
        scoring = ScoringOptions(k_values=effective_k(setup.options.k),
                                 gain=setup.options.gain,
                                 threshold=setup.options.relevance_threshold)
        rows = score_all(setup.ground_truth, retrievals, scoring)
        return replace(system_run(spec.label, rows, setup.ground_truth.shapes),
                       frontier=frontier(setup, answers))
    settings, options = dict(spec.options), setup.options
    variant = options.replace(backend=settings.get("backend", options.backend),
                              graph_source=settings.get("graph", options.graph_source))
    # The run's model, whatever the variant's backend: every system is judged alike.
    model = setup.model if setup.model.path is not None else model_for(
        variant, setup.cache_dir, setup.deps)
    snapshot = _snapshot_for(setup.cache_dir, setup.root, backend=variant.backend,
                             graph_source=variant.graph_source)
    vsetup = replace(setup, options=variant, model=model, tree=snapshot / setup.tree.name,
                     index_options={k: v for k, v in settings.items()
                                    if k not in ("graph", "backend")})
    with snapshot_lock(setup.cache_dir, snapshot, on_wait=_on_wait(progress, snapshot)):
        side, _notes = _run_side(vsetup, source=setup.root, files=files, commit=None, ref=None,
                                 label=spec.label, progress=progress, answers=answers)
    return replace(system_run(spec.label, side.queries, setup.ground_truth.shapes),
                   frontier=frontier(setup, answers))


def depth_for(factory: Callable[..., Any], depth: int) -> dict[str, int]:
    """``{"depth": depth}`` for a factory that takes the ranking depth (one that caps its
    ranking), else nothing: a factory without the parameter keeps its contract."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return {}
    takes = "depth" in parameters or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                         for p in parameters.values())
    return {"depth": depth} if takes else {}


def frontier(setup: _Setup, answers: Mapping[str, Answer]) -> tuple[FrontierPoint, ...]:
    """A system's quality-versus-tokens frontier under ``--budget`` (empty without one):
    its answers cut to each of :data:`FRONTIER_SCALES` × the question's budget, and judged
    like every context (the judge's faithfulness, over the questions with gold facts).
    ``setup.limits``: NeuralMind's counts for a reference under ``neuralmind``; ``None``
    for the evaluated index, whose own count is its budget."""
    budget = setup.options.budget
    if budget is None or not answers:
        return ()
    embed = _judge_embed(setup)
    with_facts = [q for q in setup.ground_truth.queries if q.gold_facts and q.id in answers]
    points = []
    for scale in FRONTIER_SCALES:
        tokens: list[int] = []
        quality: list[float] = []
        for query in with_facts:
            answer = answers[query.id]
            limit = scaled(base_limit(answer, query.id, budget, setup.limits), scale)
            judged = judge_answer(query, cut(answer, limit), embed=embed)
            tokens.append(judged.context_tokens)
            if judged.faithfulness.faithfulness is not None:
                quality.append(judged.faithfulness.faithfulness)
        points.append(FrontierPoint(scale, sum(tokens) / len(tokens) if tokens else 0.0,
                                    sum(quality) / len(quality) if quality else None))
    return tuple(points)


