"""The verdict pieces: comparability, question moves, lead line, honest significance,
PR-touched questions, fingerprints, the exact test's floor (hand-computed and scipy)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats as sps

from evaluator.core.comparability import major_minor, mismatch_message, settings_differences
from evaluator.core.compare import compare_results
from evaluator.core.floors import FloorPolicy
from evaluator.core.moves import defining_module, question_moves, tally
from evaluator.core.stats import changes_needed, min_p_value, randomization_test
from evaluator.core.verdict import (
    comment_fingerprint,
    lead_line,
    root_relative,
    significance,
    significance_sentences,
    touched_questions,
)
from tests.factories import make_results, results_from_rankings

LENIENT = FloorPolicy(aggregate=(), per_shape=(), zero_miss=False)
GRADES = {f"q{i}": {f"pkg/m{i}.py": 3, f"pkg/h{i}.py": 1} for i in range(8)}


def _ranking(i: int, rank: int | None) -> list[str]:
    """Question i's ranking with its grade-3 module at ``rank`` (None: not retrieved)."""
    filler = [f"pkg/x{j}.py" for j in range(6)]
    if rank is not None:
        filler.insert(rank - 1, f"pkg/m{i}.py")
    return filler


def _runs(head_ranks: dict[int, int | None]) -> tuple:
    base = results_from_rankings({f"q{i}": _ranking(i, 1) for i in range(8)}, grades=GRADES,
                                 policy=LENIENT)
    head = results_from_rankings({f"q{i}": _ranking(i, head_ranks.get(i, 1)) for i in range(8)},
                                 grades=GRADES, policy=LENIENT)
    return base, head


# ------------------------------------------------------------------ comparability


def test_identical_settings_are_comparable():
    base, head = _runs({})
    assert settings_differences(base.run, head.run) == ()


@pytest.mark.parametrize(("field", "base_value", "head_value", "name"), [
    ("backend", "in_memory", "turbovec", "backend"),
    ("model_fingerprint", "aaaa", "bbbb", "model"),
    ("model_fingerprint", None, "bbbb", "model"),
    ("graph_source", "builtin", "graphify", "graph source"),
    ("neuralmind_version", "4.21.0", "4.22.1", "NeuralMind version"),
    ("k_values", (5,), (1, 5), "k values"),
    ("gain", "linear", "exponential", "gain"),
    ("threshold", 2, 1, "relevance threshold"),
    ("judge", "ragas-1", "ragas-2", "judge"),
])
def test_each_setting_difference_is_named(field, base_value, head_value, name):
    base, head = _runs({})
    diffs = settings_differences(replace(base.run, **{field: base_value}),
                                 replace(head.run, **{field: head_value}))
    assert [d.setting for d in diffs] == [name]
    assert name in mismatch_message(diffs)


def test_a_baseline_that_records_no_judge_is_not_comparable():
    """Results without a judge were scored by NeuralMind's judge (issue 12 replaced it as
    the headline), so the old exemption for a judge recorded on one side only is gone."""
    base, head = _runs({})
    diffs = settings_differences(replace(base.run, judge=None),
                                 replace(head.run, judge="evaluator-judge 3 (terms+minilm)"))
    assert [d.message for d in diffs] == [
        "judge: baseline not recorded, head evaluator-judge 3 (terms+minilm)"]
    old = settings_differences(replace(base.run, judge="neuralmind.ragas 4.22"),
                               replace(head.run, judge="evaluator-judge 3 (terms+minilm)"))
    assert [d.setting for d in old] == ["judge"]


def test_patch_versions_and_k_order_do_not_matter():
    base, head = _runs({})
    diffs = settings_differences(replace(base.run, neuralmind_version="4.22.0", k_values=(5, 1)),
                                 replace(head.run, neuralmind_version="4.22.7", k_values=(1, 5)))
    assert diffs == ()
    assert major_minor("v10.3.2rc1") == "10.3"
    assert major_minor("dev") == "dev"


def test_several_differences_listed_in_order():
    base, head = _runs({})
    diffs = settings_differences(replace(base.run, backend="in_memory", gain="linear"),
                                 head.run)
    assert [d.setting for d in diffs] == ["backend", "gain"]
    assert diffs[0].message == "backend: baseline in_memory, head turbovec"


