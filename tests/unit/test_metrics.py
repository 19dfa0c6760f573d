"""Unit tests for evaluator.core.metrics.

Two layers:

* a property-based cross-check of every measure against trec_eval (pytrec-eval-terrier) on
  randomized graded qrels and rankings, fed the way docs/metric-semantics.md prescribes
  (deduplicated ranking, first occurrence kept, strictly decreasing scores N - rank;
  exponential gain through qrels rewritten to 2^rel - 1);
* hand-computed edge cases, including the worked values of the semantics doc.
"""

from __future__ import annotations

import math

import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaluator.core.metrics import (
    Gain,
    accuracy_at_k,
    dcg_at_k,
    dedupe,
    first_rank,
    hit_rate_at_k,
    ideal_dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

K_VALUES = (1, 3, 5, 10, 20)
JUDGED = tuple(f"pkg/mod{i}.py" for i in range(10))
UNJUDGED = tuple(f"other/x{i}.py" for i in range(5))
QID = "q"

PROPERTY_SETTINGS = settings(
    max_examples=300,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)

grades_strategy = st.dictionaries(
    keys=st.sampled_from(JUDGED), values=st.integers(min_value=0, max_value=3), max_size=10
)
# Rankings mix judged and unjudged modules and may repeat a module (duplicates).
ranking_strategy = st.lists(st.sampled_from(JUDGED + UNJUDGED), max_size=25)


# ----------------------------------------------------------------------------- helpers


def _cuts(measure: str) -> str:
    return f"{measure}.{','.join(map(str, K_VALUES))}"


def trec_eval(grades: dict[str, int], ranking: list[str], *, relevance_level: int = 1,
              exponential: bool = False) -> dict[str, float]:
    """trec_eval's numbers for one query, fed as the semantics doc prescribes.

    A query trec_eval drops (it does so for empty qrels) scores 0 on every measure: the
    doc's rule for queries with nothing relevant, which must count in the mean.
    """
    qrels_grades = {m: (2**g - 1 if exponential else g) for m, g in grades.items()}
    ranked = dedupe(ranking)
    run = {QID: {m: float(len(ranked) - i) for i, m in enumerate(ranked)}}
    measures = {_cuts("recall"), _cuts("P"), _cuts("success"), _cuts("ndcg_cut"), "recip_rank"}
    evaluator = pytrec_eval.RelevanceEvaluator({QID: qrels_grades}, measures,
                                               relevance_level=relevance_level)
    result = evaluator.evaluate(run)
    names = ["recip_rank"] + [f"{m}_{k}" for m in ("recall", "P", "success", "ndcg_cut")
                              for k in K_VALUES]
    scored = result.get(QID, {})
    return {name: float(scored.get(name, 0.0)) for name in names}


def hand_rr_at_k(ranking: list[str], grades: dict[str, int], k: int, threshold: int) -> float:
    """RR@k from its definition: 1/rank of the first relevant, 0 if it is beyond k."""
    seen: list[str] = []
    for module in ranking:
        if module not in seen:
            seen.append(module)
    for rank, module in enumerate(seen, start=1):
        if grades.get(module, 0) >= threshold:
            return 1.0 / rank if rank <= k else 0.0
    return 0.0


def approx(value: float) -> object:
    return pytest.approx(value, abs=1e-9)


# ----------------------------------------------------------------------------- vs trec_eval


@PROPERTY_SETTINGS
@given(grades=grades_strategy, ranking=ranking_strategy, level=st.sampled_from([1, 2]))
def test_binary_measures_match_trec_eval(grades: dict[str, int], ranking: list[str],
                                         level: int) -> None:
    ref = trec_eval(grades, ranking, relevance_level=level)
    assert reciprocal_rank(ranking, grades, threshold=level) == approx(ref["recip_rank"])
    for k in K_VALUES:
        assert recall_at_k(ranking, grades, k, threshold=level) == approx(ref[f"recall_{k}"])
        assert precision_at_k(ranking, grades, k, threshold=level) == approx(ref[f"P_{k}"])
        assert hit_rate_at_k(ranking, grades, k, threshold=level) == approx(ref[f"success_{k}"])


@PROPERTY_SETTINGS
@given(grades=grades_strategy, ranking=ranking_strategy, threshold=st.sampled_from([1, 2, 3]))
def test_acc_at_k_is_trec_eval_recall_of_the_needed_modules(grades: dict[str, int],
                                                             ranking: list[str],
                                                             threshold: int) -> None:
    """acc@k = 1 exactly when trec_eval's recall.k at relevance level max(2, threshold) is 1
    (0 when trec_eval drops the query: nothing graded that high)."""
    ref = trec_eval(grades, ranking, relevance_level=max(2, threshold))
    for k in K_VALUES:
        expected = 1.0 if ref[f"recall_{k}"] == approx(1.0) else 0.0
        assert accuracy_at_k(ranking, grades, k, threshold=threshold) == expected


@pytest.mark.parametrize(("ranking", "grades", "k", "expected"), [
    (["a", "b", "c"], {"a": 3, "b": 2, "c": 1}, 2, 1.0),   # both needed in the top 2
    (["a", "c", "b"], {"a": 3, "b": 2, "c": 1}, 2, 0.0),   # b (needed) at rank 3
    (["a", "c", "b"], {"a": 3, "b": 2, "c": 1}, 3, 1.0),
    (["a", "a", "b"], {"a": 3, "b": 2}, 2, 1.0),           # duplicates do not push b out
    (["c"], {"c": 1}, 5, 0.0),                             # nothing needed (grade ≤ 1): 0
    ([], {"a": 3}, 5, 0.0),
])
def test_acc_at_k_worked_values(ranking, grades, k, expected) -> None:
    assert accuracy_at_k(ranking, grades, k) == expected


@PROPERTY_SETTINGS
@given(grades=grades_strategy, ranking=ranking_strategy)
def test_linear_ndcg_matches_trec_eval_ndcg_cut(grades: dict[str, int],
                                                ranking: list[str]) -> None:
    ref = trec_eval(grades, ranking)
    for k in K_VALUES:
        assert ndcg_at_k(ranking, grades, k, gain=Gain.LINEAR) == approx(ref[f"ndcg_cut_{k}"])


@PROPERTY_SETTINGS
@given(grades=grades_strategy, ranking=ranking_strategy)
def test_exponential_ndcg_matches_trec_eval_on_remapped_qrels(grades: dict[str, int],
                                                              ranking: list[str]) -> None:
    ref = trec_eval(grades, ranking, exponential=True)
    for k in K_VALUES:
        assert ndcg_at_k(ranking, grades, k, gain=Gain.EXPONENTIAL) == approx(
            ref[f"ndcg_cut_{k}"])
        # The default gain is the exponential one (the N-15 spec).
        assert ndcg_at_k(ranking, grades, k) == approx(ref[f"ndcg_cut_{k}"])


@PROPERTY_SETTINGS
@given(grades=grades_strategy, ranking=ranking_strategy, level=st.sampled_from([1, 2]),
       k=st.sampled_from(K_VALUES))
def test_rr_at_k_matches_its_definition(grades: dict[str, int], ranking: list[str], level: int,
                                        k: int) -> None:
    assert reciprocal_rank(ranking, grades, k, threshold=level) == approx(
        hand_rr_at_k(ranking, grades, k, level))


@PROPERTY_SETTINGS
@given(grades=grades_strategy, ranking=ranking_strategy, level=st.sampled_from([1, 2]))
def test_query_without_relevant_module_scores_zero_everywhere(grades: dict[str, int],
                                                              ranking: list[str],
                                                              level: int) -> None:
    # Push every grade below the threshold: nothing is relevant.
    low = {m: min(g, level - 1) for m, g in grades.items()}
    ref = trec_eval(low, ranking, relevance_level=level)
    for k in K_VALUES:
        assert recall_at_k(ranking, low, k, threshold=level) == 0.0 == ref[f"recall_{k}"]
        assert precision_at_k(ranking, low, k, threshold=level) == 0.0 == ref[f"P_{k}"]
        assert hit_rate_at_k(ranking, low, k, threshold=level) == 0.0 == ref[f"success_{k}"]
        assert reciprocal_rank(ranking, low, k, threshold=level) == 0.0
    assert reciprocal_rank(ranking, low, threshold=level) == 0.0 == ref["recip_rank"]
    if level == 1:  # every grade is 0: the ideal DCG is 0, so nDCG is 0 too
        ref_exp = trec_eval(low, ranking, exponential=True)
        for k in K_VALUES:
            assert ndcg_at_k(ranking, low, k, gain=Gain.LINEAR) == 0.0 == ref[f"ndcg_cut_{k}"]
            assert ndcg_at_k(ranking, low, k) == 0.0 == ref_exp[f"ndcg_cut_{k}"]


@pytest.mark.parametrize(
    "grades",
    [
        pytest.param({}, id="no-grades"),
        pytest.param({"a": 0, "b": 0}, id="all-zero"),
        pytest.param({"a": 0, "b": 0, "c": 0, "d": 0}, id="all-zero-retrieved"),
    ],
)
def test_no_relevant_queries_agree_with_trec_eval_or_are_zero(grades: dict[str, int]) -> None:
    ranking = ["a", "b", "c", "d"]
    ref = trec_eval(grades, ranking)
    ours = {
        "recip_rank": reciprocal_rank(ranking, grades),
        **{f"recall_{k}": recall_at_k(ranking, grades, k) for k in K_VALUES},
        **{f"P_{k}": precision_at_k(ranking, grades, k) for k in K_VALUES},
        **{f"success_{k}": hit_rate_at_k(ranking, grades, k) for k in K_VALUES},
        **{f"ndcg_cut_{k}": ndcg_at_k(ranking, grades, k, gain=Gain.LINEAR) for k in K_VALUES},
    }
    assert ours == ref
    assert set(ours.values()) == {0.0}


def test_trec_eval_helper_is_sensitive() -> None:
    """Guard for the cross-check itself: it must see a difference in rankings."""
    grades = {"a": 3, "b": 1}
    good = trec_eval(grades, ["a", "b"])
    bad = trec_eval(grades, ["x", "y", "b"])
    assert good["recip_rank"] == 1.0
    assert bad["recip_rank"] == pytest.approx(1 / 3)
    assert good["ndcg_cut_5"] == pytest.approx(1.0)
    assert bad["ndcg_cut_5"] < good["ndcg_cut_5"]


# ----------------------------------------------------------------------------- hand cases

DOC_GRADES = {"a": 3, "b": 2, "c": 1, "d": 0, "e": 2}
DOC_RANKING = ["b", "x", "a", "d", "y", "e"]


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        pytest.param(lambda: recall_at_k(DOC_RANKING, DOC_GRADES, 5), 0.5, id="recall@5"),
        pytest.param(lambda: precision_at_k(DOC_RANKING, DOC_GRADES, 5), 0.4, id="P@5"),
        pytest.param(lambda: reciprocal_rank(DOC_RANKING, DOC_GRADES), 1.0, id="RR"),
        pytest.param(lambda: reciprocal_rank(DOC_RANKING, DOC_GRADES, 5), 1.0, id="RR@5"),
        pytest.param(lambda: hit_rate_at_k(DOC_RANKING, DOC_GRADES, 5), 1.0, id="success@5"),
        pytest.param(lambda: ndcg_at_k(DOC_RANKING, DOC_GRADES, 5, gain=Gain.LINEAR), 0.61484,
                     id="nDCG@5-linear"),
        pytest.param(lambda: ndcg_at_k(DOC_RANKING, DOC_GRADES, 5, gain=Gain.EXPONENTIAL),
                     0.60055, id="nDCG@5-exponential"),
        pytest.param(lambda: ndcg_at_k(DOC_RANKING, DOC_GRADES, 5), 0.60055,
                     id="nDCG@5-default-is-exponential"),
        # recall@6 picks up e: 3 of the 4 relevant modules (a, b, e; c never retrieved).
        pytest.param(lambda: recall_at_k(DOC_RANKING, DOC_GRADES, 6), 0.75, id="recall@6"),
        # threshold 2: relevant = {a, b, e}; top 5 holds a and b.
        pytest.param(lambda: recall_at_k(DOC_RANKING, DOC_GRADES, 5, threshold=2), 2 / 3,
                     id="recall@5-threshold-2"),
        pytest.param(lambda: precision_at_k(DOC_RANKING, DOC_GRADES, 1, threshold=3), 0.0,
                     id="P@1-threshold-3"),
        pytest.param(lambda: reciprocal_rank(DOC_RANKING, DOC_GRADES, threshold=3), 1 / 3,
                     id="RR-threshold-3"),
    ],
)
def test_worked_values_from_the_semantics_doc(measure, expected: float) -> None:
    assert measure() == pytest.approx(expected, abs=5e-6)


