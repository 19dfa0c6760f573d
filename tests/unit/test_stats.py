"""Tests for evaluator.core.stats: hand-computed cases, an exact-fraction reference, scipy."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from evaluator.core.stats import (
    Comparison,
    bootstrap_interval,
    compare,
    holm_adjusted,
    minimum_detectable_effect,
    paired_deltas,
    randomization_test,
)

# ---------------------------------------------------------------------------------------------
# helpers


def reference_p(deltas: list[Fraction]) -> Fraction:
    """Brute-force sign-flip p-value in exact rational arithmetic (ties are exact)."""
    observed = abs(sum(deltas, Fraction(0)))
    hits = 0
    for signs in itertools.product((1, -1), repeat=len(deltas)):
        if abs(sum((s * d for s, d in zip(signs, deltas, strict=True)), Fraction(0))) >= observed:
            hits += 1
    return Fraction(hits, 2 ** len(deltas))


def scipy_exact_p(base: list[float], head: list[float]) -> float:
    """scipy's exact paired permutation test (swap base/head within each query)."""
    result = sps.permutation_test(
        (np.array(head), np.array(base)),
        lambda h, b, axis: np.mean(h - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(result.pvalue)


def paired_runs(deltas: list[float], *, seed: int = 0) -> tuple[dict[str, float], dict[str, float]]:
    rng = random.Random(seed)
    base = {f"q{i:02d}": rng.uniform(0.3, 0.7) for i in range(len(deltas))}
    head = {qid: base[qid] + d for qid, d in zip(sorted(base), deltas, strict=True)}
    return base, head


# ---------------------------------------------------------------------------------------------
# paired_deltas


def test_paired_deltas_pairs_sorts_and_skips_missing() -> None:
    base = {"b": 0.5, "a": 0.25, "c": None, "d": 0.75, "only_base": 1.0}
    head = {"d": 0.5, "a": 0.75, "c": 0.5, "b": None, "only_head": 0.0}
    ids, deltas = paired_deltas(base, head)
    assert ids == ["a", "d"]
    assert deltas == [0.5, -0.25]


def test_paired_deltas_empty_and_disjoint() -> None:
    assert paired_deltas({}, {}) == ([], [])
    assert paired_deltas({"a": 1.0}, {"b": 1.0}) == ([], [])


def test_paired_deltas_rejects_nan() -> None:
    with pytest.raises(ValueError, match="finite"):
        paired_deltas({"a": math.nan}, {"a": 0.5})


# ---------------------------------------------------------------------------------------------
# randomization_test: hand-computed


def test_two_queries_hand_computed() -> None:
    # ±1±2 → sums {3, 1, −1, −3}; |sum| ≥ 3 in 2 of 4.
    assert randomization_test([1.0, 2.0]) == 0.5


def test_five_equal_deltas_hand_computed() -> None:
    # Only all-plus and all-minus reach |sum| = 0.5 (float ties absorbed): 2 / 32.
    assert randomization_test([0.1] * 5) == 2 / 32


def test_cancelling_deltas_give_one() -> None:
    assert randomization_test([1.0, -1.0]) == 1.0


def test_degenerate_inputs_give_one() -> None:
    assert randomization_test([]) == 1.0
    assert randomization_test([0.0, 0.0, 0.0]) == 1.0
    assert randomization_test([0.3]) == 1.0
    assert randomization_test([-0.3]) == 1.0
    assert randomization_test([0.0] * 10 + [0.7]) == 1.0


def test_zero_deltas_do_not_change_p() -> None:
    assert randomization_test([0.0, 1.0, 0.0, 2.0]) == 0.5
    # 40 zeros + 2 non-zero: still exact (only non-zero deltas are enumerated).
    assert randomization_test([0.0] * 40 + [1.0, 2.0]) == 0.5


def test_float_ties_count_as_ties() -> None:
    # (.1, .2, .3, −.2): observed |sum| = .4; by hand 8 of 16 assignments reach |sum| ≥ .4,
    # four of them exactly .4 in real arithmetic but computed in different float orders.
    assert randomization_test([0.1, 0.2, 0.3, -0.2]) == 0.5
    # (.1, .2, .3): only all-plus / all-minus reach .6 (−.1−.2+.3 = 0 is not a tie).
    assert randomization_test([0.1, 0.2, 0.3]) == 2 / 8


def test_integer_ties_hand_computed() -> None:
    # ±1±1±2: sums 4, 2, 2, 0, 0, −2, −2, −4 → |sum| ≥ 4 in 2 of 8.
    assert randomization_test([1.0, 1.0, 2.0]) == 0.25
    # ±1±2±3: |sum| = 6 only for all-plus / all-minus.
    assert randomization_test([1.0, 2.0, 3.0]) == 0.25
    # ±1±1±1±1 with observed 2 (1,1,1,−1): |sum| ≥ 2 for sums ±4 (2) and ±2 (8) → 10/16.
    assert randomization_test([1.0, 1.0, 1.0, -1.0]) == 10 / 16


def test_minimum_exact_p_is_two_over_two_to_the_n() -> None:
    assert randomization_test([0.05] * 20) == 2 / 2**20


def test_validation() -> None:
    with pytest.raises(ValueError, match="finite"):
        randomization_test([0.1, math.nan])
    with pytest.raises(ValueError, match="finite"):
        randomization_test([0.1, math.inf])
    with pytest.raises(ValueError, match="samples"):
        randomization_test([0.1, 0.2], samples=0)
    with pytest.raises(ValueError, match="exact_limit"):
        randomization_test([0.1, 0.2], exact_limit=-1)


# ---------------------------------------------------------------------------------------------
# randomization_test: exact reference and scipy


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-20, max_value=20), max_size=10))
def test_exact_matches_rational_brute_force(steps: list[int]) -> None:
    # Deltas on a 0.05 grid, like differences of graded metrics: lots of exact ties.
    p = randomization_test([k * 0.05 for k in steps])
    expected = reference_p([Fraction(k, 20) for k in steps]) if steps else Fraction(1)
    assert p == pytest.approx(float(expected), abs=1e-12)
    assert 0.0 < p <= 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(min_value=-20, max_value=20), min_size=1, max_size=14))
