"""Everything the user sees of an :class:`Outcome`: files, console, runner, PR comment.

:func:`publish` writes the output folder (``results.json``, ``report.md``, the TREC export
and the baseline's results), prints the terminal summary, appends the job summary, turns
warnings and violations into workflow annotations, posts the sticky comment when asked and
sets the step outputs (one per measure with an ``output`` in the registry).
:func:`publish_validation` and :func:`write_draft` do the same for ``validate`` and for
``init``/``import``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator import github
from evaluator.app import Drafted, Outcome, Validation
from evaluator.core.interop import qrels_text, run_text, trec_problem
from evaluator.core.measures import outputs as measure_outputs
from evaluator.core.results import Results, to_dict
from evaluator.deps import Deps
from evaluator.errors import EvaluatorError, InputError
from evaluator.progress import Progress
from evaluator.render import (
    COMMENT_LIMIT,
    COMMENT_MARGIN,
    render,
    render_comment,
    render_summary,
    render_text,
)
from evaluator.runner import Runner, neutralize


@dataclass(frozen=True)
class Written:
    results: Path | None = None
    report: Path | None = None


def _write_results(path: Path, results: Results) -> None:
    path.write_text(json.dumps(to_dict(results), indent=2) + "\n", encoding="utf-8")


def write_outputs(outcome: Outcome, report: str, progress: Progress) -> Written:
    """The output folder, when ``output_dir`` is set."""
    if not outcome.settings.output_dir:
        return Written()
    out = Path(outcome.settings.output_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"cannot create --output-dir {out}: {err.strerror}") from None
    written = Written(out / "results.json", out / "report.md")
    _write_results(out / "results.json", outcome.results)
    (out / "report.md").write_text(report, encoding="utf-8")
    sides = [outcome.results] + ([outcome.baseline] if outcome.baseline else [])
    problem = trec_problem(outcome.ground_truth, sides) if outcome.ground_truth else "none"
    if outcome.ground_truth is not None and problem:
        progress.warn(f"no TREC export: {problem}")
    elif outcome.ground_truth is not None:
        (out / "qrels.trec").write_text(qrels_text(outcome.ground_truth), encoding="utf-8")
        (out / "run.trec").write_text(run_text(outcome.results, "head"), encoding="utf-8")
    if outcome.baseline is not None:
        _write_results(out / "baseline-results.json", outcome.baseline)
        if not problem:
            (out / "run.base.trec").write_text(run_text(outcome.baseline, "base"),
                                               encoding="utf-8")
    progress(f"wrote {written.results} and {written.report}")
    return written


def step_outputs(results: Results) -> dict[str, str]:
    """``passed`` and one output per measure that declares one (its overall value)."""
    metrics = results.overall.metrics
    out = {"passed": "true" if results.passed else "false"}
    for name, measure in measure_outputs().items():
        value = metrics.get(measure.headline_name)
        out[name] = "" if value is None else f"{value:.4f}"
    return out


def _comment_problem(ctx: github.GitHubContext) -> str | None:
    if not ctx.token:
        return "no GitHub token (set GITHUB_TOKEN or the action's github-token input)"
    if not ctx.repository:
        return "GITHUB_REPOSITORY is not set"
    if ctx.pr_number is None:
        return ("this is not a pull-request event and no --pr was given "
                f"(event: {ctx.event_name or 'none'})")
    return None


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
                f"cannot post the comment: {reason}")
        self.progress.warn(f"comment not posted: {reason}{console_extra}")
        self.runner.annotate("warning", f"comment not posted: {reason}")

    def post(self, report: str) -> str | None:
        """Post or update the sticky comment; its URL, or None with a warning."""
        settings = self.outcome.settings
        try:
            ctx = github.context_from_env(self.deps.env, pr=settings.pr)
        except EvaluatorError as err:
            self.skip(err)
            return None
        problem = _comment_problem(ctx)
        if problem:
            self.skip(problem, "; the report is in the summary")
            return None
        assert ctx.pr_number is not None
        client = github.GitHubClient(self.deps.session_factory(), ctx)
        return self._upsert(client, ctx.pr_number, report)

    def _upsert(self, client: github.GitHubClient, pr: int, report: str) -> str | None:
        settings, outcome = self.outcome.settings, self.outcome
        template = Path(settings.template) if settings.template else None
        limit = COMMENT_LIMIT - COMMENT_MARGIN
        for _attempt in range(3):
            rendered = render_comment(outcome.results, comparison=outcome.comparison,
                                      template=template, limit=limit, full=report)
            try:
                result = client.upsert_sticky_comment(pr, rendered.text, key=settings.comment_key)
            except github.CommentTooLong:
                limit = min(limit, len(rendered.text)) // 2
                self.progress.warn(f"GitHub refused the comment as too long; shrinking to "
                                   f"{limit} chars")
                continue
            except EvaluatorError as err:
                self.skip(err)
                return None
            verb = "created" if result.created else "updated"
            self.progress(f"PR #{pr}: comment {verb}: {result.url}")
            if rendered.dropped:
                self.progress.warn("the comment leaves out " + " and ".join(rendered.dropped))
            return str(result.url)
        self.progress.warn("comment not posted: still too long after shrinking")
        return None


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

    ``relative_to``: step outputs give paths relative to it (the Action's workspace)."""
    settings, results, comparison = outcome.settings, outcome.results, outcome.comparison
    progress = Progress(deps.stderr, quiet=settings.quiet)
    runner = Runner.from_env(deps.env, stream=deps.stdout)
    template = Path(settings.template) if settings.template else None
    report = render(results, comparison=comparison, template=template)
    written = write_outputs(outcome, report, progress)
    if outcome.ground_truth is not None:
        for warning in results.run.warnings:
            runner.annotate("warning", warning, title="ground truth")
    print(neutralize(render_text(results, comparison=comparison)), file=deps.stdout, end="")
    if runner.summary_path is not None:
        summary = render_summary(results, comparison=comparison, template=template,
                                 full=report)
        runner.append_summary(summary.text)
        if summary.dropped:
            progress.warn("the job summary leaves out " + " and ".join(summary.dropped)
                          + " (GitHub's 1 MiB limit); report.md has everything")
    for violation in results.violations:
        title = ("retrieval quality floor missed" if violation.kind == "floor"
                 else "retrieval regression gate failed")
        runner.annotate("error", violation.message, title=title)
    url = None
    if comment:
        url = _Poster(outcome, deps, runner, progress, comment_required).post(report)
    results_path = written.results or outcome.results_file
    runner.set_outputs(step_outputs(results) | {
        "results-path": _relative(results_path, relative_to),
        "report-path": _relative(written.report, relative_to), "comment-url": url or ""})