# ------------------------------------------------------------------ exact test floor


@pytest.mark.parametrize(("m", "expected"), [(0, 1.0), (1, 1.0), (2, 0.5), (3, 0.25),
                                             (5, 0.0625), (6, 0.03125), (10, 2 / 1024)])
def test_min_p_value_hand_computed(m, expected):
    assert min_p_value(m) == expected


@pytest.mark.parametrize("m", [2, 3, 4, 5, 6, 7])
def test_min_p_value_is_reached_by_equal_deltas_and_matches_scipy(m):
    deltas = [-0.3] * m  # all the same sign: only the observed and mirror assignment tie
    assert randomization_test(deltas) == pytest.approx(min_p_value(m))
    base = np.full(m, 0.8)
    head = base + np.array(deltas)
    res = sps.permutation_test((head, base), lambda h, b, axis: np.mean(h - b, axis=axis),
                               permutation_type="samples", vectorized=True,
                               n_resamples=np.inf, alternative="two-sided")
    assert float(res.pvalue) == pytest.approx(min_p_value(m))


@pytest.mark.parametrize("m", range(2, 9))
def test_no_assignment_goes_below_the_floor(m):
    """Brute force over distinct magnitudes: every p is at least 2/2^m."""
    for signs in itertools.product((1, -1), repeat=m):
        deltas = [s * (k + 1) / 10 for s, k in zip(signs, range(m), strict=True)]
        assert randomization_test(deltas) >= min_p_value(m) - 1e-15


@pytest.mark.parametrize(("alpha", "needed"), [(0.05, 6), (0.01, 8), (0.1, 5), (0.5, 3),
                                               (0.0625, 6), (0.06251, 5)])
def test_changes_needed(alpha, needed):
    assert changes_needed(alpha) == needed
    assert min_p_value(needed) < alpha <= min_p_value(needed - 1) or needed == 2
    assert needed == math.floor(1 + math.log2(1 / alpha)) + 1


# ------------------------------------------------------------------ moves and lead line


def test_one_question_regression_is_a_fact_not_noise():
    base, head = _runs({3: None})
    moves = question_moves(base, head)
    first = moves[0]
    assert (first.id, first.direction, first.rank_before, first.rank_after) == (
        "q3", "worse", 1, None)
    assert first.module == "pkg/m3.py"
    assert first.left == ("pkg/m3.py",)
    assert first.entered == ("pkg/x4.py",)
    # exponential gain: grade-3 module at rank 1, the grade-1 module never retrieved
    assert first.before == pytest.approx(7 / (7 + 1 / math.log2(3)))
    assert first.after == 0.0
    assert tally(moves) == tally(moves[::-1])
    counts = tally(moves)
    assert (counts.worse, counts.better, counts.unchanged) == (1, 0, 7)
    comparison = compare_results(base, head, source="base", metrics=["ndcg@5"])
    sig = significance(comparison, moves)
    assert (sig.n, sig.changed, sig.p_value, sig.floor, sig.needed) == (8, 1, 1.0, 1.0, 6)
    assert sig.detectable is None
    text = " ".join(significance_sentences(sig, "nDCG@5"))
    assert "noise" not in text
    assert "Across these 8 questions, the change in nDCG@5 is not significant (1 changed, " \
           "p = 1.000)" in text
    assert "at least 6 changed questions" in text


def test_worst_first_ordering():
    _base, head = _runs({0: 2, 1: None, 2: 4})
    base2 = results_from_rankings({f"q{i}": _ranking(i, 3 if i == 5 else 1) for i in range(8)},
                                  grades=GRADES, policy=LENIENT)
    moves = question_moves(base2, head)
    assert [m.id for m in moves if m.changed] == ["q1", "q2", "q0", "q5"]
    assert [m.direction for m in moves if m.changed] == ["worse", "worse", "worse", "better"]


def test_defining_module_tie_goes_to_the_best_ranked():
    base = results_from_rankings({"q": ["b.py", "a.py"]}, grades={"q": {"a.py": 3, "b.py": 3}},
                                 policy=LENIENT)
    assert defining_module(base.queries[0], base.queries[0].ranked_modules) == ("b.py", 3)
    assert defining_module(base.queries[0]) == ("a.py", 3)


