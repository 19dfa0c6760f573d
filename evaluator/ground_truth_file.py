"""The ground-truth file of an evaluation: read and validated against the checkout's files and
module universe, its evidence spans checked, and its shapes against the floors."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from evaluator.core.evidence import SpanIssue, evidence_modules
from evaluator.core.floors import thin_shapes
from evaluator.core.groundtruth import MAX_GROUND_TRUTH_BYTES, GroundTruth, Problem, Severity
from evaluator.core.groundtruth_check import fact_lines, load_ground_truth
from evaluator.core.options import Settings
from evaluator.core.universe import Universe, UniverseSpec, select_universe
from evaluator.errors import GroundTruthError, InputError
from evaluator.judging import read_modules
from evaluator.neuralmind_index import (
    code_suffixes,
)
from evaluator.paths import read_bounded
from evaluator.progress import Progress


def load_ground_truth_file(path: Path, *, present: tuple[str, ...] | None, strict: bool,
                           universe: Universe | None = None,
                           ) -> tuple[GroundTruth | None, tuple[Problem, ...]]:
    """Read and validate a ground-truth file: the ground truth (None on errors) and every
    problem. A missing or unreadable file raises :class:`InputError`."""
    if not path.is_file():
        raise InputError(f"ground-truth file {path} does not exist",
                         hint="pass --queries FILE (default retrieval_queries.json in PATH)")
    try:
        text = read_bounded(path, MAX_GROUND_TRUTH_BYTES, what="ground-truth file").decode()
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


def _thin_shapes(options: Settings, ground_truth: GroundTruth,
                 progress: Progress) -> tuple[str, ...]:
    """Warnings for shapes with too few questions for their per-shape floors, judged on the
    whole ground truth (a shard's share of it is gated as a whole after merging)."""
    thin = tuple(thin_shapes(options.floors, Counter(q.shape for q in ground_truth.queries)))
    for warning in thin:
        progress.warn(warning)
    return thin

