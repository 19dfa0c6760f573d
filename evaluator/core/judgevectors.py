"""The embedding judge: a fact's highest cosine over a context's segments (vectors computed
elsewhere, by the MiniLM ONNX model in :mod:`evaluator.judging`); found at ≥
:data:`SIMILARITY_THRESHOLD`. Offline, deterministic, pure."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SIMILARITY_THRESHOLD = 0.5


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when a vector is empty, zero, or the lengths differ."""
    if not a or not b or len(a) != len(b):
        return 0.0
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na > 0 and nb > 0 else 0.0


def max_similarities(queries: Sequence[Sequence[float]],
                     segments_: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """For each query vector, its highest cosine over the segment vectors (0 if none)."""
    return tuple(max((cosine(q, s) for s in segments_), default=0.0) for q in queries)


@dataclass(frozen=True)
class SimilarityVerdict:
    """The embedding judge: per fact its best cosine over the context's segments."""

    similarities: tuple[float, ...]
    threshold: float

    @property
    def fact_recall(self) -> float:
        """Share of facts whose best segment reaches the threshold (0 with no facts)."""
        n = len(self.similarities)
        return sum(s >= self.threshold for s in self.similarities) / n if n else 0.0


def similarity_verdict(fact_vectors: Sequence[Sequence[float]],
                       segment_vectors: Sequence[Sequence[float]], *,
                       threshold: float = SIMILARITY_THRESHOLD) -> SimilarityVerdict:
    """Each fact's highest cosine over the context segments, found at ≥ ``threshold``."""
    return SimilarityVerdict(max_similarities(fact_vectors, segment_vectors), threshold)
