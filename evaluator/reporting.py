"""What the report shows, computed by the application and carried in the outcome.

:func:`report_of` gathers what the report shows beyond the results — the floor policy, the
pull request's changed files (``git diff``) and their links, the default branch's history
(and, on a push to it, the history with this commit added: :class:`HistoryUpdate`) — saves
it with the results (``comment --results`` then renders the same document from the file
alone) and builds the report's view (:mod:`evaluator.report_views`) with the run's own
significance settings. :mod:`evaluator.publish` and :mod:`evaluator.render` only format and
write what this returns.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from evaluator import history_file
from evaluator.baseline import _pr_shas
from evaluator.core.comparability import SettingDifference
from evaluator.core.compare import BaselineComparison
from evaluator.core.floors import FloorPolicy
from evaluator.core.groundtruth import GroundTruth
from evaluator.core.history import History
from evaluator.core.options import Settings
from evaluator.core.results import ReportInputs, Results, significance_of
from evaluator.core.stats import SignificanceTest
from evaluator.deps import Deps
from evaluator.errors import EvaluatorError, InputError
from evaluator.progress import Progress
from evaluator.report_views import Extras, ReportView, links, probe_view, report_view


class Outcome(Protocol):
    """What the report is made from (:class:`evaluator.app.Outcome` has it)."""

    @property
    def results(self) -> Results: ...
    @property
    def comparison(self) -> BaselineComparison | None: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def ground_truth(self) -> GroundTruth | None: ...
    @property
    def baseline(self) -> Results | None: ...
    @property
    def mismatch(self) -> tuple[SettingDifference, ...]: ...
    @property
    def compared(self) -> ReportInputs | None: ...
    @property
    def floors(self) -> FloorPolicy | None: ...


@dataclass(frozen=True)
class HistoryUpdate:
    """The history file with this run's commit added, to be written by the publisher."""

    path: Path
    history: History


@dataclass(frozen=True)
class Report:
    """The report's view and the history file to write (a push to the default branch)."""

    view: ReportView
    history_update: HistoryUpdate | None = None


def run_test(results: Results, settings: Settings) -> SignificanceTest:
    """The significance settings the run recorded; for results that recorded none, the
    ones this command was given (never a function's defaults)."""
    if results.run.significance:
        return significance_of(results.run)
    return SignificanceTest(alpha=settings.alpha, min_effect=settings.min_effect)


def _default_branch_push(env: Mapping[str, str]) -> bool:
    """A push to the repository's default branch (the event names it)."""
    if env.get("GITHUB_EVENT_NAME") != "push" or not env.get("GITHUB_EVENT_PATH"):
        return False
    from evaluator.github_context import read_event

    try:
        event = read_event(env["GITHUB_EVENT_PATH"])
    except EvaluatorError:
        return False
    repository = event.get("repository")
    default = repository.get("default_branch") if isinstance(repository, dict) else None
    return isinstance(default, str) and env.get("GITHUB_REF") == f"refs/heads/{default}"


def _history(outcome: Outcome, deps: Deps,
             progress: Progress) -> tuple[History | None, HistoryUpdate | None]:
    """The history for the trend; with this run added on a push to the default branch."""
    if not outcome.settings.history:
        return None, None
    path = Path(outcome.settings.history)
    try:
        if outcome.ground_truth is not None and _default_branch_push(deps.env):
            updated, changed = history_file.with_entry(path, outcome.results)
            if not changed:
                return updated, None
            progress(f"history: adding commit {(outcome.results.run.commit or '')[:12]} "
                     f"to {path}")
            return updated, HistoryUpdate(path, updated)
        return history_file.load(path), None
    except InputError as err:  # a bad history file
        progress.warn(f"no trend: {err.message}")
        return None, None


def _changed_files(outcome: Outcome, deps: Deps, progress: Progress,
                   shas: tuple[str, str] | None) -> tuple[str, ...] | None:
    """The PR's changed files (root-relative), or None when they cannot be known."""
    if outcome.ground_truth is None or outcome.comparison is None:
        return None
    base = outcome.baseline.run.commit if outcome.baseline else None
    base, head = shas or (base, outcome.results.run.commit)
    if not base or not head:
        return None
    root = Path(outcome.settings.path or ".")
    try:
        return deps.git.changed_files(root, base, head)
    except EvaluatorError as err:
        progress(f"no PR-touched section: {err.message}")
        return None


def extras_for(outcome: Outcome, deps: Deps, progress: Progress,
               history: History | None) -> Extras:
    """Floors, the PR's changed files with links, the history and any settings mismatch;
    for a saved results file, the ones the evaluation saved with it."""
    saved = outcome.results.report
    if outcome.ground_truth is None and saved is not None:
        link = links(**saved.links) if saved.links is not None else None
        return Extras(floors=outcome.floors, changed_files=saved.changed_files, links=link,
                      history=history, mismatch=outcome.mismatch)
    shas = _pr_shas(deps.env)
    changed = _changed_files(outcome, deps, progress, shas)
    link = None
    repository = deps.env.get("GITHUB_REPOSITORY")
    head_sha = shas[1] if shas else outcome.results.run.commit
    if changed is not None and repository:
        prefix = deps.git.repo_prefix(Path(outcome.settings.path or "."))
        link = links(deps.env.get("GITHUB_SERVER_URL") or "https://github.com", repository,
                     head_sha, prefix)
    # A results file from before the "report" block does not record the floor policy it was
    # checked against (`comment` reads no options file): its violations, not guessed margins.
    return Extras(floors=outcome.floors, changed_files=changed, links=link,
                  history=history, mismatch=outcome.mismatch)


def with_inputs(outcome: Outcome, extras: Extras) -> Results:
    """The outcome's results carrying what their report shows beyond them (the compared
    side, the floors, the changed files and their links), so that ``comment --results``
    renders the same document from the saved file alone."""
    base = outcome.compared or ReportInputs()
    link = extras.links
    inputs = replace(base, floors=extras.floors, changed_files=extras.changed_files,
                     links=None if link is None else {
                         "server": link.server, "repository": link.repository,
                         "sha": link.sha, "root": link.root})
    return replace(outcome.results, report=inputs)


def report_of(outcome: Outcome, deps: Deps) -> tuple[Results, Report]:
    """The outcome's results with what their report shows saved in them, and the
    :class:`Report` (its view, and the history to write)."""
    settings = outcome.settings
    progress = Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)
    history, update = _history(outcome, deps, progress)
    extras = extras_for(outcome, deps, progress, history)
    results = with_inputs(outcome, extras)
    view = report_view(results, comparison=outcome.comparison, extras=extras,
                       test=run_test(results, settings))
    return results, Report(view, update)


def plain_view(results: Results, settings: Settings) -> ReportView | None:
    """The view of ``results`` alone (kept after a late failure); ``None`` when even that
    cannot be built."""
    try:
        return report_view(results, comparison=None, extras=Extras(),
                           test=run_test(results, settings))
    except Exception:
        return None


def check_template(path: Path) -> None:
    """Render a user template against a tiny synthetic report, before any work is done."""
    from evaluator.render import render

    if not path.is_file():
        raise InputError(f"template {path} does not exist")
    render(probe_view(), template=path)
