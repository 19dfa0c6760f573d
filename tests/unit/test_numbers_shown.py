"""Numbers never shown as missing when they exist (issue 25): every compared metric has its
base, "Weak queries" states its threshold and lists only questions below it, worst first,
a question missing its grade-3 module is never ✅, and thin per-shape floors warn."""

from __future__ import annotations

import re
from dataclasses import replace

from evaluator.app import compare_with_baseline as compare
from evaluator.core.floors import DEFAULT_POLICY, FloorPolicy, thin_shapes
from evaluator.core.scoring import aggregate
from evaluator.render import render, render_text
from evaluator.report_views import WEAK_BELOW
from evaluator.settings import settings_for
from tests.factories import make_results, view_of


def _with_metric(results, name, value):
    rows = tuple(replace(q, metrics={**q.metrics, name: value}) for q in results.queries)
    return replace(results, queries=rows, overall=aggregate(rows))


def test_a_metric_reported_only_when_computed_shows_its_base():
    base = _with_metric(make_results(quality=0.9, seed=2), "faithfulness_n15", 0.574)
    head = _with_metric(make_results(quality=0.9, seed=2), "faithfulness_n15", 0.333)
    comparison = compare(head, base, "main", settings_for("evaluate", {}))
    report = render(view_of(head, comparison=comparison))
    [row] = [line for line in report.splitlines() if line.startswith("| Faithfulness (N-15)")]
    assert row.startswith("| Faithfulness (N-15) | 0.333 | 0.574 | ↓ −0.241 (worse) |"), row


def test_weak_queries_are_those_below_the_stated_threshold_worst_first():
    results = make_results(quality=0.6, seed=4)
    text = render_text(view_of(results))
    assert f"Weak queries (nDCG@5 below {WEAK_BELOW}, worst first):" in text
    listed = re.findall(r"^  - (q\d+) \(\S+\): nDCG@5 (\d\.\d{3})", text, re.M)
    below = sorted((q.metrics["ndcg@5"], q.id) for q in results.queries
                   if q.metrics["ndcg@5"] < WEAK_BELOW)
    assert 0 < len(below) < len(results.queries)
    assert [qid for qid, _ in listed] == [qid for _, qid in below][:10]
    values = [float(v) for _, v in listed]
    assert values == sorted(values) and max(values) < WEAK_BELOW


def test_a_question_missing_its_grade_3_module_is_never_a_tick():
    results = make_results(quality=0.6, seed=4)
    partial = [q for q in results.queries
               if q.metrics["hit_rate"] == 1 and q.diagnostics.missed_top]
    assert partial, "the fixture needs a hit that misses its grade-3 module"
    report = render(view_of(results))
    for q in partial:
        [summary] = [line for line in report.splitlines()
                     if line.startswith("<details><summary>") and f" {q.id} · " in line]
        assert "✅" not in summary and "⚠️" in summary, summary


def test_per_shape_floors_on_too_few_questions_warn_naming_shape_and_count():
    [warning] = thin_shapes(DEFAULT_POLICY, {"focused": 7, "identity": 2})
    assert "shape 'identity' has 2 questions" in warning and "hit_rate >= 0.7" in warning
    assert thin_shapes(FloorPolicy((), (), False), {"identity": 1}) == ()
