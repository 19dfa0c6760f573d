"""Paired comparison of two systems on the same queries: p-value, interval, verdict.

Both systems are scored on the same queries, so the unit of analysis is the per-query
delta ``head − base``. With the ~20 queries of a ground-truth suite:

* the **verdict** comes from the two-sided paired randomization (sign-flip) test, which the
  IR literature recommends over the bootstrap and the sign/Wilcoxon tests for comparing
  systems on a small topic set (Smucker, Allan & Carterette, "A comparison of statistical
  significance tests for information retrieval evaluation", CIKM 2007);
* the **interval** on the mean delta comes from the paired percentile bootstrap (Efron &
  Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall 1993, ch. 13); bootstrap
  p-values run small with few topics, so the bootstrap is never used for the verdict;
* a change is reported as significant only when it is both unlikely under the null
  (``p < alpha``) and large enough to matter (``|delta| ≥ min_effect``); anything else is
  "not significant", never "no change" — see :func:`minimum_detectable_effect`. The test is
  about how far a change generalises beyond these questions: each per-question delta is a
  deterministic fact of the two runs, not noise, and with ``m`` changed questions the exact
  p-value cannot go below ``2 / 2**m`` (:func:`min_p_value`, :func:`changes_needed`).

Pure: standard library only, no I/O. Randomness comes from ``random.Random(seed)`` and only
through ``Random.random()``, whose sequence for a given seed Python guarantees not to change
across versions, so every result is reproducible from its inputs and the seed.
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

__all__ = [
    "TIE_RTOL",
    "Comparison",
    "Verdict",
    "bootstrap_interval",
    "changes_needed",
    "compare",
    "min_p_value",
    "minimum_detectable_effect",
    "paired_deltas",
    "randomization_test",
]

Verdict = Literal["significant", "not significant", "no data"]

TIE_RTOL = 1e-12
"""Relative tolerance for ties in the randomization test.

