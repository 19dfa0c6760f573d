"""The command line: ``retrieval-eval evaluate | comment | validate``.

``main(argv) -> int`` parses, builds the real dependencies (environment, HTTP session,
runner files) and hands them to the commands, so tests call ``main`` with their own.
Exit codes: 0 floors met, 1 a floor missed, 2 bad input or a failed build, 3 internal error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TextIO

import yaml

from evaluator import __version__
from evaluator.baseline import plan_baseline
from evaluator.core.compare import BaselineComparison, check_gates, compare_results
from evaluator.core.interop import qrels_text, run_text, trec_problem
from evaluator.core.options import Options, build_options, parse_baseline
from evaluator.core.results import Results, from_dict, to_dict
from evaluator.errors import (
    EXIT_FLOORS,
    EXIT_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    ConfigError,
    EvaluatorError,
    GroundTruthError,
    InputError,
    ResultsError,
)
from evaluator.progress import Progress
from evaluator.render import (
    COMMENT_LIMIT,
    COMMENT_MARGIN,
    HEADLINE,
    SHAPE_COLUMNS,
    check_template,
    render,
    render_comment,
    render_summary,
    render_text,
)
from evaluator.runner import Runner, neutralize

CONFIG_NAMES = (".retrieval-eval.yml", ".retrieval-eval.yaml")
EXAMPLE_QUERIES = Path(__file__).resolve().parent / "data" / "sample_project.retrieval_queries.json"


@dataclass
class IO:
    """What a command may touch besides files it is told about (tests inject their own)."""

    env: Mapping[str, str]
    stdout: TextIO
    stderr: TextIO
    session_factory: Callable[[], Any] | None = None


def example_root() -> Path:
    """The ``sample_project`` fixture that ships inside the neuralmind package."""
    import neuralmind

    root = Path(neuralmind.__file__).resolve().parent / "demo_data" / "sample_project"
    if not root.is_dir():
        raise InputError(f"this neuralmind installation has no {root}")
    return root


# ----------------------------------------------------------------------------- parser


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--quiet", action="store_true", default=None,
                   help="no progress on stderr (warnings and the summary still print)")


def _add_comment_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pr", type=int, help="pull request number (default: from the event file)")
    p.add_argument("--comment-key", help="keeps separate sticky comments per evaluation")
    p.add_argument("--template", help="a Jinja template extending builtin/comment.md.j2")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="retrieval-eval",
        description="Evaluate the retrieval quality of a NeuralMind code index against "
                    "ground-truth questions.",
        epilog="Exit codes: 0 all floors met, 1 a floor missed, 2 bad input or failed build, "
               "3 internal error.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser("evaluate", help="build the index, ask every question, score, gate")
    ev.add_argument("path", nargs="?", default=None,
                    help="the indexed root (default: the current directory)")
    ev.add_argument("--example", action="store_true",
                    help="evaluate the bundled example (NeuralMind's sample_project)")
    ev.add_argument("--queries", help="ground-truth file (default: retrieval_queries.json "
                                      "in PATH)")
    ev.add_argument("--config", help="options file (default: PATH/.retrieval-eval.yml)")
    ev.add_argument("--output-dir", help="write results.json and report.md here")
    ev.add_argument("--k", help="cut-offs, e.g. 1,3,5,10 (5 is always included)")
    ev.add_argument("--gain", choices=["exponential", "linear"])
    ev.add_argument("--backend", choices=["auto", "in_memory"])
    ev.add_argument("--graph-source", choices=["builtin", "graphify"])
    ev.add_argument("--cache-dir", help="snapshots, indexes and the model folder")
    ev.add_argument("--relevance-threshold", type=int, choices=[1, 2, 3])
    ev.add_argument("--strict", action="store_true", default=None,
                    help="incomplete coverage is an error, not a warning")
    ev.add_argument("--embed", action="store_true", default=None,
                    help="also compute the embedding columns (context precision/recall, "
                         "answer relevance)")
    ev.add_argument("--no-fail-on-floors", dest="fail_on_floors", action="store_false",
                    default=None, help="report missed floors and regression gates but exit 0")
    ev.add_argument("--baseline", help="none | auto (the PR's merge base) | ref:<git-ref> | "
                                       "file:<results.json>")
    ev.add_argument("--comment", action="store_true", default=None,
                    help="post or update the sticky pull-request comment")
    ev.add_argument("--no-comment", dest="comment", action="store_false",
                    help="do not comment, whatever the options file says")
    _add_comment_flags(ev)
    _add_common(ev)

    cm = sub.add_parser("comment", help="post the PR comment from a saved results.json")
    cm.add_argument("--results", required=True, help="results.json from `evaluate`")
    cm.add_argument("--baseline", help="results.json to compare with")
    cm.add_argument("--no-fail-on-floors", dest="fail_on_floors", action="store_false",
                    default=None, help="exit 0 even when the saved results missed a floor")
    _add_comment_flags(cm)
    _add_common(cm)

    va = sub.add_parser("validate", help="check a ground-truth file without building an index")
    va.add_argument("path", nargs="?", default=None, help="the indexed root (default: .)")
    va.add_argument("--queries", help="ground-truth file (default: PATH/retrieval_queries.json)")
    va.add_argument("--strict", action="store_true", help="incomplete coverage is an error")
    va.add_argument("--format", choices=["text", "github"], default="text",
                    help="github: workflow annotations pointing at file and line")

    sub.add_parser("action", help="run as the GitHub Action (inputs from INPUT_* variables)")

    ini = sub.add_parser("init", help="draft a ground-truth file for a repository, or "
                                      "review one (--review)")
    ini.add_argument("path", nargs="?", default=None, help="the repository root (default: .)")
    ini.add_argument("--output", help="where to write (default: PATH/retrieval_queries.json); "
                                      "never overwritten")
    ini.add_argument("--count", type=int, default=12,
                     help="how many questions to draft (exactly this many, or a warning "
                          "per missing one saying why)")
    ini.add_argument("--mix", default=None,
                     help="shape weights, e.g. focused=5,cross-file=4,identity=3 "
                          "(default focused=0.4,cross-file=0.35,identity=0.25)")
    ini.add_argument("--include", action="append", default=None, metavar="GLOB",
                     help="module universe: only these files are modules (repeatable)")
    ini.add_argument("--exclude", action="append", default=None, metavar="GLOB",
                     help="module universe: leave these files out (repeatable; replaces the "
                          "default list, 'default' stands for it)")
    ini.add_argument("--review", metavar="FILE", default=None,
                     help="do not draft: print, per question of FILE, the modules NeuralMind "
                          "retrieves against their grades")
    ini.add_argument("--backend", choices=["auto", "in_memory"], default=None)
    ini.add_argument("--cache-dir")
    ini.add_argument("--no-review", action="store_true",
                     help="draft without building the index (no retrieval-based grades)")
    _add_common(ini)

    imp = sub.add_parser("import", help="convert other ground truth to retrieval_queries.json")
    imp.add_argument("format", choices=["neuralmind-eval", "trec"],
                     help="neuralmind-eval: .neuralmind.eval.yaml; trec: TREC/BEIR qrels + "
                          "queries")
    imp.add_argument("path", nargs="?", default=None, help="the repository root (default: .)")
    imp.add_argument("--input", help="the .neuralmind.eval.yaml (default: PATH/"
                                     ".neuralmind.eval.yaml)")
    imp.add_argument("--qrels", help="TREC or BEIR qrels (trec)")
    imp.add_argument("--queries", help="queries TSV or BEIR queries.jsonl (trec)")
    imp.add_argument("--clip-grades", action="store_true",
                     help="clip grades outside 0-3 into 0-3 instead of refusing them")
    imp.add_argument("--output", help="where to write (default: PATH/retrieval_queries.json)")
    return parser


# ----------------------------------------------------------------------------- helpers


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise ConfigError(f"cannot read options file {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"options file {path}{where} is not valid YAML") from None


def load_results(path: Path) -> Results:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ResultsError(f"cannot read results file {path}: {err.strerror}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ResultsError(f"{path} is not JSON (line {err.lineno}: {err.msg})") from None
    return from_dict(data, str(path))


def resolve_queries(root: Path, options: Options) -> Path:
    """``options.queries`` under ``root``; the default name also finds ``.yaml``/``.yml``."""
    path = root / options.queries
    if not path.exists() and options.queries == "retrieval_queries.json":
        for name in ("retrieval_queries.yaml", "retrieval_queries.yml"):
            if (root / name).is_file():
                return root / name
    return path


def _options_for(root: Path, flags: Mapping[str, Any], *, config: str | None = None,
                 defaults: Mapping[str, Any] | None = None) -> Options:
    """Options from ``config`` (default: ``.retrieval-eval.yml`` at ``root``) and flags."""
    config_path = Path(config) if config else next(
        (root / n for n in CONFIG_NAMES if (root / n).is_file()), None)
    if config_path is not None and not config_path.is_file():
        raise ConfigError(f"options file {config} does not exist")
    file_values = _read_yaml(config_path) if config_path is not None else None
    return build_options(file_values or {}, flags,
                         file_name=str(config_path) if config_path else "options file",
                         defaults=defaults)


EVALUATE_FLAGS = ("k", "gain", "backend", "graph_source", "cache_dir", "output_dir", "strict",
                  "embed", "quiet", "fail_on_floors", "comment", "comment_key", "template",
                  "baseline", "relevance_threshold")


def _write_results(path: Path, results: Results) -> None:
    path.write_text(json.dumps(to_dict(results), indent=2) + "\n", encoding="utf-8")


def _headline_outputs(results: Results) -> dict[str, str]:
    metrics = results.overall.metrics

    def fmt(name: str) -> str:
        value = metrics.get(name)
        return "" if value is None else f"{value:.4f}"

    return {"passed": "true" if results.passed else "false", "ndcg": fmt("ndcg@5"),
            "recall": fmt("recall@5"), "mrr": fmt("mrr"), "hit-rate": fmt("hit_rate"),
            "faithfulness": fmt("faithfulness")}


def _comparison(results: Results, baseline: Results | None, source: str,
                options: Options, *, notes: Sequence[str] = ()) -> BaselineComparison | None:
    if baseline is None:
        return None
    metrics = list(dict.fromkeys([*HEADLINE, *SHAPE_COLUMNS]))
    return compare_results(baseline, results, source=source, metrics=metrics,
                           primary_metric=options.primary_metric, alpha=options.alpha,
                           min_effect=options.min_effect, notes=notes)


def _post_comment(results: Results, comparison: BaselineComparison | None, *, options: Options,
                  pr: int | None, io: IO, runner: Runner, progress: Progress,
                  required: bool, report: str) -> str | None:
    """Post or update the sticky comment; returns its URL, or None with a warning."""
    from evaluator import github

    def skip(reason: object, console_extra: str = "") -> None:
        progress.warn(f"comment not posted: {reason}{console_extra}")
        runner.annotate("warning", f"comment not posted: {reason}")

    try:
        ctx = github.context_from_env(io.env, pr=pr)
    except EvaluatorError as err:
        if required:
            raise
        skip(err)
        return None
    problem = None
    if not ctx.token:
        problem = "no GitHub token (set GITHUB_TOKEN or the action's github-token input)"
    elif not ctx.repository:
        problem = "GITHUB_REPOSITORY is not set"
    elif ctx.pr_number is None:
        problem = ("this is not a pull-request event and no --pr was given "
                   f"(event: {ctx.event_name or 'none'})")
    if problem:
        if required:
            raise InputError(f"cannot post the comment: {problem}")
        skip(problem, "; the report is in the summary")
        return None
    assert ctx.pr_number is not None
    session = io.session_factory() if io.session_factory else github.new_session()
    client = github.GitHubClient(session, ctx)
    template = Path(options.template) if options.template else None
    limit = COMMENT_LIMIT - COMMENT_MARGIN
    for _attempt in range(3):
        rendered = render_comment(results, comparison=comparison, template=template,
                                  limit=limit, full=report)
        try:
            result = client.upsert_sticky_comment(ctx.pr_number, rendered.text,
                                                  key=options.comment_key)
        except github.CommentTooLong:
            limit = min(limit, len(rendered.text)) // 2
            progress.warn(f"GitHub refused the comment as too long; shrinking to {limit} chars")
            continue
        except EvaluatorError as err:
            if required:  # the `comment` command exists to post: failing to is an error
                raise
            skip(err)
            return None
        verb = "created" if result.created else "updated"
        progress(f"PR #{ctx.pr_number}: comment {verb}: {result.url}")
        if rendered.dropped:
            progress.warn("the comment leaves out " + " and ".join(rendered.dropped))
        return str(result.url)
    progress.warn("comment not posted: still too long after shrinking")
    return None


def _relative(path: Path, base: Path) -> Path:
    try:
        return path.resolve().relative_to(base)
    except ValueError:
        return path


def _publish(results: Results, comparison: BaselineComparison | None, *, options: Options,
             io: IO, runner: Runner, progress: Progress, pr: int | None, comment: bool,
             comment_required: bool, results_path: Path | None, report_path: Path | None,
             cwd: Path | None = None) -> int:
    """Summary to stdout, report to files/runner, comment; returns the exit code."""
    template = Path(options.template) if options.template else None
    report = render(results, comparison=comparison, template=template)
    if report_path is not None:
        (cwd / report_path if cwd else report_path).write_text(report, encoding="utf-8")
    print(neutralize(render_text(results, comparison=comparison)), file=io.stdout, end="")
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
        url = _post_comment(results, comparison, options=options, pr=pr, io=io, runner=runner,
                            progress=progress, required=comment_required, report=report)
    outputs = _headline_outputs(results) | {
        "results-path": str(results_path or ""), "report-path": str(report_path or ""),
        "comment-url": url or ""}
    runner.set_outputs(outputs)
    if results.passed or not options.fail_on_floors:
        return EXIT_OK
    return EXIT_FLOORS


# ----------------------------------------------------------------------------- commands


def cmd_evaluate(args: argparse.Namespace, io: IO, *, relative_to: Path | None = None,
                 defaults: Mapping[str, Any] | None = None) -> int:
    from evaluator.evaluate import evaluate

    queries: Path | None
    if args.example:
        if args.path:
            raise InputError("give either PATH or --example, not both")
        root = example_root()
        queries = Path(args.queries) if args.queries else EXAMPLE_QUERIES
    else:
        root = Path(args.path or ".")
        queries = Path(args.queries) if args.queries else None
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout to evaluate as PATH")
    options = _options_for(root, {name: getattr(args, name) for name in EVALUATE_FLAGS},
                           config=args.config, defaults=defaults)
    if queries is None:
        queries = resolve_queries(root, options)
    if options.template:
        check_template(Path(options.template))
    progress = Progress(io.stderr, quiet=options.quiet)
    plan = plan_baseline(options.baseline, root=root, env=io.env)
    if plan.file is not None and not plan.file.exists():
        raise InputError(f"baseline file {plan.file} does not exist",
                         hint=f"to compare with a git ref, write ref:{options.baseline}"
                         if options.baseline and ":" not in options.baseline else None)
    baseline = load_results(plan.file) if plan.file is not None else None
    evaluation = evaluate(root, options, progress=progress, queries_path=queries,
                          base=plan.request)
    results = evaluation.results
    notes = list(evaluation.notes)
    source = f"file {plan.file}" if plan.file is not None else ""
    if evaluation.baseline is not None:
        baseline, source = evaluation.baseline, evaluation.baseline_label or "the base"
        notes.append("Both sides use the head's ground truth, so added queries are compared "
                     "fairly.")
    elif baseline is not None and plan.pr_base_sha and baseline.run.commit \
            and baseline.run.commit != plan.pr_base_sha:
        notes.append(f"The baseline file is stale: it was evaluated at "
                     f"{baseline.run.commit[:12]}, not at the PR's base "
                     f"{plan.pr_base_sha[:12]}.")
    comparison = _comparison(results, baseline, source, options, notes=notes)
    if comparison is not None and baseline is not None:
        gates = check_gates(comparison, baseline, results, max_drop=options.max_drop,
                            significant_only=options.max_drop_significant_only,
                            new_failures=options.fail_on_new_failures, alpha=options.alpha,
                            min_effect=options.min_effect)
        results = replace(results, violations=results.violations + gates)
    results_path = report_path = None
    if options.output_dir:
        out = Path(options.output_dir)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise InputError(f"cannot create --output-dir {out}: {err.strerror}") from None
        results_path, report_path = out / "results.json", out / "report.md"
        _write_results(results_path, results)
        sides = [results] + ([evaluation.baseline] if evaluation.baseline else [])
        problem = trec_problem(evaluation.ground_truth, sides)
        if problem:
            progress.warn(f"no TREC export: {problem}")
        else:
            (out / "qrels.trec").write_text(qrels_text(evaluation.ground_truth),
                                            encoding="utf-8")
            (out / "run.trec").write_text(run_text(results, "head"), encoding="utf-8")
        if evaluation.baseline is not None:
            _write_results(out / "baseline-results.json", evaluation.baseline)
            if not problem:
                (out / "run.base.trec").write_text(run_text(evaluation.baseline, "base"),
                                                   encoding="utf-8")
        progress(f"wrote {results_path} and {report_path}")
    runner = Runner.from_env(io.env, stream=io.stdout)
    for warning in results.run.warnings:
        runner.annotate("warning", warning, title="ground truth")
    if relative_to is not None and results_path is not None and report_path is not None:
        # Step outputs are read outside the container: give workspace-relative paths.
        results_path, report_path = (_relative(p, relative_to) for p in (results_path,
                                                                         report_path))
    return _publish(results, comparison, options=options, io=io, runner=runner,
                    progress=progress, pr=args.pr, comment=options.comment,
                    comment_required=False, results_path=results_path,
                    report_path=report_path, cwd=relative_to)


def cmd_comment(args: argparse.Namespace, io: IO) -> int:
    results = load_results(Path(args.results))
    baseline_path = args.baseline.removeprefix("file:") if args.baseline else None
    baseline = load_results(Path(baseline_path)) if baseline_path else None
    flags = {"comment_key": args.comment_key, "template": args.template, "quiet": args.quiet,
             "fail_on_floors": args.fail_on_floors}
    options = build_options({}, flags)
    if options.template:
        check_template(Path(options.template))
    progress = Progress(io.stderr, quiet=options.quiet)
    comparison = _comparison(results, baseline, f"file {baseline_path}", options)
    return _publish(results, comparison, options=options, io=io,
                    runner=Runner.from_env(io.env, stream=io.stdout), progress=progress,
                    pr=args.pr, comment=True, comment_required=True,
                    results_path=Path(args.results), report_path=None)


def cmd_validate(args: argparse.Namespace, io: IO) -> int:
    from evaluator.evaluate import load_ground_truth_file
    from evaluator.snapshot import checkout_files

    root = Path(args.path or ".")
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout as PATH")
    queries = Path(args.queries) if args.queries else resolve_queries(root,
                                                                       _options_for(root, {}))
    ground_truth, problems = load_ground_truth_file(queries, present=checkout_files(root),
                                                    strict=args.strict)
    runner = Runner(None, None, True, io.stdout)
    for problem in problems:
        if args.format == "github":
            runner.annotate(problem.severity, problem.render(), file=problem.file,
                            line=problem.line, title="ground truth")
        else:
            print(neutralize(problem.render()), file=io.stdout)
    from evaluator.core.groundtruth import validation_summary

    print(neutralize(validation_summary(queries.read_text(encoding="utf-8"), str(queries),
                                        problems)), file=io.stderr)
    return EXIT_OK if ground_truth is not None else EXIT_INPUT


def _write_new(path: Path, doc: dict[str, Any]) -> None:
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
    except FileExistsError:
        raise InputError(f"{path} already exists; it is never overwritten",
                         hint="choose another --output, or move the file away") from None
    except OSError as err:
        raise InputError(f"cannot write {path}: {err.strerror}") from None


def _target(args: argparse.Namespace, root: Path) -> Path:
    target = Path(args.output) if args.output else root / "retrieval_queries.json"
    if target.exists():
        raise InputError(f"{target} already exists; it is never overwritten",
                         hint="choose another --output, or move the file away")
    return target


def cmd_init(args: argparse.Namespace, io: IO) -> int:
    from evaluator.authoring import run_init, run_review
    from evaluator.core.groundtruth import DEFAULT_MIX, parse_mix
    from evaluator.core.universe import UniverseSpec, invalid_globs

    root = Path(args.path or ".").resolve()
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the repository as PATH")
    bad = invalid_globs([*(args.include or []), *(args.exclude or [])])
    if bad:
        raise InputError("invalid --include/--exclude glob: " + "; ".join(bad))
    spec = UniverseSpec(include=tuple(args.include or ()),
                        exclude=tuple(args.exclude) if args.exclude is not None else None)
    try:
        mix = parse_mix(args.mix) if args.mix else DEFAULT_MIX
    except ValueError as err:
        raise InputError(f"--mix: {err}") from None
    progress = Progress(io.stderr, quiet=bool(args.quiet))
    options = build_options({}, {"backend": args.backend, "cache_dir": args.cache_dir})
    if args.review:
        lines = run_review(root, Path(args.review), options=options, progress=progress,
                           spec=spec)
        for line in lines:
            print(neutralize(line), file=io.stdout)
        return EXIT_OK
    target = Path(args.output) if args.output else root / "retrieval_queries.json"
    outcome = run_init(root, target=target, count=args.count, options=options, spec=spec,
                       mix=mix, progress=progress, use_index=not args.no_review)
    print(neutralize(outcome.summary()), file=io.stdout)
    return EXIT_OK


def cmd_import(args: argparse.Namespace, io: IO) -> int:
    from evaluator.authoring import candidate_facts, indexable
    from evaluator.core import interop
    from evaluator.snapshot import checkout_files

    root = Path(args.path or ".").resolve()
    target = _target(args, root)
    modules = indexable(checkout_files(root))

    def read(path_text: str | None, what: str) -> tuple[Path, str]:
        if not path_text:
            raise InputError(f"import {args.format} needs {what}")
        path = Path(path_text)
        try:
            return path, path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise InputError(f"cannot read {path}: {err}") from None

    if args.format == "neuralmind-eval":
        source, text = read(args.input or str(root / ".neuralmind.eval.yaml"), "--input")
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            raise InputError(f"{source} is not valid YAML") from None
        drafts = interop.from_neuralmind_eval(data, str(source), modules)
    else:
        qrels_path, qrels_text = read(args.qrels, "--qrels")
        queries_path, queries_text = read(args.queries, "--queries")
        qrels = interop.parse_qrels(qrels_text, str(qrels_path), clip=args.clip_grades)
        queries = interop.parse_queries(queries_text, str(queries_path))
        drafts = interop.from_qrels(qrels, queries, modules, source=str(qrels_path))
    if not drafts:
        raise InputError("nothing to import: no query has both a question and judgments")
    facts = {d.id: candidate_facts(root, max(d.grades, key=lambda m: d.grades[m]))
             for d in drafts}
    doc = interop.document(drafts, facts, draft=True,
                           description=f"Imported ({args.format}) by retrieval-eval: the gold "
                                       "facts are candidates from the code; review them, then "
                                       "remove \"draft\".")
    _write_new(target, doc)
    print(neutralize(f"wrote {target}: {len(drafts)} queries imported from {args.format}"),
          file=io.stdout)
    return EXIT_OK


ACTION_CHOICES = {
    "backend": ("auto", "in_memory"), "graph-source": ("builtin", "graphify"),
    "mode": ("evaluate", "comment"),
    "comment": ("true", "false"), "fail-on-floors": ("true", "false"),
    "embed": ("true", "false"), "strict": ("true", "false"),
}
ACTION_PATHS = ("path", "queries", "config", "cache-dir", "output-dir", "template")


def _inside(workspace: Path, value: str, name: str) -> Path:
    path = (workspace / value).resolve()
    if path != workspace and workspace not in path.parents:
        raise InputError(f"input {name}: {value!r} is outside the workspace {workspace}",
                         hint="give paths relative to the repository root")
    return path


def action_argv(env: Mapping[str, str]) -> list[str]:
    """The ``evaluate`` arguments for the GitHub Action's inputs (``INPUT_<NAME>``)."""

    def read(name: str, default: str = "") -> str:
        return env.get(f"INPUT_{name.upper()}", default).strip() or default

    workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
    errors = []
    for name, allowed in ACTION_CHOICES.items():
        value = read(name)
        if value and value.lower() not in allowed:
            errors.append(f"input {name}: {value!r} is not one of {', '.join(allowed)}")
    if errors:
        raise ConfigError("invalid action inputs:\n  " + "\n  ".join(errors))
    root = _inside(workspace, read("path", "."), "path")
    argv = ["evaluate", str(root)]
    for name in ("queries", "config", "template", "output-dir", "cache-dir"):
        if read(name):
            argv += [f"--{name}", str(_inside(workspace, read(name), name))]
    if read("baseline"):
        baseline_mode, baseline_file = parse_baseline(read("baseline"))
        if baseline_mode == "file" and baseline_file is not None:
            _inside(workspace, baseline_file, "baseline")
    for name in ("k", "backend", "graph-source", "comment-key", "baseline"):
        if read(name):
            argv += [f"--{name}", read(name)]
    for name in ("embed", "strict"):
        if read(name).lower() == "true":
            argv.append(f"--{name}")
    if read("comment"):
        argv.append("--comment" if read("comment").lower() == "true" else "--no-comment")
    if read("fail-on-floors").lower() == "false":
        argv.append("--no-fail-on-floors")
    return argv


