"""Sections and shards in the application: what one job evaluates, and merging the parts.

* :func:`evaluate_sections` evaluates the options file's sections — every one, the one
  ``--section NAME`` names, or the ones ``--shard I/N`` owns — each on its own root with its
  own ground truth, floors and module universe, and pools them
  (:func:`evaluator.core.results.combine_sections`).
* :class:`QuestionShard` is the ``select_queries`` hook of
  :func:`evaluator.evaluate.evaluate` for ``--shard I/N`` without sections.
* :func:`part_files` finds the parts (``results.part-I-of-N.json`` and, when the jobs
  evaluated the base too, ``baseline-results.part-I-of-N.json``) for ``merge``, which
  :func:`evaluator.app.run_merge` reads and merges.

A part records its shard, the whole plan, the settings and ground-truth hashes and the floor
policies (:class:`evaluator.core.shards.ShardInfo`); :mod:`evaluator.core.merge` checks them.

Planning reads only :class:`ShardingSettings`, the few settings sections and shards need;
the whole ``Settings`` reaches only the section loop, which hands it to
:func:`evaluator.evaluate.evaluate` per section.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator import __version__
from evaluator.core.floors import FloorPolicy
from evaluator.core.groundtruth import GroundTruth
from evaluator.core.measures import effective_k, metric_names
from evaluator.core.options import Settings
from evaluator.core.results import Results, RunInfo, combine_sections, pooled_index
from evaluator.core.sections import Section, overlap_problems, parse_sections, select
from evaluator.core.shards import Shard, ShardInfo, fingerprint, plan, policy_to_dict
from evaluator.core.stats import SignificanceTest
from evaluator.deps import Deps
from evaluator.errors import InputError
from evaluator.paths import confine
from evaluator.progress import Progress

if TYPE_CHECKING:  # validate reads the sections without the evaluation's imports
    from evaluator.evaluate import BaseRequest

PART_GLOBS = ("results.part-*-of-*.json", "baseline-results.part-*-of-*.json")
# The settings that change what a part holds: parts to be merged must agree on all of them.
RESULT_SETTINGS = ("k", "gain", "relevance_threshold", "backend", "graph_source", "embed",
                   "strict")


def part_name(info: ShardInfo) -> str:
    """``results.part-I-of-N.json`` (``baseline-`` in front for the base side)."""
    prefix = "baseline-" if info.side == "base" else ""
    return f"{prefix}results.part-{info.shard.index}-of-{info.shard.total}.json"


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return getattr(value, "value", value)


@dataclass(frozen=True, kw_only=True)
class ShardingSettings:
    """What sections and shards read of the settings: the options file's ``sections``, the
    ``--section`` and ``--shard`` chosen, the floors, ``k``, the values of
    :data:`RESULT_SETTINGS` (plain JSON values, which parts must agree on) and what an empty
    part's run records."""

    sections: Any
    section: str | None
    shard: str | None
    floors: FloorPolicy
    k: tuple[int, ...]
    result_values: tuple[tuple[str, Any], ...]
    significance: SignificanceTest

    @classmethod
    def of(cls, settings: Settings) -> ShardingSettings:
        """The values taken from the run's settings (the one place they are read)."""
        return cls(sections=settings.sections, section=settings.section,
                   shard=settings.shard, floors=settings.floors, k=settings.k,
                   result_values=tuple((name, _plain(getattr(settings, name)))
                                       for name in RESULT_SETTINGS),
                   significance=SignificanceTest(alpha=settings.alpha,
                                                 min_effect=settings.min_effect))

    def value(self, name: str) -> Any:
        """One of :data:`RESULT_SETTINGS`, as a plain value."""
        return dict(self.result_values)[name]


def sections_of(settings: ShardingSettings) -> tuple[Section, ...]:
    """The options file's sections, validated (none when it declares none)."""
    if settings.sections is None:
        if settings.section:
            raise InputError(f"--section {settings.section}: the options file declares no "
                             "sections")
        return ()
    return parse_sections(settings.sections, base_policy=settings.floors,
                          known_metrics=metric_names(effective_k(settings.k)))


def settings_sha256(settings: ShardingSettings, sections: Sequence[Section]) -> str:
    """What two parts must agree on to be merged: the settings that change results."""
    values: dict[str, Any] = dict(settings.result_values)
    values["floors"] = policy_to_dict(settings.floors)
    values["sections"] = [{"name": s.name, "path": s.path, "queries": s.queries,
                           "floors": policy_to_dict(s.floors), "include": list(s.include),
                           "exclude": list(s.exclude)} for s in sections]
    return fingerprint(values)


