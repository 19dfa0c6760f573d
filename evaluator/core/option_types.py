"""The kinds of option value: each one object that owns every rule about its values.

An :class:`OptionType` reads a value from any layer (built-in default, options file,
command line, Action input: the same ``read`` for all, so the layers cannot disagree), gives
the JSON Schema fragment of the options file (:mod:`evaluator.core.schemas`), the Python type
of the value in the generated :class:`evaluator.core.options.Settings`, and how its flag is
spelled on the command line (a switch, one value, or several). The option table
(:data:`evaluator.core.options.OPTIONS`) names a type by its key in :data:`TYPES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from evaluator.core.floors import _SPEC as FLOOR_SPEC
from evaluator.core.floors import Floor
from evaluator.core.groundtruth import DEFAULT_MIX, parse_mix
from evaluator.core.metrics import Gain
from evaluator.core.scoring import DEFAULT_K
from evaluator.core.sections import NAME
from evaluator.core.shards import Shard
from evaluator.core.universe import invalid_globs
from evaluator.errors import ConfigError

Errors = list[str]
MAX_COMMENT_TIMEOUT = 900.0  # seconds: the options file cannot make the job wait longer
COMMENT_MODES = ("always", "on-change", "on-failure", "never")
_COMMENT_ALIASES = {"true": "always", "yes": "always", "on": "always", "1": "always",
                    "false": "never", "no": "never", "off": "never", "0": "never"}
COMMENT_WORDS = (*COMMENT_MODES, *_COMMENT_ALIASES)  # every accepted spelling (lower case)


class OptionLike(Protocol):
    """What a type reads of its option row."""

    @property
    def name(self) -> str: ...
    @property
    def choices(self) -> tuple[str, ...]: ...
    @property
    def default(self) -> Any: ...
    @property
    def fold_dashes(self) -> bool: ...


Parser = Callable[[Any, str, Errors, OptionLike], Any]
Schema = Callable[[OptionLike], dict[str, Any]]


@dataclass(frozen=True)
class OptionType:
    """One kind of option value.

    ``read(value, where, errors, option)`` turns a value from any layer into the setting
    (appending ``"<where>: <problem>"`` to ``errors`` when it cannot); ``schema(option)`` is
    its JSON Schema; ``python`` its type in ``Settings`` (``| None`` is added when the option
    has no default); ``switch``: the flag takes no value; ``many``: the flag takes one or
    more values; ``path``: values are file paths, which the readers make absolute and confine;
    ``secret``: a credential, never shown (its ``Settings`` field is left out of ``repr``).
    """

    read: Parser
    schema: Schema
    python: str
    switch: bool = False
    many: bool = False
    path: bool = False
    secret: bool = False


# ----------------------------------------------------------------------------- readers


def _choice(text: str, option: OptionLike) -> str | None:
    """``text`` as one of the option's choices (case folded; ``-`` as ``_`` where the option
    folds dashes), or ``None``."""
    folded = text.strip().lower()
    if option.fold_dashes:
        folded = folded.replace("-", "_")
    return next((c for c in option.choices if c.lower() == folded), None)


def _as_bool(value: Any, where: str, errors: Errors, _option: OptionLike) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "yes", "1", "on"):
        return True
    if text in ("false", "no", "0", "off", ""):
        return False
    errors.append(f"{where}: {value!r} is not true or false")
    return False


def _as_int(value: Any, where: str, errors: Errors, option: OptionLike) -> int | None:
    """A whole number of at least 1 (a count, a pull request or run id), or one of the
    option's choices."""
    text = str(value).strip()
    if option.choices:
        if isinstance(value, bool) or _choice(text, option) is None:
            *first, last = option.choices
            errors.append(f"{where}: {value!r} must be {', '.join(first)} or {last}")
            return None
        return int(text)
    if isinstance(value, bool) or not text.isdigit() or int(text) < 1:
        errors.append(f"{where}: {value!r} is not a whole number of at least 1")
        return None
    return int(text)


def _as_text(value: Any, where: str, errors: Errors, option: OptionLike) -> str:
    text = str(value)
    if option.choices:
        chosen = _choice(text, option)
        if chosen is None:
            errors.append(f"{where}: {value!r} is not one of {', '.join(option.choices)}")
            return text.strip()
        return chosen
    return text


#: The most cut-offs, and the deepest: every measure is computed at each cut-off.
MAX_CUTOFFS = 20
MAX_K = 1_000

def _as_k(value: Any, where: str, errors: Errors, _option: OptionLike) -> tuple[int, ...]:
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
        if not ks or any(k <= 0 or k > MAX_K for k in ks) or len(set(ks)) > MAX_CUTOFFS:
            raise ValueError
    except (TypeError, ValueError):
        shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:80] + "…"
        errors.append(f"{where}: {shown} must be positive integers such as 1,3,5,10 (at most "
                      f"{MAX_CUTOFFS} of them, each at most {MAX_K})")
        return DEFAULT_K
    return tuple(sorted(set(ks)))


