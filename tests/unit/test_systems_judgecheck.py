"""--systems parsing, the ranx-style comparison table, and the judge self-check."""

from __future__ import annotations

import pytest

from evaluator.core.groundtruth import GroundTruth, Query
from evaluator.core.judge import judge
from evaluator.core.judgecheck import (
    MAX_FALSE_CREDIT,
    MAX_WRONG,
    MIN_SEPARATION,
    check_pairs,
    false_versions,
    judge_check,
    modules_needed,
    summarise,
    with_retrieved,
)
from evaluator.core.stats import compare
from evaluator.core.systems import (
    SystemScores,
    SystemSpec,
    parse_systems,
    system_table,
    system_tables,
)
from evaluator.errors import ConfigError


@pytest.mark.parametrize(("text", "labels"), [
    ("neuralmind", ["neuralmind"]),
    ("neuralmind,bm25", ["neuralmind", "bm25"]),
    (" neuralmind , bm25 ", ["neuralmind", "bm25"]),
    ("neuralmind,neuralmind:graph=graphify,neuralmind:backend=in_memory",
     ["neuralmind", "neuralmind:graph=graphify", "neuralmind:backend=in_memory"]),
    ("neuralmind,bm25,neuralmind:backend=in_memory:graph=graphify",
     ["neuralmind", "bm25", "neuralmind:backend=in_memory:graph=graphify"]),
])
def test_parse_systems(text, labels):
    assert [s.label for s in parse_systems(text)] == labels