def file_sha256(path: Path, what: str) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as err:
        raise InputError(f"cannot read {what} {path}: {err.strerror}") from None


@dataclass
class QuestionShard:
    """The ``select_queries`` hook for ``--shard I/N`` without sections: the questions the
    shard owns; :attr:`info` then marks the part."""

    shard: Shard
    settings_sha256: str
    ground_truth_sha256: str
    policy: FloorPolicy
    info: ShardInfo | None = None

    def __call__(self, ground_truth: GroundTruth) -> GroundTruth:
        the_plan = plan([q.id for q in ground_truth.queries], None, self.shard.total)
        self.info = ShardInfo(self.shard, "query", the_plan, self.settings_sha256,
                              self.ground_truth_sha256, {"": self.policy})
        mine = set(self.info.units)
        return replace(ground_truth, queries=tuple(q for q in ground_truth.queries
                                                   if q.id in mine))


def question_shard(settings: ShardingSettings, queries: Path) -> QuestionShard | None:
    if not settings.shard:
        return None
    return QuestionShard(Shard.parse(settings.shard), settings_sha256(settings, ()),
                         file_sha256(queries, "the ground truth"), settings.floors)


# ----------------------------------------------------------------------------- sections


def _weights(root: Path, sections: Sequence[Section],
             files: Sequence[str]) -> dict[str, float]:
    """Each section's size in bytes (its build time grows with it); at least 1."""
    out = {}
    for section in sections:
        size = sum((root / section.path / rel).stat().st_size
                   for rel in section.files(files) if (root / section.path / rel).is_file())
        out[section.name] = float(max(size, 1))
    return out


@dataclass(frozen=True)
class SectionWork:
    """What this job evaluates: its sections and, for a shard, the part's marks."""

    sections: tuple[Section, ...]
    info: ShardInfo | None
    ground_truth_sha256: str


def confine_section(root: Path, section: Section) -> Section:
    """A section's folder and ground truth must stay inside the checkout once symlinks are
    followed (the options file only checked the text of the paths): the section with both
    as they resolve, relative to the checkout."""
    top = root.resolve()
    path = confine(root / section.path, root, setting=f"section {section.name}: path")
    queries = confine(root / section.queries, root, setting=f"section {section.name}: queries")
    return replace(section, path=path.relative_to(top).as_posix() or ".",
                   queries=queries.relative_to(top).as_posix())


def plan_sections(root: Path, settings: ShardingSettings, sections: Sequence[Section],
                  files: Sequence[str]) -> SectionWork:
    """The chosen sections (``--section``), and with ``--shard`` the ones this shard owns."""
    chosen = tuple(sections) if not settings.section else (select(sections, settings.section),)
    resolved = []
    for section in chosen:
        resolved.append(confine_section(root, section))
        if not (root / section.path).is_dir():
            raise InputError(f"section {section.name}: {section.path} is not a folder of "
                             f"{root}")
    # A committed link must not let two sections share a folder or a ground truth.
    problems = overlap_problems(resolved, "the sections, once links are followed")
    if problems:
        raise InputError(problems[0])
    gt_sha = fingerprint({s.name: file_sha256(root / s.queries,
                                              f"section {s.name}'s ground truth")
                          for s in chosen})
    if not settings.shard:
        return SectionWork(chosen, None, gt_sha)
    shard = Shard.parse(settings.shard)
    the_plan = plan([s.name for s in chosen], _weights(root, chosen, files), shard.total)
    info = ShardInfo(shard, "section", the_plan, settings_sha256(settings, chosen), gt_sha,
                     {s.name: s.floors for s in chosen})
    mine = set(info.units)
    return SectionWork(tuple(s for s in chosen if s.name in mine), info, gt_sha)


def _section_settings(settings: Settings, root: Path, section: Section) -> Settings:
    floors = section.floors
    return settings.replace(aggregate_floors=floors.aggregate, shape_floors=floors.per_shape,
                            zero_miss=floors.zero_miss, queries=str(root / section.queries))


