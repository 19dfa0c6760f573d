"""Unit tests for scoring (per query, aggregates, shapes), floors, options and results I/O."""

from __future__ import annotations

import copy
import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.core.floors import (
    DEFAULT_POLICY,
    Floor,
    FloorPolicy,
    Violation,
    check_floors,
    parse_floors,
)
from evaluator.core.groundtruth import GroundTruth, Query
from evaluator.core.metrics import Gain
from evaluator.core.options import Settings, build_options
from evaluator.core.results import SCHEMA_VERSION, Results, RunInfo, to_dict
from evaluator.core.results_reader import from_dict
from evaluator.core.scoring import (
    DEFAULT_K,
    FACT_METRICS,
    FAITHFULNESS_COLUMNS,
    HEADLINE_K,
    Aggregate,
    Diagnostics,
    Faithfulness,
    MissedModule,
    QueryResult,
    Retrieval,
    ScoringOptions,
    aggregate,
    by_shape,
    effective_k,
    mean,
    metric_names,
    retrieval_only,
    score_all,
    score_query,
)
from evaluator.errors import ConfigError, ResultsError

# ----------------------------------------------------------------------------- fixtures

GRADES = {"a": 3, "b": 2, "c": 1, "d": 0, "e": 3, "g": 3}
RANKING = ("b", "x", "a", "d", "y", "e", "b", "a")  # deduplicated: b x a d y e


def faith(**overrides: Any) -> Faithfulness:
    base: dict[str, Any] = {
        "fact_recall": 0.5, "contradiction": 0.0, "faithfulness": 0.75,
        "facts_found": ("fact one",), "facts_missing": ("fact two",),
    }
    base.update(overrides)
    return Faithfulness(**base)


def make_query(qid: str = "q1", grades: dict[str, int] | None = None,
               shape: str = "focused") -> Query:
    return Query(id=qid, question=f"question {qid}?", shape=shape,
                 grades=dict(GRADES if grades is None else grades),
                 gold_facts=("fact one", "fact two"))


def make_retrieval(qid: str = "q1", ranking: tuple[str, ...] = RANKING,
                   faithfulness: Faithfulness | None = None,
                   token_reduction: float | None = 0.9) -> Retrieval:
    return Retrieval(query_id=qid, ranked_modules=ranking, context_tokens=1234,
                     token_reduction=token_reduction, latency_ms=12.5,
                     faithfulness=faithfulness or faith())


def scored(qid: str = "q1", grades: dict[str, int] | None = None,
           ranking: tuple[str, ...] = RANKING, shape: str = "focused",
           options: ScoringOptions | None = None, **faith_overrides: Any) -> QueryResult:
    return score_query(make_query(qid, grades, shape),
                       make_retrieval(qid, ranking, faith(**faith_overrides)),
                       options or ScoringOptions())


def row(qid: str, shape: str = "focused", **metrics: float | None) -> QueryResult:
    """A hand-made QueryResult carrying exactly ``metrics``."""
    return QueryResult(
        id=qid, question="?", shape=shape, ranked_modules=(), expected={},
        metrics=metrics, faithfulness=faith(),
        diagnostics=Diagnostics(no_relevant=False, missed_top=(), missing_facts=()),
        latency_ms=1.0,
    )


# ----------------------------------------------------------------------------- score_query


def test_score_query_hand_case() -> None:
    result = score_query(make_query(), make_retrieval(),
                         ScoringOptions(k_values=(1, 3), gain=Gain.EXPONENTIAL))
    m = result.metrics
    # relevant (grade >= 1): a b c e g -> 5; the top 5 (b x a d y) holds b and a.
    assert m["recall@5"] == pytest.approx(2 / 5)
    assert m["precision@5"] == pytest.approx(2 / 5)
    assert m["recall@1"] == pytest.approx(1 / 5)
    assert m["precision@3"] == pytest.approx(2 / 3)
    assert m["hit_rate@1"] == 1.0
    assert m["mrr@1"] == 1.0
    dcg = 3 / math.log2(2) + 7 / math.log2(4)  # b (2 -> 3), a (3 -> 7)
    idcg = (7 + 7 / math.log2(3) + 7 / math.log2(4) + 3 / math.log2(5) + 1 / math.log2(6))
    assert m["ndcg@5"] == pytest.approx(dcg / idcg)
    assert m["ndcg@1"] == pytest.approx(3 / 7)
    # headline: mrr = RR@5, hit_rate = success@5
    assert m["mrr"] == m["mrr@5"] == 1.0
    assert m["hit_rate"] == m["hit_rate@5"] == 1.0
    # faithfulness and cost columns are carried through
    assert m["faithfulness"] == 0.75
    assert m["fact_recall"] == 0.5
    assert m["contradiction"] == 0.0
    assert m["context_precision"] is None
    assert m["context_tokens"] == 1234.0
    assert m["token_reduction"] == 0.9
    # the row itself
    assert result.ranked_modules == ("b", "x", "a", "d", "y", "e")
    assert result.expected == {3: ("a", "e", "g"), 2: ("b",), 1: ("c",)}
    assert (result.id, result.shape, result.latency_ms) == ("q1", "focused", 12.5)