def test_worked_ndcg_by_hand() -> None:
    """The same worked nDCG, spelled out term by term (linear gain)."""
    dcg = 2 / math.log2(2) + 0 + 3 / math.log2(4) + 0 + 0  # b, x, a, d, y
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 2 / math.log2(4) + 1 / math.log2(5)
    assert dcg_at_k(DOC_RANKING, DOC_GRADES, 5, gain=Gain.LINEAR) == pytest.approx(dcg)
    assert ideal_dcg_at_k(DOC_GRADES, 5, gain=Gain.LINEAR) == pytest.approx(idcg)
    assert dcg / idcg == pytest.approx(0.61484, abs=5e-6)


def test_exponential_gain_values() -> None:
    assert [Gain.EXPONENTIAL.of(g) for g in range(4)] == [0.0, 1.0, 3.0, 7.0]
    assert [Gain.LINEAR.of(g) for g in range(4)] == [0.0, 1.0, 2.0, 3.0]


SHORT = ["a", "x"]  # 2 returned, 1 relevant
LATE = ["u1", "u2", "u3", "u4", "u5", "u6", "r", "u7"]  # first relevant at rank 7


@pytest.mark.parametrize(
    ("ranking", "grades", "k", "expected"),
    [
        # fewer than k returned: P@k still divides by k (trec_eval pads with non-relevant)
        pytest.param(SHORT, {"a": 1}, 5, {"P": 0.2, "recall": 1.0, "success": 1.0, "rr": 1.0,
                                          "ndcg": 1.0}, id="fewer-than-k"),
        # first relevant at rank 7
        pytest.param(LATE, {"r": 2}, 5, {"P": 0.0, "recall": 0.0, "success": 0.0, "rr": 0.0,
                                         "ndcg": 0.0}, id="rank-7-cut-5"),
        pytest.param(LATE, {"r": 2}, 10, {"P": 0.1, "recall": 1.0, "success": 1.0,
                                          "rr": 1 / 7, "ndcg": 1 / 3}, id="rank-7-cut-10"),
        # no relevant module retrieved nor graded
        pytest.param(["a", "b"], {}, 5, {"P": 0.0, "recall": 0.0, "success": 0.0, "rr": 0.0,
                                         "ndcg": 0.0}, id="no-grades"),
        pytest.param(["a", "b"], {"a": 0, "b": 0, "c": 0}, 5,
                     {"P": 0.0, "recall": 0.0, "success": 0.0, "rr": 0.0, "ndcg": 0.0},
                     id="all-zero-grades"),
        # relevant modules graded but none retrieved
        pytest.param(["x", "y"], {"a": 3}, 5, {"P": 0.0, "recall": 0.0, "success": 0.0,
                                               "rr": 0.0, "ndcg": 0.0}, id="none-retrieved"),
        # duplicates count once: dedupe first, the first occurrence keeps its rank
        pytest.param(["x", "x", "x", "x", "x", "a"], {"a": 1}, 2,
                     {"P": 0.5, "recall": 1.0, "success": 1.0, "rr": 0.5, "ndcg": 1 / math.log2(3)},
                     id="duplicates-collapse"),
        pytest.param(["a", "a", "a"], {"a": 1, "b": 1}, 3,
                     {"P": 1 / 3, "recall": 0.5, "success": 1.0, "rr": 1.0,
                      "ndcg": 1 / (1 + 1 / math.log2(3))}, id="duplicate-relevant-counts-once"),
        # k larger than the list
        pytest.param(["a", "b", "c"], {"a": 1, "c": 1}, 20,
                     {"P": 0.1, "recall": 1.0, "success": 1.0, "rr": 1.0,
                      "ndcg": (1 + 0.5) / (1 + 1 / math.log2(3))}, id="k-larger-than-list"),
        # empty ranking
        pytest.param([], {"a": 3, "b": 1}, 5, {"P": 0.0, "recall": 0.0, "success": 0.0,
                                               "rr": 0.0, "ndcg": 0.0}, id="empty-ranking"),
    ],
)
def test_edge_cases(ranking: list[str], grades: dict[str, int], k: int,
                    expected: dict[str, float]) -> None:
    got = {
        "P": precision_at_k(ranking, grades, k),
        "recall": recall_at_k(ranking, grades, k),
        "success": hit_rate_at_k(ranking, grades, k),
        "rr": reciprocal_rank(ranking, grades, k),
        "ndcg": ndcg_at_k(ranking, grades, k, gain=Gain.LINEAR),
    }
    assert got == pytest.approx(expected, abs=1e-12)


