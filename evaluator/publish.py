"""Everything the user sees of an :class:`Outcome`: files, console, runner, PR comment.

:func:`publish` writes the output folder (``results.json``, ``report.md``, the TREC export
and the baseline's results), prints the terminal summary, appends the job summary, turns
warnings and violations into workflow annotations, posts the sticky comment when asked and
sets the step outputs (one per measure with an ``output`` in the registry), and writes the
history file the application updated. It only formats and writes: the report's view, the
changed files and the history are computed by :mod:`evaluator.reporting`. What
``validate``, ``init``, ``import`` and ``judge`` print or write is in
:mod:`evaluator.console`, which imports neither jinja2 nor requests.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator import atomic, github_comments, github_context, history_file
from evaluator.app import Outcome
from evaluator.core import verdict
from evaluator.core.evidence import DRIFT
from evaluator.core.groundtruth import MAX_GROUND_TRUTH_BYTES
from evaluator.core.interop import qrels_text, run_text, trec_problem
from evaluator.core.measures import outputs as measure_outputs
from evaluator.core.options import Settings
from evaluator.core.results import Results, to_dict, untracked_sentence
from evaluator.deps import Deps
from evaluator.errors import EvaluatorError, GitHubError, InputError
from evaluator.paths import confine, regular_file
from evaluator.progress import Progress
from evaluator.render import (
    COMMENT_LIMIT,
    COMMENT_MARGIN,
    render,
    render_comment,
    render_summary,
    render_text,
)
from evaluator.report_views import ReportView
from evaluator.runner import Runner, neutralize
from evaluator.sharding import part_name
from evaluator.snapshot import mark_output_folder

if TYPE_CHECKING:
    from evaluator.reporting import HistoryUpdate, Report


@dataclass(frozen=True)
class Written:
    results: Path | None = None
    report: Path | None = None


def _results_json(results: Results) -> str:
    return json.dumps(to_dict(results), indent=2) + "\n"


def keep_head(results: Results, view: ReportView | None, settings: Settings, deps: Deps,
              written: Collection[str] = ()) -> None:
    """After a late failure: the head's results and a plain report of ``view`` (when the
    application could build one), if not written yet."""
    if not settings.output_dir:
        return
    progress = Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)
    makers: list[tuple[str, Callable[[], str]]] = [
        ("results.json", lambda: _results_json(results))]
    if view is not None:
        makers.append(("report.md", lambda: render(view)))
    for name, make in makers:
        target = Path(settings.output_dir) / name
        if name in written:
            continue
        try:
            atomic.write_text(target, make())
            progress.warn(f"kept the finished evaluation in {target}")
        except Exception as err:
            progress.warn(f"could not keep {target}: {err}")


def write_outputs(outcome: Outcome, report: str, progress: Progress,
                  written: set[str]) -> Written:
    """The output folder (created by the application), when ``output_dir`` is set; every
    file written atomically and recorded in ``written``."""
    if not outcome.settings.output_dir:
        return Written()
    out = Path(outcome.settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)  # `comment` writes none; `evaluate` made it
    mark_output_folder(out)
    result = Written(out / "results.json", out / "report.md")
    atomic.write_text(out / "results.json", _results_json(outcome.results))
    written.add("results.json")
    atomic.write_text(out / "report.md", report)
    written.add("report.md")
    sides = [outcome.results] + ([outcome.baseline] if outcome.baseline else [])
    problem = trec_problem(outcome.ground_truth, sides) if outcome.ground_truth else "none"
    if outcome.ground_truth is not None and problem:
        progress.warn(f"no TREC export: {problem}")
    elif outcome.ground_truth is not None:
        atomic.write_text(out / "qrels.trec", qrels_text(outcome.ground_truth))
        atomic.write_text(out / "run.trec", run_text(outcome.results, "head"))
    if outcome.baseline is not None:
        atomic.write_text(out / "baseline-results.json", _results_json(outcome.baseline))
        if not problem:
            atomic.write_text(out / "run.base.trec", run_text(outcome.baseline, "base"))
    progress(f"wrote {result.results} and {result.report}")
    return result


def _write_history(update: HistoryUpdate | None, progress: Progress) -> None:
    """The history file with this run's commit (a push to the default branch)."""
    if update is None:
        return
    try:
        history_file.save(update.path, update.history)
    except InputError as err:  # a folder or file that cannot be written
        progress.warn(f"history not updated: {err.message}")


