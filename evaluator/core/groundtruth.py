"""The ground-truth model (``retrieval_queries.json``, the N-15 format) and its validation.

A ground-truth file is ``{"queries": [...]}`` (JSON or YAML; unknown top-level keys are
ignored). Each query has:

* ``id`` — a unique, non-empty string;
* ``question`` — the non-empty question asked of the index;
* ``shape`` — ``focused`` (one defining module), ``cross-file`` (the answer spans modules)
  or ``identity`` (what/where is X); other labels are allowed and reported as their own group;
* ``relevance_grades`` — ``{module path: grade}``, grade an integer 0–3 (3 = defines the
  answer, 2 = needed, 1 = related, 0 = not relevant); at least one grade ≥ 1. The N-15
  "complete coverage" rule asks every query to grade every module; a module that is
  ungraded for a query counts as grade 0;
* ``gold_facts`` — 2–4 short facts the retrieved context should contain.

Validation reports *every* problem at once. Errors stop the evaluation; warnings are
reported and the evaluation goes on (``strict`` turns incomplete coverage into an error).
"""

from __future__ import annotations

import difflib
import json
import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import yaml

Severity = Literal["error", "warning"]

KNOWN_SHAPES: tuple[str, ...] = ("focused", "cross-file", "identity")
MIN_GRADE = 0
MAX_GRADE = 3
MIN_FACTS = 2
MAX_FACTS = 4
QUERY_FIELDS: tuple[str, ...] = ("id", "question", "shape", "relevance_grades", "gold_facts")
OPTIONAL_QUERY_FIELDS: tuple[str, ...] = ("notes", "review")