def test_first_relevant_at_rank_7() -> None:
    grades = {"r": 1}
    assert reciprocal_rank(LATE, grades) == pytest.approx(1 / 7)
    assert reciprocal_rank(LATE, grades) == pytest.approx(0.1429, abs=5e-5)
    assert reciprocal_rank(LATE, grades, 5) == 0.0
    assert reciprocal_rank(LATE, grades, 7) == pytest.approx(1 / 7)
    assert reciprocal_rank(LATE, grades, 6) == 0.0
    assert hit_rate_at_k(LATE, grades, 5) == 0.0
    assert hit_rate_at_k(LATE, grades, 7) == 1.0


def test_duplicates_do_not_shift_later_ranks() -> None:
    ranking = ["a", "a", "b", "a", "c"]
    assert dedupe(ranking) == ("a", "b", "c")
    assert first_rank(ranking, "c") == 3
    assert first_rank(ranking, "a") == 1
    assert first_rank(ranking, "zzz") is None
    assert reciprocal_rank(ranking, {"c": 1}) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranking, {"c": 1}, 3) == pytest.approx(1 / 3)


def test_measures_accept_tuples_and_do_not_mutate_input() -> None:
    ranking = ["b", "b", "a"]
    grades = {"a": 2, "b": 1}
    before = (list(ranking), dict(grades))
    assert recall_at_k(tuple(ranking), grades, 2) == recall_at_k(ranking, grades, 2) == 1.0
    assert (ranking, grades) == before


