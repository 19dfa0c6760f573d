"""The commands that write ground truth or judge contexts: ``init`` (drafting questions, or
``--review`` of a file), ``import`` and ``judge``.

Like :mod:`evaluator.app`, each command goes from :class:`Settings` and :class:`Deps` to
data; :mod:`evaluator.console` writes or prints what they return.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evaluator.app import given
from evaluator.authoring import ask_all, draft_document, draft_plan, explain, history_plan
from evaluator.checkout_files import _own_folders, _warn_skipped, cache_dir_of, ensure_writable
from evaluator.core import interop, yamlfile
from evaluator.core.groundtruth import DEFAULT_MIX
from evaluator.core.options import Settings
from evaluator.core.universe import Universe
from evaluator.deps import Deps
from evaluator.drafting import Candidate
from evaluator.errors import InputError
from evaluator.evaluate import build_index
from evaluator.ground_truth_file import read_ground_truth
from evaluator.judging import BatchEmbed, checked_embedder
from evaluator.judging import run_judge as judge_contexts
from evaluator.paths import confine, regular_file, writable_anywhere
from evaluator.progress import Progress, heartbeat
from evaluator.side import judge_model_dir
from evaluator.validation import universe


@dataclass(frozen=True)
class Drafted:
    """A ground-truth document to write (never over an existing file)."""

    target: Path
    document: dict[str, Any]
    summary: str


def _target(settings: Settings, root: Path) -> Path:
    target = Path(settings.output) if settings.output else root / "retrieval_queries.json"
    if not settings.output and target.is_symlink():  # a committed link: the default name
        confine(target, root, setting=f"the default output {target.name}")
    if settings.output:
        writable_anywhere(target, setting="--output")
    if target.exists():
        raise InputError(f"{target} already exists; it is never overwritten",
                         hint="choose another --output, or move the file away")
    return target


def _init_universe(settings: Settings, deps: Deps, root: Path,
                   progress: Progress) -> tuple[tuple[str, ...], Universe]:
    own = _own_folders(cache_dir_of(settings, deps.env), output_dir=settings.output_dir)
    skipped: list[str] = []
    files = deps.git.checkout_files(root, exclude=own, skipped=skipped)
    _warn_skipped(progress, skipped)
    modules = universe(settings, files)
    progress(f"universe: {modules.summary()}")
    if not modules.modules:
        raise InputError(f"no file of {root} is in the module universe ({len(files)} files, "
                         "all left out)", hint="widen it with the include option")
    return files, modules


def _built(settings: Settings, deps: Deps, root: Path, files: tuple[str, ...],
           progress: Progress) -> Any:
    progress(f"index: building the NeuralMind index of {len(files)} files "
             f"(backend {settings.backend})")
    with heartbeat(progress, "index", pause=deps.pause):
        return build_index(root, files, settings, progress=progress, deps=deps)


def _check_init_options(settings: Settings) -> None:
    """The options of ``init`` that only make sense together, or in a range."""
    history = bool(settings.from_history)
    if settings.count < 1:
        raise InputError("--count must be at least 1")
    if not history and (settings.since is not None or settings.docstring_count):
        raise InputError("--since and --docstring-count go with --from-history",
                         hint="add --from-history, or leave them out")
    if settings.docstring_count < 0:
        raise InputError("--docstring-count cannot be negative")
    if history and not settings.docstring_count and dict(settings.mix) != dict(DEFAULT_MIX):
        raise InputError("--mix shapes the docstring questions; with --from-history it needs "
                         "--docstring-count", hint="leave --mix out: a history question takes "
                         "its change's shape (focused for one module, cross-file for more)")


def run_init(settings: Settings, deps: Deps) -> Drafted:
    """Draft exactly ``count`` questions in the shape mix over the module universe (or say
    why fewer), grade them with a reason each, and show what NeuralMind retrieves. With
    ``from_history`` the ``count`` questions come from the checkout's commits, and
    ``docstring_count`` more from the code's docstrings."""
    root = Path(settings.path or ".").resolve()
    if not root.is_dir():
        raise InputError(f"{root} {'is not a folder' if root.exists() else 'does not exist'}",
                         hint="give the root of the repository to draft for")
    target = _target(settings, root)
    history = bool(settings.from_history)
    _check_init_options(settings)
    if history and deps.git.head_commit(root) is None:
        raise InputError(f"init --from-history reads the git history of {root}, which is "
                         "not a git checkout with a commit (an empty repository, or a new "
                         "branch, has none yet)",
                         hint="run it in a clone of the repository, or commit first")
    progress = Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)
    files, modules = _init_universe(settings, deps, root, progress)
    chosen: list[Candidate] = []
    shortfall: list[str] = []
    code = None
    if history:
        with heartbeat(progress, "history", pause=deps.pause):
            chosen, shortfall = history_plan(root, modules, deps.git, count=settings.count,
                                             since=settings.since, progress=progress)
    docstrings = settings.docstring_count if history else settings.count
    index = None if settings.no_review else _built(settings, deps, root, files, progress)
    try:
        if docstrings:
            code, drafted = draft_plan(root, modules, docstrings, settings.mix,
                                       progress=progress)
            chosen += drafted.chosen
            shortfall += drafted.shortfall
        if not chosen:
            raise InputError(f"no commit of {root} makes a question", hint="; ".join(
                shortfall) or "write the ground truth by hand (see docs/ground-truth.md)")
        retrieved = ask_all(index, chosen, modules, progress=progress) \
            if index is not None else {}
    finally:
        if index is not None:
            index.close()
    for line in shortfall:
        progress.warn(line)
    doc = draft_document(chosen, modules, retrieved=retrieved, root_name=root.name,
                         code=code)
    shapes = Counter(c.shape for c in chosen)
    asked = settings.count + (settings.docstring_count if history else 0)
    origin = f"{sum(1 for c in chosen if c.source)} from history, " if history else ""
    return Drafted(target, doc, f"{len(chosen)} draft question(s) of {asked} asked ("
                   + origin + ", ".join(f"{n} {s}" for s, n in shapes.items() if n)
                   + f") over {len(modules.modules)} modules; review the grades and facts "
                     "(each question's \"review\" says why), then remove \"draft\"")