def _as_gain(value: Any, where: str, errors: Errors, _option: OptionLike) -> Gain:
    text = str(value).strip().lower()
    if text in {g.value for g in Gain}:
        return Gain(text)
    errors.append(f"{where}: {value!r} is not exponential or linear")
    return Gain.EXPONENTIAL


def _number(value: Any, where: str, errors: Errors, *, ok: Callable[[float], bool],
            rule: str, fallback: float) -> float:
    try:
        number = float(value)
        if isinstance(value, bool) or not ok(number):
            raise ValueError
        return number
    except (TypeError, ValueError):
        errors.append(f"{where}: {value!r} must be {rule}")
        return fallback


def _as_fraction(value: Any, where: str, errors: Errors, _option: OptionLike) -> float:
    return _number(value, where, errors, ok=lambda x: 0.0 <= x < 1.0,
                   rule="a number from 0 up to 1", fallback=0.0)


def _as_level(value: Any, where: str, errors: Errors, _option: OptionLike) -> float:
    """A significance level: above 0 (a level of 0 can never be met) and below 1."""
    return _number(value, where, errors, ok=lambda x: 0.0 < x < 1.0,
                   rule="a number above 0 and below 1", fallback=0.05)


def _as_seconds(value: Any, where: str, errors: Errors, _option: OptionLike) -> float:
    return _number(value, where, errors, ok=lambda x: 1.0 <= x <= MAX_COMMENT_TIMEOUT,
                   rule=f"a number of seconds from 1 to {MAX_COMMENT_TIMEOUT:g}",
                   fallback=120.0)


def _as_floors(value: Any, where: str, errors: Errors, _option: OptionLike) -> tuple[Floor, ...]:
    if not isinstance(value, Mapping):
        errors.append(f"{where}: must be a mapping of metric to floor")
        return ()
    out: list[Floor] = []
    for metric, spec in value.items():
        try:
            out.append(Floor.parse(str(metric), spec))
        except ValueError as err:
            errors.append(f"{where}: {err}")
    return tuple(out)


def _as_drops(value: Any, where: str, errors: Errors, _option: OptionLike) -> dict[str, float]:
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


def _as_globs(value: Any, where: str, errors: Errors, _option: OptionLike) -> tuple[str, ...]:
    """Globs as a list, or one string of comma- or newline-separated globs."""
    if isinstance(value, str):
        items = [part.strip() for part in value.replace("\n", ",").split(",")]
        items = [part for part in items if part]
    elif isinstance(value, list | tuple):
        items = [str(item).strip() for item in value]
    else:
        errors.append(f"{where}: {value!r} must be a list of globs")
        return ()
    errors += [f"{where}: {problem}" for problem in invalid_globs(items)]
    return tuple(items)


def _as_mix(value: Any, where: str, errors: Errors, _option: OptionLike) -> dict[str, float]:
    try:
        return parse_mix(str(value))
    except ValueError as err:
        errors.append(f"{where}: {err}")
        return dict(DEFAULT_MIX)


def _as_shard(value: Any, where: str, errors: Errors, _option: OptionLike) -> str | None:
    try:
        return str(Shard.parse(str(value)))
    except ConfigError as err:
        errors.append(f"{where}: {err}")
        return None


def _as_budget(value: Any, where: str, errors: Errors, _option: OptionLike) -> str | None:
    """``--budget``: a whole number of tokens of at least 1, or ``neuralmind``."""
    text = str(value).strip().lower()
    if isinstance(value, bool) or not (text == "neuralmind" or (text.isdigit()
                                                                 and int(text) >= 1)):
        errors.append(f"{where}: {value!r} must be a number of tokens (at least 1) or "
                      "neuralmind")
        return None
    return text if text == "neuralmind" else str(int(text))


def _as_sections(value: Any, where: str, errors: Errors, _option: OptionLike) -> Any:
    """Kept as written: :func:`evaluator.core.sections.parse_sections` validates it against
    the floors once every layer is read."""
    if not isinstance(value, Mapping | list):
        errors.append(f"{where}: must be a mapping of section name to section")
        return None
    return value


def _as_paths(value: Any, where: str, errors: Errors, _option: OptionLike) -> tuple[str, ...]:
    items = value.split() if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not items:
        errors.append(f"{where}: give at least one file or folder")
        return ()
    return tuple(str(item) for item in items)


def _as_comment(value: Any, where: str, errors: Errors, _option: OptionLike) -> str:
    """``always | on-change | on-failure | never``; true/false (and the flags ``--comment`` /
    ``--no-comment``) mean always/never."""
    if isinstance(value, bool):
        return "always" if value else "never"
    text = str(value).strip().lower()
    text = _COMMENT_ALIASES.get(text, text)
    if text not in COMMENT_MODES:
        errors.append(f"{where}: {value!r} is not one of {', '.join(COMMENT_MODES)}, "
                      "true, false")
        return "never"
    return text