def action_defaults(env: Mapping[str, str]) -> dict[str, Any]:
    """The Action's own defaults: below the options file, above the built-in ones.

    An input left empty takes the options file's value, else these, else the CLI's.
    """
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
    return {"baseline": "auto", "comment": True,
            "output_dir": str(workspace / ".retrieval-eval" / "results"),
            "cache_dir": str(workspace / ".retrieval-eval" / "cache")}


def cmd_action(_args: argparse.Namespace, io: IO) -> int:
    """Entry of the Docker action: inputs from ``INPUT_*``, token mapped to ``GITHUB_TOKEN``."""
    env = dict(io.env)
    token = env.get("INPUT_GITHUB-TOKEN", "").strip()
    if token:
        env["GITHUB_TOKEN"] = token
    child = IO(env=env, stdout=io.stdout, stderr=io.stderr, session_factory=io.session_factory)
    mode = env.get("INPUT_MODE", "").strip().lower() or "evaluate"
    if mode not in ACTION_CHOICES["mode"]:
        raise ConfigError(f"invalid action inputs:\n  input mode: {mode!r} is not one of "
                          "evaluate, comment")
    if mode == "comment":
        return cmd_comment(build_parser().parse_args(action_comment_argv(env)), child)
    argv = action_argv(env)
    args = build_parser().parse_args(argv)
    workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
    return cmd_evaluate(args, child, relative_to=workspace, defaults=action_defaults(env))


