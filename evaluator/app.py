"""The application: one function per command, from :class:`Settings` and :class:`Deps` to data.

``run_evaluate`` does baseline → evaluate → compare → gates and returns an :class:`Outcome`;
``run_comment`` loads a saved results file (and baseline) into the same shape, or fetches
a workflow run's results artifact through :mod:`evaluator.artifact` (the fork-safe comment);
``run_init`` and ``run_import`` return what they drafted (``validate`` is
:mod:`evaluator.validation`, which imports none of this). Nothing
here prints the report, writes output files or posts to GitHub: :mod:`evaluator.publish`
does that from the returned data, and :mod:`evaluator.cli` maps it to an exit code.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from evaluator import reporting, sharding
from evaluator.baseline import BaselinePlan, plan_baseline
from evaluator.checkout_files import cache_dir_of, ensure_writable
from evaluator.core.comparability import SettingDifference, host_note, require_comparable
from evaluator.core.compare import (
    BaselineComparison,
    check_gates,
    compare_results,
    compare_sections,
)
from evaluator.core.floors import FloorPolicy, Violation
from evaluator.core.groundtruth import GroundTruth
from evaluator.core.measures import compared, effective_k
from evaluator.core.merge import merge_sides, partial
from evaluator.core.options import Settings, parse_baseline
from evaluator.core.results import ReportInputs, Results, combine_sections
from evaluator.core.results_reader import MAX_RESULTS_BYTES, from_dict
from evaluator.deps import Deps
from evaluator.errors import GitHubError, InputError, ResultsError
from evaluator.evaluate import Evaluation, evaluate
from evaluator.ground_truth_file import (
    BOTH_SIDES,
    both_sides_note,
)
from evaluator.neuralmind_index import example_root
from evaluator.paths import EXAMPLE_QUERIES, check_not_root, read_bounded, regular_file
from evaluator.progress import Progress
from evaluator.report_views import ReportView
from evaluator.reporting import Report
from evaluator.side import model_for, planned_judge
from evaluator.snapshot import mark_output_folder
from evaluator.validation import resolve_queries

if TYPE_CHECKING:
    from evaluator.artifact import RunResults

T = TypeVar("T")


@dataclass(frozen=True)
class Outcome:
    """An evaluation (or a saved one) with its comparison, ready to publish."""

    results: Results
    comparison: BaselineComparison | None
    settings: Settings
    ground_truth: GroundTruth | None = None  # for the TREC export (evaluate only)
    baseline: Results | None = None  # the base side evaluated in this run
    results_file: Path | None = None  # the saved results.json (comment only)
    deadline_at: float | None = None  # time.monotonic() by which the comment phase ends
    mismatch: tuple[SettingDifference, ...] = ()  # baseline settings that differ (warned)
    compared: ReportInputs | None = None  # what ``comparison`` was made from (saved with it)
    floors: FloorPolicy | None = None  # the policy the results were checked against, if known
    report: Report | None = None  # what the report shows (:func:`reporting.report_of`)

    @property
    def passed(self) -> bool:
        return self.results.passed


def _reported(outcome: Outcome, deps: Deps) -> Outcome:
    """``outcome`` with its report (a shard's part has none: the merge reports the whole)."""
    if outcome.results.is_partial:
        return outcome
    results, report = reporting.report_of(outcome, deps)
    return replace(outcome, results=results, report=report)


def given(value: T | None, what: str) -> T:
    """A setting its command cannot do without (the parser asks for it; this is for a
    caller that builds settings itself)."""
    if value is None:
        raise InputError(f"{what} is needed")
    return value


def load_results(path: Path, *, part: bool = False) -> Results:
    """A results file; a shard's part only where one is expected (``part``: merge)."""
    results = _read_results(path)
    if results.is_partial and not part:
        raise ResultsError(f"{path} is one part of a sharded evaluation (shard "
                           f"{results.shard.shard if results.shard else '?'}), not a verdict",
                           hint="merge the parts first: retrieval-eval merge PART... "
                                "--output-dir DIR")
    return results


def _read_results(path: Path) -> Results:
    try:
        text = read_bounded(path, MAX_RESULTS_BYTES, what="results file").decode()
    except OSError as err:
        raise ResultsError(f"cannot read results file {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise ResultsError(f"results file {path} is not UTF-8 text") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ResultsError(f"{path} is not JSON (line {err.lineno}: {err.msg})") from None
    except RecursionError:
        raise ResultsError(f"results file {path} is nested too deeply to be a results "
                           "file") from None
    try:
        return from_dict(data, str(path))
    except RecursionError:
        raise ResultsError(f"results file {path} is nested too deeply") from None


def compare_with_baseline(results: Results, baseline: Results | None, source: str,
                          settings: Settings, *,
                          notes: Sequence[str] = ()) -> BaselineComparison | None:
    """The comparison with ``baseline`` over the reported measures, or ``None``; with
    sections on both sides, each section's comparison too."""
    if baseline is None:
        return None
    metrics = list(compared())
    pooled = compare_results(baseline, results, notes=notes, source=source, metrics=metrics,
                             primary_metric=settings.primary_metric, alpha=settings.alpha,
                             min_effect=settings.min_effect)
    if results.sections and baseline.sections:
        return compare_sections(baseline, results, pooled, source=source, metrics=metrics,
                                primary_metric=settings.primary_metric, alpha=settings.alpha,
                                min_effect=settings.min_effect)
    return pooled


def comparison_inputs(baseline: Results | None, source: str, notes: Sequence[str],
                      settings: Settings) -> ReportInputs | None:
    """What a comparison is made from, to save with the results (:class:`ReportInputs`)."""
    if baseline is None:
        return None
    return ReportInputs(baseline=baseline, source=source, notes=tuple(notes),
                        primary_metric=settings.primary_metric, alpha=settings.alpha,
                        min_effect=settings.min_effect)


def gate(results: Results, baseline: Results | None, comparison: BaselineComparison | None,
         settings: Settings) -> Results:
    """``results`` with the regression gates' violations added. With sections each section
    is gated against its own baseline (like its floors, its gates fail only it); the pooled
    verdict then lists them, scoped to their section."""
    if comparison is None or baseline is None:
        return results
    if comparison.sections:
        sections = dict(results.sections)
        for name, mine in comparison.sections.items():
            section = sections[name]
            sections[name] = replace(section, violations=section.violations + _gates(
                mine, baseline.sections[name], section, settings))
        return combine_sections(results.run, sections, shard=results.shard)
    return replace(results, violations=results.violations + _gates(comparison, baseline,
                                                                   results, settings))


def _gates(comparison: BaselineComparison, baseline: Results, results: Results,
           settings: Settings) -> tuple[Violation, ...]:
    return check_gates(comparison, baseline, results, max_drop=settings.max_drop,
                       significant_only=settings.max_drop_significant_only,
                       new_failures=settings.fail_on_new_failures, alpha=settings.alpha,
                       min_effect=settings.min_effect)


def _checkout(settings: Settings) -> tuple[Path, Path]:
    """The root to evaluate and its ground-truth file."""
    if settings.example:
        if settings.path:
            raise InputError("give either PATH or --example, not both")
        root = example_root()
        return root, Path(settings.queries if settings.queries != "retrieval_queries.json"
                          else EXAMPLE_QUERIES)
    root = Path(settings.path or ".")
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout to evaluate as PATH")
    for folder, setting in ((settings.output_dir, "output-dir"),
                            (settings.cache_dir, "cache-dir")):
        if folder:
            check_not_root(folder, root, setting=setting)
    return root, resolve_queries(root, settings)


def _stale_note(baseline: Results, pr_base_sha: str | None) -> list[str]:
    commit = baseline.run.commit
    if pr_base_sha and commit and commit != pr_base_sha:
        return [f"The baseline file is stale: it was evaluated at {commit[:12]}, not at the "
                f"PR's base {pr_base_sha[:12]}."]
    return []


def prepare_output_dir(folder: str | None) -> None:
    """The output folder, created before the index is built (a bad one fails early)."""
    if not folder:
        return
    out = Path(folder)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"--output-dir {out} exists and is not a directory") from None
    except OSError as err:
        raise InputError(f"cannot create --output-dir {out}: {err.strerror}") from None
    try:
        mark_output_folder(out)
    except OSError as err:
        raise InputError(f"cannot write into --output-dir {out}: {err.strerror}") from None


def _evaluate(root: Path, queries: Path, settings: Settings, deps: Deps, progress: Progress,
              plan: BaselinePlan) -> Evaluation:
    """The head (and base) evaluation: every section, or the checkout's questions; with
    ``--shard`` only this shard's part of them, marked as such."""
    planning = sharding.ShardingSettings.of(settings)
    sections = sharding.sections_of(planning)
    if sections:
        done = sharding.evaluate_sections(root, settings, sections, deps=deps,
                                          progress=progress, base=plan.request)
        return Evaluation(results=done.results, ground_truth=None, baseline=done.baseline,
                          baseline_label=plan.request.label if plan.request else None,
                          notes=done.notes)
    hook = sharding.question_shard(planning, queries)
    evaluation = evaluate(root, settings, progress=progress, deps=deps, queries_path=queries,
                          base=plan.request, select_queries=hook)
    if hook is None or hook.info is None:
        return evaluation
    base_info = replace(hook.info, side="base", label=evaluation.baseline_label or "")
    return replace(evaluation, results=partial(evaluation.results, hook.info),
                   baseline=evaluation.baseline and partial(evaluation.baseline, base_info))


def run_evaluate(settings: Settings, deps: Deps, *,
                 on_late_failure: Callable[[Results, ReportView | None], None] | None = None,
                 ) -> Outcome:
    """Baseline plan → evaluation (both sides) → comparison → regression gates → the
    report's view. A shard's part is returned as it is: ``merge`` compares and gates the
    whole.

    ``on_late_failure`` gets the head's finished results and their plain view when a later
    step fails (the caller keeps them on disk); the failure is raised again."""
    root, queries = _checkout(settings)
    if settings.template:
        _check_template(Path(settings.template))
    progress = Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)
    plan = plan_baseline(settings.baseline, root=root, env=deps.env, git=deps.git)
    if plan.file is not None and not plan.file.exists():
        spec = settings.baseline
        raise InputError(f"baseline file {plan.file} does not exist",
                         hint=f"to compare with a git ref, write ref:{spec}"
                         if spec and ":" not in spec else None)
    baseline = load_results(regular_file(plan.file, what="baseline file")) \
        if plan.file is not None else None
    if baseline is not None and settings.baseline_mismatch != "warn":
        model = model_for(settings, ensure_writable(cache_dir_of(settings, deps.env)), deps)
        precheck_baseline(baseline, settings, deps.library_version(),
                          judge=planned_judge(settings, model))
    prepare_output_dir(settings.output_dir)
    evaluation = _evaluate(root, queries, settings, deps, progress, plan)
    if evaluation.results.is_partial:
        return Outcome(results=evaluation.results, comparison=None, settings=settings,
                       baseline=evaluation.baseline)
    try:
        return _reported(_compare_and_gate(evaluation, baseline, plan, settings), deps)
    except BaseException:
        if on_late_failure is not None:
            on_late_failure(evaluation.results, reporting.plain_view(evaluation.results,
                                                                     settings))
        raise