def test_score_query_linear_gain() -> None:
    result = scored(options=ScoringOptions(gain=Gain.LINEAR))
    dcg = 2 + 3 / math.log2(4)
    idcg = 3 + 3 / math.log2(3) + 3 / math.log2(4) + 2 / math.log2(5) + 1 / math.log2(6)
    assert result.metrics["ndcg@5"] == pytest.approx(dcg / idcg)


@pytest.mark.parametrize("k_values", [(), (1,), (1, 3), (10,), (1, 3, 5, 10, 20), DEFAULT_K])
def test_every_metric_key_is_present_and_5_always_computed(k_values: tuple[int, ...]) -> None:
    result = scored(options=ScoringOptions(k_values=k_values))
    keys = set(result.metrics)
    assert keys == set(metric_names(k_values))
    for family in ("recall", "precision", "ndcg", "hit_rate", "mrr"):
        for k in {*k_values, HEADLINE_K}:
            assert f"{family}@{k}" in keys
    assert {"mrr", "hit_rate", *FAITHFULNESS_COLUMNS, "context_tokens",
            "token_reduction"} <= keys


def test_headline_mrr_and_hit_rate_are_cut_at_5() -> None:
    # first relevant module at rank 6
    ranking = ("u1", "u2", "u3", "u4", "u5", "r")
    result = scored(grades={"r": 2}, ranking=ranking,
                    options=ScoringOptions(k_values=(10,)))
    m = result.metrics
    assert m["mrr"] == 0.0
    assert m["hit_rate"] == 0.0
    assert m["mrr@10"] == pytest.approx(1 / 6)
    assert m["hit_rate@10"] == 1.0
    assert m["recall@5"] == 0.0
    assert m["recall@10"] == 1.0


def test_effective_k() -> None:
    assert effective_k([]) == (5,)
    assert effective_k([10, 1, 1]) == (1, 5, 10)
    assert effective_k((5,)) == (5,)
    for bad in ([0], [-3], [True], [2.0], ["3"]):
        with pytest.raises(ValueError):
            effective_k(bad)  # type: ignore[arg-type]


def test_metric_names_order_starts_with_the_headline() -> None:
    names = metric_names((1, 10))
    assert names[:5] == ("recall@5", "precision@5", "mrr", "ndcg@5", "hit_rate")
    assert len(names) == len(set(names))
    assert names.index("recall@1") < names.index("recall@10")
    assert names[-2:] == ("context_tokens", "token_reduction")


def test_diagnostics_grade_3_outside_top_5() -> None:
    result = scored()
    diag = result.diagnostics
    # a is at rank 3 (inside the top 5); e at rank 6; g never retrieved
    assert diag.missed_top == (MissedModule("e", 6), MissedModule("g", None))
    assert diag.no_relevant is False
    assert diag.missing_facts == ("fact two",)
    assert diag.flags == (
        "2 grade-3 module(s) outside the top 5",
        "1 gold fact(s) missing from the context",
    )


def test_diagnostics_rank_counts_after_deduplication() -> None:
    ranking = ("x", "x", "x", "y", "y", "z", "w", "a")  # dedup: x y z w a -> a at 5
    assert scored(grades={"a": 3}, ranking=ranking).diagnostics.missed_top == ()
    ranking = ("x", "y", "z", "w", "v", "u", "a")
    assert scored(grades={"a": 3}, ranking=ranking).diagnostics.missed_top == (
        MissedModule("a", 7),)


def test_diagnostics_clean_query_has_no_flags() -> None:
    result = scored(grades={"a": 3, "b": 1}, ranking=("a", "b"), facts_missing=())
    assert result.diagnostics == Diagnostics(no_relevant=False, missed_top=(), missing_facts=())
    assert result.diagnostics.flags == ()


def test_no_relevant_flag_and_zero_scores() -> None:
    result = scored(grades={"a": 0, "b": 0}, ranking=("a", "b"))
    assert result.diagnostics.no_relevant is True
    assert "no relevant module graded" in result.diagnostics.flags
    for name in ("recall@5", "precision@5", "mrr", "ndcg@5", "hit_rate", "mrr@10"):
        assert result.metrics[name] == 0.0
    assert result.expected == {}


def test_threshold_applies_to_binary_measures_and_no_relevant() -> None:
    grades = {"a": 1, "b": 2}
    ranking = ("a", "b")
    low = scored(grades=grades, ranking=ranking)
    high = scored(grades=grades, ranking=ranking, options=ScoringOptions(threshold=2))
    top = scored(grades=grades, ranking=ranking, options=ScoringOptions(threshold=3))
    assert low.metrics["mrr"] == 1.0
    assert high.metrics["mrr"] == 0.5
    assert high.metrics["recall@1"] == 0.0
    assert high.diagnostics.no_relevant is False
    assert top.diagnostics.no_relevant is True
    assert top.metrics["hit_rate"] == 0.0
    # nDCG is graded: the binary threshold does not change it
    assert low.metrics["ndcg@5"] == high.metrics["ndcg@5"] == top.metrics["ndcg@5"] > 0