def test_lead_line_formats():
    assert lead_line(passed=False, label="nDCG@5", base_value=0.786, head_value=0.770,
                     counts=tally([])) == "❌ 0 questions worse · 0 better · 0 unchanged — " \
                                          "nDCG@5 0.786 → 0.770"
    base, head = _runs({3: None})
    counts = tally(question_moves(base, head))
    line = lead_line(passed=False, label="nDCG@5", base_value=0.786, head_value=0.770,
                     counts=counts)
    assert line == "❌ 1 question worse · 0 better · 7 unchanged — nDCG@5 0.786 → 0.770"
    assert lead_line(passed=True, label="nDCG@5", base_value=0.7, head_value=0.6,
                     counts=counts).startswith("⚠️ 1 question worse")
    assert lead_line(passed=True, label="nDCG@5", head_value=0.5, n_questions=18) == \
        "✅ 18 questions · all floors met — nDCG@5 0.500"
    assert lead_line(passed=False, label="nDCG@5", head_value=None, n_questions=1,
                     missed=2) == "❌ 1 question · 2 floors missed — nDCG@5 n/a"


def test_many_question_drop_is_significant_with_a_figure():
    base, head = _runs(dict.fromkeys(range(8)))
    moves = question_moves(base, head)
    comparison = compare_results(base, head, source="base", metrics=["ndcg@5"])
    sig = significance(comparison, moves)
    assert sig.changed == 8
    assert sig.p_value == pytest.approx(2 / 2**8)
    assert sig.significant
    text = significance_sentences(sig, "nDCG@5")
    assert text[0] == ("Across these 8 questions, the change in nDCG@5 is significant "
                       "(8 changed, p = 0.008).")


def test_sentences_when_nothing_changed():
    base, head = _runs({})
    comparison = compare_results(base, head, source="base", metrics=["ndcg@5"])
    sig = significance(comparison, question_moves(base, head))
    assert significance_sentences(sig, "nDCG@5") == (
        "Across these 8 questions, the change in nDCG@5 is not significant "
        "(0 changed, p = 1.000).",)


# ------------------------------------------------------------------ touched files


def test_touched_questions_grade_at_least_one_and_keep_move_order():
    base, head = _runs({3: None, 5: 2})
    moves = question_moves(base, head)
    touched = touched_questions(head, ["pkg/m5.py", "pkg/h3.py", "README.md", "pkg/x1.py"],
                                moves)
    assert [(t.id, t.files) for t in touched] == [("q3", (("pkg/h3.py", 1),)),
                                                  ("q5", (("pkg/m5.py", 3),))]
    assert touched[0].move is not None
    assert touched[0].move.direction == "worse"
    assert touched_questions(head, ["pkg/m5.py"])[0].move is None


def test_root_relative():
    files = ["sub/pkg/a.py", "other/b.py", "sub/c.py", "sub/c.py"]
    assert root_relative(files, "sub") == ("pkg/a.py", "c.py")
    assert root_relative(files, ".") == ("sub/pkg/a.py", "other/b.py", "sub/c.py")


# ------------------------------------------------------------------ fingerprint


def test_fingerprint_changes_with_metrics_or_verdict_only():
    a = make_results(seed=4)
    b = make_results(seed=4)
    assert comment_fingerprint(a, passed=True) == comment_fingerprint(b, passed=True)
    assert comment_fingerprint(a, passed=True) != comment_fingerprint(a, passed=False)
    c = make_results(seed=5)
    assert comment_fingerprint(a, passed=True) != comment_fingerprint(c, passed=True)
    assert comment_fingerprint(a, passed=True, base=c) != comment_fingerprint(a, passed=True)
    later = replace(a, run=replace(a.run, started_at="2027-01-01T00:00:00+00:00"))
    assert comment_fingerprint(later, passed=True) == comment_fingerprint(a, passed=True)
    assert len(comment_fingerprint(a, passed=True)) == 16