def precheck_baseline(baseline: Results, settings: Settings, library_version: str, *,
                      judge: str) -> None:
    """Refuse a baseline file measured differently, before any work, on what is known before
    the build — ``judge`` is the one the run will record (:func:`planned_judge`); all but
    the model fingerprint and the backend ``auto`` resolves to, which are checked once the
    head is built."""
    if settings.baseline_mismatch == "warn":
        return
    planned = replace(
        baseline.run, graph_source=settings.graph_source, neuralmind_version=library_version,
        k_values=effective_k(settings.k), gain=settings.gain.value,
        threshold=settings.relevance_threshold, judge=judge)
    if settings.backend == "in_memory" or baseline.run.backend == "in_memory":
        planned = replace(planned, backend=settings.backend)
    require_comparable(baseline.run, planned)


def _compare_and_gate(evaluation: Evaluation, baseline: Results | None, plan: BaselinePlan,
                      settings: Settings) -> Outcome:
    results, notes = evaluation.results, list(evaluation.notes)
    mismatch: tuple[SettingDifference, ...] = ()
    if baseline is not None and evaluation.baseline is None:  # a file: measured elsewhere
        mismatch = require_comparable(baseline.run, results.run,
                                      mismatch=settings.baseline_mismatch)
    source = f"file {plan.file}" if plan.file is not None else ""
    if evaluation.baseline is not None:
        baseline, source = evaluation.baseline, evaluation.baseline_label or "the base"
        if not any(n.startswith(BOTH_SIDES) for n in notes):
            notes.append(both_sides_note())
    elif baseline is not None:
        notes += _stale_note(baseline, plan.pr_base_sha)
        if (note := host_note(baseline.run, results.run)) is not None:
            notes.append(note)
    comparison = compare_with_baseline(results, baseline, source, settings, notes=notes)
    return Outcome(results=gate(results, baseline, comparison, settings),
                   comparison=comparison, settings=settings,
                   ground_truth=evaluation.ground_truth, baseline=evaluation.baseline,
                   mismatch=mismatch, floors=None if results.sections else settings.floors,
                   compared=comparison_inputs(baseline, source, notes, settings))