def test_not_computed_columns_stay_none() -> None:
    result = score_query(make_query(), make_retrieval(token_reduction=None), ScoringOptions())
    assert result.metrics["token_reduction"] is None
    assert result.metrics["answer_relevance"] is None
    with_embed = scored(context_precision=0.3, context_recall=0.4, answer_relevance=0.5)
    assert with_embed.metrics["context_precision"] == 0.3
    assert with_embed.metrics["context_recall"] == 0.4
    assert with_embed.metrics["answer_relevance"] == 0.5


def test_score_all_keeps_ground_truth_order_and_requires_every_retrieval() -> None:
    gt = GroundTruth(source="gt.json", queries=(make_query("q2"), make_query("q1")))
    retrievals = {"q1": make_retrieval("q1"), "q2": make_retrieval("q2", ranking=("g",))}
    rows = score_all(gt, retrievals, ScoringOptions())
    assert [r.id for r in rows] == ["q2", "q1"]
    assert rows[0].metrics["mrr"] == 1.0
    with pytest.raises(KeyError, match="q2"):
        score_all(gt, {"q1": make_retrieval("q1")}, ScoringOptions())


# ----------------------------------------------------------------------------- aggregates


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([None, None], None),
        ([], None),
        ([0.0, None], 0.0),
        ([1.0, None, 0.0], 0.5),
        ([0.2, 0.4, 0.9], 0.5),
    ],
)
def test_mean_skips_none(values: list[float | None], expected: float | None) -> None:
    result = mean(values)
    if expected is None:
        assert result is None
    else:
        assert result == pytest.approx(expected)


def test_aggregate_skips_none_and_counts_zero() -> None:
    rows = [
        row("q1", recall=1.0, cp=None, tr=None, z=0.0),
        row("q2", recall=0.0, cp=0.5, tr=None, z=0.0),
        row("q3", recall=0.5, cp=None, tr=None, z=0.0),
    ]
    agg = aggregate(rows)
    assert agg.n == 3
    assert agg.metrics["recall"] == pytest.approx(0.5)
    assert agg.metrics["cp"] == pytest.approx(0.5)  # only q2 counts, not (0.5+0+0)/3
    assert agg.metrics["tr"] is None  # not computed anywhere: None, never 0
    assert agg.metrics["z"] == 0.0


def test_aggregate_of_scored_rows() -> None:
    rows = [scored("q1"), scored("q2", grades={"z": 3}, ranking=("a",))]
    agg = aggregate(rows)
    assert agg.n == 2
    assert agg.metrics["mrr"] == pytest.approx(0.5)
    assert agg.metrics["recall@5"] == pytest.approx(0.2)
    assert agg.metrics["context_precision"] is None
    assert agg.metrics["faithfulness"] == pytest.approx(0.75)


def test_aggregate_unions_metric_names() -> None:
    agg = aggregate([row("q1", a=1.0), row("q2", b=0.5)])
    assert agg.metrics == {"a": 1.0, "b": 0.5}
    assert aggregate([]) == Aggregate(n=0, metrics={})


def test_by_shape_groups_in_the_order_given() -> None:
    rows = [row("q1", "identity", m=1.0), row("q2", "focused", m=0.0),
            row("q3", "identity", m=0.0), row("q4", "focused", m=None)]
    shapes = by_shape(rows, ["focused", "identity", "cross-file"])
    assert list(shapes) == ["focused", "identity", "cross-file"]
    assert shapes["focused"].n == 2
    assert shapes["focused"].metrics["m"] == 0.0
    assert shapes["identity"].n == 2
    assert shapes["identity"].metrics["m"] == pytest.approx(0.5)
    assert shapes["cross-file"] == Aggregate(n=0, metrics={})


# ----------------------------------------------------------------------------- floors


def test_default_floors_are_the_n15_gates() -> None:
    rules = {f.rule for f in DEFAULT_POLICY.aggregate}
    assert rules == {"recall@5 >= 0.5", "mrr >= 0.4", "ndcg@5 >= 0.5", "hit_rate >= 0.8",
                     "faithfulness > 0", "contradiction <= 0.2"}
    assert DEFAULT_POLICY.per_shape == (Floor("hit_rate", ">=", 0.70),)
    assert DEFAULT_POLICY.zero_miss is True
    assert DEFAULT_POLICY.metrics() == {"recall@5", "mrr", "ndcg@5", "hit_rate",
                                        "faithfulness", "contradiction"}
    assert Settings().floors == DEFAULT_POLICY


