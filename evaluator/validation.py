"""``validate``: read a ground-truth file and check it against the checkout, with no index
built and no model loaded, importing only what that needs (not the application of
:mod:`evaluator.app`, which ``evaluate`` and ``comment`` need).

:func:`run_validate` checks the file (or each section's) against the checkout's files and
the module universe (:func:`universe_of`), each anchored fact's span against its modules,
and warns about each question that names its answer (:func:`giveaway_problems`);
:func:`resolve_queries` finds the file (``evaluate`` finds it alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from evaluator import sharding
from evaluator.core.evidence import missing_spans
from evaluator.core.giveaway import AnswerNames, answer_names, overlaps
from evaluator.core.groundtruth import GroundTruth, Problem
from evaluator.core.groundtruth_check import validation_summary
from evaluator.core.options import Settings
from evaluator.core.universe import Universe, UniverseSpec, select_universe
from evaluator.errors import InputError
from evaluator.ground_truth_file import evidence_problems, load_ground_truth_file
from evaluator.neuralmind_index import code_suffixes
from evaluator.paths import confine, regular_file
from evaluator.snapshot import read_source

if TYPE_CHECKING:
    from evaluator.deps import Deps


@dataclass(frozen=True)
class Validation:
    queries: Path
    ground_truth: GroundTruth | None
    problems: tuple[Problem, ...]
    summary: str  # FILE: N queries, E error(s), W warning(s) — every query counted


def universe(settings: Settings, files: Sequence[str]) -> Universe:
    """The module universe of ``files`` from the ``include``/``exclude`` settings."""
    return universe_of(files, UniverseSpec(include=tuple(settings.include),
                                           exclude=None if settings.exclude is None
                                           else tuple(settings.exclude)))


def _validation(queries: Path, files: tuple[str, ...], settings: Settings,
                modules: Universe, tree: Path) -> Validation:
    """The file checked, each anchored fact's span looked for in its question's grade >= 2
    modules under ``tree`` (a span in none of them is an error), and each question that
    names its answer (a warning)."""
    ground_truth, problems = load_ground_truth_file(queries, present=files,
                                                    strict=settings.strict, universe=modules)
    if ground_truth is not None:
        loaded = ground_truth
        problems = (*problems, *giveaway_problems(loaded, tree, str(queries)))
        missing = evidence_problems(loaded, tree, lambda texts: missing_spans(loaded, texts),
                                    severity="error")
        if missing:
            problems = (*problems, *missing)
            ground_truth = None
    summary = validation_summary(queries.read_text(encoding="utf-8", errors="replace"),
                                 str(queries), problems)
    return Validation(queries, ground_truth, problems, summary)


def universe_of(files: Sequence[str], spec: UniverseSpec | None) -> Universe:
    """The module universe of ``files`` with NeuralMind's code suffixes as the sources."""
    return select_universe(files, spec or UniverseSpec(), source_suffixes=code_suffixes())


def giveaway_problems(ground_truth: GroundTruth, root: Path, source: str) -> list[Problem]:
    """A warning per question that names its answer: a grade-3 module's file or a symbol
    it defines, or a public class or function of a grade-2 module
    (:mod:`evaluator.core.giveaway`). An ``identity`` question asks what or where
    a named thing is, so naming it is its point: it is not warned about (the report's "By
    overlap" table still counts it)."""
    names: dict[str, AnswerNames] = {}
    out = []
    for query in ground_truth.queries:
        if query.shape == "identity":
            continue
        for module, grade in query.grades.items():
            if grade >= 2 and module not in names:
                names[module] = answer_names(module, read_source(root, module))
        found = overlaps(query.question, query.grades.items(), names)
        if found.names_answer:
            out.append(Problem(
                "warning", f"the question names its answer ({', '.join(found.named)}, of a "
                "module graded 3, or a public class or function of one graded 2): keyword "
                "search finds it by that name alone, so it scores better than retrieval is; "
                "ask it as a teammate would, without the name",
                source, query_id=query.id, field="question"))
    return out


def resolve_queries(root: Path, settings: Settings) -> Path:
    """``settings.queries`` under ``root``; the default name also finds ``.yaml``/``.yml``.

    The default names are confined to ``root`` (a committed symlink must not make us read
    a file outside the checkout); a value from the options file was confined when read, and
    one typed on the command line is the user's own."""
    path: Path = root / settings.queries
    default = settings.queries == "retrieval_queries.json"
    if not path.exists() and default:
        for name in ("retrieval_queries.yaml", "retrieval_queries.yml"):
            if (root / name).is_file():
                path = root / name
                break
    if default and (path.exists() or path.is_symlink()):
        confine(path, root, setting=f"ground-truth file {path.name}")
    if path.exists():
        regular_file(path, what="ground-truth file")
    return path


def run_validate(settings: Settings, deps: Deps) -> tuple[Validation, ...]:
    """Read and check the ground truth against the checkout's files and the module universe:
    the one file, or with sections each section's file against its own folder and universe."""
    root = Path(settings.path or ".")
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout as PATH")
    files = deps.git.checkout_files(root)
    sections = sharding.sections_of(sharding.ShardingSettings.of(settings))
    if not sections:
        queries = resolve_queries(root, settings)
        return (_validation(queries, files, settings, universe(settings, files), root),)
    validations = []
    for section in sections:
        sharding.confine_section(root, section)
        mine = section.files(files)
        validations.append(_validation(root / section.queries, mine, settings,
                                       universe(settings, mine), root / section.path))
    return tuple(validations)
