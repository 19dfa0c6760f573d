"""Ranked-retrieval metrics over graded relevance, matching trec_eval's definitions.

Shared rules (every measure below follows them; docs/measures.md):

* **Ranking**: module paths best first. Duplicates count once — the first occurrence keeps
  its rank, later ones are dropped before anything is measured (trec_eval refuses
  duplicates; ranx keeps the last; we remove the ambiguity).
* **Relevant**: grade ≥ ``threshold`` (default 1, trec_eval ``-l 1``). Modules that are not
  graded count as grade 0.
* **k**: a positive integer; ``k <= 0`` raises :class:`ValueError`. ``k`` larger than the
  ranking is fine: missing positions count as non-relevant.
* **No relevant module**: a query whose grades have nothing ≥ threshold scores 0 on every
  measure (it is flagged by the scorer, and still counts in the mean).

References: trec_eval 10.0 (``recall.k``, ``P.k``, ``recip_rank``, ``success.k``,
``ndcg_cut.k``); Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
TOIS 2002 (nDCG); Burges et al., ICML 2005 (exponential gain ``2^rel − 1``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum


class Gain(StrEnum):
    """How a grade becomes a gain in DCG."""

    EXPONENTIAL = "exponential"  # 2^rel − 1 (N-15 spec, ranx ndcg_burges)
    LINEAR = "linear"  # rel (trec_eval ndcg_cut, BEIR, ir_measures nDCG)

    def of(self, grade: int) -> float:
        if grade <= 0:
            return 0.0
        return float(2**grade - 1) if self is Gain.EXPONENTIAL else float(grade)


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def dedupe(ranking: Sequence[str]) -> tuple[str, ...]:
    """The ranking with later duplicates removed; the first occurrence keeps its rank."""
    seen: set[str] = set()
    out: list[str] = []
    for module in ranking:
        if module not in seen:
            seen.add(module)
            out.append(module)
    return tuple(out)


def _relevant(grades: Mapping[str, int], threshold: int) -> frozenset[str]:
    return frozenset(m for m, g in grades.items() if g >= threshold)


def recall_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int, *,
                threshold: int = 1) -> float:
    """recall@k = |relevant ∩ top k| / |relevant|; 0 when the query has no relevant module.

    trec_eval ``recall.k``.
    """
    _check_k(k)
    relevant = _relevant(grades, threshold)
    if not relevant:
        return 0.0
    return len(relevant.intersection(dedupe(ranking)[:k])) / len(relevant)


def precision_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int, *,
                   threshold: int = 1) -> float:
    """P@k = |relevant ∩ top k| / k — divided by k even when fewer than k were returned.

    trec_eval ``P.k`` (it pads a short ranking with non-relevant documents).
    """
    _check_k(k)
    relevant = _relevant(grades, threshold)
    return len(relevant.intersection(dedupe(ranking)[:k])) / k


def reciprocal_rank(ranking: Sequence[str], grades: Mapping[str, int], k: int | None = None,
                    *, threshold: int = 1) -> float:
    """RR = 1 / rank of the first relevant module; 0 if none (or, with ``k``, none in top k).

    trec_eval ``recip_rank`` (uncut). With ``k`` it is RR@k, the cut the N-15 runner uses
    for its headline MRR (k = 5). The mean over queries is MRR.
    """
    if k is not None:
        _check_k(k)
    relevant = _relevant(grades, threshold)
    ranked = dedupe(ranking)
    for rank, module in enumerate(ranked if k is None else ranked[:k], start=1):
        if module in relevant:
            return 1.0 / rank
    return 0.0


def hit_rate_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int, *,
                  threshold: int = 1) -> float:
    """success@k: 1 if any relevant module is in the top k, else 0.

    trec_eval ``success.k``, ranx ``hit_rate@k``, ir_measures ``Success@k``; the mean over
    queries is the hit rate.
    """
    _check_k(k)
    relevant = _relevant(grades, threshold)
    return 1.0 if relevant.intersection(dedupe(ranking)[:k]) else 0.0


NEEDED_GRADE = 2  # grade 2 "needed to answer", grade 3 "defines the answer"


def accuracy_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int, *,
                  threshold: int = 1) -> float:
    """acc@k: 1 if every module the answer needs is in the top k, else 0.

    The needed modules are those graded ≥ max(2, ``threshold``) (2 "needed to answer",
    3 "defines the answer"); 0 when the query has none, as recall@k is 0 without relevant
    modules. This is the "all gold files in the top k" accuracy of code-localization work
    (Agentless, Xia et al. 2024; LocAgent, Chen et al. ACL 2025), and equals 1 exactly when
    trec_eval ``recall.k`` with ``relevance_level`` = max(2, threshold) is 1.
    """
    _check_k(k)
    needed = _relevant(grades, max(NEEDED_GRADE, threshold))
    if not needed:
        return 0.0
    return 1.0 if needed <= set(dedupe(ranking)[:k]) else 0.0


def dcg_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int, *,
             gain: Gain = Gain.EXPONENTIAL) -> float:
    """DCG@k = Σ_{i=1..k} gain(grade_i) / log2(i + 1), over the deduplicated ranking."""
    _check_k(k)
    return sum(gain.of(grades.get(m, 0)) / math.log2(i + 1)
               for i, m in enumerate(dedupe(ranking)[:k], start=1))


def ideal_dcg_at_k(grades: Mapping[str, int], k: int, *, gain: Gain = Gain.EXPONENTIAL) -> float:
    """IDCG@k: DCG@k of every module graded > 0 for the query, sorted by grade, cut at k."""
    _check_k(k)
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    return sum(gain.of(g) / math.log2(i + 1) for i, g in enumerate(ideal, start=1))


def ndcg_at_k(ranking: Sequence[str], grades: Mapping[str, int], k: int, *,
              gain: Gain = Gain.EXPONENTIAL) -> float:
    """nDCG@k = DCG@k / IDCG@k with graded gains; 0 when IDCG@k is 0 (nothing graded > 0).

    Linear gain matches trec_eval ``ndcg_cut.k`` and BEIR; exponential gain (the default,
    the N-15 spec) matches trec_eval on qrels rewritten to ``2^rel − 1`` and ranx
    ``ndcg_burges``. Being a graded measure it uses every grade > 0 whatever the binary
    relevance threshold, as trec_eval does.
    """
    ideal = ideal_dcg_at_k(grades, k, gain=gain)
    if ideal == 0.0:
        return 0.0
    return dcg_at_k(ranking, grades, k, gain=gain) / ideal


def first_rank(ranking: Sequence[str], module: str) -> int | None:
    """1-based rank of ``module`` in the deduplicated ranking, or ``None`` if absent."""
    ranked = dedupe(ranking)
    return ranked.index(module) + 1 if module in ranked else None