@pytest.mark.parametrize(
    ("spec", "op", "value"),
    [
        (0.5, ">=", 0.5),
        (1, ">=", 1.0),
        (0, ">=", 0.0),
        ("0.5", ">=", 0.5),
        (".5", ">=", 0.5),
        ("<= 0.2", "<=", 0.2),
        ("<=0.2", "<=", 0.2),
        ("> 0", ">", 0.0),
        ("< 0.1", "<", 0.1),
        (">= 0.75", ">=", 0.75),
        ("  >=  0.75  ", ">=", 0.75),
        ("≥ 0.3", ">=", 0.3),
        ("≤ 0.3", "<=", 0.3),
    ],
)
def test_floor_parse(spec: object, op: str, value: float) -> None:
    floor = Floor.parse("m", spec)
    assert (floor.metric, floor.op, floor.value) == ("m", op, value)


@pytest.mark.parametrize(
    "spec",
    [True, False, None, "abc", "=> 0.5", "== 0.5", "= 0.5", ">=", "", ">= x", "0.5 0.6",
     ">> 1", [0.5], {"ge": 0.5}, float("nan"), float("inf"), float("-inf")],
    ids=repr,
)
def test_invalid_floor_specs_are_rejected(spec: object) -> None:
    with pytest.raises(ValueError, match="floor m"):
        Floor.parse("m", spec)


def test_parse_floors_mapping() -> None:
    assert parse_floors({"recall@5": 0.5, "contradiction": "<= 0.2"}) == (
        Floor("recall@5", ">=", 0.5), Floor("contradiction", "<=", 0.2))


@pytest.mark.parametrize(
    ("floor", "actual", "holds"),
    [
        (Floor("m", ">=", 0.5), 0.5, True),
        (Floor("m", ">=", 0.5), 0.4999, False),
        (Floor("m", ">", 0.0), 0.0, False),
        (Floor("m", ">", 0.0), 0.01, True),
        (Floor("m", "<=", 0.2), 0.2, True),
        (Floor("m", "<=", 0.2), 0.21, False),
        (Floor("m", "<", 0.2), 0.2, False),
        (Floor("m", ">=", 0.0), None, False),
        (Floor("m", "<=", 1.0), None, False),
    ],
)
def test_floor_holds(floor: Floor, actual: float | None, holds: bool) -> None:
    assert floor.holds(actual) is holds


def passing_overall(**overrides: float | None) -> Aggregate:
    metrics: dict[str, float | None] = {
        "recall@5": 0.9, "mrr": 0.9, "ndcg@5": 0.9, "hit_rate": 0.9,
        "faithfulness": 0.5, "contradiction": 0.0,
    }
    metrics.update(overrides)
    return Aggregate(n=2, metrics=metrics)


def test_check_floors_all_pass() -> None:
    rows = [row("q1", **{"recall@5": 0.5})]
    assert check_floors(DEFAULT_POLICY, overall=passing_overall(),
                        shapes={"focused": Aggregate(1, {"hit_rate": 0.7})}, rows=rows) == ()


def test_check_floors_reports_every_violation_in_order() -> None:
    rows = [row("q1", **{"recall@5": 0.5}), row("q2", **{"recall@5": 0.0}),
            row("q3", **{"recall@5": None})]
    violations = check_floors(
        DEFAULT_POLICY,
        overall=passing_overall(**{"recall@5": 0.49, "contradiction": 0.25,
                                   "faithfulness": 0.0}),
        shapes={"focused": Aggregate(2, {"hit_rate": 0.69}),
                "identity": Aggregate(1, {"hit_rate": 0.7})},
        rows=rows,
    )
    assert [(v.scope, v.metric) for v in violations] == [
        ("overall", "recall@5"),
        ("overall", "faithfulness"),
        ("overall", "contradiction"),
        ("shape focused", "hit_rate"),
        ("query q2", "recall@5"),
    ]
    assert violations[0].message == "overall: recall@5 = 0.4900, floor recall@5 >= 0.5"
    assert violations[2].rule == "contradiction <= 0.2"
    assert "zero-miss" in violations[-1].rule


def test_floor_on_a_metric_that_was_not_computed_is_a_violation() -> None:
    policy = FloorPolicy(aggregate=(Floor("context_precision", ">=", 0.1),), per_shape=(),
                         zero_miss=False)
    (violation,) = check_floors(policy, overall=Aggregate(1, {"context_precision": None}),
                                shapes={}, rows=[])
    assert violation.value is None
    assert violation.message == ("overall: context_precision = not computed, "
                                 "floor context_precision >= 0.1")
    (absent,) = check_floors(policy, overall=Aggregate(1, {}), shapes={}, rows=[])
    assert "not computed" in absent.message


def test_per_shape_floors_apply_to_every_shape() -> None:
    policy = FloorPolicy(aggregate=(), per_shape=(Floor("hit_rate", ">=", 0.7),
                                                  Floor("mrr", ">", 0.1)), zero_miss=False)
    shapes = {"focused": Aggregate(1, {"hit_rate": 1.0, "mrr": 0.1}),
              "identity": Aggregate(1, {"hit_rate": 0.5, "mrr": 0.5}),
              "empty": Aggregate(0, {})}
    violations = check_floors(policy, overall=Aggregate(0, {}), shapes=shapes, rows=[])
    assert [(v.scope, v.metric, v.value) for v in violations] == [
        ("shape focused", "mrr", 0.1),
        ("shape identity", "hit_rate", 0.5),
        ("shape empty", "hit_rate", None),
        ("shape empty", "mrr", None),
    ]