def step_outputs(results: Results) -> dict[str, str]:
    """``passed`` and one output per measure that declares one (its overall value)."""
    metrics = results.overall.metrics
    out = {"passed": "true" if results.passed else "false"}
    for name, measure in measure_outputs().items():
        value = metrics.get(measure.headline_name)
        out[name] = "" if value is None else f"{value:.4f}"
    return out


def _comment_problem(ctx: github_context.GitHubContext) -> str | None:
    """Everything missing to post the comment, in one sentence; None when nothing is."""
    missing = []
    if not ctx.token:
        missing.append("no GitHub token (set GITHUB_TOKEN or the action's github-token "
                       "input)")
    if not ctx.repository:
        missing.append("GITHUB_REPOSITORY is not set")
    if ctx.pr_number is None:
        missing.append("this is not a pull-request event and no --pr was given "
                       f"(event: {ctx.event_name or 'none'})")
    return "; ".join(missing) or None


PREVIEW_HINT = "see the comment without posting it: retrieval-eval comment --results " \
               "RESULTS.json --preview"


def _report(outcome: Outcome) -> Report:
    """The outcome's report (:func:`evaluator.reporting.report_of` made it)."""
    if outcome.report is None:
        raise ValueError("an outcome is published with its report: evaluator.reporting.report_of")
    return outcome.report


def comment_body(outcome: Outcome, *, limit: int, report: str | None = None
                 ) -> tuple[str, tuple[str, ...]]:
    """The comment as posted (without the markers the client adds) and what it left out."""
    settings = outcome.settings
    template = Path(settings.template) if settings.template else None
    rendered = render_comment(_report(outcome).view, template=template, limit=limit,
                              full=report)
    return rendered.text, rendered.dropped


def fingerprint(outcome: Outcome) -> str:
    return verdict.comment_fingerprint(outcome.results, passed=outcome.passed,
                                       comparison=outcome.comparison)


def preview(outcome: Outcome, deps: Deps) -> None:
    """Print the exact comment (markers included) to stdout: no token, no network."""
    progress = Progress(deps.stderr, quiet=outcome.settings.quiet, clock=deps.elapsed)
    text, dropped = comment_body(outcome, limit=COMMENT_LIMIT - COMMENT_MARGIN)
    body = (f"{github_comments.marker(outcome.settings.comment_key)}\n"
            f"{github_comments.state_marker(fingerprint(outcome))}\n{text}")
    runner = Runner.from_env(deps.env, stream=deps.stdout)
    # In a workflow log a line could be read as a workflow command: neutralize it there only.
    print(neutralize(body) if runner.in_actions else body, file=deps.stdout, end="")
    if dropped:
        progress.warn("the comment leaves out " + " and ".join(dropped))


