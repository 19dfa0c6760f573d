"""The results file's ``report`` block (issue 25): what ``comment --results`` needs to render
the report again, written and read back; a hostile block is refused with a clear message."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from evaluator.core.floors import DEFAULT_POLICY
from evaluator.core.results import ReportInputs, to_dict
from evaluator.core.results_reader import from_dict
from evaluator.errors import ResultsError
from tests.factories import make_results


def _saved():
    base = make_results(quality=0.9, seed=2)
    head = make_results(quality=0.5, seed=2)
    inputs = ReportInputs(baseline=base, source="main (0123456789ab)",
                          notes=("Both sides use the head's ground truth.",),
                          primary_metric="mrr", alpha=0.1, min_effect=0.03,
                          floors=DEFAULT_POLICY, changed_files=("pkg/mod_01.py",),
                          links={"server": "https://github.com", "repository": "o/r",
                                 "sha": "ab" * 20, "root": "."})
    return replace(head, report=inputs)


def test_the_report_block_round_trips():
    results = _saved()
    doc = json.loads(json.dumps(to_dict(results)))
    assert doc["report"]["baseline"]["queries"][0]["metrics"] == dict(
        results.report.baseline.queries[0].metrics)
    assert "report" not in doc["report"]["baseline"]
    back = from_dict(doc, "r.json")
    assert back.report == results.report


def test_a_file_without_the_block_reads_as_before():
    doc = to_dict(make_results())
    assert "report" not in doc
    assert from_dict(doc, "r.json").report is None


@pytest.mark.parametrize(("path", "value", "needle"), [
    (("floors", "aggregate", 0, "op"), "!=", "report.floors"),
    (("primary_metric",), "no-such-metric", "report.primary_metric"),
    (("alpha",), 2.0, "alpha must be between 0 and 1"),
    (("changed_files",), ["ok.py", "bad\n::error::x"], "control character"),
    (("links", "sha"), 5, "report.links.sha"),
    (("baseline",), {"shard": {}}, "sharded"),
])
def test_a_hostile_report_block_is_refused_naming_the_field(path, value, needle):
    doc = json.loads(json.dumps(to_dict(_saved())))
    target = doc["report"]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ResultsError, match=needle.replace(".", r"\.")):
        from_dict(doc, "r.json")