def test_zero_miss_rule_can_be_turned_off() -> None:
    rows = [row("q1", **{"recall@5": 0.0})]
    on = FloorPolicy(aggregate=(), per_shape=(), zero_miss=True)
    off = FloorPolicy(aggregate=(), per_shape=(), zero_miss=False)
    assert [v.scope for v in check_floors(on, overall=Aggregate(1), shapes={},
                                          rows=rows)] == ["query q1"]
    assert check_floors(off, overall=Aggregate(1), shapes={}, rows=rows) == ()
    assert "recall@5" in on.metrics()
    assert "recall@5" not in off.metrics()


# ----------------------------------------------------------------------------- options


def test_defaults() -> None:
    options = build_options(None, {})
    assert options == Settings()
    assert options.k == DEFAULT_K
    assert options.gain is Gain.EXPONENTIAL
    assert options.relevance_threshold == 1
    assert options.floors == DEFAULT_POLICY


def test_flags_override_the_file() -> None:
    file_values = {"gain": "linear", "k": [1, 3], "backend": "in_memory", "strict": True,
                   "queries": "gt.yml"}
    options = build_options(file_values, {"gain": "exponential", "strict": False,
                                          "queries": None})
    assert options.gain is Gain.EXPONENTIAL  # flag wins
    assert options.strict is False  # flag wins, even when false
    assert options.k == (1, 3)  # from the file
    assert options.backend == "in_memory"
    assert options.queries == "gt.yml"  # a None flag means "not given"


@pytest.mark.parametrize("style", ["kebab", "snake"])
def test_kebab_and_snake_keys(style: str) -> None:
    def key(name: str) -> str:
        return name.replace("_", "-") if style == "kebab" else name

    values = {key("graph_source"): "graphify", key("relevance_threshold"): 2,
              key("fail_on_floors"): "no", key("primary_metric"): "mrr",
              key("cache_dir"): "/tmp/c", key("comment_key"): "nightly",
              key("shape_floors"): {"hit_rate": 0.6}, key("zero_miss"): "off"}
    options = build_options(values, {})
    assert options.graph_source == "graphify"
    assert options.relevance_threshold == 2
    assert options.fail_on_floors is False
    assert options.primary_metric == "mrr"
    assert options.cache_dir == "/tmp/c"
    assert options.comment_key == "nightly"
    assert options.floors.per_shape == (Floor("hit_rate", ">=", 0.6),)
    assert options.floors.zero_miss is False
    assert options.floors.aggregate == DEFAULT_POLICY.aggregate


def test_backend_accepts_kebab_value() -> None:
    assert build_options({"backend": "in-memory"}, {}).backend == "in_memory"


def test_floors_replace_the_defaults_and_empty_turns_them_off() -> None:
    options = build_options({"floors": {"recall@5": 0.6, "contradiction": "<= 0.1"}}, {})
    assert options.floors.aggregate == (Floor("recall@5", ">=", 0.6),
                                        Floor("contradiction", "<=", 0.1))
    assert options.floors.per_shape == DEFAULT_POLICY.per_shape
    assert build_options({"floors": {}}, {}).floors.aggregate == ()


def config_error(file_values: Any, flags: dict[str, Any] | None = None,
                 file_name: str = ".retrieval-eval.yml") -> str:
    with pytest.raises(ConfigError) as info:
        build_options(file_values, flags or {}, file_name=file_name)
    return str(info.value)


def test_unknown_option() -> None:
    message = config_error({"colour": "blue"})
    assert ".retrieval-eval.yml: colour: unknown option" in message
    assert "command line: verbose-mode: unknown option" in config_error({}, {"verbose_mode": 1})


@pytest.mark.parametrize(
    ("file_values", "bad"),
    [
        ({"floors": {"recal@5": 0.5}}, "recal@5"),
        ({"shape-floors": {"hitrate": 0.5}}, "hitrate"),
        ({"floors": {"recall@20": 0.5}}, "recall@20"),  # k 20 is not computed
        ({"primary-metric": "ndcg@7"}, "ndcg@7"),
    ],
)
def test_unknown_metric_in_floors(file_values: dict[str, Any], bad: str) -> None:
    message = config_error(file_values)
    assert f"floor or metric {bad!r} is unknown" in message
    assert "recall@5" in message  # the known metrics are listed


def test_floor_on_a_configured_k_is_known() -> None:
    options = build_options({"k": [20], "floors": {"recall@20": 0.5}}, {})
    assert options.k == (20,)
    assert options.floors.aggregate == (Floor("recall@20", ">=", 0.5),)
    # the headline cut is always computed, so its floors are valid whatever k is
    build_options({"k": [1], "floors": {"ndcg@5": 0.5, "mrr": 0.1}}, {})