@dataclass
class _Poster:
    outcome: Outcome
    deps: Deps
    runner: Runner
    progress: Progress
    required: bool  # the `comment` command exists to post: failing to is an error

    def skip(self, reason: object, console_extra: str = "") -> None:
        if self.required:
            raise reason if isinstance(reason, EvaluatorError) else InputError(
                f"cannot post the comment: {reason}", hint=PREVIEW_HINT)
        self.progress.warn(f"comment not posted: {reason}{console_extra}")
        self.runner.annotate("warning", f"comment not posted: {reason}")

    def post(self, report: str) -> github_comments.PublishResult | None:
        """Post per the comment mode; what was done, or None with a warning."""
        settings = self.outcome.settings
        env = self.deps.env
        if not (env.get("GITHUB_REPOSITORY") or "").strip():
            # Say everything that is missing at once, not only the first thing.
            self.skip(_comment_problem(github_context.GitHubContext(
                api_url="", repository="", pr_number=settings.pr,
                token=self.deps.github_token,
                event_name=env.get("GITHUB_EVENT_NAME"), head_sha=None)),
                "; the report is in the summary")
            return None
        try:
            ctx = github_context.context_from_env(env, token=self.deps.github_token,
                                                  pr=settings.pr)
        except EvaluatorError as err:
            self.skip(err)
            return None
        problem = _comment_problem(ctx)
        if problem:
            self.skip(problem, "; the report is in the summary")
            return None
        assert ctx.pr_number is not None
        try:
            deadline = settings.comment_timeout
            if self.outcome.deadline_at is not None:  # the artifact download spent some
                deadline = self.outcome.deadline_at - time.monotonic()
                if deadline <= 0:
                    raise GitHubError(f"the {settings.comment_timeout:g} s deadline for "
                                      "talking to GitHub (comment-timeout) passed while "
                                      "fetching the artifact", hint="raise comment-timeout")
            client = github_comments.GitHubClient(self.deps.session_factory(), ctx,
                                                  deadline_s=deadline)
        except EvaluatorError as err:
            self.skip(err)
            return None
        return self._send(client, ctx.pr_number, report)

    def _send(self, client: github_comments.GitHubClient, pr: int,
              report: str) -> github_comments.PublishResult | None:
        settings, outcome = self.outcome.settings, self.outcome
        mode = settings.comment if settings.comment != "never" else "always"
        limit = COMMENT_LIMIT - COMMENT_MARGIN
        for _attempt in range(3):
            text, dropped = comment_body(outcome, limit=limit,
                                         report=report if limit == COMMENT_LIMIT
                                         - COMMENT_MARGIN else None)
            try:
                result = client.publish(pr, text, key=settings.comment_key, mode=mode,
                                        fingerprint=fingerprint(outcome),
                                        failed=not outcome.passed,
                                        hide_previous=settings.hide_previous)
            except github_comments.CommentTooLong:
                limit = min(limit, len(text)) // 2
                self.progress.warn(f"GitHub refused the comment as too long; shrinking to "
                                   f"{limit} chars")
                continue
            except EvaluatorError as err:
                self.skip(err)
                return None
            self._say(pr, result, dropped)
            return result
        reason = "GitHub refused it as too long even after shrinking it three times"
        if self.required:
            raise GitHubError(f"comment not posted: {reason}",
                              hint="use a shorter --template; the report is in the summary")
        self.skip(reason)
        return None

    def _say(self, pr: int, result: github_comments.PublishResult,
             dropped: tuple[str, ...]) -> None:
        if result.comment is None:
            self.progress(f"PR #{pr}: comment not posted ({result.reason})")
            return
        self.progress(f"PR #{pr}: comment {result.action}: {result.comment.url}")
        if result.hidden:
            self.progress(f"PR #{pr}: {result.hidden} earlier comment(s) minimized")
        if result.hide_error:
            self.progress.warn(f"earlier comments not minimized: {result.hide_error}")
        if dropped:
            self.progress.warn("the comment leaves out " + " and ".join(dropped))


def _relative(path: Path | None, base: Path | None) -> str:
    if path is None:
        return ""
    if base is None:
        return str(path)
    try:
        return str(path.resolve().relative_to(base))
    except ValueError:
        return str(path)


def publish(outcome: Outcome, deps: Deps, *, comment: bool, comment_required: bool = False,
            relative_to: Path | None = None) -> None:
    """Files, console summary, job summary, annotations, comment and step outputs.

    ``relative_to``: step outputs give paths relative to it (the Action's workspace).
    Whatever fails, an evaluation's results and report stay on disk (:func:`keep_head`).
    A shard's part is published by :func:`publish_part` instead."""
    if outcome.results.is_partial:
        publish_part(outcome, deps, relative_to=relative_to)
        return
    written: set[str] = set()
    try:
        _publish(outcome, deps, comment=comment, comment_required=comment_required,
                 relative_to=relative_to, written=written)
    except BaseException:
        if outcome.ground_truth is not None:  # an evaluation, not a saved file
            keep_head(outcome.results,
                      outcome.report.view if outcome.report is not None else None,
                      outcome.settings, deps, written)
        raise


def _publish(outcome: Outcome, deps: Deps, *, comment: bool, comment_required: bool,
             relative_to: Path | None, written: set[str]) -> None:
    settings, results, comparison = outcome.settings, outcome.results, outcome.comparison
    progress = Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)
    runner = Runner.from_env(deps.env, stream=deps.stdout)
    template = Path(settings.template) if settings.template else None
    view = _report(outcome).view
    report = render(view, template=template)
    paths = write_outputs(outcome, report, progress, written)
    _write_history(_report(outcome).history_update, progress)
    if outcome.ground_truth is not None:
        for warning in results.run.warnings:
            # The annotation says "Warning" itself: not twice.
            text = warning.removeprefix("warning: ")
            runner.annotate("warning", text, title="ground truth")
        if results.run.untracked:
            runner.annotate("warning", untracked_sentence(results.run.untracked),
                            title="untracked files")
    for difference in outcome.mismatch:
        progress.warn(f"the baseline is not comparable: {difference.message}")
    print(neutralize(render_text(view)), file=deps.stdout, end="")
    if runner.summary_path is not None:
        summary = render_summary(view, template=template, full=report)
        runner.append_summary(summary.text)
        if summary.dropped:
            progress.warn("the job summary leaves out " + " and ".join(summary.dropped)
                          + " (GitHub's 1 MiB limit); report.md has everything")
    for violation in results.violations:
        title = ("retrieval quality floor missed" if violation.kind == "floor"
                 else "retrieval regression gate failed")
        runner.annotate("error", violation.message, title=title)
    _annotate_worse(outcome, runner, relative_to)
    _annotate_drift(outcome, runner, relative_to)
    posted = None
    if comment:
        required = comment_required or not runner.in_actions
        posted = _Poster(outcome, deps, runner, progress, required).post(report)
    written_comment = posted.comment if posted is not None else None
    results_path = paths.results or outcome.results_file
    runner.set_outputs(step_outputs(results) | verdict.step_outputs(
        passed=results.passed, comparison=comparison,
        comment_id=written_comment.comment_id if written_comment else None) | {
        "results-path": _relative(results_path, relative_to),
        "report-path": _relative(paths.report, relative_to),
        "comment-url": written_comment.url if written_comment else ""})