def test_p_is_invariant_to_order_sign_and_scale(steps: list[int]) -> None:
    deltas = [k * 0.05 for k in steps]
    p = randomization_test(deltas)
    assert randomization_test(deltas[::-1]) == pytest.approx(p, abs=1e-12)
    assert randomization_test([-d for d in deltas]) == pytest.approx(p, abs=1e-12)
    assert randomization_test([2 * d for d in deltas]) == pytest.approx(p, abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_exact_matches_scipy_permutation_test(seed: int) -> None:
    rng = random.Random(seed)
    n = 2 + seed % 11  # n = 2 … 12
    base = [rng.uniform(0.0, 1.0) for _ in range(n)]
    head = [b + rng.gauss(0.05, 0.15) for b in base]
    ids = [f"q{i:02d}" for i in range(n)]
    _, deltas = paired_deltas(dict(zip(ids, base, strict=True)), dict(zip(ids, head, strict=True)))
    assert randomization_test(deltas) == pytest.approx(scipy_exact_p(base, head), abs=1e-9)


def _thirty_deltas() -> list[float]:
    rng = random.Random(2024)
    return [rng.gauss(0.02, 0.12) for _ in range(30)]


def test_monte_carlo_above_exact_limit_matches_exact_value() -> None:
    deltas = _thirty_deltas()
    exact = randomization_test(deltas, exact_limit=30)
    assert (exact * 2**30) == pytest.approx(round(exact * 2**30), abs=1e-6)  # a multiple of 2^-30
    assert 0.05 < exact < 0.9  # a p-value in the interesting range, not a trivial one
    mc = randomization_test(deltas)  # n = 30 > exact_limit = 20 → Monte-Carlo
    assert mc * 100_001 == pytest.approx(round(mc * 100_001), abs=1e-6)  # (count + 1)/(B + 1)
    assert mc == pytest.approx(exact, abs=0.01)  # MC standard error ≈ 0.0016


def test_monte_carlo_matches_scipy_sampled_permutation_test() -> None:
    deltas = _thirty_deltas()
    ours = randomization_test(deltas)
    theirs = sps.permutation_test(
        (np.array(deltas), np.zeros(len(deltas))),
        lambda h, b, axis: np.mean(h - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=100_000,
        rng=np.random.default_rng(0),
    ).pvalue
    assert ours == pytest.approx(float(theirs), abs=0.01)


def test_monte_carlo_is_deterministic_per_seed() -> None:
    deltas = _thirty_deltas()
    first = randomization_test(deltas, samples=20_000, seed=7)
    assert randomization_test(deltas, samples=20_000, seed=7) == first
    other = randomization_test(deltas, samples=20_000, seed=8)
    assert other != first
    assert other == pytest.approx(first, abs=0.02)


def test_monte_carlo_handles_more_than_53_deltas() -> None:
    # More signs than one random() call provides: several 53-bit words per assignment.
    deltas = [0.01 * ((i % 7) - 2) for i in range(60)]
    p = randomization_test(deltas, samples=5_000)
    assert p == randomization_test(deltas, samples=5_000)
    big = randomization_test([0.1] * 60, samples=2_000)
    assert big == 1 / 2_001  # only the observed assignment itself reaches |sum| = 6


def test_exact_at_n20_is_exact_and_cheap() -> None:
    deltas = [random.Random(5).gauss(0.03, 0.1) for _ in range(20)]
    p = randomization_test(deltas)
    assert p * 2**20 == pytest.approx(round(p * 2**20), abs=1e-6)
    assert p == randomization_test(deltas, seed=123)  # exact: the seed plays no part


# ---------------------------------------------------------------------------------------------
# bootstrap_interval


def test_bootstrap_empty_single_and_constant() -> None:
    assert bootstrap_interval([]) == (0.0, 0.0)
    assert bootstrap_interval([0.3]) == (0.3, 0.3)
    assert bootstrap_interval([0.1] * 20) == (0.1, 0.1)


def test_bootstrap_contains_mean_and_is_deterministic() -> None:
    rng = random.Random(11)
    deltas = [rng.gauss(0.04, 0.1) for _ in range(20)]
    mean = sum(deltas) / len(deltas)
    low, high = bootstrap_interval(deltas)
    assert low < mean < high
    assert bootstrap_interval(deltas) == (low, high)
    assert bootstrap_interval(deltas, seed=1) != (low, high)
    narrow = bootstrap_interval(deltas, level=0.5)
    assert low < narrow[0] < narrow[1] < high


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_bootstrap_matches_scipy_percentile(seed: int) -> None:
    rng = random.Random(100 + seed)
    deltas = [rng.gauss(0.03, 0.12) for _ in range(20)]
    ours = bootstrap_interval(deltas, samples=10_000, seed=seed)
    ci = sps.bootstrap(
        (np.array(deltas),),
        np.mean,
        method="percentile",
        n_resamples=10_000,
        confidence_level=0.95,
        vectorized=True,
        rng=np.random.default_rng(seed),
    ).confidence_interval
    se = float(np.std(deltas, ddof=1)) / math.sqrt(len(deltas))
    # Two independent Monte-Carlo runs: endpoints agree to a small fraction of the SE.
    assert ours[0] == pytest.approx(float(ci.low), abs=0.15 * se)
    assert ours[1] == pytest.approx(float(ci.high), abs=0.15 * se)


def test_bootstrap_validation() -> None:
    with pytest.raises(ValueError, match="level"):
        bootstrap_interval([0.1, 0.2], level=1.0)
    with pytest.raises(ValueError, match="samples"):
        bootstrap_interval([0.1, 0.2], samples=0)
    with pytest.raises(ValueError, match="finite"):
        bootstrap_interval([math.nan])


# ---------------------------------------------------------------------------------------------
# compare


def test_compare_significant_improvement() -> None:
    rng = random.Random(3)
    base, head = paired_runs([0.1 + rng.uniform(-0.02, 0.02) for _ in range(20)])
    result = compare("ndcg@5", base, head)
    assert isinstance(result, Comparison)
    assert result.metric == "ndcg@5"
    assert result.n == 20
    assert result.verdict == "significant"
    assert result.significant
    assert result.p_value == 2 / 2**20
    assert result.delta == pytest.approx(result.head_mean - result.base_mean, abs=1e-12)
    assert result.ci_low < result.delta < result.ci_high


def test_compare_significant_regression() -> None:
    base, head = paired_runs([-0.1] * 20)
    result = compare("mrr", base, head)
    assert result.verdict == "significant"
    assert result.delta == pytest.approx(-0.1)


def test_compare_within_noise_large_p() -> None:
    base, head = paired_runs([0.3, -0.25] * 10)  # mean +0.025 ≥ min_effect, but noisy
    result = compare("recall@5", base, head)
    assert result.delta == pytest.approx(0.025)
    assert result.p_value > 0.5
    assert not result.significant
    assert result.verdict == "not significant"
    assert result.ci_low < 0.0 < result.ci_high


def test_compare_within_noise_tiny_effect() -> None:
    base, head = paired_runs([0.01] * 20)  # consistent, so p is tiny, but below min_effect
    result = compare("hit_rate", base, head)
    assert result.p_value < 1e-5
    assert not result.significant
    assert result.verdict == "not significant"
    assert compare("hit_rate", base, head, min_effect=0.005).verdict == "significant"


def test_compare_min_effect_boundary_tolerates_rounding() -> None:
    base, head = paired_runs([0.02] * 20)  # head − base rounds to 0.02 ± 1 ulp per query
    assert compare("m", base, head, min_effect=0.02).verdict == "significant"


def test_compare_no_data() -> None:
    result = compare("mrr", {"a": None, "b": 0.4}, {"a": 0.5, "c": 0.3})
    assert result == Comparison(
        metric="mrr", n=0, base_mean=0.0, head_mean=0.0, delta=0.0, p_value=1.0,
        ci_low=0.0, ci_high=0.0, significant=False, verdict="no data",
    )


def test_compare_means_are_over_paired_queries_only() -> None:
    base = {"a": 0.2, "b": 0.4, "c": 0.9}
    head = {"a": 0.3, "b": 0.6, "c": None, "d": 1.0}
    result = compare("m", base, head)
    assert result.n == 2
    assert result.base_mean == pytest.approx(0.3)
    assert result.head_mean == pytest.approx(0.45)
    assert result.delta == pytest.approx(0.15)
    assert result.p_value == 0.5  # both deltas positive: 2 of 4 assignments


def test_compare_is_deterministic_and_validates() -> None:
    base, head = paired_runs([0.05, -0.02, 0.08, 0.01, 0.0, 0.03] * 4)
    assert compare("m", base, head, seed=4) == compare("m", base, head, seed=4)
    with pytest.raises(ValueError, match="alpha"):
        compare("m", base, head, alpha=0.0)
    with pytest.raises(ValueError, match="min_effect"):
        compare("m", base, head, min_effect=-0.1)


# ---------------------------------------------------------------------------------------------
# minimum_detectable_effect


def test_mde_hand_formula() -> None:
    z975, z80 = 1.959963984540054, 0.8416212335729143
    assert minimum_detectable_effect(0.10, 20) == pytest.approx((z975 + z80) * 0.10 / math.sqrt(20))
    assert minimum_detectable_effect(0.10, 20) == pytest.approx(0.0626, abs=5e-4)
    expected = (sps.norm.ppf(0.995) + sps.norm.ppf(0.9)) * 0.2 / math.sqrt(50)
    assert minimum_detectable_effect(0.2, 50, alpha=0.01, power=0.9) == pytest.approx(expected)
    assert minimum_detectable_effect(0.0, 20) == 0.0


def test_mde_is_the_z_value_just_below_the_t_based_doc_figures() -> None:
    # docs: "about 0.07 / 0.10 / 0.13 for sd 0.10 / 0.15 / 0.20" at n = 20 (t-based).
    for sd, doc in [(0.10, 0.07), (0.15, 0.10), (0.20, 0.13)]:
        z_based = minimum_detectable_effect(sd, 20)
        t_based = (sps.t.ppf(0.975, 19) + sps.t.ppf(0.8, 19)) * sd / math.sqrt(20)
        assert z_based < t_based
        assert z_based == pytest.approx(t_based, rel=0.06)
        assert t_based == pytest.approx(doc, abs=0.005)


def test_mde_validation() -> None:
    with pytest.raises(ValueError, match="sd"):
        minimum_detectable_effect(-0.1, 20)
    with pytest.raises(ValueError, match="n must"):
        minimum_detectable_effect(0.1, 0)
    with pytest.raises(ValueError, match="power"):
        minimum_detectable_effect(0.1, 20, power=1.0)
    with pytest.raises(ValueError, match="alpha"):
        minimum_detectable_effect(0.1, 20, alpha=1.5)


# ----------------------------------------------------------------------------- Holm


@pytest.mark.parametrize(("raw", "adjusted"), [
    # sorted 0.005, 0.01, 0.03, 0.04 → 4·0.005, 3·0.01, 2·0.03, max(0.06, 1·0.04)
    ([0.01, 0.04, 0.03, 0.005], [0.03, 0.06, 0.06, 0.02]),
    ([0.5, 0.6], [1.0, 1.0]),                 # capped at 1, then kept monotone
    ([0.2], [0.2]),                           # a family of one is left as it is
    ([], []),
    ([0.01, 0.01, 0.2], [0.03, 0.03, 0.2]),   # ties: 3·0.01, max(0.03, 2·0.01), 1·0.2
])
def test_holm_hand_computed(raw, adjusted) -> None:
    assert holm_adjusted(raw) == pytest.approx(adjusted, abs=1e-12)


def _holm_by_definition(raw: list[float]) -> list[float]:
    """Holm's step-down procedure read as a rejection rule: the adjusted p of test i is the
    smallest alpha at which the procedure rejects it (searched over the candidate levels)."""
    m = len(raw)
    order = sorted(range(m), key=lambda i: raw[i])

    def rejected(alpha: float) -> set[int]:
        out: set[int] = set()
        for rank, i in enumerate(order):
            if (m - rank) * raw[i] > alpha:  # p(r) > alpha / (m - r), without a rounding step
                break
            out.add(i)
        return out

    levels = sorted({min(1.0, (m - r) * raw[i]) for r, i in enumerate(order)} | {1.0})
    return [next(a for a in levels if i in rejected(a) or a == 1.0) for i in range(m)]


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=12))
def test_holm_matches_its_rejection_rule(raw: list[float]) -> None:
    adjusted = holm_adjusted(raw)
    assert adjusted == pytest.approx(_holm_by_definition(raw), abs=1e-12)
    assert all(a >= p - 1e-15 and a <= 1.0 for a, p in zip(adjusted, raw, strict=True))


@pytest.mark.parametrize("bad", [[-0.1], [1.5], [math.nan], [True]])
def test_holm_rejects_what_is_not_a_p_value(bad) -> None:
    with pytest.raises(ValueError, match="p-values lie in"):
        holm_adjusted(bad)
