"""History file (hostile input, bounded) and Mermaid chart sources (safe labels)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluator.core import chart, history, measures
from evaluator.core.history import HistoryError
from tests.factories import make_results


def _doc(entries: list[dict]) -> str:
    return json.dumps({"schema": history.SCHEMA, "version": 1, "entries": entries})


GOOD = {"commit": "0123abc", "date": "2026-01-02T03:04:05+00:00", "n": 18,
        "metrics": {"ndcg@5": 0.7, "recall@5": 0.8}}


def test_round_trip_and_append_replaces_same_commit():
    results = make_results(seed=3)
    entry = history.entry_for(results)
    assert entry is not None
    assert entry.commit == results.run.commit
    assert set(entry.metrics) <= set(measures.tracked())
    h = history.append(history.History(), entry)
    h = history.append(h, entry)
    assert len(h.entries) == 1
    again = history.parse(history.dumps(h), "h.json")
    assert again == h


def test_append_keeps_the_newest():
    h = history.History()
    for i in range(10):
        h = history.append(h, history.Entry(f"{i:07x}", "2026-01-01", 1, {"ndcg@5": i / 10}),
                           keep=4)
    assert [e.commit for e in h.entries] == [f"{i:07x}" for i in range(6, 10)]
    assert history.trend(h, "ndcg@5", 2) == (("0000008", 0.8), ("0000009", 0.9))


def test_a_faithfulness_trend_joins_only_entries_of_the_same_judge():
    new, old = "evaluator-judge 3 (terms+minilm)", "neuralmind.ragas 4.22"
    h = history.History()
    for i, judge in enumerate([None, old, new, old, new]):
        h = history.append(h, history.Entry(f"{i:07x}", "2026-01-01", 1,
                                            {"ndcg@5": i / 10, "faithfulness": i / 10}, judge))
    assert history.values(history.trend(h, "faithfulness", 9, judge=new)) == (0.2, 0.4)
    assert history.values(history.trend(h, "faithfulness", 9, judge=old)) == (0.1, 0.3)
    # Ranking metrics do not depend on the judge: every entry joins.
    assert len(history.trend(h, "ndcg@5", 9, judge=new)) == 5
    again = history.parse(history.dumps(h), "h.json")
    assert again == h and again.entries[0].judge is None and again.entries[2].judge == new


def test_an_entry_records_its_judge():
    from dataclasses import replace

    results = make_results(seed=3)
    results = replace(results, run=replace(results.run, judge="evaluator-judge 3 (terms)"))
    entry = history.entry_for(results)
    assert entry is not None and entry.judge == "evaluator-judge 3 (terms)"


def test_working_tree_results_have_no_entry():
    results = make_results(seed=3, commit="")
    assert history.entry_for(results) is None


@pytest.mark.parametrize(("text", "where"), [
    ("not json", "not JSON"),
    ("[]", "schema"),
    (json.dumps({"schema": "other", "version": 1, "entries": []}), "schema"),
    (json.dumps({"schema": history.SCHEMA, "version": 2, "entries": []}), "version"),
    (json.dumps({"schema": history.SCHEMA, "version": True, "entries": []}), "version"),
    (_doc([GOOD | {"commit": "<script>"}]), "entries[0].commit"),
    (_doc([GOOD | {"commit": "@admin"}]), "entries[0].commit"),
    (_doc([GOOD | {"date": "yesterday\n::error::x"}]), "entries[0].date"),
    (_doc([GOOD | {"n": -1}]), "entries[0].n"),
    (_doc([GOOD | {"judge": "x\n::error::pwned"}]), "entries[0].judge"),
    (_doc([GOOD | {"judge": 3}]), "entries[0].judge"),
    (_doc([GOOD | {"judge": "j" * 81}]), "entries[0].judge"),
    (_doc([GOOD | {"metrics": {"ndcg@5": float("nan")}}]), "ndcg@5"),
    (_doc([GOOD | {"metrics": {"ndcg@5": 1e300}}]), "ndcg@5"),
    (_doc([GOOD | {"metrics": {"ndcg@5": True}}]), "ndcg@5"),
    (_doc([GOOD | {"metrics": {"<b>x</b>": 0.5}}]), "unknown metric"),
    (_doc([GOOD] * (history.MAX_ENTRIES + 1)), "more than"),
    ("[" * 100_000 + "]" * 100_000, "not JSON"),
    (" " * (history.MAX_BYTES + 1), "larger than"),
])
def test_hostile_history_is_refused_with_the_place(text, where):
    with pytest.raises(HistoryError) as err:
        history.parse(text, "history.json")
    assert where in err.value.message
    assert "history.json" in err.value.message


def test_valid_history_parses():
    h = history.parse(_doc([GOOD, GOOD | {"commit": "f" * 40, "date": "2026-01-03"}]), "h")
    assert [e.commit for e in h.entries] == ["0123abc", "f" * 40]
    assert h.last(1)[0].date == "2026-01-03"


# ------------------------------------------------------------------ charts


def test_shape_chart_source():
    text = chart.shape_chart("nDCG@5", ["focused", "cross-file", "new"], [0.75, 0.5, None],
                             [0.8, 0.4, None])
    assert text == (
        "```mermaid\nxychart-beta\n"
        '    title "nDCG@5 by question shape (bars: this PR, line: base)"\n'
        '    x-axis ["focused", "cross-file"]\n'
        '    y-axis "nDCG@5" 0.000 --> 1.000\n'
        "    bar [0.750, 0.500]\n"
        "    line [0.800, 0.400]\n```")
    no_base = chart.shape_chart("nDCG@5", ["a", "b"], [0.75, 0.5], [0.8, None])
    assert "line" not in no_base
    assert "bars" not in no_base


def test_delta_chart_is_symmetric():
    text = chart.delta_chart("nDCG@5", ["q1", "q2"], [-0.289, 0.1])
    assert '"Δ nDCG@5" -0.300 --> 0.300' in text
    assert "bar [-0.289, 0.100]" in text


def test_trend_chart():
    text = chart.trend_chart("nDCG@5", [("0123abc", 0.7), ("4567def", 0.75)])
    assert 'x-axis ["0123abc", "4567def"]' in text
    assert "line [0.700, 0.750]" in text
    assert "last 2 commits" in text


@given(st.text(max_size=60))
def test_labels_cannot_escape(text):
    out = chart.label(text)
    assert 1 <= len(out) <= 24
    assert not set(out) & set('"`<>[]{}|\n\r\\;#&%')
    source = chart.shape_chart(text, [text, "x"], [0.1, 0.2])
    body = source.removeprefix("```mermaid\n").removesuffix("\n```")
    assert "```" not in body
    assert all(line.count('"') % 2 == 0 for line in body.splitlines())