def test_every_problem_is_reported_at_once() -> None:
    file_values = {
        "colour": "blue",
        "gain": "quadratic",
        "k": "1,zero",
        "relevance-threshold": 5,
        "strict": "maybe",
        "graph-source": "magic",
        "floors": {"recall@5": "about half", "mrr": ">> 0.1", "nope@5": 0.2},
    }
    message = config_error(file_values, {"backend": "cloud"})
    expected_fragments = [
        "colour: unknown option",
        "gain: 'quadratic' is not exponential or linear",
        "k: '1,zero' must be positive integers",
        "relevance-threshold: 5 must be 1, 2 or 3",
        "strict: 'maybe' is not true or false",
        "graph-source: 'magic' is not one of builtin, graphify",
        "floor recall@5: 'about half'",
        "floor mrr: '>> 0.1'",
        "'nope@5' is unknown",
        "command line: backend: 'cloud' is not one of auto, in_memory",
    ]
    for fragment in expected_fragments:
        assert fragment in message, fragment
    assert message.startswith("invalid options:")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1,3,5", (1, 3, 5)),
        (" 10, 1 ,3 ", (1, 3, 10)),
        ("5", (5,)),
        ([5, 1, 1], (1, 5)),
        ((3, 2), (2, 3)),
        (7, (7,)),
        (["2", " 4"], (2, 4)),
    ],
)
def test_k_parsing(value: object, expected: tuple[int, ...]) -> None:
    assert build_options({"k": value}, {}).k == expected
    assert build_options(None, {"k": value}).k == expected


@pytest.mark.parametrize("value", ["0", "1,-3", "a", "", "1,,3", [], [0], [2.5], 2.5, True,
                                   {"k": 1}])
def test_invalid_k(value: object) -> None:
    assert "k: " in config_error({"k": value})


@pytest.mark.parametrize(("value", "expected"), [("yes", True), ("off", False), (True, True),
                                                 ("0", False), ("TRUE", True)])
def test_bool_options(value: object, expected: bool) -> None:
    assert build_options({"embed": value}, {}).embed is expected


def test_options_file_must_be_a_mapping() -> None:
    message = config_error(["k", 5])
    assert ".retrieval-eval.yml" in message
    assert "mapping" in message


@pytest.mark.parametrize("name", ["queries", "primary-metric", "comment-key", "gain"])
def test_empty_value_in_file_is_an_error_not_the_string_none(name: str) -> None:
    assert f"{name}: needs a value" in config_error({name: None})


def test_optional_paths_can_be_cleared() -> None:
    options = build_options({"cache-dir": "/x", "baseline": "old.json"},
                            {"cache_dir": None})  # None flag: not given
    assert options.cache_dir == "/x"
    assert build_options({"baseline": None}, {}).baseline is None


def test_floors_must_be_mappings() -> None:
    message = config_error({"floors": [0.5], "shape-floors": "0.7"})
    assert "floors: must be a mapping of metric to floor" in message
    assert "shape-floors: must be a mapping of metric to floor" in message


# ----------------------------------------------------------------------------- results


def make_results() -> Results:
    rows = (
        scored("q1", context_precision=0.25),
        scored("q2", grades={"z": 3, "a": 0}, ranking=("a", "b"), shape="identity",
               facts_missing=(), facts_found=("fact one", "fact two"), fact_recall=1.0),
        scored("q3", grades={"c": 2}, ranking=(), shape="cross-file", contradiction=0.5),
    )
    overall = aggregate(rows)
    shapes = by_shape(rows, ["focused", "identity", "cross-file"])
    violations = check_floors(DEFAULT_POLICY, overall=overall, shapes=shapes, rows=rows)
    violations += (Violation("overall", "context_recall", None, "context_recall >= 0.1"),)
    run = RunInfo(
        tool_version="0.1.0", neuralmind_version="4.22.1", backend="in_memory",
        graph_source="builtin", k_values=(1, 3, 5, 10), gain="exponential", threshold=1,
        queries_file="retrieval_queries.json", queries_sha256="ab" * 32, root="repo",
        commit="0123abc", ref="main", model=None, started_at="2026-01-01T00:00:00Z",
        draft=True, index={"modules": 42, "nested": {"a": [1, 2]}},
        timings={"build": 1.5, "query": 0.25}, warnings=("draft ground truth",),
    )
    return Results(run=run, overall=overall, shapes=shapes, queries=rows,
                   violations=violations)


def test_results_round_trip_through_json() -> None:
    results = make_results()
    assert results.violations  # non-trivial: some floors are missed
    assert not results.passed
    data = to_dict(results)
    text = json.dumps(data)
    back = from_dict(json.loads(text), "results.json")
    assert back == results
    assert to_dict(back) == data
    assert back.query("q2") == results.queries[1]
    assert back.query("nope") is None


