"""Shard plans, partial results and their merge: merged == unsharded in every metric."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.core.compare import compare_results, compare_sections
from evaluator.core.floors import DEFAULT_POLICY, Floor, FloorPolicy, Violation, check_floors
from evaluator.core.groundtruth import GroundTruth
from evaluator.core.merge import merge, merge_sides, merged_timings, partial, verdicts
from evaluator.core.results import (
    SCHEMA_VERSION,
    SECTIONS_SCHEMA_VERSION,
    Results,
    RunInfo,
    combine_sections,
    pooled_index,
    to_dict,
)
from evaluator.core.results_reader import from_dict
from evaluator.core.scoring import Retrieval, ScoringOptions, aggregate, by_shape, score_all
from evaluator.core.shards import (
    Shard,
    ShardInfo,
    assign,
    fingerprint,
    plan,
    policy_from_dict,
    policy_to_dict,
)
from evaluator.errors import ConfigError, MergeError, ResultsError
from tests.factories import make_inputs, make_run

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = fingerprint({"k": [1, 3, 5, 10], "backend": "turbovec"})
STRICT = replace(DEFAULT_POLICY, aggregate=(Floor("ndcg@5", ">=", 0.99),))


# ----------------------------------------------------------------------------- shard plans


@pytest.mark.parametrize(("spec", "shard"), [("1/1", Shard(1, 1)), (" 2 / 4 ", Shard(2, 4)),
                                             ("256/256", Shard(256, 256))])
def test_shard_parse(spec: str, shard: Shard):
    assert Shard.parse(spec) == shard
    assert str(shard) == spec.replace(" ", "")


@pytest.mark.parametrize("spec", ["0/2", "3/2", "1/0", "a/b", "1", "1/2/3", "-1/2", "1/257",
                                  ""])
def test_bad_shard_specs_are_refused(spec: str):
    with pytest.raises(ConfigError, match="must be I/N with 1 <= I <= N"):
        Shard.parse(spec)


WEIGHTS = st.dictionaries(st.text(min_size=1, max_size=8),
                          st.integers(min_value=0, max_value=50).map(float), max_size=40)


@given(WEIGHTS, st.integers(min_value=1, max_value=9), st.randoms(use_true_random=False))
def test_assignment_is_complete_balanced_and_independent_of_order(weights, total, rnd):
    shards = assign(weights, total)
    assert set(shards) == set(weights)
    assert all(1 <= s <= total for s in shards.values())
    items = list(weights.items())
    rnd.shuffle(items)
    assert assign(dict(items), total) == shards
    loads = [sum(w for u, w in weights.items() if shards[u] == i) for i in range(1, total + 1)]
    if weights:
        assert max(loads) - min(loads) <= max(weights.values())


@given(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=60),
       st.integers(min_value=1, max_value=9))
def test_equal_weights_deal_sizes_that_differ_by_at_most_one(units, total):
    owners = dict(plan(units, None, total))
    sizes = [sum(1 for s in owners.values() if s == i) for i in range(1, total + 1)]
    assert max(sizes) - min(sizes) <= 1
    assert [u for u, _ in plan(units, None, total)] == units  # the evaluation's order is kept


def test_plan_refuses_duplicate_units_and_bad_weights():
    with pytest.raises(ValueError, match="unique"):
        plan(["a", "a"], None, 2)
    with pytest.raises(ValueError, match=">= 0"):
        assign({"a": float("nan")}, 2)
    with pytest.raises(ValueError, match="total"):
        assign({"a": 1.0}, 0)


def test_assignment_does_not_depend_on_the_hash_seed():
    code = ("from evaluator.core.shards import plan; "
            "print(plan([f'q{i}' for i in range(40)], None, 3))")
    outputs = {subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, text=True,
                              capture_output=True,
                              env=os.environ | {"PYTHONHASHSEED": seed}).stdout
               for seed in ("1", "2", "3")}
    assert len(outputs) == 1


@pytest.mark.parametrize("policy", [DEFAULT_POLICY, STRICT, FloorPolicy((), (), False)])
def test_policy_round_trip(policy: FloorPolicy):
    assert policy_from_dict(json.loads(json.dumps(policy_to_dict(policy)))) == policy


# ----------------------------------------------------------------------------- helpers


def _results(ground_truth: GroundTruth, retrievals: dict[str, Retrieval], policy: FloorPolicy,
             run: RunInfo) -> Results:
    rows = score_all(ground_truth, retrievals, ScoringOptions())
    overall = aggregate(rows)
    shapes = by_shape(rows, ground_truth.shapes)
    return Results(run=run, overall=overall, shapes=shapes, queries=rows,
                   violations=check_floors(policy, overall=overall, shapes=shapes, rows=rows))


def _json(results: Results) -> Results:
    """Through the file format, as a part travels between jobs."""
    return from_dict(json.loads(json.dumps(to_dict(results))), "part.json")


def query_parts(ground_truth, retrievals, total, *, policy=DEFAULT_POLICY, run=None,
                gt_sha="1" * 64) -> list[tuple[str, Results]]:
    """The parts a matrix of ``total`` jobs writes without sections."""
    run = run or make_run()
    the_plan = plan([q.id for q in ground_truth.queries], None, total)
    parts = []
    for i in range(1, total + 1):
        info = ShardInfo(Shard(i, total), "query", the_plan, SETTINGS, gt_sha, {"": policy})
        subset = replace(ground_truth, queries=tuple(q for q in ground_truth.queries
                                                     if q.id in info.units))
        timed = replace(run, timings={"build_s": 1.0 + i, "queries_s": 0.1 * i,
                                      "total_s": 2.0 + i})
        parts.append((f"part-{i}.json",
                      _json(partial(_results(subset, retrievals, policy, timed), info))))
    return parts


def metrics_view(results: Results) -> dict[str, Any]:
    """Everything a results file says except when it ran and how long it took."""
    data = to_dict(results)
    for body in (data, *data.get("sections", {}).values()):
        body["run"] = {k: v for k, v in body["run"].items() if k not in ("timings",
                                                                         "started_at")}
    return data


# ----------------------------------------------------------------------------- by question


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=1, max_value=25), st.integers(min_value=1, max_value=7),
       st.integers(min_value=0, max_value=10_000), st.sampled_from([DEFAULT_POLICY, STRICT]),
       st.randoms(use_true_random=False))
def test_merged_questions_equal_the_unsharded_run(n, total, seed, policy, rnd):
    ground_truth, retrievals = make_inputs(n=n, seed=seed, quality=0.7,
                                           shapes=("focused", "cross-file", "identity", "x"))
    whole = _results(ground_truth, retrievals, policy, make_run())
    parts = query_parts(ground_truth, retrievals, total, policy=policy)
    rnd.shuffle(parts)  # the order the artifacts come in does not matter
    merged = merge(parts)
    assert metrics_view(merged) == metrics_view(whole)
    assert merged.queries == whole.queries
    assert merged.violations == whole.violations
    assert not merged.is_partial


def test_merged_means_are_recomputed_not_averaged():
    ground_truth, retrievals = make_inputs(n=7, seed=3, quality=0.6)
    parts = query_parts(ground_truth, retrievals, 2)
    sizes = [len(p.queries) for _, p in parts]
    assert sizes == [4, 3]
    merged = merge(parts)
    means = [p.overall.metrics["ndcg@5"] for _, p in parts]
    assert means[0] != means[1]
    by_hand = sum(q.metrics["ndcg@5"] for q in merged.queries) / 7
    assert merged.overall.metrics["ndcg@5"] == pytest.approx(by_hand, abs=1e-15)
    assert by_hand != pytest.approx((means[0] + means[1]) / 2)


def test_a_part_is_not_gated_until_merged():
    ground_truth, retrievals = make_inputs(n=6, seed=5)
    _, first = query_parts(ground_truth, retrievals, 2, policy=STRICT)[0]
    assert first.violations == ()
    data = to_dict(first)
    assert data["schema_version"] == SECTIONS_SCHEMA_VERSION
    assert data["floors"]["passed"] is None
    assert data["shard"]["units"] == list(first.shard.units)
    assert not merge(query_parts(ground_truth, retrievals, 2, policy=STRICT)).passed


def test_merged_timings_describe_parallel_jobs():
    parts = query_parts(*make_inputs(n=5), 3)
    assert merge(parts).run.timings == {"build_s": 4.0, "queries_s": 0.6, "total_s": 5.0,
                                        "jobs_total_s": 12.0}
    assert merged_timings([]) == {}


def test_more_shards_than_questions_leaves_empty_parts_that_still_count():
    ground_truth, retrievals = make_inputs(n=2)
    parts = query_parts(ground_truth, retrievals, 4)
    assert [len(p.queries) for _, p in parts] == [1, 1, 0, 0]
    assert metrics_view(merge(parts)) == metrics_view(
        _results(ground_truth, retrievals, DEFAULT_POLICY, make_run()))
    with pytest.raises(MergeError, match="shard 4/4 is missing"):
        merge(parts[:3])


# ----------------------------------------------------------------------------- refusals


def _refused(parts) -> str:
    with pytest.raises(MergeError) as info:
        merge(parts)
    return str(info.value)


@pytest.fixture
def three():
    return query_parts(*make_inputs(n=9, seed=2), 3)


def test_missing_shards_are_named(three):
    message = _refused([three[0]])
    assert "shard 2/3 is missing" in message
    assert "shard 3/3 is missing" in message


def test_duplicate_shard_is_named_with_both_files(three):
    again = ("copy-of-part-1.json", three[0][1])
    message = _refused([*three, again])
    assert "shard 1/3 is given more than once: part-1.json, copy-of-part-1.json" in message


@pytest.mark.parametrize(("change", "label"), [
    (lambda r: replace(r, run=replace(r.run, commit="f" * 40)), "the commit differs"),
    (lambda r: replace(r, shard=replace(r.shard, settings_sha256="2" * 64)),
     "the settings hash differs"),
    (lambda r: replace(r, shard=replace(r.shard, ground_truth_sha256="3" * 64)),
     "the ground-truth hash differs"),
    (lambda r: replace(r, run=replace(r.run, k_values=(1, 5))), "the k-value list differs"),
    (lambda r: replace(r, run=replace(r.run, judge="evaluator-judge 3 (terms)")),
     "the faithfulness judge differs"),
    (lambda r: replace(r, shard=replace(r.shard, policies={"": STRICT})),
     "the floor policy differs"),
])
def test_parts_of_another_evaluation_are_refused(three, change, label):
    name, results = three[1]
    message = _refused([three[0], (name, change(results)), three[2]])
    assert f"part-2.json: {label} from part-1.json's" in message


def test_parts_of_another_shard_count_are_refused(three):
    other = query_parts(*make_inputs(n=9, seed=2), 2)
    message = _refused([three[0], other[1], three[2]])
    assert "part-2.json: the number of shards differs from part-1.json's: 2 against 3" in message


def test_overlapping_parts_are_refused(three):
    (_, first), (name, second), third = three
    stolen = replace(second, queries=(*second.queries, first.queries[0]))
    message = _refused([three[0], (name, stolen), third])
    assert f"query {first.queries[0].id!r} is in both part-1.json and part-2.json" in message
    assert f"part-2.json: holds query(s) {first.queries[0].id}" in message


def test_a_part_lacking_its_units_is_refused(three):
    (name, first), *rest = three
    short = replace(first, queries=first.queries[1:])
    message = _refused([(name, short), *rest])
    assert f"part-1.json: lacks query(s) {first.queries[0].id} that shard 1/3 owns" in message


def test_whole_results_and_nothing_are_refused(three):
    whole = replace(three[0][1], shard=None)
    assert "results.json: not a part of a sharded evaluation" in _refused(
        [("results.json", whole), *three[1:]])
    assert "needs the partial results files" in _refused([])


def test_merge_error_is_bad_input():
    assert MergeError("x").exit_code == 2


# ----------------------------------------------------------------------------- sections


def _sections(policies: dict[str, FloorPolicy]) -> dict[str, Results]:
    out = {}
    for i, (name, policy) in enumerate(policies.items()):
        ground_truth, retrievals = make_inputs(n=3 + 2 * i, seed=10 + i, quality=0.75)
        run = replace(make_run(), root=f"packages/{name}/src/{name}",
                      queries_file=f"packages/{name}/retrieval_queries.json",
                      queries_sha256=f"{i}" * 64)
        out[name] = _results(ground_truth, retrievals, policy, run)
    return out


POLICIES = {"api": DEFAULT_POLICY, "cli": STRICT, "core": replace(DEFAULT_POLICY,
                                                                   aggregate=(), per_shape=(),
                                                                   zero_miss=False),
            "web": DEFAULT_POLICY, "docs": FloorPolicy((), (), False)}


def pooled(sections: dict[str, Results]) -> Results:
    """The unsharded run over ``sections``, as the application pools them."""
    run = replace(make_run(), index=pooled_index([s.run for s in sections.values()]))
    return combine_sections(run, sections)


def section_parts(sections: dict[str, Results], total: int) -> list[tuple[str, Results]]:
    weights = {name: float(len(s.queries)) for name, s in sections.items()}
    the_plan = plan(list(sections), weights, total)
    parts = []
    for i in range(1, total + 1):
        info = ShardInfo(Shard(i, total), "section", the_plan, SETTINGS, "9" * 64,
                         {n: POLICIES[n] for n in sections})
        mine = {n: s for n, s in sections.items() if n in info.units}
        parts.append((f"section-part-{i}.json",
                      _json(partial(combine_sections(make_run(), mine), info))))
    return parts


@pytest.mark.parametrize("total", [1, 2, 3, 4, 5, 7])
def test_merged_sections_equal_the_unsharded_run(total: int):
    sections = _sections(POLICIES)
    whole = pooled(sections)
    parts = section_parts(sections, total)
    merged = merge(list(reversed(parts)))
    assert metrics_view(merged) == metrics_view(whole)
    assert list(merged.sections) == list(POLICIES)  # declared order, whatever the shards
    assert merged.violations == whole.violations


def test_pooled_means_and_scoped_verdicts():
    sections = _sections(POLICIES)
    whole = combine_sections(make_run(), sections)
    rows = [q for s in sections.values() for q in s.queries]
    assert whole.overall.n == len(rows) == 3 + 5 + 7 + 9 + 11
    assert whole.overall.metrics["mrr"] == pytest.approx(
        sum(q.metrics["mrr"] for q in rows) / len(rows), abs=1e-15)
    assert whole.query("cli/q00") is not None  # ids qualified by section
    per_section, overall = verdicts(whole)
    by_name = {v.name: v for v in per_section}
    assert by_name["cli"].passed is False  # its own, strict floor
    assert by_name["docs"].passed and by_name["core"].passed  # no floors there
    assert by_name["cli"].path == "packages/cli/src/cli"
    assert overall is False and not whole.passed
    assert all(v.scope.startswith("section ") for v in whole.violations)
    assert {v.scope.split(":")[0] for v in whole.violations} == {
        f"section {v.name}" for v in per_section if not v.passed}
    passing = combine_sections(make_run(), {n: s for n, s in sections.items()
                                            if by_name[n].passed})
    assert verdicts(passing)[1] is True and passing.passed


def test_sectioned_results_round_trip_and_layout():
    whole = combine_sections(make_run(), _sections(POLICIES))
    data = to_dict(whole)
    assert data["schema_version"] == SECTIONS_SCHEMA_VERSION
    assert "queries" not in data  # the sections hold them
    assert list(data["sections"]) == list(POLICIES)
    assert data["sections"]["cli"]["floors"]["passed"] is False
    assert from_dict(json.loads(json.dumps(data)), "r.json") == whole


def test_plain_results_stay_version_1():
    ground_truth, retrievals = make_inputs(n=4)
    data = to_dict(_results(ground_truth, retrievals, DEFAULT_POLICY, make_run()))
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert "sections" not in data and "shard" not in data


def _part_doc() -> dict[str, Any]:
    return to_dict(query_parts(*make_inputs(n=4), 2)[0][1])


@pytest.mark.parametrize(("mutate", "needle"), [
    (lambda d: d.update(schema_version=1), "need schema_version 2"),
    (lambda d: d["shard"].update(index=3), "3/2 is not a shard"),
    (lambda d: d["shard"].update(unit="file"), "'file' is not section or query"),
    (lambda d: d["shard"]["plan"][0].__setitem__(1, 9), "shard 9 is not in 1..2"),
    (lambda d: d["shard"]["plan"].append(d["shard"]["plan"][0]), "listed twice"),
    (lambda d: d["shard"].update(units=["zz"]), "does not match the plan"),
    (lambda d: d["shard"]["policies"][""].update(zero_miss="yes"), "zero_miss"),
    (lambda d: d["shard"].update(settings_sha256=5), "shard.settings_sha256"),
    (lambda d: d.update(sections={}), "sections: is empty"),
])
def test_tampered_shard_blocks_are_refused(mutate, needle):
    data = _part_doc()
    mutate(data)
    with pytest.raises(ResultsError, match=r"part\.json") as info:
        from_dict(data, "part.json")
    assert needle in str(info.value)


# ----------------------------------------------------------------------------- head and base


def _base_parts(parts):
    return [(name.replace("part-", "baseline-part-"),
             replace(r, run=replace(r.run, commit="b" * 40),
                     shard=replace(r.shard, side="base")))
            for name, r in parts]


def test_head_and_base_parts_merge_separately():
    ground_truth, retrievals = make_inputs(n=8, seed=4)
    heads = query_parts(ground_truth, retrievals, 2)
    bases = _base_parts(query_parts(*make_inputs(n=8, seed=9), 2))
    head, base = merge_sides([bases[1], heads[0], bases[0], heads[1]])
    assert metrics_view(head) == metrics_view(merge(heads))
    assert base is not None and base.run.commit == "b" * 40
    assert metrics_view(base) == metrics_view(merge(bases))
    assert merge_sides(heads)[1] is None
    assert _json(bases[0][1]).shard.side == "base"


def test_an_incomplete_baseline_is_named():
    ground_truth, retrievals = make_inputs(n=8, seed=4)
    heads = query_parts(ground_truth, retrievals, 2)
    bases = _base_parts(query_parts(ground_truth, retrievals, 2))
    with pytest.raises(MergeError, match=r"(?s)baseline parts: .*shard 2/2 is missing"):
        merge_sides([*heads, bases[0]])
    with pytest.raises(MergeError, match="only baseline parts"):
        merge_sides(bases)
    other = _base_parts(query_parts(ground_truth, retrievals, 2, gt_sha="7" * 64))
    with pytest.raises(MergeError, match="another plan or ground truth"):
        merge_sides([*heads, *other])


def test_an_empty_part_need_not_know_the_backend():
    """More shards than sections: the empty part built nothing, so its backend is whatever
    the settings said (auto); merge compares run fields only between working parts."""
    sections = _sections({"api": DEFAULT_POLICY, "cli": STRICT})
    parts = section_parts(sections, 3)
    empty = [i for i, (_, r) in enumerate(parts) if not r.sections]
    assert len(empty) == 1
    name, results = parts[empty[0]]
    parts[empty[0]] = (name, replace(results, run=replace(results.run, backend="auto",
                                                          neuralmind_version="?")))
    merged = merge(parts)
    assert merged.run.backend == "turbovec"
    assert metrics_view(merged) == metrics_view(pooled(sections))


def test_gates_on_the_pooled_result_survive_the_file():
    whole = combine_sections(make_run(), _sections(POLICIES))
    gate = Violation("overall", "ndcg@5", 0.5, "ndcg@5 drop <= 0.01", kind="gate")
    gated = replace(whole, violations=(*whole.violations, gate))
    assert from_dict(json.loads(json.dumps(to_dict(gated))), "r.json") == gated


def test_section_comparisons_count_worse_and_better_questions():
    head = combine_sections(make_run(), _sections(POLICIES))
    base_sections = {}
    for name, section in _sections(POLICIES).items():
        # The base: the same questions, one of them scored lower and one higher.
        rows = list(section.queries)
        rows[0] = replace(rows[0], metrics={**rows[0].metrics, "ndcg@5": 1.0})
        rows[-1] = replace(rows[-1], metrics={**rows[-1].metrics, "ndcg@5": 0.0})
        base_sections[name] = replace(section, queries=tuple(rows))
    base = combine_sections(make_run(), base_sections)
    options = {"source": "base", "metrics": ["ndcg@5", "mrr"], "primary_metric": "ndcg@5",
               "alpha": 0.05, "min_effect": 0.02}
    pooled = compare_sections(base, head, compare_results(base, head, **options), **options)
    assert list(pooled.sections) == list(POLICIES)
    for name, comparison in pooled.sections.items():
        rows = head.sections[name].queries
        expected_worse = int(rows[0].metrics["ndcg@5"] < 1.0)
        expected_better = int(rows[-1].metrics["ndcg@5"] > 0.0)
        assert (comparison.worse, comparison.better) == (expected_worse, expected_better)
    assert pooled.worse == sum(c.worse for c in pooled.sections.values())
    assert pooled.better == sum(c.better for c in pooled.sections.values())