@pytest.mark.parametrize(("text", "message"), [
    ("", "comma-separated"), ("neuralmind,,bm25", "comma-separated"),
    ("elastic", "unknown system 'elastic'"), ("neuralmind,bm25:k1=2", "unknown option"),
    ("neuralmind:graph", "unknown option"), ("neuralmind:graph=magic", "must be one of"),
    ("neuralmind,neuralmind", "twice"), ("neuralmind:graph=builtin:graph=graphify", "twice"),
    ("neuralmind,neuralmind:backend=in_memory:graph=builtin,"
     "neuralmind:graph=builtin:backend=in_memory", "twice"),
    ("bm25,neuralmind", "first system is the evaluated one"),
    ("neuralmind:graph=graphify", "first system is the evaluated one"),
])
def test_parse_systems_refuses(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_systems(text)


def test_spec_label_is_canonical():
    assert SystemSpec("neuralmind", {"graph": "graphify", "backend": "auto"}).label == \
        "neuralmind:backend=auto:graph=graphify"


RUN = {"alpha": 0.05, "min_effect": 0.02, "seed": 0}  # a run's settings, given explicitly


def scores(label, values, shapes=None):
    ids = [f"q{i}" for i in range(len(values))]
    return SystemScores(label, {q: {"ndcg@5": v, "mrr": v / 2, "context_tokens": 100 * v}
                                for q, v in zip(ids, values, strict=True)},
                        shapes or dict.fromkeys(ids, "focused"))


def test_system_table_means_best_and_significance():
    a = scores("neuralmind", [0.9] * 12)
    b = scores("bm25", [0.3] * 12)
    table = system_table([a, b], ["ndcg@5", "mrr", "context_tokens"],
                         lower_is_better=frozenset({"context_tokens"}), **RUN)
    (na, nm, nt), (ba, bm, bt) = table.cells
    assert bm.mean == pytest.approx(0.15)
    assert na.mean == pytest.approx(0.9) and ba.mean == pytest.approx(0.3)
    assert na.best and nm.best and not ba.best
    assert bt.best and not nt.best  # fewer tokens is better
    assert na.comparison is None
    assert ba.comparison == compare("ndcg@5", {q: m["ndcg@5"] for q, m in a.per_query.items()},
                                    {q: m["ndcg@5"] for q, m in b.per_query.items()})
    assert ba.comparison.significant and ba.marker == "▼" and ba.better is False
    assert bt.comparison.significant and bt.marker == "▲"  # fewer tokens: significantly better
    assert table.labels == ("neuralmind", "bm25") and table.n == 12


def test_system_table_ties_none_and_noise():
    a = scores("a", [0.5, 0.6, 0.4, 0.5])
    b = scores("b", [0.6, 0.5, 0.5, 0.4])
    table = system_table([a, b], ["ndcg@5", "missing"], **RUN)
    assert table.cells[0][0].best and table.cells[1][0].best  # equal means: both best
    assert table.cells[1][0].marker == ""  # within noise
    assert table.cells[0][1].mean is None and not table.cells[0][1].best


def test_system_table_per_shape():
    shapes = {"q0": "focused", "q1": "identity", "q2": "identity"}
    a = scores("a", [1.0, 0.0, 0.0], shapes)
    b = scores("b", [0.0, 1.0, 1.0], shapes)
    table = system_table([a, b], ["ndcg@5"], shape="identity", **RUN)
    assert table.n == 2
    assert table.cells[0][0].mean == 0.0 and table.cells[1][0].best


def test_system_table_needs_a_system():
    with pytest.raises(ValueError, match="no system"):
        system_table([], ["ndcg@5"], **RUN)


def _six_better(label: str) -> SystemScores:
    """12 questions (6 focused, 6 identity); against all-0.5, +0.1 on the 6 focused ones:
    the exact sign-flip p is 2/2^6 = 0.03125 over the focused shape and over all 12."""
    shapes = {f"q{i}": "focused" if i < 6 else "identity" for i in range(12)}
    return scores(label, [0.6] * 6 + [0.5] * 6, shapes)


def test_system_tables_holm_adjust_each_metric_across_systems_and_shapes():
    shapes = {f"q{i}": "focused" if i < 6 else "identity" for i in range(12)}
    base = scores("neuralmind", [0.5] * 12, shapes)
    b, c = _six_better("bm25"), _six_better("grep")
    raw = system_table([base, b, c], ["ndcg@5"], shape="focused", **RUN)
    assert raw.cells[1][0].comparison.p_value == pytest.approx(2 / 64)
    assert raw.cells[1][0].marker == "▲"  # a single unadjusted test is significant
    tables = system_tables([base, b, c], ["ndcg@5"], ["focused", "identity"],
                           lower_is_better=frozenset(), **RUN)
    assert [t.shape for t in tables] == [None, "focused", "identity"]
    # the family of ndcg@5: 2 systems × 3 tables = 6 tests, four at p = 2/64 (overall and
    # focused) and two at p = 1 (identity: no change): Holm gives 6 · 2/64 to all four
    overall, focused, _identity = tables
    for table in (overall, focused):
        cell = table.cells[1][0]
        assert cell.p_adjusted == pytest.approx(6 * 2 / 64)
        assert not cell.significant and cell.marker == ""
    assert tables[2].cells[1][0].p_adjusted == pytest.approx(1.0)
    assert overall.cells[0][0].p_adjusted is None  # the reference is not tested


def test_system_tables_honour_the_runs_alpha_and_min_effect():
    shapes = {f"q{i}": "focused" if i < 6 else "identity" for i in range(12)}
    base = scores("neuralmind", [0.5] * 12, shapes)
    systems = [base, _six_better("bm25"), _six_better("grep")]
    loose = system_tables(systems, ["ndcg@5"], ["focused"], lower_is_better=frozenset(),
                          alpha=0.2, min_effect=0.02, seed=0)
    assert loose[1].cells[1][0].marker == "▲"  # 0.125 < 0.2
    strict_effect = system_tables(systems, ["ndcg@5"], ["focused"],
                                  lower_is_better=frozenset(), alpha=0.2, min_effect=0.5,
                                  seed=0)
    assert strict_effect[1].cells[1][0].marker == ""  # |Δ| = 0.1 < 0.5


def gt(*queries: Query) -> GroundTruth:
    return GroundTruth(source="test", queries=tuple(queries))


def q(qid: str, grades: dict[str, int], facts=("alpha beta", "gamma delta")) -> Query:
    return Query(id=qid, question=f"question {qid}", shape="focused", grades=grades,
                 gold_facts=tuple(facts))


def test_check_pairs_pick_right_and_wrong_modules():
    truth = gt(q("a", {"a.py": 3, "a2.py": 2, "shared.py": 1}),
               q("b", {"b.py": 3, "a.py": 1}),
               q("c", {"shared.py": 3}))
    pairs, skipped = check_pairs(truth)
    assert skipped == []
    got = {p.query.id: (p.right_modules, p.wrong_module, p.wrong_from) for p in pairs}
    assert got["a"] == (("a.py", "a2.py"), "b.py", "b")  # shared.py is graded 1 for a
    assert got["b"] == (("b.py",), "shared.py", "c")
    assert got["c"] == (("shared.py",), "a.py", "a")
    assert modules_needed(truth) == ("a.py", "a2.py", "b.py", "shared.py")


def test_check_pairs_skip_queries_without_right_or_wrong():
    truth = gt(q("a", {"a.py": 1}), q("b", {"b.py": 3, "a.py": 0}))
    pairs, skipped = check_pairs(truth)
    assert pairs == []
    assert skipped == ["a", "b"]  # a: no grade >= 2; b: no other grade-3 module
    check = judge_check(truth, {}, lambda query, text: 1.0)
    assert check.separation is None and check.warning is not None


def test_judge_check_separation_and_warning():
    truth = gt(q("a", {"a.py": 3}), q("b", {"b.py": 3}))
    texts = {"a.py": "A", "b.py": "B"}

    def perfect(query, text):
        return 1.0 if text == query.id.upper() else 0.0

    check = judge_check(truth, texts, perfect)
    assert (check.right_mean, check.wrong_mean, check.separation) == (1.0, 0.0, 1.0)
    assert check.warning is None
    assert "1.00" in check.sentence
    blind = judge_check(truth, texts, lambda query, text: 0.5)
    assert blind.separation == 0.0
    assert blind.warning is not None and str(MIN_SEPARATION) in blind.warning


@pytest.mark.parametrize(("right", "wrong", "warned"), [
    (1.0, 0.0, False), (0.9, 0.1, False),  # at the limits: no warning
    (0.85, 0.15, True),  # separation 0.70 and wrong above 0.1
    (0.79, 0.0, True),   # separation below 0.8
    (1.0, 0.11, True),   # separation 0.89 but wrong above 0.1
])
def test_the_check_warns_below_its_limits(right, wrong, warned):
    truth = gt(q("a", {"a.py": 3}), q("b", {"b.py": 3}))
    texts = {"a.py": "A", "b.py": "B"}
    check = judge_check(truth, texts,
                        lambda query, text: right if text == query.id.upper() else wrong)
    assert (check.warning is not None) is warned
    if warned:
        assert any(str(limit) in check.warning for limit in (MIN_SEPARATION, MAX_WRONG))


@pytest.mark.parametrize(("fact", "expected"), [
    ("The default maximum age is 3600 seconds",
     ("The default maximum age is 3601 seconds", "The default maximum age is not 3600 seconds")),
    ("Catching Timeout will not catch ConnectTimeout",
     ("Catching ConnectTimeout will not catch Timeout",
      "Catching Timeout will catch ConnectTimeout")),
    ("TimestampSigner raises SignatureExpired after max_age",
     ("SignatureExpired raises TimestampSigner after max_age",)),
    ("escape replaces the characters",
     ("It is not true that escape replaces the characters",)),
    # an auxiliary is a whole word: not the start of "issue" or "hashed" (judge 4's check
    # made "is notsue" and "has nothed"); "cannot" is un-negated to "can"
    ("issue an access token pair", ("It is not true that issue an access token pair",)),
    ("compares with the hashed password", (
        "It is not true that compares with the hashed password",)),
    ("Values that cannot be serialised raise an error",
     ("Values that can be serialised raise an error",)),
])
def test_false_versions_are_deterministic_and_differ_in_one_way(fact, expected):
    assert false_versions(fact) == expected
    assert false_versions(fact) == false_versions(fact)


def test_false_versions_credited_by_the_judge_are_counted_and_warned():
    age, cache = "the default maximum age is 3600 seconds", "the cache always keeps 10 entries"
    truth = gt(q("a", {"a.py": 3}, facts=(age,)), q("b", {"b.py": 3}, facts=(cache,)))
    texts = {"a.py": "# the default maximum age is 3600 seconds\nmax_age = 3600",
             "b.py": "# the cache always keeps 10 entries\nsize = 10"}

    def score(query, text):
        return judge(text, query.gold_facts).faithfulness

    def careful(fact, text):
        return judge(text, [fact]).faithfulness == 1.0

    check = judge_check(truth, texts, score, careful)
    assert [(r.false_versions, r.false_credited) for r in check.rows] == [(2, 0), (1, 0)]
    assert check.false_credit == 0.0 and check.warning is None
    assert "credits 0 of 3 false versions" in check.sentence
    gullible = judge_check(truth, texts, score, lambda fact, text: True)
    assert gullible.false_credit == 1.0
    assert gullible.warning is not None and str(MAX_FALSE_CREDIT) in gullible.warning


def test_the_retrieved_contexts_score_is_reported_beside_the_check():
    truth = gt(q("a", {"a.py": 3}), q("b", {"b.py": 3}))
    check = judge_check(truth, {"a.py": "A", "b.py": "B"},
                        lambda query, text: 1.0 if text == query.id.upper() else 0.0)
    assert with_retrieved(check, []) is check
    seen = with_retrieved(check, [0.5, 0.25])
    assert seen.retrieved_mean == pytest.approx(0.375)
    assert "the retrieved contexts score 0.38" in seen.sentence
    assert summarise((), ["x"], retrieved_mean=0.5).retrieved_mean == 0.5


def test_a_query_without_gold_facts_is_skipped():
    truth = gt(q("a", {"a.py": 3}, facts=()), q("b", {"b.py": 3}))
    pairs, skipped = check_pairs(truth)
    assert skipped == ["a"] and [p.query.id for p in pairs] == ["b"]


def test_anchored_facts_have_no_false_versions_in_the_check():
    """An anchored fact's verdict is its span's presence, whatever its words say: its false
    versions would test nothing, so only the unanchored facts' are judged."""
    from dataclasses import replace

    age, cache = "the default maximum age is 3600 seconds", "the cache always keeps 10 entries"
    anchored = replace(q("a", {"a.py": 3}, facts=(age, cache)), evidence=("max_age = 3600", None))
    truth = gt(anchored, q("b", {"b.py": 3}, facts=(cache,)))
    texts = {"a.py": "max_age = 3600\n# the cache always keeps 10 entries",
             "b.py": "# the cache always keeps 10 entries\nsize = 10"}
    check = judge_check(truth, texts, lambda query, text: 1.0, lambda fact, text: True)
    assert [r.false_versions for r in check.rows] == [len(false_versions(cache))] * 2
