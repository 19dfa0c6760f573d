"""Merge the parts of a sharded evaluation into the one results object an unsharded run makes.

:func:`merge` first checks that the parts belong together, reporting every problem at once:

* every part is a partial results file (it has a ``shard`` block);
* the same commit, settings hash, ground-truth hash, number of shards, unit and plan, and
  the same tool/NeuralMind versions, backend, graph source, model, k values, gain and
  relevance threshold (each difference names the file and the field);
* every shard ``1..N`` present exactly once (a missing or duplicate shard is named);
* each part holds exactly the units its shard owns in the plan, and no unit is in two parts.

Then it rebuilds the result from the per-query scores, exactly as an unsharded run does:
questions in the plan's (ground-truth) order, ``overall`` and ``by_shape`` recomputed as
means over the queries (never averages of the parts' averages), the floors re-checked with
the recorded policy. With sections, each section is whole inside one part, so the merged
result gathers the sections in the declared order and pools them with
:func:`evaluator.core.results.combine_sections`, as the unsharded run does.

Run metadata that is not a metric is combined: ``started_at`` is the earliest, warnings
are the union in order, and timings describe the parallel jobs — ``build_s`` and
``total_s`` are the slowest part's (the wall time of the matrix), ``queries_s`` the sum,
``jobs_total_s`` the sum of the parts' ``total_s`` (what the matrix cost).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from evaluator.core.floors import Violation, check_floors
from evaluator.core.groundtruth import shape_order
from evaluator.core.results import Results, RunInfo, combine_sections, pooled_index
from evaluator.core.scoring import aggregate, by_shape
from evaluator.core.shards import ShardInfo
from evaluator.errors import MergeError

Part = tuple[str, Results]  # (where it came from, e.g. the file name; the partial results)

# Compared between every part (what the plan and the job's checkout fix).
_SAME_PLAN: tuple[tuple[str, Callable[[Results], object]], ...] = (
    ("number of shards", lambda r: _info(r).shard.total),
    ("unit (section or query)", lambda r: _info(r).unit),
    ("side (head or base)", lambda r: _info(r).side),
    ("commit", lambda r: r.run.commit),
    ("settings hash", lambda r: _info(r).settings_sha256),
    ("ground-truth hash", lambda r: _info(r).ground_truth_sha256),
    ("tool version", lambda r: r.run.tool_version),
    ("plan (which unit goes to which shard)", lambda r: _info(r).plan),
    ("floor policy", lambda r: dict(_info(r).policies)),
)
# Compared between the parts that evaluated something (an empty part built no index, so it
# cannot know the backend ``auto`` chose or the library's version).
_SAME_RUN: tuple[tuple[str, Callable[[Results], object]], ...] = (
    ("NeuralMind version", lambda r: r.run.neuralmind_version),
    ("backend", lambda r: r.run.backend),
    ("graph source", lambda r: r.run.graph_source),
    ("model", lambda r: r.run.model),
    ("k-value list", lambda r: r.run.k_values),
    ("gain", lambda r: r.run.gain),
    ("relevance threshold", lambda r: r.run.threshold),
    ("faithfulness judge", lambda r: r.run.judge),
)


def _info(results: Results) -> ShardInfo:
    assert results.shard is not None
    return results.shard


def _shown(value: object) -> str:
    if isinstance(value, str) and len(value) == 64:
        return value[:12]
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _differences(parts: Sequence[Part],
                 checks: Sequence[tuple[str, Callable[[Results], object]]]) -> list[str]:
    if not parts:
        return []
    first_source, first = parts[0]
    problems = []
    for label, get in checks:
        expected = get(first)
        for source, results in parts[1:]:
            value = get(results)
            if value != expected:
                detail = "" if label.startswith(("plan", "floor")) else (
                    f": {_shown(value)} against {_shown(expected)}")
                problems.append(f"{source}: the {label} differs from {first_source}'s{detail}")
    return problems


def _check_together(parts: Sequence[Part]) -> list[str]:
    working = [p for p in parts if _units_of(p[1])]
    return _differences(parts, _SAME_PLAN) + _differences(working, _SAME_RUN)


def _check_shards(parts: Sequence[Part]) -> list[str]:
    total = _info(parts[0][1]).shard.total
    owners: dict[int, list[str]] = {}
    for source, results in parts:
        owners.setdefault(_info(results).shard.index, []).append(source)
    problems = [f"shard {i}/{total} is given more than once: {', '.join(sources)}"
                for i, sources in sorted(owners.items()) if len(sources) > 1]
    problems += [f"shard {i}/{total} is missing" for i in range(1, total + 1)
                 if i not in owners]
    return problems


def _units_of(results: Results) -> tuple[str, ...]:
    if _info(results).unit == "section":
        return tuple(results.sections)
    return tuple(q.id for q in results.queries)


def _check_units(parts: Sequence[Part]) -> list[str]:
    problems = []
    where: dict[str, str] = {}
    kind = _info(parts[0][1]).unit
    for source, results in parts:
        info = _info(results)
        have = _units_of(results)
        for unit in have:
            if unit in where:
                problems.append(f"{kind} {unit!r} is in both {where[unit]} and {source}: "
                                "the parts overlap")
            where.setdefault(unit, source)
        held = set(have)
        extra = sorted(held - set(info.units))
        lacking = [u for u in info.units if u not in held]
        if extra:
            problems.append(f"{source}: holds {kind}(s) {', '.join(extra)} that shard "
                            f"{info.shard} does not own")
        if lacking:
            problems.append(f"{source}: lacks {kind}(s) {', '.join(lacking)} that shard "
                            f"{info.shard} owns")
    return problems


def merged_timings(timings: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """Timings of parallel jobs: the slowest build and total, the summed query time and the
    summed job totals (see the module doc)."""
    out: dict[str, float] = {}
    for key, combine in (("build_s", max), ("queries_s", sum), ("total_s", max)):
        values = [t[key] for t in timings if key in t]
        if values:
            out[key] = round(combine(values), 4)
    totals = [t["total_s"] for t in timings if "total_s" in t]
    if totals:
        out["jobs_total_s"] = round(sum(totals), 4)
    return out


def _merged_run(runs: Sequence[RunInfo]) -> RunInfo:
    warnings = dict.fromkeys(w for run in runs for w in run.warnings)  # distinct, in order
    first = runs[0]
    index: dict[str, Any] = dict(first.index)
    if "cached" in index:
        index["cached"] = all(bool(r.index.get("cached")) for r in runs)
    return replace(first, started_at=min((r.started_at for r in runs), default=""),
                   warnings=tuple(warnings), index=index,
                   timings=merged_timings([r.timings for r in runs]))


def merge(parts: Sequence[Part]) -> Results:
    """One results object from the parts of a sharded evaluation (see the module doc);
    :class:`MergeError` naming every problem when they do not make one evaluation."""
    if not parts:
        raise MergeError("merge needs the partial results files of every shard")
    whole = [source for source, results in parts if results.shard is None]
    if whole:
        raise MergeError(f"{', '.join(whole)}: not a part of a sharded evaluation (no "
                         "shard block); merge takes the files written by evaluate --shard I/N")
    # Each check only when the ones before pass: a duplicate shard would also overlap.
    problems = _check_together(parts) or _check_shards(parts) or _check_units(parts)
    if problems:
        raise MergeError("the parts do not make one evaluation:\n  " + "\n  ".join(problems))
    info = _info(parts[0][1])
    # The run fields come from the first part that evaluated something (see _SAME_RUN).
    ordered = sorted(parts, key=lambda part: (not _units_of(part[1]),
                                              _info(part[1]).shard.index))
    run = _merged_run([results.run for _, results in ordered])
    if info.unit == "section":
        owner = {name: results for _, results in parts for name in results.sections}
        sections = {name: owner[name].sections[name] for name, _ in info.plan}
        runs = [s.run for s in sections.values()]
        # As the unsharded run pools them: the sections' warnings in the declared order.
        warnings = _merged_run(runs).warnings
        return combine_sections(replace(run, index=pooled_index(runs), warnings=warnings),
                                sections)
    rows_by_id = {q.id: q for _, results in parts for q in results.queries}
    rows = tuple(rows_by_id[unit] for unit, _ in info.plan)
    overall = aggregate(rows)
    shapes = by_shape(rows, shape_order(q.shape for q in rows))
    policy = info.policies.get("")
    violations = () if policy is None else check_floors(policy, overall=overall,
                                                         shapes=shapes, rows=rows)
    return Results(run=run, overall=overall, shapes=shapes, queries=rows,
                   violations=violations)


def merge_sides(parts: Sequence[Part]) -> tuple[Results, Results | None]:
    """The merged head and, when the jobs also evaluated a baseline, the merged base.

    Parts are told apart by their ``side``; the base parts must make a whole evaluation as
    well (every shard once) and follow the same plan as the head's."""
    bases = [p for p in parts if p[1].shard is not None and p[1].shard.side == "base"]
    heads = [p for p in parts if p[1].shard is None or p[1].shard.side != "base"]
    if not heads and bases:
        raise MergeError("only baseline parts were given; give the parts of the head "
                         "(results.part-I-of-N.json) too")
    head = merge(heads)
    if not bases:
        return head, None
    try:
        base = merge(bases)
    except MergeError as err:
        raise MergeError(f"baseline parts: {err}") from None
    head_info, base_info = _info(heads[0][1]), _info(bases[0][1])
    if (base_info.plan, base_info.ground_truth_sha256) != (head_info.plan,
                                                          head_info.ground_truth_sha256):
        raise MergeError(f"{bases[0][0]}: the baseline parts were split with another plan or "
                         f"ground truth than the head's parts ({heads[0][0]})")
    return head, base


def partial(results: Results, info: ShardInfo) -> Results:
    """``results`` of one shard's units, marked as that part. Without sections the floors
    are not checked on a part (they apply to the merged whole); with sections each section
    is whole, so its own verdict stays."""
    if info.unit == "query":
        return replace(results, violations=(), shard=info)
    return replace(results, shard=info)


@dataclass(frozen=True)
class SectionVerdict:
    """A section's own verdict: its floors gate only it."""

    name: str
    path: str
    violations: tuple[Violation, ...]

    @property
    def passed(self) -> bool:
        return not self.violations


def verdicts(results: Results) -> tuple[tuple[SectionVerdict, ...], bool]:
    """Each section's verdict (none without sections) and the overall one: the overall
    verdict passes when every section passes (without sections: when no floor is missed)."""
    sections = tuple(SectionVerdict(name, s.run.root, s.violations)
                     for name, s in results.sections.items())
    overall = all(v.passed for v in sections) if sections else results.passed
    return sections, overall
