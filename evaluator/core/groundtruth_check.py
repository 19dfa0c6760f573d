"""Reading and validating a ground-truth file (the model: :mod:`evaluator.core.groundtruth`).

:func:`load_ground_truth` parses JSON or YAML, checks every query against the rules the
model's docstring lists, and reports *every* problem at once, each located by its query, its
field and its line; :func:`validation_summary` is the one line ``validate`` prints.
"""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import yaml

from evaluator.core import textcheck, yamlfile
from evaluator.core.groundtruth import (
    EVIDENCE_CONTROL,
    FACT_KEYS,
    KNOWN_SHAPES,
    MAX_FACTS,
    MAX_GRADE,
    MAX_SUBJECT_CHARS,
    MIN_EVIDENCE_CHARS,
    MIN_FACTS,
    MIN_GRADE,
    OPTIONAL_QUERY_FIELDS,
    QUERY_FIELDS,
    GroundTruth,
    Problem,
    Query,
    Severity,
    fact_problem,
    has_control,
    normalize_evidence,
    normalize_module,
    one_paragraph,
)
from evaluator.core.universe import Universe

#: The most questions one ground truth holds, and the longest question: a pull request
#: writes the file, and every question is asked of every system (NeuralMind's own intent
#: reading of a question grows faster than its length: a megabyte takes seconds).
MAX_QUERIES = 10_000
MAX_QUESTION_CHARS = 20_000

class _DuplicateKey(ValueError):
    """A JSON object that names one key twice (``json`` would keep the last silently)."""


def _one_of_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def parse_document(text: str, source: str) -> tuple[Any, list[Problem]]:
    """Parse JSON or YAML text; a syntax error becomes one problem with its line."""
    suffix = source.lower()
    # A .yml/.yaml file is YAML even in flow style (``{queries: [...]}``), which is not JSON.
    is_json = suffix.endswith(".json") or (
        not suffix.endswith((".yml", ".yaml")) and text.lstrip().startswith(("{", "["))
    )
    if is_json:
        try:
            return _valid_text(json.loads(text, object_pairs_hook=_one_of_each), source)
        except _DuplicateKey as err:  # what a reviewer reads would not be what is scored
            return None, [Problem("error", f"the key {textcheck.shown(str(err))!r} appears "
                                  "twice in one object; JSON would keep only the last, so "
                                  "write it once", source)]
        except json.JSONDecodeError as err:
            return None, [
                Problem("error", f"not valid JSON: {err.msg} (column {err.colno})", source,
                        line=err.lineno)
            ]
        except RecursionError:
            return None, [Problem("error", "nested too deeply to be a ground-truth file",
                                  source)]
    try:
        return _valid_text(yamlfile.load(text), source)
    except RecursionError:
        return None, [Problem("error", "nested too deeply to be a ground-truth file", source)]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        detail = getattr(err, "problem", None) or str(err).splitlines()[0]
        prefix = "" if isinstance(err, yamlfile.AnchorError) else "not valid YAML: "
        return None, [Problem("error", f"{prefix}{detail}", source, line=line)]


def _valid_text(data: Any, source: str) -> tuple[Any, list[Problem]]:
    """``data`` when every string in it is valid Unicode; else one problem naming the field."""
    bad = textcheck.first_bad_string(data)
    if bad is None:
        return data, []
    return None, [Problem("error", f"{bad} {textcheck.MESSAGE}", source)]