def test_results_document_layout() -> None:
    data = to_dict(make_results())
    assert data["schema_version"] == SCHEMA_VERSION == 1
    assert set(data) == {"schema_version", "run", "overall", "by_shape", "queries", "floors"}
    assert data["floors"]["passed"] is False
    assert data["run"]["k_values"] == [1, 3, 5, 10]
    first = data["queries"][0]
    assert first["expected"] == {"3": ["a", "e", "g"], "2": ["b"], "1": ["c"]}
    assert first["diagnostics"]["missed_top"] == [{"module": "e", "rank": 6},
                                                 {"module": "g", "rank": None}]
    assert first["diagnostics"]["flags"] == list(scored("q1").diagnostics.flags)
    assert data["floors"]["violations"][-1]["message"] == (
        "overall: context_recall = not computed, floor context_recall >= 0.1")


def test_passing_results() -> None:
    results = make_results()
    clean = Results(run=results.run, overall=results.overall, shapes=results.shapes,
                    queries=results.queries)
    assert clean.passed
    data = json.loads(json.dumps(to_dict(clean)))
    assert data["floors"] == {"passed": True, "violations": []}
    assert from_dict(data, "r.json") == clean


@pytest.mark.parametrize("version", [3, 0, None, "1", True, 1.5])  # 2 adds sections/shards
def test_wrong_schema_version_names_both_versions(version: object) -> None:
    data = to_dict(make_results())
    data["schema_version"] = version
    with pytest.raises(ResultsError) as info:
        from_dict(data, "old/results.json")
    message = str(info.value)
    assert "old/results.json" in message
    assert f"schema_version {version!r}" in message
    assert f"schema_version {SCHEMA_VERSION}" in message


def test_missing_schema_version() -> None:
    data = to_dict(make_results())
    del data["schema_version"]
    with pytest.raises(ResultsError, match="schema_version None"):
        from_dict(data, "r.json")


def _set(path: tuple[Any, ...], value: Any):
    def mutate(data: dict[str, Any]) -> None:
        node: Any = data
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = value
    return mutate


def _delete(path: tuple[Any, ...]):
    def mutate(data: dict[str, Any]) -> None:
        node: Any = data
        for part in path[:-1]:
            node = node[part]
        del node[path[-1]]
    return mutate


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (_delete(("queries",)), "queries"),
        (_set(("queries",), {"q1": {}}), "queries"),
        (_set(("queries", 0), "q1"), "queries[0]"),
        (_delete(("queries", 1, "metrics")), "queries[1].metrics"),
        (_set(("queries", 0, "metrics", "mrr"), "high"), "queries[0].metrics.mrr"),
        (_set(("queries", 0, "metrics", "mrr"), True), "queries[0].metrics.mrr"),
        (_delete(("queries", 0, "id")), "queries[0].id"),
        (_set(("queries", 2, "question"), 5), "queries[2].question"),
        (_set(("queries", 0, "ranked_modules"), "a b"), "queries[0].ranked_modules"),
        (_set(("queries", 0, "ranked_modules", 0), 7), "queries[0].ranked_modules"),
        (_set(("queries", 0, "facts_found"), [1]), "queries[0].facts_found"),
        (_set(("queries", 0, "expected"), {"three": ["a"]}), "queries[0].expected"),
        (_set(("queries", 0, "expected"), {"²": ["a"]}), "queries[0].expected"),
        (_set(("queries", 0, "expected", "3"), "a"), "queries[0].expected.3"),
        (_set(("queries", 0, "diagnostics"), []), "queries[0].diagnostics"),
        (_set(("queries", 0, "diagnostics", "missed_top"), {}),
         "queries[0].diagnostics.missed_top"),
        (_set(("queries", 0, "diagnostics", "missed_top", 0), "e"),
         "queries[0].diagnostics.missed_top[0]"),
        (_set(("queries", 0, "diagnostics", "missed_top", 0, "module"), None),
         "queries[0].diagnostics.missed_top[0].module"),
        (_set(("queries", 0, "diagnostics", "missed_top", 0, "rank"), "6"),
         "queries[0].diagnostics.missed_top[0].rank"),
        (_set(("queries", 0, "diagnostics", "no_relevant"), "no"),
         "queries[0].diagnostics.no_relevant"),
        (_set(("queries", 0, "latency_ms"), "fast"), "queries[0].latency_ms"),
        (_delete(("overall",)), "overall"),
        (_set(("overall", "n"), 2.0), "overall.n"),
        (_set(("overall", "n"), True), "overall.n"),
        (_set(("overall", "metrics"), [1]), "overall.metrics"),
        (_set(("by_shape",), []), "by_shape"),
        (_set(("by_shape", "focused"), 3), "by_shape.focused"),
        (_set(("by_shape", "focused", "metrics", "mrr"), {}), "by_shape.focused.metrics.mrr"),
        (_set(("floors",), []), "floors"),
        (_set(("floors", "violations"), {}), "floors.violations"),
        (_set(("floors", "violations", 0), 1), "floors.violations[0]"),
        (_delete(("floors", "violations", 0, "scope")), "floors.violations[0].scope"),
        (_set(("floors", "violations", 0, "value"), "0.4"), "floors.violations[0].value"),
        (_delete(("run",)), "run"),
        (_delete(("run", "tool_version")), "tool_version"),
        (_set(("run", "tool_version"), 1), "run.tool_version"),
        (_set(("run", "k_values"), "1,3"), "run.k_values"),
        (_set(("run", "k_values"), [1, "3"]), "run.k_values"),
        (_set(("run", "threshold"), "1"), "run.threshold"),
        (_set(("run", "draft"), "yes"), "run.draft"),
        (_set(("run", "commit"), 5), "run.commit"),
        (_set(("run", "index"), []), "run.index"),
        (_set(("run", "timings"), {"build": "slow"}), "run.timings"),
        (_set(("run", "warnings"), [None]), "run.warnings"),
    ],
)
def test_malformed_results_raise_results_error_naming_the_field(mutate, field: str) -> None:
    data = copy.deepcopy(to_dict(make_results()))
    mutate(data)
    with pytest.raises(ResultsError) as info:
        from_dict(data, "r.json")
    message = str(info.value)
    assert message.startswith("r.json: ")
    assert field in message


