"""JSON Schemas for the ground-truth and options files, built from the validator's definitions.

Editors (VS Code, JetBrains, any YAML language server) complete and check a file as it is
typed when it names its schema with a ``$schema`` key (JSON) or a
``# yaml-language-server: $schema=…`` comment (YAML). The published copies live in
``evaluator/schemas/`` and a test keeps them equal to what these functions build, so the
schema and the validator cannot drift apart. The validator stays the authority: it also
checks what a schema cannot (module paths against the checkout, duplicate ids, the module
universe) and reports some schema violations as warnings only (2–4 facts).
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from typing import Any

from evaluator.core.floors import _SPEC as FLOOR_SPEC
from evaluator.core.groundtruth import (
    KNOWN_SHAPES,
    MAX_FACTS,
    MAX_GRADE,
    MIN_FACTS,
    MIN_GRADE,
)
from evaluator.core.metrics import Gain
from evaluator.core.options import BACKENDS, GRAPH_SOURCES, Options

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
GROUND_TRUTH_FILE = "ground-truth.schema.json"
OPTIONS_FILE = "options.schema.json"

_NON_EMPTY = {"type": "string", "minLength": 1, "pattern": r"\S"}


def ground_truth_schema() -> dict[str, Any]:
    """The schema of ``retrieval_queries.json`` (JSON or YAML)."""
    grade = {"type": "integer", "minimum": MIN_GRADE, "maximum": MAX_GRADE,
             "description": "3 defines the answer, 2 is needed to answer, 1 is related, "
                            "0 is not relevant"}
    query = {
        "type": "object",
        "required": ["id", "question", "shape", "relevance_grades", "gold_facts"],
        "properties": {
            "id": {**_NON_EMPTY, "description": "unique id of the question"},
            "question": {**_NON_EMPTY, "description": "the question asked of the index, "
                                                      "as a teammate would ask it"},
            "shape": {"description": "focused (one defining module), cross-file (the answer "
                                     "spans modules) or identity (what/where is X); other "
                                     "labels form groups of their own",
                      "anyOf": [{"enum": list(KNOWN_SHAPES)}, _NON_EMPTY]},
            "relevance_grades": {
                "type": "object", "minProperties": 1,
                "description": "module path (relative to the indexed root, '/' separated) "
                               "to grade; every query grades every module of the universe",
                "additionalProperties": grade,
            },
            "gold_facts": {
                "type": "array", "minItems": MIN_FACTS, "maxItems": MAX_FACTS,
                "description": "short phrases the retrieved context should contain, quoted "
                               "from the answer's source (judged by token overlap)",
                "items": {**_NON_EMPTY, "minLength": 2},
            },
            "notes": {"type": "string", "description": "free text for the authors"},
            "review": {"type": "object", "description": "written by init for review; "
                                                        "ignored by the evaluation"},
        },
        "additionalProperties": True,
    }
    return {
        "$schema": SCHEMA_DRAFT,
        "title": "retrieval-eval ground truth (retrieval_queries.json)",
        "type": "object",
        "required": ["queries"],
        "properties": {
            "$schema": {"type": "string"},
            "description": {"type": "string"},
            "draft": {"type": "boolean", "description": "true while the file is a draft "
                                                        "from init; evaluations warn"},
            "queries": {"type": "array", "minItems": 1, "items": query},
        },
        "additionalProperties": True,
    }


_DESCRIPTIONS = {
    "queries": "the ground-truth file, relative to the checkout",
    "k": "cut-offs for the @k metrics (5 is always included)",
    "gain": "nDCG gain: exponential (2^grade - 1) or linear (grade)",
    "backend": "NeuralMind vector backend",
    "graph_source": "where the code graph comes from",
    "relevance_threshold": "the lowest grade that counts as relevant for binary metrics",
}


def _option_schema(name: str, default: Any) -> dict[str, Any]:
    out: dict[str, Any]
    if name == "k":
        out = {"anyOf": [{"type": "array", "items": {"type": "integer", "minimum": 1},
                          "minItems": 1},
                         {"type": "integer", "minimum": 1},
                         {"type": "string", "pattern": r"^\s*\d+(\s*,\s*\d+)*\s*$"}]}
    elif name == "gain":
        out = {"enum": [g.value for g in Gain]}
    elif name == "backend":
        out = {"enum": [*BACKENDS, "in-memory"]}
    elif name == "graph_source":
        out = {"enum": list(GRAPH_SOURCES)}
    elif name == "relevance_threshold":
        out = {"enum": [1, 2, 3]}
    elif name in ("alpha", "min_effect"):
        out = {"type": "number", "minimum": 0, "exclusiveMaximum": 1}
    elif isinstance(default, bool):
        out = {"type": "boolean"}
    elif name == "max_drop":
        out = {"type": "object", "additionalProperties": {"type": "number", "minimum": 0},
               "description": "metric to the largest allowed drop versus the baseline"}
    elif default is None:
        out = {"type": ["string", "null"]}
    else:
        out = {"type": "string"}
    if name in _DESCRIPTIONS:
        out["description"] = _DESCRIPTIONS[name]
    return out


def options_schema() -> dict[str, Any]:
    """The schema of the options file (``.retrieval-eval.yml``): every option of
    :class:`~evaluator.core.options.Options`, in kebab-case and snake_case."""
    floor_value = {"anyOf": [{"type": "number"},
                             {"type": "string", "pattern": FLOOR_SPEC.pattern}]}
    floors = {"type": "object", "additionalProperties": floor_value,
              "description": "metric to floor; a bare number means >="}
    properties: dict[str, Any] = {"$schema": {"type": "string"}}
    for f in fields(Options):
        if f.name == "floors":
            continue
        default = None if f.default is MISSING else f.default
        schema = _option_schema(f.name, default)
        properties[f.name.replace("_", "-")] = schema
        if "_" in f.name:
            properties[f.name] = schema
    for name, schema in (("floors", floors), ("shape-floors", floors),
                         ("zero-miss", {"type": "boolean"})):
        properties[name] = schema
        properties[name.replace("-", "_")] = schema
    return {
        "$schema": SCHEMA_DRAFT,
        "title": "retrieval-eval options file (.retrieval-eval.yml)",
        "type": "object",
        "properties": dict(sorted(properties.items())),
        "additionalProperties": False,
    }


def published() -> dict[str, dict[str, Any]]:
    """File name to schema, as published in ``evaluator/schemas/``."""
    return {GROUND_TRUTH_FILE: ground_truth_schema(), OPTIONS_FILE: options_schema()}