def merged_base_label(parts: Sequence[tuple[str, Results]]) -> str:
    """How the shard jobs named their baseline (all alike)."""
    return next((r.shard.label for _, r in parts
                 if r.shard is not None and r.shard.side == "base" and r.shard.label), "")


def merged_policy(parts: Sequence[tuple[str, Results]]) -> FloorPolicy | None:
    """The floor policy the merged whole was checked against (the same in every part).
    With sections each section is gated by its own policy: no single one is shown (as in
    an unsharded run)."""
    info = next((r.shard for _, r in parts if r.shard is not None), None)
    return info.policies.get("") if info is not None else None


def run_merge(settings: Settings, deps: Deps) -> Outcome:
    """The parts of a sharded evaluation → the one result an unsharded run gives, compared
    (with the jobs' baseline parts, else ``--baseline file:``) and gated the same way."""
    parts = [(str(path), load_results(regular_file(path, what="part"), part=True))
             for path in sharding.part_files(given(settings.parts, "the parts"))]
    results, merged_base = merge_sides(parts)
    if settings.template:
        _check_template(Path(settings.template))
    mode, value = parse_baseline(settings.baseline)
    baseline, source, notes = merged_base, "", []
    if merged_base is not None:
        source = merged_base_label(parts) or "the base"
        notes.append(both_sides_note())
    mismatch: tuple[SettingDifference, ...] = ()
    if merged_base is None and mode == "file" and value:  # a file: measured elsewhere
        baseline = load_results(regular_file(Path(value), what="baseline file"))
        source = f"file {value}"
        mismatch = require_comparable(baseline.run, results.run,
                                      mismatch=settings.baseline_mismatch)
    comparison = compare_with_baseline(results, baseline, source, settings, notes=notes)
    return _reported(Outcome(
        results=gate(results, baseline, comparison, settings), comparison=comparison,
        settings=settings, baseline=merged_base, mismatch=mismatch,
        floors=merged_policy(parts),
        compared=comparison_inputs(baseline, source, notes, settings)), deps)


