"""The ranking depth (``--depth N``): how many modules each system is asked for, and when a
metric at k is not measurable for a system.

A system whose registry entry ranks every module of the universe it is given
(:attr:`evaluator.core.systems.SystemEntry.depth` is ``None``: bm25, grep, full-file,
oracle) is asked for at least ``depth`` modules; what it returns is everything it
had (a module that shares no word with the question is not ranked), so its metrics are
measured. A system that ranks only what its query returns (NeuralMind: ``query()`` has no
top-k; ``embedding``: the hits it asks the build for) may hand back fewer: on such a
question its ranking is **short of depth** when it holds fewer modules of the universe
than ``min(depth, universe size)``, and a metric at a k larger than what it returned is
**not measurable** there (marked in the report, not left out of the means).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


def ranking_depth(depth: int | None, k_values: Sequence[int]) -> int:
    """The run's ranking depth: ``--depth`` when given, else the largest k reported."""
    if depth is not None:
        return depth
    if not k_values:
        raise ValueError("no k to take the ranking depth from")
    return max(k_values)


def depth_reach(depth: int, universe: int, *, ranks_all: bool) -> int | None:
    """How many modules a ranking must hold to reach ``depth`` on a universe of
    ``universe`` modules, or ``None`` for a system that ranks everything it has (never
    short of depth)."""
    return None if ranks_all else min(depth, universe)


def short_of_depth(returned: int, reach: int | None) -> bool:
    """Whether a ranking of ``returned`` modules of the universe stops short of ``reach``
    (:func:`depth_reach`)."""
    return reach is not None and returned < reach


@dataclass(frozen=True)
class Unmeasurable:
    """A system's metrics at ``k`` that are not measurable on ``short`` of ``total``
    questions (each returned fewer than ``k`` modules and could not rank deeper)."""

    label: str
    k: int
    short: int
    total: int


def unmeasurable(label: str, rankings: Sequence[tuple[int, bool]],
                 k_values: Sequence[int]) -> tuple[Unmeasurable, ...]:
    """For each k of ``k_values`` (ascending), the questions of one system whose ranking
    was short of depth (``rankings``: each question's returned count and flag) with fewer
    than k modules; a k without any is left out."""
    out = []
    for k in sorted(set(k_values)):
        short = sum(1 for returned, flagged in rankings if flagged and returned < k)
        if short:
            out.append(Unmeasurable(label, k, short, len(rankings)))
    return tuple(out)


def at_k(metric: str) -> int | None:
    """The cut-off of a metric name such as ``recall@10`` (``None`` without one)."""
    _, sep, k = metric.rpartition("@")
    return int(k) if sep and k.isdigit() else None
