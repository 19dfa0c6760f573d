"""Every option of the evaluator, from the options file (``.retrieval-eval.yml``) and flags.

The options file can hold every option of the command line (kebab-case or snake_case
keys); flags given on the command line override it. Floors live only in the file::

    queries: retrieval_queries.json
    k: [1, 3, 5, 10]
    gain: exponential          # or linear
    backend: auto              # or in_memory
    graph-source: builtin      # or graphify
    relevance-threshold: 1
    floors:                    # replaces the defaults; {} turns them off
      recall@5: 0.50           # a bare number means >=
      contradiction: "<= 0.20"
    shape-floors: {hit_rate: 0.70}
    zero-miss: true
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from evaluator.core.floors import DEFAULT_POLICY, Floor, FloorPolicy
from evaluator.core.metrics import Gain
from evaluator.core.scoring import COST_COLUMNS, DEFAULT_K, effective_k, metric_names
from evaluator.errors import ConfigError

BACKENDS = ("auto", "in_memory")
GRAPH_SOURCES = ("builtin", "graphify")


@dataclass(frozen=True)
class Options:
    queries: str = "retrieval_queries.json"
    k: tuple[int, ...] = DEFAULT_K
    gain: Gain = Gain.EXPONENTIAL
    backend: str = "auto"
    graph_source: str = "builtin"
    relevance_threshold: int = 1
    cache_dir: str | None = None
    output_dir: str | None = None
    strict: bool = False
    embed: bool = False
    quiet: bool = False
    fail_on_floors: bool = True
    comment: bool = False
    comment_key: str = "default"
    template: str | None = None
    comment_timeout: float = 120.0
    baseline: str | None = None
    primary_metric: str = "ndcg@5"
    alpha: float = 0.05
    min_effect: float = 0.02
    floors: FloorPolicy = field(default=DEFAULT_POLICY)
    # Regression gates (need a baseline): metric -> largest allowed drop.
    max_drop: Mapping[str, float] = field(default_factory=dict)
    max_drop_significant_only: bool = False
    fail_on_new_failures: bool = False


_SCALARS = {f.name for f in fields(Options)} - {"floors", "max_drop"}
_FLOOR_KEYS = {"floors", "shape_floors", "zero_miss"}
_BOOLS = {"strict", "embed", "quiet", "fail_on_floors", "comment",
          "max_drop_significant_only", "fail_on_new_failures"}
_FRACTIONS = {"alpha", "min_effect"}
MAX_COMMENT_TIMEOUT = 900.0  # seconds: the options file cannot make the job wait longer
_OPTIONAL_STRS = {"cache_dir", "output_dir", "template", "baseline"}


def _key(name: object) -> str:
    return str(name).strip().replace("-", "_")


def _as_bool(name: str, value: Any, errors: list[str]) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off", ""):
        return False
    errors.append(f"{name}: {value!r} is not true or false")
    return False


def _as_k(value: Any, errors: list[str]) -> tuple[int, ...]:
    items: list[Any]
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, int) and not isinstance(value, bool):
        items = [value]
    elif isinstance(value, list | tuple):
        items = list(value)
    else:
        items = []
    try:
        ks = tuple(int(str(x).strip()) for x in items)
        if not ks or any(k <= 0 for k in ks):
            raise ValueError
    except (TypeError, ValueError):
        errors.append(f"k: {value!r} must be positive integers such as 1,3,5,10")
        return DEFAULT_K
    return tuple(sorted(set(ks)))


def _choice(name: str, value: Any, allowed: tuple[str, ...], errors: list[str], *,
            fold_dashes: bool = False) -> str:
    text = str(value).strip()
    if fold_dashes:  # ``in-memory`` spells ``in_memory``
        text = text.replace("-", "_")
    if text not in allowed:
        errors.append(f"{name}: {value!r} is not one of {', '.join(allowed)}")
    return text


def _floor_map(spec: Mapping[Any, Any], origin: str, errors: list[str]) -> tuple[Floor, ...]:
    """Every floor of ``spec``; each invalid one is reported (all of them, not the first)."""
    out: list[Floor] = []
    for metric, value in spec.items():
        try:
            out.append(Floor.parse(str(metric), value))
        except ValueError as err:
            errors.append(f"{origin}: {err}")
    return tuple(out)


def _drops(value: Any, where: str, errors: list[str]) -> dict[str, float]:
    if not isinstance(value, Mapping):
        errors.append(f"{where}: must be a mapping of metric to the largest allowed drop")
        return {}
    out: dict[str, float] = {}
    for metric, drop in value.items():
        try:
            number = float(drop)
            if isinstance(drop, bool) or not 0.0 <= number < float("inf"):
                raise ValueError
            out[str(metric)] = number
        except (TypeError, ValueError):
            errors.append(f"{where}: {metric}: {drop!r} must be a non-negative number")
    return out


def _apply(options: Options, values: Mapping[str, Any], origin: str,
           errors: list[str]) -> Options:
    changes: dict[str, Any] = {}
    floors = options.floors
    for raw_name, value in values.items():
        name = _key(raw_name)
        where = f"{origin}: {name.replace('_', '-')}"
        if name in _FLOOR_KEYS:
            try:
                if name == "zero_miss":
                    floors = replace(floors, zero_miss=_as_bool(where, value, errors))
                elif not isinstance(value, Mapping):
                    errors.append(f"{where}: must be a mapping of metric to floor")
                elif name == "floors":
                    floors = replace(floors, aggregate=_floor_map(value, origin, errors))
                else:
                    floors = replace(floors, per_shape=_floor_map(value, origin, errors))
            except ValueError as err:
                errors.append(f"{origin}: {err}")
            continue
        if name == "max_drop":
            changes[name] = _drops(value, where, errors)
            continue
        if name not in _SCALARS:
            errors.append(f"{where}: unknown option")
            continue
        if value is None and name in _OPTIONAL_STRS:
            changes[name] = None
        elif value is None:
            # An empty value in the file (``queries:``) must not become the string "None".
            errors.append(f"{where}: needs a value")
        elif name in _BOOLS:
            changes[name] = _as_bool(where, value, errors)
        elif name == "k":
            changes[name] = _as_k(value, errors)
        elif name == "gain":
            text = str(value).strip()
            if text in {g.value for g in Gain}:
                changes[name] = Gain(text)
            else:
                errors.append(f"{where}: {value!r} is not exponential or linear")
        elif name == "backend":
            changes[name] = _choice(where, value, BACKENDS, errors, fold_dashes=True)
        elif name == "graph_source":
            changes[name] = _choice(where, value, GRAPH_SOURCES, errors)
        elif name in _FRACTIONS:
            low_open = name == "alpha"  # a significance level of 0 can never be met
            try:
                number = float(value)
                if isinstance(value, bool) or not 0.0 <= number < 1.0 \
                        or (low_open and number == 0.0):
                    raise ValueError
                changes[name] = number
            except (TypeError, ValueError):
                bound = "above 0 and below 1" if low_open else "from 0 up to 1"
                errors.append(f"{where}: {value!r} must be a number {bound}")
        elif name == "comment_timeout":
            try:
                number = float(value)
                if isinstance(value, bool) or not 1.0 <= number <= MAX_COMMENT_TIMEOUT:
                    raise ValueError
                changes[name] = number
            except (TypeError, ValueError):
                errors.append(f"{where}: {value!r} must be a number of seconds from 1 to "
                              f"{MAX_COMMENT_TIMEOUT:g}")
        elif name == "relevance_threshold":
            if isinstance(value, bool) or str(value).strip() not in {"1", "2", "3"}:
                errors.append(f"{where}: {value!r} must be 1, 2 or 3")
            else:
                changes[name] = int(str(value).strip())
        else:
            changes[name] = str(value)
    return replace(options, floors=floors, **changes)


def build_options(
    file_values: Mapping[str, Any] | None,
    flag_values: Mapping[str, Any],
    *,
    file_name: str = "options file",
    defaults: Mapping[str, Any] | None = None,
) -> Options:
    """Built-in defaults, then ``defaults`` (e.g. the Action's), then the options file, then
    flags; every problem reported at once."""
    errors: list[str] = []
    options = _apply(Options(), defaults, "defaults", errors) if defaults else Options()
    if file_values is not None:
        if not isinstance(file_values, Mapping):
            raise ConfigError(f"{file_name}: must be a mapping of option to value")
        options = _apply(options, file_values, file_name, errors)
    options = _apply(options, {k: v for k, v in flag_values.items() if v is not None},
                     "command line", errors)
    known = set(metric_names(effective_k(options.k)))
    for floor in (*options.floors.aggregate, *options.floors.per_shape):
        if floor.metric in known and floor.metric not in COST_COLUMNS \
                and not 0.0 <= floor.value <= 1.0:
            errors.append(f"floor {floor.rule}: {floor.metric} lies between 0 and 1, so this "
                          "floor would always fail (or always hold)")
        elif floor.metric in COST_COLUMNS and floor.value < 0:
            errors.append(f"floor {floor.rule}: {floor.metric} is never negative")
    for metric in sorted(options.floors.metrics() | {options.primary_metric}
                         | set(options.max_drop)):
        if metric not in known:
            errors.append(f"floor or metric {metric!r} is unknown; known metrics: "
                          f"{', '.join(sorted(known))}")
    if errors:
        raise ConfigError("invalid options:\n  " + "\n  ".join(errors))
    return options


BASELINE_MODES = ("none", "auto", "ref", "file")


def parse_baseline(spec: str | None) -> tuple[str, str | None]:
    """``none`` | ``auto`` | ``ref:<git-ref>`` | ``file:<path>``; a bare path means ``file:``."""
    text = (spec or "none").strip()
    if text in ("", "none"):
        return "none", None
    if text == "auto":
        return "auto", None
    for mode in ("ref", "file"):
        if text.startswith(f"{mode}:"):
            value = text[len(mode) + 1:].strip()
            if not value:
                raise ConfigError(f"baseline {text!r}: give a value after '{mode}:'")
            return mode, value
    return "file", text