BAD_K = [0, -1, True, False, 2.0, "5", None]


@pytest.mark.parametrize("k", BAD_K, ids=repr)
@pytest.mark.parametrize(
    "measure",
    [
        pytest.param(lambda k: recall_at_k(["a"], {"a": 1}, k), id="recall"),
        pytest.param(lambda k: precision_at_k(["a"], {"a": 1}, k), id="precision"),
        pytest.param(lambda k: hit_rate_at_k(["a"], {"a": 1}, k), id="hit_rate"),
        pytest.param(lambda k: ndcg_at_k(["a"], {"a": 1}, k), id="ndcg"),
        pytest.param(lambda k: dcg_at_k(["a"], {"a": 1}, k), id="dcg"),
        pytest.param(lambda k: ideal_dcg_at_k({"a": 1}, k), id="idcg"),
    ],
)
def test_invalid_k_is_rejected(measure, k: object) -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        measure(k)


@pytest.mark.parametrize("k", BAD_K, ids=repr)
def test_invalid_k_is_rejected_by_rr_at_k(k: object) -> None:
    if k is None:  # None means "uncut" for reciprocal_rank
        assert reciprocal_rank(["a"], {"a": 1}, k) == 1.0
        return
    with pytest.raises(ValueError, match="k must be a positive integer"):
        reciprocal_rank(["a"], {"a": 1}, k)  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -1, True])