@pytest.mark.parametrize("data", [None, [], "results", 1])
def test_results_top_level_must_be_an_object(data: object) -> None:
    with pytest.raises(ResultsError, match="top level"):
        from_dict(data, "r.json")


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


JUNK = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                 st.text(max_size=4), st.just([]), st.just({}), st.just([None]),
                 st.just({"²": 1}), st.just({"x": "y"}))
BASE_DOC = to_dict(make_results())
BASE_PATHS = _paths(BASE_DOC)


@given(st.sampled_from(BASE_PATHS), JUNK)
@settings(max_examples=300, derandomize=True, deadline=None)
def test_any_corruption_raises_results_error_or_loads(path: tuple[Any, ...],
                                                      junk: Any) -> None:
    data = copy.deepcopy(BASE_DOC)
    _set(path, junk)(data)
    try:
        from_dict(json.loads(json.dumps(data)), "r.json")
    except ResultsError as err:  # the only acceptable failure: never KeyError/TypeError/...
        message = str(err)
    else:
        return
    assert message.startswith("r.json: ")
    assert "is this a results.json" in message or "schema_version" in message


# ----------------------------------------------------------------------------- issue 24


def test_a_retrieval_only_question_has_no_faithfulness_but_every_ranking_metric() -> None:
    with_facts = scored()
    query = Query(id="q1", question="question q1?", shape="focused", grades=dict(GRADES),
                  gold_facts=())
    only = score_query(query, make_retrieval(), ScoringOptions())
    assert retrieval_only(only) and not retrieval_only(with_facts)
    for name in FACT_METRICS:
        assert only.metrics.get(name) is None, name
    for name in ("recall@5", "mrr", "ndcg@5", "hit_rate"):
        assert only.metrics[name] == with_facts.metrics[name]
    assert with_facts.metrics["faithfulness"] == 0.75
    overall = aggregate([only, with_facts])
    assert overall.metrics["faithfulness"] == 0.75   # the mean leaves the question out


def _scored_pair(*, facts: tuple[bool, bool]) -> list[QueryResult]:
    rows = []
    for n, has in enumerate(facts):
        query = Query(id=f"q{n}", question="?", shape="focused" if n == 0 else "identity",
                      grades=dict(GRADES), gold_facts=("fact one", "fact two") if has else ())
        rows.append(score_query(query, make_retrieval(
            f"q{n}", faithfulness=faith(faithfulness=0.0, fact_recall=0.0)),
            ScoringOptions()))
    return rows


def test_faithfulness_floors_are_not_applied_when_no_question_has_facts() -> None:
    rows = _scored_pair(facts=(False, False))
    policy = FloorPolicy(aggregate=(Floor("faithfulness", ">", 0.0),
                                    Floor("context_precision", ">=", 0.1)),
                         per_shape=(Floor("faithfulness", ">", 0.0),), zero_miss=False)
    violations = check_floors(policy, overall=aggregate(rows),
                              shapes=by_shape(rows, ("focused", "identity")), rows=rows)
    # context_precision is judged against facts too: nothing to judge, nothing floored.
    assert violations == ()


def test_faithfulness_floors_apply_to_the_questions_with_facts() -> None:
    rows = _scored_pair(facts=(True, False))
    policy = FloorPolicy(aggregate=(Floor("faithfulness", ">", 0.0),),
                         per_shape=(Floor("faithfulness", ">", 0.0),), zero_miss=False)
    violations = check_floors(policy, overall=aggregate(rows),
                              shapes=by_shape(rows, ("focused", "identity")), rows=rows)
    assert [(v.scope, v.metric, v.value) for v in violations] == [
        ("overall", "faithfulness", 0.0), ("shape focused", "faithfulness", 0.0)]


def test_a_floor_on_a_column_not_computed_for_questions_with_facts_is_still_missed() -> None:
    rows = _scored_pair(facts=(True, True))
    policy = FloorPolicy(aggregate=(Floor("context_precision", ">=", 0.1),), per_shape=(),
                         zero_miss=False)
    (violation,) = check_floors(policy, overall=aggregate(rows), shapes={}, rows=rows)
    assert violation.value is None