# ----------------------------------------------------------------------------- schemas

_GLOBS = {"anyOf": [{"type": "array", "items": {"type": "string", "minLength": 1}},
                    {"type": "string"}]}
_FLOORS = {"type": "object", "additionalProperties": {"anyOf": [
    {"type": "number"}, {"type": "string", "pattern": FLOOR_SPEC.pattern}]}}


def _int_schema(option: OptionLike) -> dict[str, Any]:
    if option.choices:
        return {"enum": [int(c) for c in option.choices]}
    return {"type": "integer", "minimum": 1}


def _text_schema(option: OptionLike) -> dict[str, Any]:
    if option.choices:
        return {"enum": list(option.choices) + [c.replace("_", "-") for c in option.choices
                                                if option.fold_dashes and "_" in c]}
    return {"type": ["string", "null"]} if option.default is None else {"type": "string"}


def _sections_schema(_option: OptionLike) -> dict[str, Any]:
    """A mapping of section name to section, or a list of sections each with a ``name``
    (the rules of :mod:`evaluator.core.sections`)."""
    keys: dict[str, Any] = {"path": {"type": "string", "minLength": 1},
                            "queries": {"type": "string", "minLength": 1},
                            "floors": _FLOORS, "shape-floors": _FLOORS,
                            "shape_floors": _FLOORS, "zero-miss": {"type": "boolean"},
                            "zero_miss": {"type": "boolean"}, "include": _GLOBS,
                            "exclude": _GLOBS}
    body = {"type": "object", "required": ["path"], "properties": keys,
            "additionalProperties": False}
    named = {**body, "required": ["name", "path"],
             "properties": {**keys, "name": {"type": "string", "pattern": NAME.pattern}}}
    return {"anyOf": [{"type": "object", "propertyNames": {"pattern": NAME.pattern},
                       "additionalProperties": body},
                      {"type": "array", "items": named}]}


def _fixed(schema: dict[str, Any]) -> Schema:
    return lambda _option: schema


TYPES: dict[str, OptionType] = {
    "bool": OptionType(_as_bool, _fixed({"type": "boolean"}), "bool", switch=True),
    "int": OptionType(_as_int, _int_schema, "int"),
    "text": OptionType(_as_text, _text_schema, "str"),
    "secret": OptionType(_as_text, _text_schema, "str", secret=True),
    "path": OptionType(_as_text, _text_schema, "str", path=True),
    "k": OptionType(_as_k, _fixed({"anyOf": [
        {"type": "array", "items": {"type": "integer", "minimum": 1}, "minItems": 1},
        {"type": "integer", "minimum": 1},
        {"type": "string", "pattern": r"^\s*\d+(\s*,\s*\d+)*\s*$"}]}), "tuple[int, ...]"),
    "gain": OptionType(_as_gain, _fixed({"enum": [g.value for g in Gain]}), "Gain"),
    "fraction": OptionType(_as_fraction, _fixed(
        {"type": "number", "minimum": 0, "exclusiveMaximum": 1}), "float"),
    "level": OptionType(_as_level, _fixed(
        {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}), "float"),
    "seconds": OptionType(_as_seconds, _fixed(
        {"type": "number", "minimum": 1, "maximum": MAX_COMMENT_TIMEOUT}), "float"),
    "floors": OptionType(_as_floors, _fixed(_FLOORS), "tuple[Floor, ...]"),
    "drops": OptionType(_as_drops, _fixed(
        {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}),
        "Mapping[str, float]"),
    "globs": OptionType(_as_globs, _fixed(_GLOBS), "tuple[str, ...]"),
    "mix": OptionType(_as_mix, _fixed({"type": "string", "pattern":
                                       r"^\s*[a-z-]+\s*=\s*[0-9.]+(\s*,\s*[a-z-]+\s*=\s*"
                                       r"[0-9.]+)*\s*$"}), "Mapping[str, float]"),
    "shard": OptionType(_as_shard, _fixed(
        {"type": "string", "pattern": r"^\s*[0-9]+\s*/\s*[0-9]+\s*$"}), "str"),
    "sections": OptionType(_as_sections, _sections_schema, "Any"),
    "budget": OptionType(_as_budget, _fixed({"anyOf": [
        {"type": "integer", "minimum": 1}, {"enum": ["neuralmind"]},
        {"type": "string", "pattern": r"^\s*[0-9]+\s*$"}, {"type": "null"}]}), "str"),
    "paths": OptionType(_as_paths, _fixed({"anyOf": [
        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        {"type": "string", "minLength": 1}]}), "tuple[str, ...]", many=True, path=True),
    # a mode, or true/false (and their spellings) for always/never
    "comment": OptionType(_as_comment, _fixed(
        {"anyOf": [{"type": "boolean"}, {"enum": list(COMMENT_WORDS)}]}), "str", switch=True),
}
