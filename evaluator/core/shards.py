"""Shards: split one evaluation into ``N`` jobs, deterministically, and mark each part.

``--shard I/N`` (1 ≤ I ≤ N) evaluates the units assigned to shard ``I``: whole sections
when the options declare sections, else questions. The assignment is a pure function of
the units and their weights — never of the order they are listed in, the machine or the
Python hash seed — so every job of a matrix computes the same plan on its own:

* units are ordered by weight (largest first), ties by the SHA-256 of their name (which
  mixes the shapes of questions whose ids share a prefix);
* each unit goes to the shard with the least load so far, ties to the lowest shard
  (longest-processing-time first). With equal weights this deals round-robin, so shard
  sizes differ by at most one; in general the loads differ by at most the largest weight.

A part records its shard, the whole plan (every unit with its shard, in the evaluation's
order), the hashes of the settings and of the ground truth, and the floor policies, so
:func:`evaluator.core.merge.merge` can check that parts belong together and recompute
everything an unsharded run computes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from evaluator.core.floors import Floor, FloorPolicy
from evaluator.errors import ConfigError

MAX_SHARDS = 256
_SPEC = re.compile(r"^\s*(\d{1,4})\s*/\s*(\d{1,4})\s*$")
Unit = Literal["section", "query"]
Side = Literal["head", "base"]


@dataclass(frozen=True, order=True)
class Shard:
    """Shard ``index`` of ``total`` (1-based)."""

    index: int
    total: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.total <= MAX_SHARDS:
            raise ValueError(f"shard {self.index}/{self.total}: need 1 <= I <= N <= "
                             f"{MAX_SHARDS}")

    @classmethod
    def parse(cls, spec: str) -> Shard:
        """``"2/4"`` → ``Shard(2, 4)``; a :class:`ConfigError` for anything else."""
        match = _SPEC.match(spec)
        if match:
            index, total = int(match.group(1)), int(match.group(2))
            if 1 <= index <= total <= MAX_SHARDS:
                return cls(index, total)
        raise ConfigError(f"shard {spec!r} must be I/N with 1 <= I <= N <= {MAX_SHARDS}, "
                          "for example 1/4")

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


def _tiebreak(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()


def assign(weights: Mapping[str, float], total: int) -> dict[str, int]:
    """Every unit's shard (1-based) for ``total`` shards; see the module doc."""
    if not 1 <= total <= MAX_SHARDS:
        raise ValueError(f"total must be 1..{MAX_SHARDS}, got {total}")
    for name, weight in weights.items():
        if not weight >= 0:  # also refuses NaN
            raise ValueError(f"weight of {name!r} must be >= 0, got {weight!r}")
    loads = [0.0] * total
    out: dict[str, int] = {}
    for name in sorted(weights, key=lambda n: (-weights[n], _tiebreak(n), n)):
        target = min(range(total), key=lambda i: (loads[i], i))
        loads[target] += weights[name]
        out[name] = target + 1
    return out


def plan(units: Sequence[str], weights: Mapping[str, float] | None,
         total: int) -> tuple[tuple[str, int], ...]:
    """``(unit, shard)`` for every unit, in the given (evaluation) order; weight 1 by
    default. Units must be unique."""
    if len(set(units)) != len(units):
        raise ValueError("units must be unique")
    shards = assign({u: (weights or {}).get(u, 1.0) for u in units}, total)
    return tuple((u, shards[u]) for u in units)


def fingerprint(value: Mapping[str, Any]) -> str:
    """SHA-256 of a JSON-able mapping in canonical form (sorted keys, no spaces)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def policy_to_dict(policy: FloorPolicy) -> dict[str, Any]:
    def floors(items: Sequence[Floor]) -> list[dict[str, Any]]:
        return [{"metric": f.metric, "op": f.op, "value": f.value} for f in items]
    return {"aggregate": floors(policy.aggregate), "per_shape": floors(policy.per_shape),
            "zero_miss": policy.zero_miss}


def policy_from_dict(data: Any) -> FloorPolicy:
    """The inverse of :func:`policy_to_dict`; ValueError naming what is wrong."""
    if not isinstance(data, Mapping):
        raise ValueError("a floor policy must be an object")

    def floors(key: str) -> tuple[Floor, ...]:
        items = data.get(key)
        if not isinstance(items, list):
            raise ValueError(f"{key} must be a list")
        out = []
        for item in items:
            if not isinstance(item, Mapping) or not isinstance(item.get("metric"), str) \
                    or item.get("op") is None or item.get("value") is None:
                raise ValueError(f"{key}: each floor needs a metric, op and value")
            out.append(Floor.parse(item["metric"], f"{item.get('op')} {item.get('value')}"))
        return tuple(out)

    zero_miss = data.get("zero_miss")
    if not isinstance(zero_miss, bool):
        raise ValueError("zero_miss must be true or false")
    return FloorPolicy(aggregate=floors("aggregate"), per_shape=floors("per_shape"),
                       zero_miss=zero_miss)


@dataclass(frozen=True)
class ShardInfo:
    """What marks a partial results file: which part of which plan it is.

    ``side`` tells the head's part from the base's (a job run with a baseline writes both).
    ``plan`` lists every unit of the whole evaluation (section names, or question ids) with
    its shard, in the order an unsharded run reports them. ``policies`` are the floor
    policies to apply after merging: one per section, or ``{"": policy}`` without sections.
    """

    shard: Shard
    unit: Unit
    plan: tuple[tuple[str, int], ...]
    settings_sha256: str
    ground_truth_sha256: str
    policies: Mapping[str, FloorPolicy] = field(default_factory=dict)
    side: Side = "head"  # "base": the baseline side evaluated by the same job
    label: str = ""  # the base side: how the report names it ("HEAD~1 (0123abcd…)")

    @property
    def units(self) -> tuple[str, ...]:
        """This shard's units, in plan order."""
        return tuple(u for u, s in self.plan if s == self.shard.index)

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.shard.index, "total": self.shard.total, "unit": self.unit,
                "units": list(self.units), "plan": [[u, s] for u, s in self.plan],
                "settings_sha256": self.settings_sha256,
                "ground_truth_sha256": self.ground_truth_sha256,
                "policies": {k: policy_to_dict(p) for k, p in self.policies.items()},
                "side": self.side, "label": self.label}