@dataclass(frozen=True)
class Problem:
    """One validation finding, located by file, query id and field."""

    severity: Severity
    message: str
    file: str
    query_id: str | None = None
    field: str | None = None
    line: int | None = None

    def render(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        if self.query_id is not None:
            where += f": query {self.query_id!r}"
        if self.field is not None:
            where += f", field {self.field}"
        return f"{self.severity}: {where}: {self.message}"


@dataclass(frozen=True)
class Query:
    """One ground-truth question; ``grades`` holds every graded module (POSIX paths)."""

    id: str
    question: str
    shape: str
    grades: Mapping[str, int]
    gold_facts: tuple[str, ...]

    def grade(self, module: str) -> int:
        """The grade of ``module`` for this query; ungraded modules count as 0."""
        return self.grades.get(module, 0)

    def modules_with_grade(self, grade: int) -> tuple[str, ...]:
        return tuple(sorted(m for m, g in self.grades.items() if g == grade))


@dataclass(frozen=True)
class GroundTruth:
    """A validated ground-truth file."""

    source: str
    queries: tuple[Query, ...]
    draft: bool = False
    problems: tuple[Problem, ...] = field(default=())

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def shapes(self) -> tuple[str, ...]:
        """Shapes in display order: the documented ones first, then other labels sorted."""
        present = {q.shape for q in self.queries}
        return tuple(s for s in KNOWN_SHAPES if s in present) + tuple(
            sorted(present - set(KNOWN_SHAPES))
        )

    def modules(self) -> frozenset[str]:
        return frozenset(m for q in self.queries for m in q.grades)


_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029]")


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (newline, tab, escape, line separators)."""
    return bool(_CONTROL.search(text))


def normalize_module(path: str) -> str | None:
    """A module path as POSIX, relative to the indexed root; ``None`` when it escapes it.

    Backslashes become slashes, ``./`` and duplicate slashes go, ``a/../b`` folds, and the
    text is put in Unicode NFC (so ``café.py`` typed on macOS matches the checkout's).
    Absolute paths, paths that climb out of the root (``../x``) and paths with control
    characters are rejected.
    """
    norm = unicodedata.normalize("NFC", path.strip().replace("\\", "/"))
    if not norm or has_control(norm):
        return None
    # Fold to a fixed point: folding ``x/..`` can expose whitespace (``x/../ b``), and
    # stripping it can expose more to fold, so one pass would not be idempotent.
    while True:
        folded = posixpath.normpath(norm).strip()
        if folded == norm:
            break
        norm = folded
    # Checked after folding, so ``x/../C:/y`` and ``x/../ /y`` cannot slip through.
    if (norm in ("", ".", "..") or norm.startswith(("/", "../"))
            or (len(norm) > 1 and norm[1] == ":")):
        return None
    return norm


def _line_of(text: str, needle: str) -> int | None:
    """1-based line of the first occurrence of ``needle`` in ``text`` (for annotations)."""
    index = text.find(needle)
    return None if index < 0 else text.count("\n", 0, index) + 1


def parse_document(text: str, source: str) -> tuple[Any, list[Problem]]:
    """Parse JSON or YAML text; a syntax error becomes one problem with its line."""
    suffix = source.lower()
    # A .yml/.yaml file is YAML even in flow style (``{queries: [...]}``), which is not JSON.
    is_json = suffix.endswith(".json") or (
        not suffix.endswith((".yml", ".yaml")) and text.lstrip().startswith(("{", "["))
    )
    if is_json:
        try:
            return json.loads(text), []
        except json.JSONDecodeError as err:
            return None, [
                Problem("error", f"not valid JSON: {err.msg} (column {err.colno})", source,
                        line=err.lineno)
            ]
        except RecursionError:
            return None, [Problem("error", "nested too deeply to be a ground-truth file",
                                  source)]
    try:
        return yaml.safe_load(text), []
    except RecursionError:
        return None, [Problem("error", "nested too deeply to be a ground-truth file", source)]
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        detail = getattr(err, "problem", None) or str(err).splitlines()[0]
        return None, [Problem("error", f"not valid YAML: {detail}", source, line=line)]


def _suggest(module: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(module, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class _Checker:
    """Collects problems while reading one document."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.problems: list[Problem] = []
        self.errors = 0  # kept as problems are added: counting them each time is quadratic

    def add(self, severity: Severity, message: str, *, query_id: str | None = None,
            field_name: str | None = None, needle: str | None = None) -> None:
        line = _line_of(self.text, needle) if needle else None
        self.errors += severity == "error"
        self.problems.append(Problem(severity, message, self.source, query_id, field_name, line))

    def error(self, message: str, **where: Any) -> None:
        self.add("error", message, **where)

    def warn(self, message: str, **where: Any) -> None:
        self.add("warning", message, **where)


def _read_grades(raw: Any, qid: str, check: _Checker) -> dict[str, int]:
    if not isinstance(raw, Mapping):
        check.error("must be a mapping of module path to grade 0-3", query_id=qid,
                    field_name="relevance_grades")
        return {}
    grades: dict[str, int] = {}
    for module, grade in raw.items():
        where = {"query_id": qid, "field_name": f"relevance_grades[{module!r}]",
                 "needle": f'"{module}"'}
        norm = normalize_module(str(module))
        if norm is None:
            check.error("module path must be relative to the indexed root, not absolute, "
                        "outside it, or holding control characters", **where)
            continue
        if isinstance(grade, bool) or not isinstance(grade, int) or not (
            MIN_GRADE <= grade <= MAX_GRADE
        ):
            check.error(f"grade {grade!r} is not an integer 0-3", **where)
            continue
        if norm in grades and grades[norm] != grade:
            check.error(f"graded twice after normalisation to {norm!r} "
                        f"({grades[norm]} and {grade})", **where)
            continue
        grades[norm] = grade
    if grades and max(grades.values()) < 1:
        check.error("no module has grade >= 1, so the query has nothing relevant to find",
                    query_id=qid, field_name="relevance_grades")
    elif not grades and isinstance(raw, Mapping) and not raw:
        check.error("is empty: grade at least one module >= 1", query_id=qid,
                    field_name="relevance_grades")
    return grades


def _read_facts(raw: Any, qid: str, check: _Checker) -> tuple[str, ...]:
    if not isinstance(raw, list) or not all(isinstance(f, str) for f in raw):
        check.error("must be a list of strings", query_id=qid, field_name="gold_facts")
        return ()
    facts = tuple(" ".join(f.split()) for f in raw)
    for i, fact in enumerate(facts):
        if not fact:
            check.error("is an empty fact", query_id=qid, field_name=f"gold_facts[{i}]")
        elif has_control(fact):
            check.error("contains a control character", query_id=qid,
                        field_name=f"gold_facts[{i}]")
    facts = tuple(f for f in facts if f)
    if not MIN_FACTS <= len(facts) <= MAX_FACTS:
        check.warn(f"has {len(facts)} facts; the N-15 format asks for {MIN_FACTS}-{MAX_FACTS}",
                   query_id=qid, field_name="gold_facts")
    return facts


def _check_fields(raw: Mapping[Any, Any], qid: str, seen: set[str], check: _Checker) -> bool:
    """The id (non-empty, unique), question and shape of one query; False on an error."""
    where_id = {"query_id": qid}
    raw_id = raw.get("id")
    ok = True
    if "id" in raw and (not isinstance(raw_id, str) or not raw_id.strip()):
        check.error("id must be a non-empty string", field_name="id", **where_id)
        ok = False
    elif isinstance(raw_id, str):
        if qid in seen:
            check.error("duplicate id", field_name="id", needle=f'"{qid}"', **where_id)
            ok = False
        seen.add(qid)
    question = raw.get("question")
    if "question" in raw and not isinstance(question, str):
        check.error(f"question must be a string, not {type(question).__name__}",
                    field_name="question", **where_id)
        ok = False
    elif "question" in raw and isinstance(question, str) and not question.strip():
        check.error("question is empty", field_name="question", **where_id)
        ok = False
    shape = raw.get("shape")
    if "shape" in raw and (not isinstance(shape, str) or not shape.strip()):
        check.error(f"shape must be a non-empty label such as {', '.join(KNOWN_SHAPES)}",
                    field_name="shape", **where_id)
        ok = False
    return ok


def _read_query(raw: Any, index: int, seen: set[str], check: _Checker,
                graded: list[tuple[str, Mapping[str, int]]]) -> Query | None:
    """One query, or ``None`` when it has errors; ``graded`` collects every query's readable
    grades (valid query or not) so the module check can report all typos at once."""
    if not isinstance(raw, Mapping):
        check.error(f"queries[{index}] must be a mapping with {', '.join(QUERY_FIELDS)}")
        return None
    raw_id = raw.get("id")
    qid = str(raw_id) if raw_id not in (None, "") else f"#{index + 1}"
    if has_control(qid):
        qid = qid.encode("unicode_escape").decode("ascii")
    where_id = {"query_id": qid}
    for name in ("id", "question", "shape"):
        if isinstance(raw.get(name), str) and has_control(raw[name]):
            check.error("contains a control character (a newline, tab, escape …); these "
                        "could forge workflow commands in a CI log", field_name=name, **where_id)
            ok_text = False
            break
    else:
        ok_text = True
    missing = [f for f in QUERY_FIELDS if f not in raw]
    if missing:
        check.error(f"missing field(s): {', '.join(missing)}", **where_id)
    unknown = sorted(set(map(str, raw)) - set(QUERY_FIELDS) - set(OPTIONAL_QUERY_FIELDS))
    if unknown:
        shown = [u.encode("unicode_escape").decode("ascii") if has_control(u) else u
                 for u in unknown]
        check.warn(f"unknown field(s) ignored: {', '.join(shown)}", **where_id)
    ok = _check_fields(raw, qid, seen, check) and not missing and ok_text
    question, shape = raw.get("question"), raw.get("shape")
    before = check.errors
    grades = _read_grades(raw.get("relevance_grades"), qid, check) if "relevance_grades" in raw \
        else {}
    facts = _read_facts(raw.get("gold_facts"), qid, check) if "gold_facts" in raw else ()
    if grades:
        graded.append((qid, grades))
    if check.errors > before or not ok:
        return None
    assert isinstance(question, str)
    assert isinstance(shape, str)
    return Query(id=qid, question=question.strip(), shape=shape.strip(), grades=grades,
                 gold_facts=facts)


def _check_modules(graded: Sequence[tuple[str, Mapping[str, int]]], present: frozenset[str],
                   check: _Checker) -> None:
    """The typo guard: every graded module must exist in the indexed checkout.

    Runs over the grades of every query, including queries with other errors, so that every
    problem is reported at once.
    """
    for qid, grades in graded:
        for module in sorted(grades):
            if module not in present:
                check.error(f"module {module!r} does not exist in the indexed root"
                            f"{_suggest(module, present)}", query_id=qid,
                            field_name=f"relevance_grades[{module!r}]", needle=f'"{module}"')


def _check_coverage(queries: Sequence[Query], strict: bool, check: _Checker) -> None:
    """N-15 complete coverage: a module graded in one query is graded in every query."""
    universe = {m for q in queries for m in q.grades}
    severity: Severity = "error" if strict else "warning"
    for query in queries:
        missing = sorted(universe - set(query.grades))
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if
                                              len(missing) > 5 else "")
            check.add(severity, f"incomplete coverage: {len(missing)} module(s) graded "
                      f"elsewhere are not graded here (counted as 0): {shown}",
                      query_id=query.id, field_name="relevance_grades")


