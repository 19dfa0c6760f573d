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

from typing import Any

from evaluator.core.groundtruth import (
    FACT_KEYS,
    KNOWN_SHAPES,
    MAX_FACTS,
    MAX_GRADE,
    MAX_SUBJECT_CHARS,
    MIN_EVIDENCE_CHARS,
    MIN_FACTS,
    MIN_GRADE,
    QUERY_FIELDS,
)
from evaluator.core.options import OPTIONS

SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"
GROUND_TRUTH_FILE = "ground-truth.schema.json"
OPTIONS_FILE = "options.schema.json"

_NON_EMPTY = {"type": "string", "minLength": 1, "pattern": r"\S"}


_SOURCE = {
    "type": "object", "required": ["commit", "subject"], "additionalProperties": False,
    "description": "the commit a question drafted by init --from-history comes from",
    "properties": {
        "commit": {"type": "string", "pattern": "^[0-9a-f]{7,64}$"},
        "subject": {"type": "string", "maxLength": MAX_SUBJECT_CHARS},
        "pull_request": {"type": "integer", "minimum": 1,
                         "description": "the merged pull request whose title is the question"},
        "title": {"type": "string", "maxLength": MAX_SUBJECT_CHARS},
    },
    "dependentRequired": {"pull_request": ["title"], "title": ["pull_request"]},
}


_ANCHORED = {
    "type": "object", "required": list(FACT_KEYS), "additionalProperties": False,
    "properties": {
        "fact": {**_NON_EMPTY, "minLength": 2, "description": "the statement"},
        "evidence": {**_NON_EMPTY, "minLength": MIN_EVIDENCE_CHARS,
                     "description": "a verbatim span of the source that states the "
                                    "fact (one or a few lines); compared with "
                                    "whitespace normalised"},
    },
}


def ground_truth_schema() -> dict[str, Any]:
    """The schema of ``retrieval_queries.json`` (JSON or YAML)."""
    grade = {"type": "integer", "minimum": MIN_GRADE, "maximum": MAX_GRADE,
             "description": "3 defines the answer, 2 is needed to answer, 1 is related, "
                            "0 is not relevant"}
    query = {
        "type": "object",
        "required": list(QUERY_FIELDS),
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
                "type": "array", "maxItems": MAX_FACTS,
                "anyOf": [{"maxItems": 0}, {"minItems": MIN_FACTS}],
                "description": "short facts the retrieved context should contain: a "
                               "string (judged by its words), or an anchored fact "
                               "{fact, evidence} (supported exactly when the context holds "
                               "the evidence span, whitespace normalised); absent or empty: "
                               "a retrieval-only question, scored for ranking only",
                "items": {"anyOf": [{**_NON_EMPTY, "minLength": 2}, _ANCHORED]},
            },
            "source": _SOURCE,
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


def options_schema() -> dict[str, Any]:
    """The schema of the options file (``.retrieval-eval.yml``): every option of the option
    table that the file can hold, under its kebab-case and snake_case keys."""
    properties: dict[str, Any] = {"$schema": {"type": "string"}}
    for option in OPTIONS:
        if not option.file_key:
            continue
        schema = {**option.kind.schema(option), "description": option.help_text}
        properties[option.file_key] = schema
        properties[option.file_key.replace("-", "_")] = schema
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