def publish_validation(validation: Validation, deps: Deps, *, github_format: bool) -> None:
    """Each problem as a line (or a workflow annotation), then the counts on stderr."""
    runner = Runner(None, None, True, deps.stdout)
    for problem in validation.problems:
        if github_format:
            runner.annotate(problem.severity, problem.render(), file=problem.file,
                            line=problem.line, title="ground truth")
        else:
            print(neutralize(problem.render()), file=deps.stdout)
    errors = sum(1 for p in validation.problems if p.severity == "error")
    n = len(validation.ground_truth.queries) if validation.ground_truth else 0
    print(neutralize(f"{validation.queries}: {n} queries, {errors} error(s), "
                     f"{len(validation.problems) - errors} warning(s)"), file=deps.stderr)


def write_draft(drafted: Drafted, deps: Deps) -> None:
    """Write the drafted ground truth (never over an existing file) and say so."""
    doc: dict[str, Any] = drafted.document
    try:
        with drafted.target.open("x", encoding="utf-8") as handle:
            handle.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    except FileExistsError:
        raise InputError(f"{drafted.target} already exists; it is never overwritten",
                         hint="choose another --output, or move the file away") from None
    except OSError as err:
        raise InputError(f"cannot write {drafted.target}: {err.strerror}") from None
    print(neutralize(f"wrote {drafted.target}: {drafted.summary}"), file=deps.stdout)
