"""Cohen's kappa of benchmarks/bench_readers.py against hand-computed cases, and the second
reading of the judge's held-out labels against the first (same facts, same order)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_readers.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_readers", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_kappa_of_the_textbook_two_by_two_case() -> None:
    # 50 items: both yes 20, first yes second no 5, first no second yes 10, both no 15.
    # p_o = 35/50 = 0.7; p_e = (25*30 + 25*20) / 2500 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    pairs = [("y", "y")] * 20 + [("y", "n")] * 5 + [("n", "y")] * 10 + [("n", "n")] * 15
    assert _bench().cohen_kappa(pairs) == pytest.approx(0.4)


def test_kappa_of_a_three_label_case() -> None:
    # 10 items; first: 5 s, 2 p, 3 u; second: 4 s, 3 p, 3 u; 7 alike.
    # p_e = (5*4 + 2*3 + 3*3) / 100 = 0.35; kappa = (0.7 - 0.35) / 0.65 = 0.538461...
    pairs = ([("s", "s")] * 4 + [("s", "p")] + [("p", "p")] + [("p", "u")]
             + [("u", "u")] * 2 + [("u", "p")])
    assert _bench().cohen_kappa(pairs) == pytest.approx(0.35 / 0.65)


@pytest.mark.parametrize(("pairs", "kappa"), [
    ([("s", "s")] * 6, 1.0),                     # one label throughout, agreed: perfect
    ([("s", "u"), ("u", "s")], -1.0),            # every pair the other way round
    ([("s", "s"), ("u", "u")], 1.0),
])
def test_kappa_edge_cases(pairs: list[tuple[str, str]], kappa: float) -> None:
    assert _bench().cohen_kappa(pairs) == pytest.approx(kappa)


def test_kappa_of_no_pairs_is_refused() -> None:
    with pytest.raises(ValueError, match="no pairs"):
        _bench().cohen_kappa([])


def test_every_second_reading_labels_the_first_readings_facts_in_order() -> None:
    bench = _bench()
    readings = sorted(bench.SECOND.glob("*.json"))
    assert len(readings) >= 3
    for path in readings:
        second = json.loads(path.read_text(encoding="utf-8"))
        first = json.loads((bench.FIRST / path.name).read_text(encoding="utf-8"))
        pairs = bench.labelled_pairs(first, second)
        assert len(pairs) == 3 * len(first["facts"])
        labels = {"supported", "partial", "unsupported"}
        assert {a for a, _ in pairs} | {b for _, b in pairs} <= labels


def test_a_second_reading_of_other_facts_is_refused() -> None:
    bench = _bench()
    first = {"package": "x", "facts": [{"context": "x-1", "fact": "a", "label": "supported",
                                        "prev": "unsupported", "next": "unsupported"}]}
    second = {"package": "x", "labels": [{"context": "x-1", "fact": "b", "label": "supported",
                                          "prev": "unsupported", "next": "unsupported"}]}
    with pytest.raises(SystemExit, match="same order"):
        bench.labelled_pairs(first, second)