def run_comment(settings: Settings, deps: Deps) -> Outcome:
    """A saved results file — or, with ``run_id``, the results artifact of that workflow run,
    fetched and checked by :mod:`evaluator.artifact` — as an :class:`Outcome` to post."""
    if settings.run_id is not None and settings.results:
        raise InputError("give either --results or --run-id, not both")
    deadline_at = None
    if settings.run_id is not None:
        started = time.monotonic()
        fetched = _fetch_run(settings, deps)
        results, results_file = fetched.results, None
        deadline_at = started + settings.comment_timeout
        settings = settings.replace(pr=fetched.pr_number)
    elif settings.results:
        results_file = regular_file(Path(settings.results), what="results file")
        results = load_results(results_file)
    else:
        raise InputError("comment needs --results FILE, or --run-id ID (the workflow run "
                         "whose results artifact to post)")
    mode, value = parse_baseline(settings.baseline)
    if settings.template:
        _check_template(Path(settings.template))
    saved = results.report
    if mode == "file" and value:
        baseline = load_results(regular_file(Path(value), what="baseline file"))
        mismatch = require_comparable(baseline.run, results.run,
                                      mismatch=settings.baseline_mismatch)
        source, notes = f"file {value}", []
        comparison = compare_with_baseline(results, baseline, source, settings)
    elif saved is not None and saved.baseline is not None:
        # The comparison the evaluation made, from what it saved: the same verdict, with
        # the settings it was compared with (its mismatch was accepted or refused then).
        baseline, source, notes = saved.baseline, saved.source, list(saved.notes)
        settings = settings.replace(primary_metric=saved.primary_metric, alpha=saved.alpha,
                                    min_effect=saved.min_effect)
        mismatch = require_comparable(baseline.run, results.run, mismatch="warn")
        comparison = compare_with_baseline(results, baseline, source, settings,
                                         notes=notes)
    else:
        baseline, source, notes, mismatch, comparison = None, "", [], (), None
    return _reported(Outcome(
        results=results, comparison=comparison, settings=settings, results_file=results_file,
        deadline_at=deadline_at, mismatch=mismatch,
        floors=saved.floors if saved is not None else None,
        compared=comparison_inputs(baseline, source, notes, settings)), deps)


def _check_template(path: Path) -> None:
    """:func:`evaluator.reporting.check_template` (jinja2 is imported by the commands that
    render, not by ``validate``)."""
    reporting.check_template(path)


def _fetch_run(settings: Settings, deps: Deps) -> RunResults:
    """The run's artifact through the GitHub API, under the comment phase's deadline."""
    from evaluator import github_comments, github_context
    from evaluator.artifact import fetch_run_results

    run_id = given(settings.run_id, "--run-id")
    ctx = github_context.context_from_env(deps.env, token=deps.github_token, pr=settings.pr)
    if not ctx.token:
        raise GitHubError("no GitHub token to download the run's artifact with",
                          hint="pass the github-token input or set GITHUB_TOKEN; the job "
                               "needs `permissions: actions: read`")
    client = github_comments.GitHubClient(deps.session_factory(), ctx,
                                 deadline_s=settings.comment_timeout)
    fetched = fetch_run_results(client, run_id=run_id,
                                artifact_name=settings.artifact_name)
    if settings.pr is not None and settings.pr != fetched.pr_number:
        raise GitHubError(f"the results artifact of run {settings.run_id} is for pull request "
                          f"#{fetched.pr_number}, not #{settings.pr} given as --pr")
    Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)(
        f"run {settings.run_id}: artifact {settings.artifact_name!r} checked (pull request "
        f"#{fetched.pr_number}, commit {fetched.head_sha[:12]})")
    return fetched