def test_invalid_k_is_rejected_even_with_empty_input(k: object) -> None:
    """The check happens before any shortcut (no relevant module, empty ranking)."""
    for call in (recall_at_k, precision_at_k, hit_rate_at_k, ndcg_at_k):
        with pytest.raises(ValueError):
            call([], {}, k)  # type: ignore[operator]
    with pytest.raises(ValueError):
        reciprocal_rank([], {}, k)  # type: ignore[arg-type]


@given(grades=grades_strategy, ranking=ranking_strategy, k=st.sampled_from(K_VALUES))
@settings(max_examples=100, derandomize=True, deadline=None)
def test_measures_stay_in_unit_interval_and_are_monotone_in_k(grades: dict[str, int],
                                                              ranking: list[str],
                                                              k: int) -> None:
    for gain in Gain:
        assert 0.0 <= ndcg_at_k(ranking, grades, k, gain=gain) <= 1.0 + 1e-12
    recall = recall_at_k(ranking, grades, k)
    assert 0.0 <= recall <= 1.0
    assert recall <= recall_at_k(ranking, grades, k + 1)
    assert hit_rate_at_k(ranking, grades, k) <= hit_rate_at_k(ranking, grades, k + 1)
    assert reciprocal_rank(ranking, grades, k) <= reciprocal_rank(ranking, grades)