def run_review(settings: Settings, deps: Deps) -> list[str]:
    """``init --review FILE``: per question of FILE, NeuralMind's top modules (within the
    universe) against the grades."""
    root = Path(settings.path or ".").resolve()
    progress = Progress(deps.stderr, quiet=settings.quiet, clock=deps.elapsed)
    files, modules = _init_universe(settings, deps, root, progress)
    ground_truth = read_ground_truth(Path(given(settings.review, "--review")),
                                     present=files, strict=False,
                                     universe=modules)
    for problem in ground_truth.warnings:
        progress.warn(problem.render())
    index = _built(settings, deps, root, files, progress)
    try:
        ranked = {q.id: modules.filter_ranking(index.ask(q.question).ranked_modules)
                  for q in ground_truth.queries}
    finally:
        index.close()
    return explain(ground_truth, ranked)


def _read(path_text: str | None, what: str, fmt: str) -> tuple[Path, str]:
    if not path_text:
        raise InputError(f"import {fmt} needs {what}")
    path = Path(path_text)
    try:
        return path, path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read {path}: {err}") from None


def run_import(settings: Settings, deps: Deps) -> Drafted:
    """Convert a ``.neuralmind.eval.yaml`` or TREC/BEIR qrels + queries to ground truth."""
    fmt = given(settings.source_format, "the format")
    root = Path(settings.path or ".").resolve()
    target = _target(settings, root)
    files = deps.git.checkout_files(root)
    modules = universe(settings, files).modules
    if fmt == "neuralmind-eval":
        default = root / ".neuralmind.eval.yaml"
        if not settings.input and (default.exists() or default.is_symlink()):
            confine(default, root, setting=f"the default input {default.name}")
        source, text = _read(settings.input or str(default), "--input", fmt)
        try:
            data = yamlfile.load(text)
        except yaml.YAMLError as err:
            mark = getattr(err, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            raise InputError(f"{source}{where} {yamlfile.what_is_wrong(err)}") from None
        except RecursionError:
            raise InputError(f"{source} is nested too deeply") from None
        drafts = interop.from_neuralmind_eval(data, str(source), modules, files)
    else:
        qrels_path, qrels_text = _read(settings.qrels, "--qrels", fmt)
        queries_path, queries_text = _read(settings.trec_queries, "--queries", fmt)
        try:
            qrels = interop.parse_qrels(qrels_text, str(qrels_path), clip=settings.clip_grades)
            queries = interop.parse_queries(queries_text, str(queries_path))
        except RecursionError:
            raise InputError(f"{qrels_path} or {queries_path} is nested too deeply") from None
        drafts = interop.from_qrels(qrels, queries, modules, source=str(qrels_path),
                                    present=files)
    if not drafts:
        raise InputError("nothing to import: no query has both a question and judgments")
    # No facts are made up: the imported questions are retrieval-only until someone who
    # knows the answer quotes 2-4 facts from its code (a module docstring is not a fact).
    doc = interop.document(drafts, {}, draft=True,
                           description=f"Imported ({fmt}) by retrieval-eval: the questions "
                                       "are retrieval-only (scored for ranking, no gold "
                                       "facts); add 2-4 facts quoted from each answer's code "
                                       "to judge faithfulness too, then remove \"draft\".")
    return Drafted(target, doc, f"{len(drafts)} queries imported from {fmt}")


@dataclass(frozen=True)
class Judged:
    """The ``judge`` command's report and where to write it (``None``: stdout)."""

    report: dict[str, Any]
    target: Path | None
    notes: tuple[str, ...] = ()


def run_judge(settings: Settings, deps: Deps) -> Judged:
    """Score the given contexts against the ground truth's gold facts with every judge
    column, through the evaluator's own judging code (:mod:`evaluator.judging`)."""
    target = Path(settings.judge_output) if settings.judge_output else None
    if target is not None:
        writable_anywhere(target, setting="--output")
    queries = regular_file(Path(settings.queries), what="ground-truth file") \
        if Path(settings.queries).exists() else Path(settings.queries)
    ground_truth = read_ground_truth(queries, present=None, strict=False)
    # The headline judge as the evaluator's default run has it: with the model (its
    # similarity route) when a model folder is found; without one the judge is the terms
    # rule alone, which the report's "judge" names. --embed needs the model.
    embed: BatchEmbed | None = None
    columns: BatchEmbed | None = None
    notes: tuple[str, ...] = ()
    if settings.backend != "in_memory" or settings.embed:
        model = deps.resolve_model(ensure_writable(cache_dir_of(settings, deps.env)))
        folder = judge_model_dir(settings, model)
        if folder is not None:
            embed = checked_embedder(folder, purpose="the faithfulness judge")
        else:
            notes = ("no embedding model folder was found, so the judge used its terms rule "
                     "alone (as --backend in_memory does); install the `model` extra or set "
                     "NEURALMIND_ONNX_MODEL_DIR for the headline judge",)
        if settings.embed:
            columns = checked_embedder(model.path, purpose="--embed")
    report = judge_contexts(ground_truth=ground_truth,
                            contexts_path=Path(given(settings.contexts, "--contexts")),
                            embed=embed, columns=columns)
    return Judged(report, target, notes)