def _annotate_worse(outcome: Outcome, runner: Runner, relative_to: Path | None) -> None:
    """A ``::warning`` on the ground-truth line of each question that got worse."""
    if outcome.comparison is None or not runner.in_actions:
        return
    root = Path(outcome.settings.path or ".")
    # The name comes from a results file (in comment and merge modes, an artifact): only a
    # regular file inside the checkout is read.
    queries = root / outcome.results.run.queries_file
    try:
        regular_file(confine(queries, root, setting="the results' queries_file"),
                     what="ground-truth file")
        with queries.open("rb") as handle:
            text = handle.read(MAX_GROUND_TRUTH_BYTES).decode("utf-8", errors="replace")
    except (OSError, InputError):
        text = ""
    lines = verdict.question_lines(text)
    shown = _relative(queries, relative_to.resolve() if relative_to else Path.cwd())
    for _qid, line, message in verdict.worse_annotations(outcome.comparison, lines):
        runner.annotate("warning", message, title="question got worse", file=shown,
                        line=line)


def _annotate_drift(outcome: Outcome, runner: Runner, relative_to: Path | None) -> None:
    """A ``::warning`` at the line of each anchored fact whose evidence span is gone (drift:
    the change deleted or rewrote it). The file named is the results' own ground truth, under
    the checkout (a results file may come from an artifact: its paths are not trusted)."""
    run = outcome.results.run
    if not run.drift or not runner.in_actions:
        return
    root = Path(outcome.settings.path or ".")
    shown = _relative(root / run.queries_file,
                      relative_to.resolve() if relative_to else Path.cwd())
    for problem in run.drift:
        title = DRIFT if problem.message.startswith(DRIFT) else "evidence not found"
        runner.annotate("warning", problem.render(), title=title, file=shown,
                        line=problem.line)


def _part_line(results: Results) -> str:
    info = results.shard
    assert info is not None
    if info.unit == "query":
        return f"{len(results.queries)} of {len(info.plan)} questions"
    verdicts = [f"{name} ({'floors met' if s.passed else 'floors missed'})"
                for name, s in results.sections.items()]
    return "section(s) " + (", ".join(verdicts) if verdicts else "none (more shards than "
                            "sections)")


def publish_part(outcome: Outcome, deps: Deps, *, relative_to: Path | None = None) -> None:
    """One shard's part: the part file(s) in the output folder and a line saying what it
    holds; no comment and no gate (the merge job posts and gates the whole)."""
    results = outcome.results
    assert results.shard is not None
    progress = Progress(deps.stderr, quiet=outcome.settings.quiet, clock=deps.elapsed)
    runner = Runner.from_env(deps.env, stream=deps.stdout)
    out = Path(outcome.settings.output_dir or ".")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create --output-dir {out}: {err.strerror}") from None
    if outcome.settings.output_dir:  # never marks the current folder as a whole
        mark_output_folder(out)
    path = out / part_name(results.shard)
    atomic.write_text(path, _results_json(results))
    if outcome.baseline is not None and outcome.baseline.shard is not None:
        atomic.write_text(out / part_name(outcome.baseline.shard),
                          _results_json(outcome.baseline))
    print(neutralize(f"shard {results.shard.shard}: {_part_line(results)}; wrote {path}; "
                     "merge the parts with `retrieval-eval merge`"), file=deps.stdout)
    progress(f"wrote {path}")
    runner.set_outputs({"passed": "", "results-path": _relative(path, relative_to),
                        "report-path": "", "comment-url": ""})