def action_comment_argv(env: Mapping[str, str]) -> list[str]:
    """``mode: comment`` (the fork-safe workflow's second stage): post a saved results.json."""

    def read(name: str) -> str:
        return env.get(f"INPUT_{name.upper()}", "").strip()

    workspace = Path(env.get("GITHUB_WORKSPACE") or ".").resolve()
    if not read("results"):
        raise ConfigError("input results: mode comment needs the path of a results.json")
    argv = ["comment", "--results", str(_inside(workspace, read("results"), "results"))]
    baseline = read("baseline").removeprefix("file:").strip()
    if baseline and baseline not in ("none", "auto"):
        argv += ["--baseline", str(_inside(workspace, baseline, "baseline"))]
    if read("pr"):
        if not read("pr").isdigit() or int(read("pr")) < 1:
            raise ConfigError(f"input pr: {read('pr')!r} is not a pull request number")
        argv += ["--pr", read("pr")]
    for name in ("comment-key",):
        if read(name):
            argv += [f"--{name}", read(name)]
    if read("template"):
        argv += ["--template", str(_inside(workspace, read("template"), "template"))]
    if read("fail-on-floors").lower() == "false":
        argv.append("--no-fail-on-floors")
    return argv


COMMANDS: dict[str, Callable[[argparse.Namespace, IO], int]] = {
    "evaluate": cmd_evaluate, "comment": cmd_comment, "validate": cmd_validate,
    "action": cmd_action, "init": cmd_init, "import": cmd_import,
}


def main(argv: Sequence[str] | None = None, *, io: IO | None = None) -> int:
    io = io or IO(env=os.environ, stdout=sys.stdout, stderr=sys.stderr)
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args, io)
    except GroundTruthError as err:
        print(neutralize(f"error: {err}"), file=io.stderr)
        Runner.from_env(io.env, stream=io.stdout).annotate(
            "error", str(err).splitlines()[0], title="ground truth")
        return err.exit_code
    except EvaluatorError as err:
        print(neutralize(f"error: {err}"), file=io.stderr)
        Runner.from_env(io.env, stream=io.stdout).annotate("error", str(err))
        return err.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=io.stderr)
        return 130
    except Exception as err:
        if io.env.get("RETRIEVAL_EVAL_DEBUG"):
            raise
        print(neutralize(f"internal error ({type(err).__name__}: {err}); this is a bug in "
                         "retrieval-eval — please report it (set RETRIEVAL_EVAL_DEBUG=1 for "
                         "the traceback)"), file=io.stderr)
        return EXIT_INTERNAL


def entry_point() -> None:
    sys.exit(main())


__all__ = ["IO", "build_parser", "entry_point", "main"]