def _suggest(module: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(module, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


Location = tuple[str | int, ...]


def _node_lines(text: str) -> dict[Location, int]:
    """1-based line of every key and list item of the document, by its path
    (``("queries", 1, "relevance_grades", "src/a.py")``); empty when it cannot be composed.

    JSON is read through YAML's composer, which keeps positions (a JSON document is YAML
    flow style); the second of two equal keys gets its own line.
    """
    try:
        root = yamlfile.compose(text)
    except (yaml.YAMLError, RecursionError):
        return {}
    lines: dict[Location, int] = {}
    stack: list[tuple[Location, Any]] = [((), root)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = str(key_node.value) if isinstance(key_node, yaml.ScalarNode) else "?"
                lines.setdefault((*path, key), key_node.start_mark.line + 1)
                stack.append(((*path, key), value_node))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*path, i)] = item.start_mark.line + 1
                stack.append(((*path, i), item))
    return lines


class _Checker:
    """Collects problems while reading one document; each is located by its path."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.problems: list[Problem] = []
        self._lines: dict[Location, int] | None = None
        self.errors = 0  # kept as problems are added: counting them each time is quadratic
        self.commits: dict[str, str] = {}  # query id → the commit it was drafted from

    def line(self, path: Location) -> int | None:
        """The line of ``path``, or of its nearest ancestor that has one."""
        if self._lines is None:
            self._lines = _node_lines(self.text)
        while path:
            if path in self._lines:
                return self._lines[path]
            path = path[:-1]
        return None

    def add(self, severity: Severity, message: str, *, query_id: str | None = None,
            field_name: str | None = None, at: Location = ()) -> None:
        line = self.line(at) if at else None
        self.errors += severity == "error"
        self.problems.append(Problem(severity, message, self.source, query_id, field_name, line))

    def error(self, message: str, **where: Any) -> None:
        self.add("error", message, **where)

    def warn(self, message: str, **where: Any) -> None:
        self.add("warning", message, **where)


def _read_grades(raw: Any, qid: str, at: Location, check: _Checker) -> dict[str, int]:
    field_at = (*at, "relevance_grades")
    if not isinstance(raw, Mapping):
        check.error("must be a mapping of module path to grade 0-3", query_id=qid,
                    field_name="relevance_grades", at=field_at)
        return {}
    grades: dict[str, int] = {}
    for module, grade in raw.items():
        where = {"query_id": qid, "field_name": f"relevance_grades[{module!r}]",
                 "at": (*field_at, str(module))}
        norm = normalize_module(str(module))
        if norm is None:
            check.error("module path must be relative to the indexed root, not absolute, "
                        "outside it, or holding control characters", **where)
            continue
        if isinstance(grade, bool) or not isinstance(grade, int) or not (
            MIN_GRADE <= grade <= MAX_GRADE
        ):
            check.error(f"grade {grade!r} is not an integer 0-3 (3 defines the answer, "
                        "2 is needed, 1 is related, 0 is not relevant)", **where)
            continue
        if norm in grades and grades[norm] != grade:
            check.error(f"graded twice after normalisation to {norm!r} "
                        f"({grades[norm]} and {grade})", **where)
            continue
        grades[norm] = grade
    if grades and max(grades.values()) < 1:
        check.error("no module has grade >= 1, so the query has nothing relevant to find",
                    query_id=qid, field_name="relevance_grades", at=field_at)
    elif not grades and isinstance(raw, Mapping) and not raw:
        check.error("is empty: grade at least one module >= 1", query_id=qid,
                    field_name="relevance_grades", at=field_at)
    return grades


def _read_fact(raw: Any, where: dict[str, Any],
               check: _Checker) -> tuple[str, str | None] | None:
    """One entry of ``gold_facts``: ``(fact, evidence)``; ``None`` when it is not a string
    nor an anchored-fact object (reported)."""
    if isinstance(raw, str):
        return " ".join(raw.split()), None
    if not isinstance(raw, Mapping):
        check.error("must be a string, or an object {\"fact\": ..., \"evidence\": ...}",
                    **where)
        return None
    keys = set(map(str, raw))
    unknown = sorted(keys - set(FACT_KEYS))
    missing = [k for k in FACT_KEYS if k not in keys]
    if unknown or missing:
        parts = ([f"missing {', '.join(missing)}"] if missing else []) + (
            [f"unknown key(s) {', '.join(repr(u) for u in unknown)}"] if unknown else [])
        check.error(f"an anchored fact is exactly {{\"fact\": ..., \"evidence\": ...}}: "
                    f"{'; '.join(parts)}", **where)
        return None
    fact, evidence = raw["fact"], raw["evidence"]
    if not isinstance(fact, str) or not isinstance(evidence, str):
        check.error("the fact and its evidence must both be strings", **where)
        return None
    if EVIDENCE_CONTROL.search(evidence) or "\u2028" in evidence or "\u2029" in evidence:
        check.error("the evidence contains a control character other than whitespace",
                    **where)
        return None
    span = evidence.strip("\n\r")
    if not normalize_evidence(span):
        check.error("the evidence is empty: quote the line(s) of source that state the fact",
                    **where)
        return None
    if len(normalize_evidence(span)) < MIN_EVIDENCE_CHARS:
        check.warn(f"the evidence {normalize_evidence(span)!r} is shorter than "
                   f"{MIN_EVIDENCE_CHARS} characters, so it occurs in almost any context; "
                   "quote the whole line that states the fact", **where)
    return " ".join(fact.split()), span


def _read_facts(query: Mapping[str, Any], qid: str, at: Location,
                check: _Checker) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """The query's facts and, per fact, its evidence (``()`` when none is anchored); none
    when the field is absent or null (a retrieval-only question)."""
    if "gold_facts" not in query:
        return (), ()
    raw, field_at = query["gold_facts"], (*at, "gold_facts")
    if not isinstance(raw, list):
        check.error("must be a list of facts (strings, or objects {\"fact\": ..., "
                    "\"evidence\": ...})", query_id=qid, field_name="gold_facts", at=field_at)
        return (), ()
    read: list[tuple[str, str | None]] = []
    for i, item in enumerate(raw):
        where = {"query_id": qid, "field_name": f"gold_facts[{i}]", "at": (*field_at, i)}
        entry = _read_fact(item, where, check)
        if entry is None:
            continue
        fact, evidence = entry
        if not fact:
            check.error("is an empty fact", **where)
        elif has_control(fact):
            check.error("contains a control character", **where)
        elif evidence is None and (why := fact_problem(fact)) is not None:
            check.warn(f"{fact!r} {why}", **where)
        if fact:
            read.append(entry)
    if raw and not MIN_FACTS <= len(read) <= MAX_FACTS:
        check.warn(f"has {len(read)} fact{'' if len(read) == 1 else 's'}; the "
                   "ground-truth format asks for "
                   f"{MIN_FACTS}-{MAX_FACTS} short phrases the retrieved context should "
                   "contain (they are what faithfulness is judged on), or none for a "
                   "retrieval-only question", query_id=qid,
                   field_name="gold_facts", at=field_at)
    spans = tuple(span for _, span in read)
    return tuple(f for f, _ in read), (spans if any(e is not None for e in spans) else ())


def _check_shape(shape: str, qid: str, at: Location, strict: bool, check: _Checker) -> None:
    """A label close to a documented shape is almost surely a typo (``focussed``)."""
    label = shape.strip()
    if label in KNOWN_SHAPES:
        return
    close = difflib.get_close_matches(label.lower(), KNOWN_SHAPES, n=1, cutoff=0.75)
    if close:
        check.add("error" if strict else "warning",
                  f"shape {label!r} is not one of {', '.join(KNOWN_SHAPES)} (did you mean "
                  f"{close[0]!r}?); as written it is reported as a group of its own and "
                  f"the {close[0]} floors do not apply to it", query_id=qid,
                  field_name="shape", at=(*at, "shape"))


def _check_texts(raw: Mapping[str, Any], at: Location, where_id: dict[str, Any],
                 check: _Checker) -> bool:
    """No control characters in the id, question and shape (they could forge CI lines)."""
    for name in ("id", "question", "shape"):
        value = raw.get(name)
        if isinstance(value, str) and name == "question":
            value = one_paragraph(value)
        if isinstance(value, str) and has_control(value):
            check.error("contains a control character (a newline, tab, escape …); these "
                        "could forge workflow commands in a CI log", field_name=name,
                        at=(*at, name), **where_id)
            return False
    return True


def _check_unknown_fields(raw: Mapping[str, Any], at: Location, where_id: dict[str, Any],
                          check: _Checker) -> None:
    known = (*QUERY_FIELDS, *OPTIONAL_QUERY_FIELDS)
    unknown = sorted(set(map(str, raw)) - set(known))
    if unknown:
        shown = [u.encode("unicode_escape").decode("ascii") if has_control(u) else u
                 for u in unknown]
        close = [f"{u!r} (did you mean {c[0]!r}?)" for u in unknown
                 if (c := difflib.get_close_matches(u, known, n=1, cutoff=0.75))]
        hint = f"; {', '.join(close)}" if close else ""
        check.warn(f"unknown field(s) ignored: {', '.join(shown)}{hint}",
                   at=(*at, unknown[0]), **where_id)


_COMMIT = re.compile(r"[0-9a-f]{7,64}\Z")


def _check_source(raw: Any, qid: str, at: Location, check: _Checker) -> None:
    """``source: {commit, subject[, pull_request, title]}``: where a question drafted from
    history comes from (a merged pull request: its number and title)."""
    field_at = (*at, "source")
    where = {"query_id": qid, "field_name": "source", "at": field_at}
    keys = set(map(str, raw)) if isinstance(raw, Mapping) else set()
    if not isinstance(raw, Mapping) or keys not in ({"commit", "subject"}, {
            "commit", "subject", "pull_request", "title"}):
        check.error("must be a mapping with exactly commit and subject, and pull_request "
                    "and title for a merged pull request (the commit a question drafted "
                    "from history comes from)", **where)
        return
    number, title = raw.get("pull_request", 1), raw.get("title", "")
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        check.error("source.pull_request must be a pull request's number (1 or more)",
                    **where)
    if not isinstance(title, str) or has_control(title) or len(title) > MAX_SUBJECT_CHARS:
        check.error(f"source.title must be one line of text of at most "
                    f"{MAX_SUBJECT_CHARS} characters", **where)
    commit, subject = raw["commit"], raw["subject"]
    if not isinstance(commit, str) or not _COMMIT.match(commit):
        check.error("source.commit must be a commit hash (7-64 lowercase hex digits)",
                    **where)
    else:
        check.commits[qid] = commit
    if not isinstance(subject, str) or has_control(subject) or \
            len(subject) > MAX_SUBJECT_CHARS:
        check.error(f"source.subject must be one line of text of at most "
                    f"{MAX_SUBJECT_CHARS} characters", **where)


def _read_optional(raw: Mapping[str, Any], qid: str, at: Location,
                   check: _Checker) -> tuple[tuple[str, ...], tuple[str | None, ...]]:
    """The optional fields: the gold facts with their evidence (none: retrieval-only) and
    the source."""
    if "source" in raw:
        _check_source(raw["source"], qid, at, check)
    return _read_facts(raw, qid, at, check) if raw.get("gold_facts") is not None else ((), ())


def _read_query(raw: Any, index: int, seen: set[str], check: _Checker,
                graded: list[tuple[str, Location, Mapping[str, int]]],
                strict: bool = False) -> Query | None:
    """One query, or ``None`` when it has errors; ``graded`` collects every query's readable
    grades (valid query or not) so the module check can report all typos at once."""
    at: Location = ("queries", index)
    if not isinstance(raw, Mapping):
        check.error(f"queries[{index}] must be a mapping with {', '.join(QUERY_FIELDS)}",
                    at=at)
        return None
    raw_id = raw.get("id")
    qid = str(raw_id) if raw_id not in (None, "") else f"#{index + 1}"
    if has_control(qid):
        qid = qid.encode("unicode_escape").decode("ascii")
    where_id: dict[str, Any] = {"query_id": qid}
    ok_text = _check_texts(raw, at, where_id, check)
    missing = [f for f in QUERY_FIELDS if f not in raw]
    if missing:
        check.error(f"missing field(s): {', '.join(missing)}", at=at, **where_id)
    _check_unknown_fields(raw, at, where_id, check)
    ok = not missing and ok_text
    if "id" in raw and (not isinstance(raw_id, str) or not raw_id.strip()):
        check.error("id must be a non-empty string", field_name="id", at=(*at, "id"),
                    **where_id)
        ok = False
    elif isinstance(raw_id, str):
        if qid in seen:
            # Located at this (the second) occurrence: the first one is fine.
            check.error("duplicate id: an earlier query already uses it", field_name="id",
                        at=(*at, "id"), **where_id)
            ok = False
        seen.add(qid)
    ok = _question_ok(raw, at, check, where_id) and ok
    shape = raw.get("shape")
    if "shape" in raw and (not isinstance(shape, str) or not shape.strip()):
        check.error(f"shape must be a non-empty label such as {', '.join(KNOWN_SHAPES)}",
                    field_name="shape", at=(*at, "shape"), **where_id)
        ok = False
    elif isinstance(shape, str) and ok_text:
        _check_shape(shape, qid, at, strict, check)
    before = check.errors
    grades = _read_grades(raw["relevance_grades"], qid, at, check) if "relevance_grades" in raw \
        else {}
    facts, evidence = _read_optional(raw, qid, at, check)
    if grades:
        graded.append((qid, at, grades))
    if check.errors > before or not ok:
        return None
    question = raw.get("question")
    assert isinstance(question, str)
    assert isinstance(shape, str)
    return Query(id=qid, question=one_paragraph(question), shape=shape.strip(), grades=grades,
                 gold_facts=facts, evidence=evidence)


def _grade_at(at: Location, module: str) -> Location:
    return (*at, "relevance_grades", module)


def _check_modules(graded: Sequence[tuple[str, Location, Mapping[str, int]]],
                   present: frozenset[str], check: _Checker,
                   universe: Universe | None = None) -> None:
    """The typo guard: every graded module must exist in the indexed checkout; the
    suggestion comes from the module universe when there is one (a typo of ``core.py`` is
    not ``tests/test_core.py``).

    Runs over the grades of every query, including queries with other errors, so that every
    problem is reported at once.
    """
    candidates = universe.modules if universe is not None and universe.modules else present
    for qid, at, grades in graded:
        for module in sorted(grades):
            if module not in present:
                moved = (f"; the question comes from commit {check.commits[qid][:12]}, and "
                         "the file has moved or gone since: grade where the code is now"
                         if qid in check.commits else "")
                check.error(f"module {module!r} does not exist in the indexed root"
                            f"{_suggest(module, candidates)}{moved}", query_id=qid,
                            field_name=f"relevance_grades[{module!r}]",
                            at=_grade_at(at, module))


def _check_universe(graded: Sequence[tuple[str, Location, Mapping[str, int]]],
                    universe: Universe, present: frozenset[str] | None, strict: bool,
                    check: _Checker) -> None:
    """A graded module left out of the module universe is never ranked, so it can never be
    found: its grade is ignored (a warning, an error with ``strict``)."""
    severity: Severity = "error" if strict else "warning"
    for qid, at, grades in graded:
        for module in sorted(grades):
            if module in universe or (present is not None and module not in present):
                continue
            reason = universe.reason(module) or "not a module"
            check.add(severity, f"module {module!r} is outside the module universe "
                      f"({reason}): it is never ranked, so its grade {grades[module]} is "
                      "ignored; drop it, or add it to the universe with the include option",
                      query_id=qid, field_name=f"relevance_grades[{module!r}]",
                      at=_grade_at(at, module))


def _check_coverage(queries: Sequence[Query], positions: Mapping[str, Location], strict: bool,
                    check: _Checker, universe: Universe | None = None) -> None:
    """Complete coverage: every module is graded by every query (the universe's modules when
    a universe is given, else every module some query grades)."""
    modules = set(universe.modules) if universe is not None else \
        {m for q in queries for m in q.grades}
    severity: Severity = "error" if strict else "warning"
    for query in queries:
        missing = sorted(modules - set(query.grades))
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if
                                              len(missing) > 5 else "")
            scope = "of the module universe" if universe is not None else "graded elsewhere"
            check.add(severity, f"incomplete coverage: {len(missing)} module(s) {scope} are "
                      f"not graded here and count as grade 0 (the ground-truth format asks "
                      f"every query to grade every module, so nothing is judged irrelevant "
                      f"by omission): {shown}",
                      query_id=query.id, field_name="relevance_grades",
                      at=(*positions.get(query.id, ()), "relevance_grades"))


def _restrict(query: Query, universe: Universe, present: frozenset[str] | None) -> Query:
    """The query without the grades of modules outside the universe (a module missing from
    the checkout is the typo guard's error, not dropped here)."""
    kept = {m: g for m, g in query.grades.items()
            if m in universe or (present is not None and m not in present)}
    return query if len(kept) == len(query.grades) else replace(query, grades=kept)


def _apply_universe(queries: list[Query],
                    graded: Sequence[tuple[str, Location, Mapping[str, int]]],
                    universe: Universe, present: frozenset[str] | None, strict: bool,
                    check: _Checker) -> list[Query]:
    """Report grades outside the universe and drop them; a query left with nothing
    relevant is an error."""
    _check_universe(graded, universe, present, strict, check)
    positions = {qid: at for qid, at, _grades in graded}
    restricted = [_restrict(q, universe, present) for q in queries]
    for before, after in zip(queries, restricted, strict=True):
        if after.grades is not before.grades and (not after.grades
                                                  or max(after.grades.values()) < 1):
            check.error("no module of the module universe has grade >= 1, so the query "
                        "has nothing relevant to find", query_id=before.id,
                        field_name="relevance_grades",
                        at=(*positions.get(before.id, ()), "relevance_grades"))
    return restricted


def _question_ok(raw: Mapping[str, Any], at: Location, check: _Checker,
                 where_id: Mapping[str, Any]) -> bool:
    """Whether the query's ``question`` (when it has one) is a string, not empty and not
    longer than :data:`MAX_QUESTION_CHARS`; each problem reported."""
    question = raw.get("question")
    problem = None
    if "question" in raw and not isinstance(question, str):
        problem = f"question must be a string, not {type(question).__name__}"
    elif isinstance(question, str) and not question.strip():
        problem = "question is empty"
    elif isinstance(question, str) and len(question) > MAX_QUESTION_CHARS:
        problem = (f"question is {len(question):,} characters long, over the "
                   f"{MAX_QUESTION_CHARS:,} a question may hold; shorten it")
    if problem is not None:
        check.error(problem, field_name="question", at=(*at, "question"), **where_id)
    return problem is None


def _queries_list(raw: Any, check: _Checker) -> list[Any] | None:
    """The ``queries`` list, or None (with the error) when it is empty, no list, or longer
    than :data:`MAX_QUERIES`."""
    if not isinstance(raw, list) or not raw:
        check.error('"queries" must be a non-empty list', at=("queries",))
        return None
    if len(raw) > MAX_QUERIES:
        check.error(f'"queries" holds {len(raw):,} questions, over the {MAX_QUERIES:,} '
                    "one evaluation asks; split it into sections (see docs/monorepos.md)",
                    at=("queries",))
        return None
    return raw


def load_ground_truth(
    text: str,
    source: str,
    *,
    present_modules: Iterable[str] | None = None,
    strict: bool = False,
    universe: Universe | None = None,
) -> tuple[GroundTruth | None, tuple[Problem, ...]]:
    """Parse and validate a ground-truth document.

    Returns the ground truth (``None`` when any error was found) and every problem, errors
    and warnings alike. ``present_modules`` are the files of the indexed root (POSIX,
    relative); when given, graded modules that do not exist are errors. ``universe`` (the
    module universe): grades of modules outside it are reported and dropped, and coverage is
    checked against its modules.
    """
    check = _Checker(text, source)
    data, syntax = parse_document(text, source)
    if syntax:
        return None, tuple(syntax)
    if not isinstance(data, Mapping) or "queries" not in data:
        check.error('top level must be a mapping with a "queries" list')
        return None, tuple(check.problems)
    schema_ref = data.get("$schema")
    if schema_ref is not None and not isinstance(schema_ref, str):
        check.error('"$schema" must be a string (the URL or path of the JSON Schema)',
                    at=("$schema",))
    raw_queries = _queries_list(data["queries"], check)
    if raw_queries is None:
        return None, tuple(check.problems)
    draft_value = data.get("draft", False)
    if not isinstance(draft_value, bool):
        check.error(f'"draft" must be true or false, not {draft_value!r}', at=("draft",))
        return None, tuple(check.problems)
    draft = draft_value
    if draft:
        check.warn("this ground truth is marked as a draft: review the grades and facts, "
                   'then remove "draft"', at=("draft",))
    seen: set[str] = set()
    graded: list[tuple[str, Location, Mapping[str, int]]] = []
    queries = [q for i, raw in enumerate(raw_queries)
               if (q := _read_query(raw, i, seen, check, graded, strict))]
    present = None
    if present_modules is not None:
        present = frozenset(unicodedata.normalize("NFC", m) for m in present_modules)
        _check_modules(graded, present, check, universe)
    positions = {qid: at for qid, at, _grades in graded}
    if universe is not None:
        queries = _apply_universe(queries, graded, universe, present, strict, check)
    _check_coverage(queries, positions, strict, check, universe)
    problems = tuple(sorted(check.problems, key=lambda p: (p.line is None, p.line or 0)))
    if any(p.severity == "error" for p in problems):
        return None, problems
    return GroundTruth(source=source, queries=tuple(queries), draft=draft,
                       problems=problems), problems


def fact_lines(text: str, source: str) -> dict[tuple[str, int], int]:
    """The 1-based line of each gold fact, by ``(query id, fact index)`` (the first query
    with an id wins); empty when the document cannot be read."""
    data, syntax = parse_document(text, source)
    raw = data.get("queries") if not syntax and isinstance(data, Mapping) else None
    if not isinstance(raw, list):
        return {}
    lines = _node_lines(text)
    out: dict[tuple[str, int], int] = {}
    for qi, query in enumerate(raw):
        facts = query.get("gold_facts") if isinstance(query, Mapping) else None
        if not isinstance(facts, list) or not isinstance(query.get("id"), str):
            continue
        for fi in range(len(facts)):
            line = lines.get(("queries", qi, "gold_facts", fi))
            if line is not None:
                out.setdefault((query["id"], fi), line)
    return out


def count_queries(text: str, source: str) -> int:
    """How many entries the document's ``queries`` list holds (0 when it cannot be read):
    the figure a validation summary reports, whether or not the entries are valid."""
    data, syntax = parse_document(text, source)
    if syntax or not isinstance(data, Mapping):
        return 0
    raw = data.get("queries")
    return len(raw) if isinstance(raw, list) else 0


def validation_summary(text: str, source: str, problems: Sequence[Problem]) -> str:
    """``FILE: 2 queries, 4 error(s), 1 warning(s)`` (every query counted, valid or not)."""
    errors = sum(1 for p in problems if p.severity == "error")
    n = count_queries(text, source)
    return (f"{source}: {n} quer{'y' if n == 1 else 'ies'}, {errors} error(s), "
            f"{len(problems) - errors} warning(s)")