An assignment counts as "at least as extreme" when ``|sum| ≥ |observed sum| − tol`` with
``tol = TIE_RTOL × Σ|delta_i|``. ``Σ|delta_i|`` bounds every assignment's ``|sum|``, so the
tolerance scales with the data (the p-value does not change when all deltas are scaled) and
absorbs the ~1e-16 relative rounding of summing the same numbers in another order: sums that
are equal in exact arithmetic (e.g. 0.1 + 0.2 vs 0.3) tie, as they should.
"""

EFFECT_SLACK = 1e-12  # |delta| ≥ min_effect is tested with this absolute slack for rounding
_CHUNK_BITS = 10  # Monte-Carlo: signs are looked up 10 at a time in tables of 1024 sums
_WORD_BITS = 53  # Random.random() is k / 2**53: each call yields 53 uniform random bits
_TWO_POW_53 = float(2**_WORD_BITS)


@dataclass(frozen=True)
class SignificanceTest:
    """The settings of every significance test of a run: the level ``alpha``, the smallest
    change called significant ``min_effect``, and the seed of the randomization test and the
    bootstrap. The run records them (``run.significance``) so every view of its results
    tests with them."""

    alpha: float = 0.05
    min_effect: float = 0.02
    seed: int = 0

    def as_dict(self) -> dict[str, float]:
        return {"alpha": self.alpha, "min_effect": self.min_effect, "seed": self.seed}


DEFAULT_TEST = SignificanceTest()


def _check_finite(values: Sequence[float], what: str) -> list[float]:
    out = [float(v) for v in values]
    for v in out:
        if not math.isfinite(v):
            raise ValueError(f"{what} must be finite numbers, got {v!r}")
    return out


def _check_samples(samples: int) -> None:
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ValueError(f"samples must be a positive integer, got {samples!r}")


def _check_unit_open(value: float, name: str) -> None:
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1, got {value!r}")


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)


def _pairs(
    base: Mapping[str, float | None], head: Mapping[str, float | None]
) -> list[tuple[str, float, float]]:
    pairs: list[tuple[str, float, float]] = []
    for qid in sorted(base.keys() & head.keys()):
        b, h = base[qid], head[qid]
        if b is None or h is None:
            continue
        b, h = float(b), float(h)
        if not (math.isfinite(b) and math.isfinite(h)):
            raise ValueError(f"query {qid!r}: scores must be finite, got base={b!r} head={h!r}")
        pairs.append((qid, b, h))
    return pairs


def paired_deltas(
    base: Mapping[str, float | None], head: Mapping[str, float | None]
) -> tuple[list[str], list[float]]:
    """Per-query deltas ``head[q] − base[q]`` over the queries both systems scored.

    A query is paired when its id is in both mappings and neither value is ``None`` (a
    metric that was not computed for that query); every other query is left out, on both
    sides. Returns ``(ids, deltas)`` sorted by query id, so the result does not depend on
    mapping order. Raises :class:`ValueError` on a paired NaN or infinity.

    Pairing is what makes the comparison a paired design (Smucker, Allan & Carterette,
    CIKM 2007): query difficulty cancels out of each delta.
    """
    pairs = _pairs(base, head)
    return [qid for qid, _, _ in pairs], [h - b for _, b, h in pairs]


def _signed_sums(values: Sequence[float]) -> list[float]:
    """All ``2**k`` sums ``±v_0 ± … ± v_{k−1}``; bit ``j`` of the index set ⇔ ``+v_j``."""
    sums = [0.0]
    for v in values:
        sums = [s - v for s in sums] + [s + v for s in sums]
    return sums


def _exact_count(values: Sequence[float], threshold: float) -> int:
    """How many of the ``2**m`` sign assignments have ``|sum| ≥ threshold`` (> 0).

    Meet in the middle: the signed sums of each half (``2**(m/2)`` each) are listed, one
    side sorted, and for every left sum ``a`` the right sums with ``a + b ≥ threshold`` or
    ``a + b ≤ −threshold`` are counted by bisection — ``O(2**(m/2) · m)`` instead of
    ``O(2**m)``, so m = 20 takes about a millisecond in pure Python.
    """
    half = len(values) // 2
    left = _signed_sums(values[:half])
    right = sorted(_signed_sums(values[half:]))
    size = len(right)
    count = 0
    for a in left:
        count += size - bisect_left(right, threshold - a)
        count += bisect_right(right, -threshold - a)
    return count


def _monte_carlo_count(
    values: Sequence[float], threshold: float, samples: int, rng: random.Random
) -> int:
    """How many of ``samples`` uniformly random sign assignments have ``|sum| ≥ threshold``.

    Each assignment is ``m`` random bits (53 per ``rng.random()`` call); its sum is read
    10 signs at a time from precomputed tables of signed sums.
    """
    m = len(values)
    tables = [
        (_signed_sums(values[i:i + _CHUNK_BITS]), i, (1 << min(_CHUNK_BITS, m - i)) - 1)
        for i in range(0, m, _CHUNK_BITS)
    ]
    words = -(-m // _WORD_BITS)
    draw = rng.random
    count = 0
    for _ in range(samples):
        bits = 0
        for _word in range(words):
            bits = (bits << _WORD_BITS) | int(draw() * _TWO_POW_53)
        total = 0.0
        for table, shift, mask in tables:
            total += table[(bits >> shift) & mask]
        if total >= threshold or total <= -threshold:
            count += 1
    return count


def randomization_test(
    deltas: Sequence[float],
    *,
    exact_limit: int = 20,
    samples: int = 100_000,
    seed: int = 0,
) -> float:
    """Two-sided paired randomization (sign-flip) test of "mean delta = 0".

    Definition: under the null hypothesis the two systems are exchangeable on every query,
    so each per-query delta is equally likely to have either sign. With ``n`` deltas, the
    p-value is the fraction of the ``2**n`` sign assignments ``(±d_1, …, ±d_n)`` whose
    ``|mean|`` is at least the observed ``|mean|`` (Smucker, Allan & Carterette, "A
    comparison of statistical significance tests for information retrieval evaluation",
    CIKM 2007; Fisher's randomization test for paired data).

    Computation:

    * ``n`` is fixed, so sums are compared instead of means (same ordering, no division).
    * A delta of exactly 0 is the same under both signs: it multiplies the number of
      assignments at every sum by 2 and leaves the fraction unchanged, so zeros are dropped
      before enumerating (they still count in the mean, which is what comparing sums means).
    * Ties: ``|sum| ≥ |observed| − TIE_RTOL × Σ|d_i|`` (see :data:`TIE_RTOL`).
    * **Exact** when the number ``m`` of non-zero deltas is ``≤ exact_limit``: all ``2**m``
      assignments, by meet in the middle (n = 20: about a millisecond). The result is the
      exact p-value, a multiple of ``2**-m``, never below ``2 / 2**m`` (the observed
      assignment and its mirror image always count).
    * **Monte-Carlo** beyond: ``samples`` uniform random assignments from
      ``random.Random(seed)``, ``p = (count + 1) / (samples + 1)`` — the observed assignment
      counted as one of the draws. This is never 0 and never below the exact p-value in
      expectation: a valid, very slightly conservative estimate (Phipson & Smyth, "Permutation
      p-values should never be zero", 2010; also what ``scipy.stats.permutation_test``
      returns when it samples). Its Monte-Carlo standard error is about
      ``sqrt(p(1−p)/samples)`` ≤ 0.0016 at the default 100 000 samples.

    Rules: no deltas, all deltas 0 or a single delta → ``p = 1.0`` (every assignment is as
    extreme as the observed one). Deterministic: the same inputs and seed give the same p.
    Raises :class:`ValueError` on a non-finite delta, ``samples < 1`` or ``exact_limit < 0``.
    """
    values = _check_finite(deltas, "deltas")
    _check_samples(samples)
    if isinstance(exact_limit, bool) or not isinstance(exact_limit, int) or exact_limit < 0:
        raise ValueError(f"exact_limit must be a non-negative integer, got {exact_limit!r}")
    nonzero = [v for v in values if v != 0.0]
    if len(nonzero) <= 1:
        return 1.0
    observed = abs(math.fsum(nonzero))
    threshold = observed - TIE_RTOL * math.fsum(abs(v) for v in nonzero)
    if threshold <= 0.0:
        return 1.0
    if len(nonzero) <= exact_limit:
        return _exact_count(nonzero, threshold) / (1 << len(nonzero))
    rng = random.Random(seed)  # noqa: S311 - reproducible statistics, not cryptography
    count = _monte_carlo_count(nonzero, threshold, samples, rng)
    return (count + 1) / (samples + 1)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (Hyndman & Fan type 7, numpy's default)."""
    h = (len(sorted_values) - 1) * q
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    low, high = sorted_values[lo], sorted_values[hi]
    return low if low == high else low + (h - lo) * (high - low)


def bootstrap_interval(
    deltas: Sequence[float],
    *,
    level: float = 0.95,
    samples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float]:
    """Paired bootstrap percentile interval for the mean per-query delta.

    Definition: draw ``samples`` bootstrap replicates, each ``n`` queries resampled with
    replacement from the ``n`` paired queries (resampling queries, so each keeps its base and
    head score together — the paired bootstrap); the interval is the ``(1−level)/2`` and
    ``(1+level)/2`` percentiles of the replicate means (Efron & Tibshirani, *An Introduction
    to the Bootstrap*, Chapman & Hall 1993, ch. 13, the percentile interval). Percentiles
    interpolate linearly between order statistics (Hyndman & Fan type 7, as
    ``numpy.percentile`` and ``scipy.stats.bootstrap(method="percentile")``). Means use
    :func:`math.fsum`, so identical deltas give exactly ``(d, d)``.

    Returns ``(low, high)``; no deltas → ``(0.0, 0.0)``. Deterministic with ``seed``
    (``random.Random(seed)``; index ``⌊random()·n⌋``). Raises :class:`ValueError` on a
    non-finite delta, ``samples < 1`` or ``level`` outside ``(0, 1)``.
    """
    values = _check_finite(deltas, "deltas")
    _check_samples(samples)
    _check_unit_open(level, "level")
    n = len(values)
    if n == 0:
        return 0.0, 0.0
    draw = random.Random(seed).random  # noqa: S311 - reproducible statistics, not crypto
    means = sorted(
        math.fsum([values[int(draw() * n)] for _ in range(n)]) / n for _ in range(samples)
    )
    tail = (1.0 - level) / 2.0
    return _percentile(means, tail), _percentile(means, 1.0 - tail)


@dataclass(frozen=True)
class Comparison:
    """One metric compared between a base and a head run over their paired queries.

    ``n`` paired queries; ``base_mean`` / ``head_mean`` are the means over those same ``n``
    queries (so they can differ from each run's own aggregate when a query is missing on one
    side); ``delta`` is the mean of the per-query deltas (= ``head_mean − base_mean``);
    ``p_value`` from :func:`randomization_test`; ``[ci_low, ci_high]`` from
    :func:`bootstrap_interval`; ``significant`` is ``p_value < alpha and |delta| ≥
    min_effect`` (both recorded); ``verdict`` is ``"significant"``, ``"not significant"``
    or ``"no data"`` (no paired query).
    """

    metric: str
    n: int
    base_mean: float
    head_mean: float
    delta: float
    p_value: float
    ci_low: float
    ci_high: float
    significant: bool
    verdict: Verdict
    alpha: float = 0.05  # the significance level and minimum effect the verdict used
    min_effect: float = 0.02


def compare(
    metric: str,
    base: Mapping[str, float | None],
    head: Mapping[str, float | None],
    *,
    alpha: float = 0.05,
    min_effect: float = 0.02,
    seed: int = 0,
) -> Comparison:
    """Compare ``metric`` between two runs, query by query.

    Pairs the queries with :func:`paired_deltas`, tests them with :func:`randomization_test`
    (Smucker, Allan & Carterette, CIKM 2007) and brackets the mean delta with
    :func:`bootstrap_interval` (Efron & Tibshirani 1993), both with ``seed``.

    The verdict is ``"significant"`` only when ``p < alpha`` **and** ``|delta| ≥ min_effect``
    (with a 1e-12 slack for float rounding): a tiny but consistent change is not worth
    reporting, and a large change that ~20 queries cannot distinguish from noise is not
    established. Otherwise ``"not significant"`` — which does not mean "no change"; see
    :func:`minimum_detectable_effect`. No paired query → ``"no data"`` with ``n = 0``,
    ``p_value = 1.0`` and zeros elsewhere.

    Raises :class:`ValueError` when ``alpha`` is outside ``(0, 1)`` or ``min_effect < 0``.
    """
    _check_unit_open(alpha, "alpha")
    if not (math.isfinite(min_effect) and min_effect >= 0.0):
        raise ValueError(f"min_effect must be a non-negative number, got {min_effect!r}")
    pairs = _pairs(base, head)
    n = len(pairs)
    if n == 0:
        return Comparison(
            metric=metric, n=0, base_mean=0.0, head_mean=0.0, delta=0.0, p_value=1.0,
            ci_low=0.0, ci_high=0.0, significant=False, verdict="no data", alpha=alpha,
            min_effect=min_effect,
        )
    deltas = [h - b for _, b, h in pairs]
    delta = _mean(deltas)
    p_value = randomization_test(deltas, seed=seed)
    ci_low, ci_high = bootstrap_interval(deltas, seed=seed)
    significant = p_value < alpha and abs(delta) >= min_effect - EFFECT_SLACK
    return Comparison(
        metric=metric,
        n=n,
        base_mean=_mean([b for _, b, _ in pairs]),
        head_mean=_mean([h for _, _, h in pairs]),
        delta=delta,
        p_value=p_value,
        ci_low=ci_low,
        ci_high=ci_high,
        significant=significant,
        verdict="significant" if significant else "not significant",
        alpha=alpha,
        min_effect=min_effect,
    )


def minimum_detectable_effect(
    sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8
) -> float:
    """Smallest mean delta a two-sided paired test on ``n`` queries detects with ``power``.

    Definition (normal approximation to the paired test):
    ``MDE = (z_{1−alpha/2} + z_{power}) · sd / sqrt(n)``, where ``sd`` is the standard
    deviation of the per-query deltas and ``z_q`` the standard normal quantile
    (:class:`statistics.NormalDist`). See e.g. Cohen, *Statistical Power Analysis for the
    Behavioral Sciences*, 1988; for IR test collections, Webber, Moffat & Zobel, "Statistical
    power in retrieval experimentation", CIKM 2008.

    This is the z-based value: n = 20, sd = 0.10 gives ≈ 0.063. A t-based calculation
    (``t_{19}`` quantiles) gives ≈ 0.066, and the project docs round that to "about 0.07";
    the normal approximation runs a few percent low at n ≈ 20. Use it to say when a suite is
    too small to see a change: a delta below it is "not significant", not "no change".
    It ignores the exact test's floor: with fewer than :func:`changes_needed` changed
    questions nothing is detectable at all (see :mod:`evaluator.core.verdict`).

    Raises :class:`ValueError` when ``sd`` is negative or not finite, ``n < 1``, or
    ``alpha`` / ``power`` are outside ``(0, 1)``.
    """
    if not (math.isfinite(sd) and sd >= 0.0):
        raise ValueError(f"sd must be a non-negative number, got {sd!r}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    _check_unit_open(alpha, "alpha")
    _check_unit_open(power, "power")
    z = NormalDist()
    return (z.inv_cdf(1.0 - alpha / 2.0) + z.inv_cdf(power)) * sd / math.sqrt(n)


def min_p_value(changed: int) -> float:
    """The smallest p-value the exact sign-flip test can give with ``changed`` non-zero deltas.

    Definition: the observed sign assignment and its mirror image are always at least as
    extreme as the observed one, so ``p ≥ 2 / 2**m`` for ``m ≥ 1`` non-zero deltas (and
    ``p = 1`` for ``m ≤ 1``: a single change, however large, is as extreme under both signs;
    see :func:`randomization_test`). Unchanged questions (delta 0) do not lower it.

    Raises :class:`ValueError` when ``changed`` is negative or not an integer.
    """
    if isinstance(changed, bool) or not isinstance(changed, int) or changed < 0:
        raise ValueError(f"changed must be a non-negative integer, got {changed!r}")
    if changed <= 1:
        return 1.0
    return math.ldexp(2.0, -changed)  # 2 / 2**m, without overflow past m = 1023


def changes_needed(alpha: float = 0.05) -> int:
    """The fewest changed questions with which the exact sign-flip test can reach ``p < alpha``.

    Definition: the smallest ``m`` with ``2 / 2**m < alpha`` (:func:`min_p_value`), i.e.
    ``m > 1 + log2(1/alpha)``. For ``alpha = 0.05`` that is 6 (``2/64 ≈ 0.031``; with 5,
    ``2/32 = 0.0625``): with 5 or fewer changed questions nothing can be significant, however
    large the changes.

    Raises :class:`ValueError` when ``alpha`` is outside ``(0, 1)``.
    """
    _check_unit_open(alpha, "alpha")
    m = 2
    while min_p_value(m) >= alpha:
        m += 1
    return m


def holm_adjusted(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given.

    Definition (Holm, Scand. J. Statist. 1979, the step-down form of Wright, Biometrics
    1992): sort the m p-values ascending, ``p(1) ≤ … ≤ p(m)``; the adjusted value of the
    i-th smallest is ``min(1, max_{j ≤ i} (m − j + 1) · p(j))``. Rejecting every hypothesis
    whose adjusted p is below ``alpha`` controls the family-wise error rate at ``alpha``
    whatever the dependence between the tests. Ties keep their input order (their adjusted
    values are equal anyway). An empty family gives ``[]``; one test is left as it is.

    Raises :class:`ValueError` when a p-value is not a number in ``[0, 1]``.
    """
    for p in p_values:
        if isinstance(p, bool) or not (math.isfinite(p) and 0.0 <= p <= 1.0):
            raise ValueError(f"p-values lie in [0, 1], got {p!r}")
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