def load_ground_truth(
    text: str,
    source: str,
    *,
    present_modules: Iterable[str] | None = None,
    strict: bool = False,
) -> tuple[GroundTruth | None, tuple[Problem, ...]]:
    """Parse and validate a ground-truth document.

    Returns the ground truth (``None`` when any error was found) and every problem, errors
    and warnings alike. ``present_modules`` are the files of the indexed root (POSIX,
    relative); when given, graded modules that do not exist are errors.
    """
    check = _Checker(text, source)
    data, syntax = parse_document(text, source)
    if syntax:
        return None, tuple(syntax)
    if not isinstance(data, Mapping) or "queries" not in data:
        check.error('top level must be a mapping with a "queries" list')
        return None, tuple(check.problems)
    raw_queries = data["queries"]
    if not isinstance(raw_queries, list) or not raw_queries:
        check.error('"queries" must be a non-empty list')
        return None, tuple(check.problems)
    draft_value = data.get("draft", False)
    if not isinstance(draft_value, bool):
        check.error(f'"draft" must be true or false, not {draft_value!r}')
        return None, tuple(check.problems)
    draft = draft_value
    if draft:
        check.warn("this ground truth is marked as a draft: review the grades and facts, "
                   'then remove "draft"')
    seen: set[str] = set()
    graded: list[tuple[str, Mapping[str, int]]] = []
    queries = [q for i, raw in enumerate(raw_queries)
               if (q := _read_query(raw, i, seen, check, graded))]
    if present_modules is not None:
        _check_modules(graded, frozenset(unicodedata.normalize("NFC", m)
                                         for m in present_modules), check)
    _check_coverage(queries, strict, check)
    problems = tuple(check.problems)
    if any(p.severity == "error" for p in problems):
        return None, problems
    return GroundTruth(source=source, queries=tuple(queries), draft=draft,
                       problems=problems), problems
