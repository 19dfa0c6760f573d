"""The ranking figures of ``benchmarks/bench_history_choice.py`` (issue 24, round 7)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_history_choice.py"
_SPEC = importlib.util.spec_from_file_location("bench_history_choice", _PATH)
assert _SPEC is not None and _SPEC.loader is not None
bench = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(bench)
_fit, _score, auc, top_half = bench._fit, bench._score, bench.auc, bench.top_half


def test_auc_and_top_half() -> None:
    y = np.array([1, 0, 1, 0])
    assert auc(np.array([4.0, 3.0, 2.0, 1.0]), y) == 0.75
    assert auc(np.array([1.0, 1.0, 1.0, 1.0]), y) == 0.5  # ties count half
    assert auc(np.array([2.0, 9.0, 3.0, 8.0]), y) == 0.0
    assert top_half(np.array([4.0, 3.0, 2.0, 1.0]), y) == 0.5
    assert top_half(np.array([4.0, 1.0, 3.0, 2.0]), y) == 1.0


def test_the_fitted_score_ranks_a_separable_feature() -> None:
    x = np.array([[0.0, 5.0], [1.0, 5.0], [0.0, 6.0], [1.0, 6.0]] * 5)
    y = np.array([0, 1, 0, 1] * 5)
    scores = _score(_fit(x, y), x)
    assert auc(scores, y) == 1.0