def _empty_run(settings: ShardingSettings, deps: Deps, root: Path, gt_sha: str) -> RunInfo:
    """The run of a part that evaluated no section (more shards than sections)."""
    return RunInfo(tool_version=__version__, neuralmind_version=deps.library_version(),
                   backend=settings.value("backend"),
                   graph_source=settings.value("graph_source"),
                   k_values=effective_k(settings.k), gain=settings.value("gain"),
                   threshold=settings.value("relevance_threshold"), queries_file="sections",
                   queries_sha256=gt_sha, commit=deps.git.head_commit(root),
                   started_at=deps.clock().isoformat(timespec="seconds"),
                   significance=settings.significance.as_dict())


def pooled_run(runs: Sequence[RunInfo], empty: Callable[[], RunInfo], gt_sha: str) -> RunInfo:
    """The pooled result's run: the sections' common fields, index sizes and timings summed
    (the sections are evaluated one after the other)."""
    first = runs[0] if runs else empty()
    timings: dict[str, float] = {}
    warnings: dict[str, None] = {}  # distinct, in order
    for run in runs:
        for key, value in run.timings.items():
            timings[key] = round(timings.get(key, 0.0) + value, 4)
        warnings.update(dict.fromkeys(run.warnings))
    return replace(first, root=".", queries_file="sections", queries_sha256=gt_sha,
                   draft=any(r.draft for r in runs), index=pooled_index(runs), timings=timings,
                   warnings=tuple(warnings), ref=first.ref,
                   drift=tuple(dict.fromkeys(p for r in runs for p in r.drift)),
                   started_at=min((r.started_at for r in runs), default=first.started_at))


@dataclass(frozen=True)
class SectionsEvaluation:
    results: Results
    baseline: Results | None
    notes: tuple[str, ...]


def evaluate_sections(root: Path, settings: Settings, sections: Sequence[Section], *,
                      deps: Deps, progress: Progress,
                      base: BaseRequest | None) -> SectionsEvaluation:
    """This job's sections, one after the other (each its own snapshot and index), pooled;
    with ``base`` each section's base side too (see :func:`evaluator.evaluate.evaluate`,
    which takes the whole ``settings``; planning reads :class:`ShardingSettings`)."""
    from evaluator.evaluate import evaluate

    planning = ShardingSettings.of(settings)
    work = plan_sections(root, planning, sections, deps.git.checkout_files(root))
    if work.info is not None:
        progress(f"shard {work.info.shard}: section(s) "
                 f"{', '.join(s.name for s in work.sections) or 'none'}")
    heads: dict[str, Results] = {}
    bases: dict[str, Results] = {}
    notes: list[str] = []
    for section in work.sections:
        progress(f"section {section.name}: {section.path}")
        evaluation = evaluate(root / section.path, _section_settings(settings, root, section),
                              progress=progress, deps=deps, queries_path=root / section.queries,
                              base=base, select_files=section.selects)
        heads[section.name] = _rooted(evaluation.results, section)
        if evaluation.baseline is not None:
            bases[section.name] = _rooted(evaluation.baseline, section)
        notes += [n for n in evaluation.notes if n not in notes]

    def empty() -> RunInfo:
        return _empty_run(planning, deps, root, work.ground_truth_sha256)

    head = combine_sections(pooled_run([r.run for r in heads.values()], empty,
                                       work.ground_truth_sha256), heads, shard=work.info)
    baseline = None
    if bases or (base is not None and not work.sections):
        baseline = combine_sections(
            pooled_run([r.run for r in bases.values()], empty, work.ground_truth_sha256),
            bases, shard=replace(work.info, side="base", label=base.label if base else "")
            if work.info else None)
    return SectionsEvaluation(head, baseline, tuple(notes))


def _rooted(results: Results, section: Section) -> Results:
    return replace(results, run=replace(results.run, root=section.path,
                                        queries_file=section.queries))


# ----------------------------------------------------------------------------- merge


def part_files(given: Sequence[str]) -> list[Path]:
    """The files named, and the parts inside the folders named, each once, in order."""
    out: list[Path] = []
    for name in given:
        path = Path(name)
        if path.is_dir():
            found = sorted({p for pattern in PART_GLOBS for p in path.glob(pattern)})
            if not found:
                raise InputError(f"{path} holds no parts (results.part-I-of-N.json)",
                                 hint="give the folder the shard jobs' artifacts were "
                                      "downloaded to, or the part files")
            out += found
        elif path.is_file():
            out.append(path)
        else:
            raise InputError(f"part {path} does not exist")
    return list(dict.fromkeys(out))  # each once, first place kept (a set per check is n^2)