def test_require_comparable_refuses_or_warns():
    from evaluator.core.comparability import require_comparable
    from evaluator.errors import EXIT_INPUT, InputError

    base, head = _runs({})
    assert require_comparable(base.run, head.run) == ()
    other = replace(base.run, backend="in_memory", model_fingerprint=None)
    with pytest.raises(InputError) as err:
        require_comparable(other, head.run)
    assert err.value.exit_code == EXIT_INPUT
    assert "model: baseline not recorded, head 5f0c2a9be1d34c77" in err.value.message
    assert "backend: baseline in_memory, head turbovec" in err.value.message
    assert "baseline-mismatch: warn" in str(err.value)
    assert [d.setting for d in require_comparable(other, head.run, mismatch="warn")] == [
        "model", "backend"]
    with pytest.raises(InputError, match="baseline-mismatch must be one of"):
        require_comparable(other, head.run, mismatch="ignore")


def test_step_outputs():
    from evaluator.core.verdict import step_outputs

    base, head = _runs({3: None, 5: 2})
    comparison = compare_results(base, head, source="base", metrics=["ndcg@5"])
    out = step_outputs(passed=False, comparison=comparison, comment_id=42)
    assert out == {"verdict": "fail", "comment-id": "42", "questions-worse": "2",
                   "questions-better": "0", "questions-unchanged": "6",
                   "primary-delta": f"{comparison.primary.delta:.4f}"}
    assert float(out["primary-delta"]) < 0
    assert step_outputs(passed=True, comparison=None) == {
        "verdict": "pass", "comment-id": "", "questions-worse": "", "questions-better": "",
        "questions-unchanged": "", "primary-delta": ""}


def test_question_lines_json_and_yaml():
    from evaluator.core.verdict import question_lines

    text = ('{\n  "queries": [\n    {\n      "id": "focused-01",\n      "question": "x"\n'
            '    },\n    {"id": "q\\"2", "question": "has \\"id\\": \\"fake\\" inside"}\n  ]\n}\n')
    lines = question_lines(text)
    assert lines["focused-01"] == 4
    assert lines['q"2'] == 7
    yaml = "queries:\n  - id: alpha\n    question: a\n  - id: 'beta'  # note\n"
    assert question_lines(yaml) == {"alpha": 2, "beta": 4}


def test_worse_annotations_name_line_and_module():
    from evaluator.core.verdict import worse_annotations

    base, head = _runs({3: None})
    comparison = compare_results(base, head, source="base", metrics=["ndcg@5"])
    [(qid, line, message)] = worse_annotations(comparison, {"q3": 17})
    assert (qid, line) == ("q3", 17)
    assert "pkg/m3.py rank #1 → not retrieved" in message
    assert worse_annotations(comparison, {})[0][1] is None


def test_fingerprint_follows_the_baseline_through_the_comparison():
    base, head = _runs({})
    worse_base = results_from_rankings({f"q{i}": _ranking(i, 2) for i in range(8)},
                                       grades=GRADES, policy=LENIENT)
    one = compare_results(base, head, source="b", metrics=["ndcg@5"])
    two = compare_results(worse_base, head, source="b", metrics=["ndcg@5"])
    assert comment_fingerprint(head, passed=True, comparison=one) != \
        comment_fingerprint(head, passed=True, comparison=two)
    assert comment_fingerprint(head, passed=True, comparison=one) == \
        comment_fingerprint(head, passed=True, comparison=compare_results(
            base, head, source="other label", metrics=["ndcg@5"]))


def test_stored_worse_and_better_follow_the_metrics_direction():
    """A lower-is-better primary metric: a drop is *better*, in the stored counts (the
    section table) exactly as in the lead line's tally (they disagreed before)."""
    from dataclasses import replace as dc_replace

    base, head = _runs({})
    rows = list(head.queries)
    rows[0] = dc_replace(rows[0], metrics={**rows[0].metrics, "contradiction": 0.0})
    base_rows = list(base.queries)
    base_rows[0] = dc_replace(base_rows[0], metrics={**base_rows[0].metrics,
                                                      "contradiction": 0.5})
    head, base = dc_replace(head, queries=tuple(rows)), dc_replace(base, queries=tuple(base_rows))
    comparison = compare_results(base, head, source="base", metrics=["contradiction"],
                                 primary_metric="contradiction")
    counts = tally(comparison.moves)
    assert (comparison.worse, comparison.better) == (counts.worse, counts.better) == (0, 1)
