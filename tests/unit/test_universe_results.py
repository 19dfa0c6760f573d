"""The module universe in results: recorded, read back, and compared with the baseline's."""

from __future__ import annotations

from dataclasses import replace

import pytest

from evaluator.core.compare import universe_notes
from evaluator.core.results import to_dict
from evaluator.core.results_reader import from_dict
from evaluator.core.universe import UniverseSpec, select_universe
from evaluator.errors import ResultsError
from tests.factories import make_results

DEFAULT = select_universe(["a.py", "tests/test_a.py"]).describe()
OTHER = select_universe(["a.py", "tests/test_a.py"],
                        UniverseSpec(include=("**",), exclude=())).describe()


def _with(universe):
    results = make_results(quality=0.8, seed=3)
    return replace(results, run=replace(results.run, universe=universe))


def test_universe_round_trips_through_results_json():
    results = _with(DEFAULT)
    back = from_dict(to_dict(results), "results.json")
    assert back.run.universe == DEFAULT
    assert DEFAULT["modules"] == 1 and DEFAULT["left_out"] == 1


def test_results_without_universe_still_read():
    doc = to_dict(make_results(quality=0.8, seed=3))
    doc["run"].pop("universe", None)
    assert from_dict(doc, "old.json").run.universe == {}


def test_a_malformed_universe_is_named():
    doc = to_dict(_with(DEFAULT))
    doc["run"]["universe"] = {"include": "src/", "exclude": []}
    with pytest.raises(ResultsError, match=r"run\.universe\.include"):
        from_dict(doc, "bad.json")


@pytest.mark.parametrize(("base", "head", "needle"), [
    (DEFAULT, DEFAULT, None),
    (DEFAULT, OTHER, "another module universe"),
    ({}, DEFAULT, "records no module universe"),
    (DEFAULT, {}, None),
])
def test_baseline_must_share_the_universe(base, head, needle):
    notes = universe_notes(_with(base), _with(head))
    if needle is None:
        assert notes == []
    else:
        (note,) = notes
        assert needle in note and "not comparable" in note


def test_same_rules_different_counts_are_comparable():
    """A PR that adds a module changes the count, not the rules."""
    grown = DEFAULT | {"modules": 2}
    assert universe_notes(_with(DEFAULT), _with(grown)) == []
