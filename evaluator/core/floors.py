"""Quality floors: absolute limits on the aggregates, per shape, and the zero-miss rule.

A floor is ``metric op value`` with ``op`` one of ``>=``, ``>``, ``<=``, ``<``; a bare number
means ``>=``. The defaults are the N-15 CI gates:

* aggregate: recall@5 ≥ 0.50, mrr ≥ 0.40, ndcg@5 ≥ 0.50, hit_rate ≥ 0.80,
  faithfulness > 0.0, contradiction ≤ 0.20;
* per shape: hit_rate ≥ 0.70 for every shape;
* zero-miss: no query with recall@5 = 0.

A floor on a metric that was not computed (``None``, e.g. ``context_precision`` without
``--embed``) is missed, and says so; except a floor on a measure judged against gold facts
(:data:`evaluator.core.scoring.FACT_METRICS`) where every question in its scope is
retrieval-only (no gold facts): there is nothing to judge, so it is not applied.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from evaluator.core.scoring import FACT_METRICS, Aggregate, QueryResult, retrieval_only

Op = Literal[">=", ">", "<=", "<"]
_OPS: dict[str, Callable[[float, float], bool]] = {
    ">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt,
}
_SPEC = re.compile(r"^\s*(>=|<=|>|<|≥|≤)?\s*(-?\d+(?:\.\d+)?|-?\.\d+)\s*$")
ZERO_MISS_METRIC = "recall@5"


@dataclass(frozen=True)
class Floor:
    metric: str
    op: Op
    value: float

    @classmethod
    def parse(cls, metric: str, spec: object) -> Floor:
        """``0.5`` → ``>= 0.5``; ``"<= 0.2"`` → ``<= 0.2``. Raises ValueError on anything else."""
        # NaN/inf (YAML ``.nan``, ``.inf``) would make a floor that can never, or always, hold.
        if isinstance(spec, bool) or (isinstance(spec, float) and not math.isfinite(spec)):
            raise ValueError(f"floor {metric}: {spec!r} is not a number or 'OP NUMBER'")
        if isinstance(spec, int | float):
            return cls(metric, ">=", float(spec))
        match = _SPEC.match(str(spec))
        if not match:
            raise ValueError(f"floor {metric}: {spec!r} is not a number or 'OP NUMBER' "
                             "(OP one of >=, >, <=, <)")
        op = {"≥": ">=", "≤": "<="}.get(match.group(1) or ">=", match.group(1) or ">=")
        assert op in _OPS
        return cls(metric, op, float(match.group(2)))  # type: ignore[arg-type]

    @property
    def rule(self) -> str:
        return f"{self.metric} {self.op} {self.value:g}"

    def holds(self, actual: float | None) -> bool:
        return actual is not None and _OPS[self.op](actual, self.value)


@dataclass(frozen=True)
class FloorPolicy:
    aggregate: tuple[Floor, ...]
    per_shape: tuple[Floor, ...]
    zero_miss: bool

    def metrics(self) -> frozenset[str]:
        names = {f.metric for f in (*self.aggregate, *self.per_shape)}
        return frozenset(names | ({ZERO_MISS_METRIC} if self.zero_miss else set()))


DEFAULT_POLICY = FloorPolicy(
    aggregate=(
        Floor("recall@5", ">=", 0.50),
        Floor("mrr", ">=", 0.40),
        Floor("ndcg@5", ">=", 0.50),
        Floor("hit_rate", ">=", 0.80),
        Floor("faithfulness", ">", 0.0),
        Floor("contradiction", "<=", 0.20),
    ),
    per_shape=(Floor("hit_rate", ">=", 0.70),),
    zero_miss=True,
)


def parse_floors(spec: Mapping[str, object]) -> tuple[Floor, ...]:
    return tuple(Floor.parse(str(metric), value) for metric, value in spec.items())


@dataclass(frozen=True)
class Violation:
    """A missed floor: where (``overall``, ``shape X``, ``query X``), the value and the rule."""

    scope: str
    metric: str
    value: float | None
    rule: str
    kind: str = "floor"  # "floor" (absolute) or "gate" (regression against the baseline)

    @property
    def message(self) -> str:
        shown = "not computed" if self.value is None else f"{self.value:.4f}"
        return f"{self.scope}: {self.metric} = {shown}, {self.kind} {self.rule}"


def check_floors(
    policy: FloorPolicy,
    *,
    overall: Aggregate,
    shapes: Mapping[str, Aggregate],
    rows: Sequence[QueryResult],
) -> tuple[Violation, ...]:
    """Every violation of ``policy``, overall first, then per shape, then per query."""
    out: list[Violation] = []

    def unjudged(floor: Floor, value: float | None, scope: Sequence[QueryResult]) -> bool:
        return value is None and floor.metric in FACT_METRICS and bool(scope) and all(
            retrieval_only(r) for r in scope)

    for floor in policy.aggregate:
        value = overall.metrics.get(floor.metric)
        if not floor.holds(value) and not unjudged(floor, value, rows):
            out.append(Violation("overall", floor.metric, value, floor.rule))
    for shape, agg in shapes.items():
        in_shape = [r for r in rows if r.shape == shape]
        for floor in policy.per_shape:
            value = agg.metrics.get(floor.metric)
            if not floor.holds(value) and not unjudged(floor, value, in_shape):
                out.append(Violation(f"shape {shape}", floor.metric, value, floor.rule))
    if policy.zero_miss:
        for row in rows:
            value = row.metrics.get(ZERO_MISS_METRIC)
            if value is not None and value == 0.0:
                out.append(Violation(f"query {row.id}", ZERO_MISS_METRIC, value,
                                     f"zero-miss: {ZERO_MISS_METRIC} > 0 for every query"))
    return tuple(out)


#: Fewer questions than this in a shape make its per-shape floor a coin toss (one question
#: moves its hit rate by half or more). ``init``'s default draft has 3 in its smallest
#: shape; N-15 suggests 6–7 per shape.
MIN_SHAPE_QUESTIONS = 3


def thin_shapes(policy: FloorPolicy, counts: Mapping[str, int]) -> tuple[str, ...]:
    """A warning per shape whose per-shape floors rest on fewer than
    :data:`MIN_SHAPE_QUESTIONS` questions, naming the shape and the count."""
    if not policy.per_shape:
        return ()
    rules = ", ".join(f.rule for f in policy.per_shape)
    return tuple(f"shape {shape!r} has {n} question{'s' if n != 1 else ''}: its per-shape "
                 f"floor ({rules}) rests on too few to mean much; add questions (at least "
                 f"{MIN_SHAPE_QUESTIONS}) or drop the shape floor (shape-floors: {{}})"
                 for shape, n in counts.items() if n < MIN_SHAPE_QUESTIONS)
