"""Unit tests for evaluator.core.groundtruth: parsing, validation and path normalisation."""

from __future__ import annotations

import json
import posixpath
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.core.groundtruth import (
    KNOWN_SHAPES,
    GroundTruth,
    Problem,
    Query,
    normalize_module,
)
from evaluator.core.groundtruth_check import load_ground_truth, parse_document

MODULES = ("src/app.py", "src/db.py", "src/util/strings.py")
SOURCE = "retrieval_queries.json"


def query(qid: str = "q1", **overrides: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": qid,
        "question": f"Where is {qid} answered?",
        "shape": "focused",
        "relevance_grades": {"src/app.py": 3, "src/db.py": 1, "src/util/strings.py": 0},
        "gold_facts": ["fact one", "fact two"],
    }
    base.update(overrides)
    return base


def doc(*queries: dict[str, Any], **top: Any) -> str:
    return json.dumps({"queries": list(queries), **top}, indent=2)


def load(text: str, source: str = SOURCE, **kwargs: Any):
    return load_ground_truth(text, source, **kwargs)


def errors(problems: tuple[Problem, ...]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def warnings(problems: tuple[Problem, ...]) -> list[Problem]:
    return [p for p in problems if p.severity == "warning"]


def only_error(problems: tuple[Problem, ...]) -> Problem:
    errs = errors(problems)
    assert len(errs) == 1, [p.render() for p in problems]
    return errs[0]


# ----------------------------------------------------------------------------- valid input


def test_valid_document_loads_without_problems() -> None:
    gt, problems = load(doc(query("q1"), query("q2", shape="identity")),
                        present_modules=MODULES)
    assert problems == ()
    assert isinstance(gt, GroundTruth)
    assert gt.source == SOURCE
    assert [q.id for q in gt.queries] == ["q1", "q2"]
    q1 = gt.queries[0]
    assert q1.question == "Where is q1 answered?"
    assert q1.grades == {"src/app.py": 3, "src/db.py": 1, "src/util/strings.py": 0}
    assert q1.gold_facts == ("fact one", "fact two")
    assert q1.grade("src/db.py") == 1
    assert q1.grade("not/graded.py") == 0
    assert q1.modules_with_grade(3) == ("src/app.py",)
    assert q1.modules_with_grade(2) == ()
    assert gt.modules() == frozenset(MODULES)
    assert gt.draft is False
    assert gt.warnings == ()


def test_text_fields_are_stripped() -> None:
    gt, _ = load(doc(query(question="  padded?  ", shape=" focused ",
                           gold_facts=[" a ", "b  "])))
    assert gt is not None
    q = gt.queries[0]
    assert (q.question, q.shape, q.gold_facts) == ("padded?", "focused", ("a", "b"))


def test_yaml_input_is_accepted() -> None:
    text = yaml.safe_dump({"queries": [query("q1"), query("q2")]}, sort_keys=False)
    gt, problems = load(text, "retrieval_queries.yml")
    assert problems == ()
    assert gt is not None
    assert [q.id for q in gt.queries] == ["q1", "q2"]
    assert gt.queries[0].grades["src/app.py"] == 3


@pytest.mark.parametrize("source", ["gt.yml", "gt.yaml", "GT.YAML"])
def test_yaml_flow_style_is_yaml_not_json(source: str) -> None:
    """A YAML file in flow style starts with '{' but is not JSON."""
    text = ("{queries: [{id: q1, question: why not, shape: focused, "
            "relevance_grades: {a.py: 3}, gold_facts: [alpha beta, gamma delta]}]}")
    gt, problems = load(text, source)
    assert problems == ()
    assert gt is not None
    assert gt.queries[0].grades == {"a.py": 3}


def test_unknown_top_level_keys_are_ignored() -> None:
    gt, problems = load(doc(query(), version=3, comment="made by hand", extra={"x": 1}))
    assert problems == ()
    assert gt is not None
    assert len(gt.queries) == 1


def test_optional_query_fields_are_accepted_but_unknown_ones_warn() -> None:
    gt, problems = load(doc(query(notes="n", review="ok")))
    assert problems == ()
    gt, problems = load(doc(query(colour="blue")))
    assert gt is not None
    (warning,) = warnings(problems)
    assert warning.query_id == "q1"
    assert "colour" in warning.message


def test_draft_flag_warns_but_loads() -> None:
    gt, problems = load(doc(query(), draft=True))
    assert gt is not None
    assert gt.draft is True
    (warning,) = problems
    assert warning.severity == "warning"
    assert "draft" in warning.message
    assert gt.warnings == (warning,)


# ----------------------------------------------------------------------------- syntax errors


def test_bad_json_reports_its_line() -> None:
    text = '{\n  "queries": [\n    {"id": "q1",,}\n  ]\n}\n'
    gt, problems = load(text)
    assert gt is None
    problem = only_error(problems)
    assert problem.file == SOURCE
    assert problem.line == 3
    assert "not valid JSON" in problem.message
    assert problem.render().startswith(f"error: {SOURCE}:3: ")


def test_bad_yaml_reports_its_line() -> None:
    text = "queries:\n  - id: q1\n    question: [unclosed\n    shape: focused\n"
    gt, problems = load(text, "gt.yaml")
    assert gt is None
    problem = only_error(problems)
    assert problem.file == "gt.yaml"
    assert "not valid YAML" in problem.message
    assert problem.line is not None
    assert 3 <= problem.line <= 5


def test_yaml_tab_indentation_line() -> None:
    text = "queries:\n  - id: q1\n\tquestion: x\n"
    _, problems = load(text, "gt.yml")
    assert only_error(problems).line == 3


def test_parse_document_returns_data_for_both_formats() -> None:
    assert parse_document('{"a": [1, 2]}', "x.json") == ({"a": [1, 2]}, [])
    assert parse_document("a:\n  - 1\n  - 2\n", "x.yaml") == ({"a": [1, 2]}, [])


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("[]", id="json-list"),
        pytest.param('"just a string"', id="json-string"),
        pytest.param("{}", id="no-queries-key"),
        pytest.param('{"questions": []}', id="wrong-key"),
        pytest.param("null", id="null"),
    ],
)
def test_top_level_must_be_a_mapping_with_queries(text: str) -> None:
    gt, problems = load(text)
    assert gt is None
    problem = only_error(problems)
    assert "top level must be a mapping" in problem.message
    assert problem.file == SOURCE


@pytest.mark.parametrize("text", ["- a\n- b\n", "hello\n", ""])
def test_top_level_yaml_not_a_mapping(text: str) -> None:
    gt, problems = load(text, "gt.yml")
    assert gt is None
    assert "top level must be a mapping" in only_error(problems).message


@pytest.mark.parametrize("queries", [[], {}, "q1", None])
def test_queries_must_be_a_non_empty_list(queries: object) -> None:
    gt, problems = load(json.dumps({"queries": queries}))
    assert gt is None
    assert '"queries" must be a non-empty list' in only_error(problems).message


# ----------------------------------------------------------------------------- field errors


def test_missing_fields_are_named() -> None:
    raw = query()
    del raw["question"], raw["relevance_grades"]
    gt, problems = load(doc(raw))
    assert gt is None
    problem = only_error(problems)
    assert problem.query_id == "q1"
    assert "question" in problem.message
    assert "relevance_grades" in problem.message
    assert "shape" not in problem.message


def test_query_without_id_is_named_by_position() -> None:
    raw = query()
    del raw["id"]
    _, problems = load(doc(query("q1"), raw))
    problem = only_error(problems)
    assert problem.query_id == "#2"
    assert "id" in problem.message


@pytest.mark.parametrize("bad_id", ["", "   ", 7, None, ["q"]])
def test_id_must_be_a_non_empty_string(bad_id: object) -> None:
    gt, problems = load(doc(query(bad_id)))  # type: ignore[arg-type]
    assert gt is None
    problem = only_error(problems)
    assert problem.field == "id"


def test_query_that_is_not_a_mapping() -> None:
    gt, problems = load(doc(query("q1"), "not a query"))  # type: ignore[arg-type]
    assert gt is None
    assert "queries[1]" in only_error(problems).message


def test_duplicate_ids() -> None:
    gt, problems = load(doc(query("q1"), query("q2"), query("q1")))
    assert gt is None
    problem = only_error(problems)
    assert (problem.query_id, problem.field) == ("q1", "id")
    assert "duplicate" in problem.message
    assert problem.line is not None


@pytest.mark.parametrize("grade", [4, -1, 2.5, "3", True, None, 3.0, [3]], ids=repr)
def test_grade_must_be_an_integer_0_to_3(grade: object) -> None:
    raw = query(relevance_grades={"src/app.py": 3, "src/db.py": grade})
    gt, problems = load(doc(raw))
    assert gt is None
    problem = only_error(problems)
    assert problem.query_id == "q1"
    assert problem.field == "relevance_grades['src/db.py']"
    assert repr(grade) in problem.message
    assert "0-3" in problem.message
    assert problem.file == SOURCE


@given(grade=st.one_of(st.integers(-5, 8), st.floats(allow_nan=False), st.booleans(),
                       st.text(max_size=3), st.none()))
@settings(max_examples=120, derandomize=True, deadline=None)
def test_grade_accepted_exactly_when_integer_in_range(grade: object) -> None:
    raw = query(relevance_grades={"src/app.py": 3, "src/db.py": grade})
    gt, problems = load(doc(raw))
    valid = isinstance(grade, int) and not isinstance(grade, bool) and 0 <= grade <= 3
    assert (gt is not None) == valid
    if valid:
        assert gt is not None
        assert gt.queries[0].grade("src/db.py") == grade
        assert problems == ()
    else:
        assert only_error(problems).field == "relevance_grades['src/db.py']"


@pytest.mark.parametrize("grades", [{"a.py": 0, "b.py": 0}, {"a.py": 0}])
def test_query_with_no_grade_at_least_1(grades: dict[str, int]) -> None:
    gt, problems = load(doc(query(relevance_grades=grades)))
    assert gt is None
    problem = only_error(problems)
    assert (problem.query_id, problem.field) == ("q1", "relevance_grades")
    assert ">= 1" in problem.message


@pytest.mark.parametrize("grades", [{}, [], "src/app.py", 3])
def test_relevance_grades_empty_or_not_a_mapping(grades: object) -> None:
    gt, problems = load(doc(query(relevance_grades=grades)))
    assert gt is None
    assert only_error(problems).field == "relevance_grades"


@pytest.mark.parametrize(("count", "warns"), [(0, False), (1, True), (2, False), (3, False),
                                              (4, False), (5, True)])
def test_gold_fact_count_is_a_warning_only(count: int, warns: bool) -> None:
    facts = [f"fact {i}" for i in range(count)]
    gt, problems = load(doc(query(gold_facts=facts)))
    assert gt is not None, [p.render() for p in problems]
    assert errors(problems) == []
    assert gt.queries[0].gold_facts == tuple(facts)
    if warns:
        (warning,) = problems
        assert warning.severity == "warning"
        assert (warning.query_id, warning.field) == ("q1", "gold_facts")
        assert f"has {count} {'fact' if count == 1 else 'facts'};" in warning.message
    else:
        assert problems == ()


def test_gold_facts_must_be_strings_and_not_empty() -> None:
    gt, problems = load(doc(query("q1", gold_facts="one fact"),
                            query("q2", gold_facts=["ok", "  ", "fine"])))
    assert gt is None
    fields = {(p.query_id, p.field) for p in errors(problems)}
    assert fields == {("q1", "gold_facts"), ("q2", "gold_facts[1]")}


@pytest.mark.parametrize("question", ["", "   "])
def test_empty_question(question: object) -> None:
    gt, problems = load(doc(query(question=question)))
    assert gt is None
    problem = only_error(problems)
    assert (problem.query_id, problem.field) == ("q1", "question")
    assert "empty" in problem.message


@pytest.mark.parametrize(("question", "kind"), [(None, "NoneType"), (42, "int"), (["a"], "list")])
def test_non_string_question_says_so(question: object, kind: str) -> None:
    """Issue 9: a number is not "empty"; the message says a string is needed."""
    gt, problems = load(doc(query(question=question)))
    assert gt is None
    problem = only_error(problems)
    assert (problem.query_id, problem.field) == ("q1", "question")
    assert "must be a string" in problem.message and kind in problem.message


@pytest.mark.parametrize("shape", ["", "  ", None, 3])
def test_shape_must_be_a_non_empty_label(shape: object) -> None:
    gt, problems = load(doc(query(shape=shape)))
    assert gt is None
    assert only_error(problems).field == "shape"


# ----------------------------------------------------------------------------- modules


def test_graded_module_that_does_not_exist_suggests_the_closest() -> None:
    grades = {"src/app.py": 3, "src/bd.py": 1, "src/util/strings.py": 0}
    text = doc(query(relevance_grades=grades))
    gt, problems = load(text, present_modules=MODULES)
    assert gt is None
    problem = only_error(problems)
    assert problem.query_id == "q1"
    assert problem.field == "relevance_grades['src/bd.py']"
    assert "does not exist" in problem.message
    assert "did you mean 'src/db.py'?" in problem.message
    # the line where "src/bd.py" is written in the indented JSON
    (line,) = [i for i, t in enumerate(text.splitlines(), 1) if '"src/bd.py"' in t]
    assert line > 1
    assert problem.line == line


def test_missing_module_without_a_close_match_has_no_suggestion() -> None:
    grades = {"src/app.py": 3, "zzzzzzzzzzzz/qqqq.rs": 1}
    _, problems = load(doc(query(relevance_grades=grades)), present_modules=MODULES)
    problem = only_error(problems)
    assert "does not exist" in problem.message
    assert "did you mean" not in problem.message


def test_module_existence_is_not_checked_without_present_modules() -> None:
    gt, problems = load(doc(query(relevance_grades={"nowhere/x.py": 2})))
    assert gt is not None
    assert problems == ()


def test_normalised_paths_are_checked_against_present_modules() -> None:
    grades = {".\\src\\app.py": 3, "./src//db.py": 1, "src/util/./strings.py": 0}
    gt, problems = load(doc(query(relevance_grades=grades)), present_modules=MODULES)
    assert problems == ()
    assert gt is not None
    assert gt.queries[0].grades == {"src/app.py": 3, "src/db.py": 1, "src/util/strings.py": 0}


def test_path_normalisation_in_grades() -> None:
    gt, _ = load(doc(query(relevance_grades={"./a\\b.py": 3})))
    assert gt is not None
    assert gt.queries[0].grades == {"a/b.py": 3}


@pytest.mark.parametrize("path", ["../x.py", "/abs/x.py", "a/../../x.py", "C:\\x.py", "..",
                                  "x/../C:/evil.py"])
def test_paths_outside_the_root_are_rejected(path: str) -> None:
    gt, problems = load(doc(query(relevance_grades={"src/app.py": 3, path: 1})))
    assert gt is None
    problem = only_error(problems)
    assert problem.field == f"relevance_grades[{path!r}]"
    assert "relative to the indexed root" in problem.message


def test_module_graded_twice_after_normalisation() -> None:
    gt, problems = load(doc(query(relevance_grades={"a/b.py": 3, "./a\\b.py": 1})))
    assert gt is None
    problem = only_error(problems)
    assert "graded twice" in problem.message
    assert "'a/b.py'" in problem.message


def test_same_grade_spelled_twice_is_merged() -> None:
    gt, problems = load(doc(query(relevance_grades={"a/b.py": 3, "./a/b.py": 3})))
    assert problems == ()
    assert gt is not None
    assert gt.queries[0].grades == {"a/b.py": 3}


# ----------------------------------------------------------------------------- coverage


def coverage_doc() -> str:
    return doc(query("q1", relevance_grades={"a.py": 3, "b.py": 0}),
               query("q2", relevance_grades={"a.py": 1, "c.py": 2}))


def test_incomplete_coverage_is_a_warning() -> None:
    gt, problems = load(coverage_doc())
    assert gt is not None
    assert errors(problems) == []
    by_query = {p.query_id: p for p in problems}
    assert set(by_query) == {"q1", "q2"}
    assert all(p.field == "relevance_grades" for p in problems)
    assert "c.py" in by_query["q1"].message
    assert "b.py" in by_query["q2"].message
    assert "incomplete coverage" in by_query["q1"].message
    assert gt.queries[0].grade("c.py") == 0  # counted as 0


def test_incomplete_coverage_is_an_error_when_strict() -> None:
    gt, problems = load(coverage_doc(), strict=True)
    assert gt is None
    assert {p.query_id for p in errors(problems)} == {"q1", "q2"}
    assert warnings(problems) == []


def test_complete_coverage_is_clean_when_strict() -> None:
    gt, problems = load(doc(query("q1"), query("q2")), strict=True)
    assert gt is not None
    assert problems == ()


def test_coverage_message_truncates_long_lists() -> None:
    many = {f"m{i}.py": 1 for i in range(8)}
    gt, problems = load(doc(query("q1", relevance_grades={"a.py": 3}),
                            query("q2", relevance_grades={"a.py": 3, **many})))
    assert gt is not None
    (warning,) = problems
    assert warning.query_id == "q1"
    assert "8 module(s)" in warning.message
    assert "and 3 more" in warning.message


# ----------------------------------------------------------------------------- all at once


def test_every_problem_is_reported_at_once() -> None:
    text = doc(
        query("q1", relevance_grades={"src/app.py": 4, "src/db.py": 1}),
        query("q2", question=""),
        query("q1"),
        query("q4", relevance_grades={"src/app.py": 0}),
        query("q5", relevance_grades={"src/apq.py": 3, "src/db.py": 1, "/etc/passwd": 1}),
        query("q6", gold_facts=["only one"]),
        {"id": "q7", "question": "x"},
    )
    gt, problems = load(text, present_modules=MODULES)
    assert gt is None
    assert all(p.file == SOURCE for p in problems)
    located = {(p.severity, p.query_id, p.field) for p in problems}
    expected = {
        ("error", "q1", "relevance_grades['src/app.py']"),
        ("error", "q2", "question"),
        ("error", "q1", "id"),
        ("error", "q4", "relevance_grades"),
        ("error", "q5", "relevance_grades['/etc/passwd']"),
        ("error", "q5", "relevance_grades['src/apq.py']"),
        ("warning", "q6", "gold_facts"),
        ("error", "q7", None),
    }
    assert expected <= located
    apq = next(p for p in problems if p.field == "relevance_grades['src/apq.py']")
    assert "did you mean 'src/app.py'?" in apq.message


def test_warnings_are_kept_alongside_errors() -> None:
    gt, problems = load(doc(query("q1", gold_facts=["alpha beta"]), query("q2", question="")))
    assert gt is None
    assert len(errors(problems)) == 1
    assert len(warnings(problems)) == 1


# ----------------------------------------------------------------------------- shapes


@pytest.mark.parametrize(
    ("shapes", "expected"),
    [
        (["zeta", "identity", "alpha", "focused"], ("focused", "identity", "alpha", "zeta")),
        (["identity", "cross-file", "focused", "cross-file"],
         ("focused", "cross-file", "identity")),
        (["b-other", "a-other"], ("a-other", "b-other")),
        (["identity"], ("identity",)),
    ],
)
def test_shapes_order(shapes: list[str], expected: tuple[str, ...]) -> None:
    queries = [query(f"q{i}", shape=s) for i, s in enumerate(shapes)]
    gt, problems = load(doc(*queries))
    assert gt is not None, problems
    assert gt.shapes == expected


def test_known_shapes_are_the_documented_ones() -> None:
    assert KNOWN_SHAPES == ("focused", "cross-file", "identity")


# ----------------------------------------------------------------------------- rendering


def test_problem_render_names_file_line_query_and_field() -> None:
    problem = Problem("error", "grade 4 is not an integer 0-3", "gt.json", "q1",
                      "relevance_grades['a.py']", 12)
    assert problem.render() == (
        "error: gt.json:12: query 'q1', field relevance_grades['a.py']: "
        "grade 4 is not an integer 0-3"
    )
    assert Problem("warning", "m", "gt.json").render() == "warning: gt.json: m"


# ----------------------------------------------------------------------------- normalize_module


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("./a\\b.py", "a/b.py"),
        ("a/b.py", "a/b.py"),
        ("a//b.py", "a/b.py"),
        ("a/./b.py", "a/b.py"),
        ("a/x/../b.py", "a/b.py"),
        ("  src/app.py  ", "src/app.py"),
        ("src\\pkg\\mod.py", "src/pkg/mod.py"),
        ("x/../ b.py", "b.py"),
        ("../x", None),
        ("..", None),
        ("/abs", None),
        ("/abs/x.py", None),
        ("\\abs\\x.py", None),
        ("C:\\x.py", None),
        ("c:/x.py", None),
        ("a/../..", None),
        ("a/..", None),
        (".", None),
        ("", None),
        ("   ", None),
        ("x/../C:/evil.py", None),
        ("x/../ /etc/passwd", None),
    ],
)
def test_normalize_module(raw: str, expected: str | None) -> None:
    assert normalize_module(raw) == expected


path_text = st.text(alphabet=st.sampled_from(list("ab.c/\\ :_-")), max_size=20)
segment = st.text(alphabet=st.sampled_from(list("abcxyz_-0123")), min_size=1, max_size=6)


@given(path_text)
@settings(max_examples=400, derandomize=True, deadline=None)
def test_normalize_module_is_idempotent_and_canonical(raw: str) -> None:
    norm = normalize_module(raw)
    if norm is None:
        return
    assert normalize_module(norm) == norm
    assert norm == norm.strip()
    assert "\\" not in norm
    assert not norm.startswith(("/", "../"))
    assert norm not in ("", ".", "..")
    assert "//" not in norm
    assert "/./" not in f"/{norm}/"
    assert posixpath.normpath(norm) == norm


@given(st.lists(segment, min_size=1, max_size=5))
@settings(max_examples=150, derandomize=True, deadline=None)
def test_normalize_module_keeps_clean_paths_and_folds_spellings(parts: list[str]) -> None:
    clean = "/".join(parts)
    assert normalize_module(clean) == clean
    assert normalize_module("./" + clean) == clean
    assert normalize_module("\\".join(parts)) == clean
    assert normalize_module("//".join(parts)) == clean
    assert normalize_module(f"zz/../{clean}") == clean
    assert normalize_module("/" + clean) is None
    assert normalize_module("../" + clean) is None


@given(st.lists(segment, min_size=1, max_size=4), st.integers(1, 3))
@settings(max_examples=100, derandomize=True, deadline=None)
def test_climbing_more_than_the_depth_escapes(parts: list[str], extra: int) -> None:
    climb = "/".join([*parts, *[".."] * (len(parts) + extra), "x.py"])
    assert normalize_module(climb) is None


def test_query_is_immutable() -> None:
    q = Query("q", "?", "focused", {"a": 1}, ("f",))
    with pytest.raises(AttributeError):
        q.id = "other"  # type: ignore[misc]


# ----------------------------------------------------------------- locations, hints, universe

from evaluator.core.groundtruth import fact_problem  # noqa: E402
from evaluator.core.groundtruth_check import validation_summary  # noqa: E402
from evaluator.core.universe import UniverseSpec, select_universe  # noqa: E402


def _line(text: str, needle: str, occurrence: int = 1) -> int:
    hits = [n for n, t in enumerate(text.splitlines(), 1) if needle in t]
    return hits[occurrence - 1]


def test_duplicate_id_points_at_the_second_occurrence() -> None:
    text = doc(query("q1"), query("q1"))
    problem = only_error(load(text)[1])
    assert problem.line == _line(text, '"id": "q1"', 2)


@pytest.mark.parametrize("source", ["gt.json", "gt.yaml"])
def test_every_problem_has_its_line_warnings_too(source: str) -> None:
    queries = [query("q1", gold_facts=["alpha beta"]),
               query("q2", shape="focussed", extra=1),
               query("q3", relevance_grades={"src/app.py": 7})]
    text = doc(*queries) if source.endswith(".json") else yaml.safe_dump(
        {"queries": queries}, sort_keys=False)
    _gt, problems = load(text, source)
    assert {p.severity for p in problems} == {"error", "warning"}
    assert all(p.line is not None for p in problems), [p.render() for p in problems]
    by_field = {(p.query_id, p.field): p.line for p in problems}
    assert by_field[("q2", "shape")] == _line(text, "focussed")
    assert by_field[("q3", "relevance_grades['src/app.py']")] == _line(text, "src/app.py", 3)
    assert [p.line for p in problems] == sorted(p.line or 0 for p in problems)


@pytest.mark.parametrize(("label", "suggestion"), [
    ("focussed", "focused"), ("Focused", "focused"), ("crossfile", "cross-file"),
    ("cross_file", "cross-file"), ("identiy", "identity"),
])
def test_shape_typo_gets_a_did_you_mean(label: str, suggestion: str) -> None:
    gt, problems = load(doc(query(shape=label)))
    assert gt is not None
    (problem,) = warnings(problems)
    assert f"did you mean {suggestion!r}" in problem.message
    strict_gt, strict_problems = load(doc(query(shape=label)), strict=True)
    assert strict_gt is None and only_error(strict_problems).field == "shape"


def test_other_shape_labels_stay_silent() -> None:
    _gt, problems = load(doc(query(shape="architecture")))
    assert problems == ()


@pytest.mark.parametrize(("fact", "usable"), [
    ("cli", False), ("x", False), ("()", False), ("the data", False), ("get self", False),
    ("JWT_SECRET", True), ("def encode_token(", True), ("class Group(MultiCommand)", True),
    ("Produce a signed JWT string", True), ("ParamType", True),
])
def test_facts_the_judge_cannot_use_are_named(fact: str, usable: bool) -> None:
    assert (fact_problem(fact) is None) is usable
    _gt, problems = load(doc(query(gold_facts=[fact, "a distinctive phrase"])))
    assert any(p.field == "gold_facts[0]" for p in problems) is not usable


def test_summary_counts_every_query_valid_or_not() -> None:
    text = doc(query("q1", question=""), query("q2", relevance_grades={"a.py": 9}))
    _gt, problems = load(text)
    assert validation_summary(text, SOURCE, problems) == (
        f"{SOURCE}: 2 queries, 2 error(s), 0 warning(s)")
    assert validation_summary("{", SOURCE, ()).startswith(f"{SOURCE}: 0 queries")


def test_messages_explain_the_format_rather_than_name_it() -> None:
    _gt, problems = load(doc(query("q1", gold_facts=["alpha beta"]),
                             query("q2", relevance_grades={"src/app.py": 3})))
    assert problems
    assert all("N-15" not in p.message for p in problems)
    assert any("every query to grade every module" in p.message for p in problems)


def test_schema_key_is_accepted_and_must_be_a_string() -> None:
    assert load(doc(query(), **{"$schema": "./ground-truth.schema.json"}))[1] == ()
    text = doc(query(), **{"$schema": 3})
    assert only_error(load(text)[1]).line == _line(text, '"$schema"')


def test_grades_outside_the_universe_are_reported_and_ignored() -> None:
    files = ("src/app.py", "src/db.py", "src/util/strings.py", "tests/test_app.py")
    universe = select_universe(files)
    q = query(relevance_grades={"src/app.py": 3, "src/db.py": 0, "src/util/strings.py": 0,
                                "tests/test_app.py": 2})
    gt, problems = load(doc(q), present_modules=files, universe=universe)
    assert gt is not None
    (problem,) = problems
    assert "outside the module universe (tests)" in problem.message
    assert gt.queries[0].grades == {"src/app.py": 3, "src/db.py": 0, "src/util/strings.py": 0}
    strict, _ = load(doc(q), present_modules=files, universe=universe, strict=True)
    assert strict is None
    only_tests = query(relevance_grades={"src/app.py": 0, "tests/test_app.py": 3})
    gt2, problems2 = load(doc(only_tests), present_modules=files, universe=universe)
    assert gt2 is None
    assert any("no module of the module universe" in p.message for p in problems2)


def test_coverage_is_checked_against_the_universe() -> None:
    universe = select_universe((*MODULES, "src/extra.py"), UniverseSpec())
    _gt, problems = load(doc(query()), universe=universe)
    (problem,) = problems
    assert "1 module(s) of the module universe" in problem.message
    assert "src/extra.py" in problem.message


def test_typo_suggestion_comes_from_the_universe() -> None:
    files = ("src/core.py", "tests/test_core.py", "src/db.py")
    universe = select_universe(files)
    q = query(relevance_grades={"src/cor.py": 3, "src/db.py": 0})
    _gt, problems = load(doc(q), present_modules=files, universe=universe)
    assert "did you mean 'src/core.py'" in only_error(problems).message
    q2 = query(relevance_grades={"test_core.py": 3, "src/db.py": 0})
    _gt, problems2 = load(doc(q2), present_modules=files, universe=universe)
    assert "tests/test_core.py" not in only_error(problems2).message


# ----------------------------------------------------------------------------- issue 24


@pytest.mark.parametrize("facts", ["absent", [], None])
def test_a_question_without_gold_facts_is_retrieval_only(facts: object) -> None:
    raw = query()
    if facts == "absent":
        del raw["gold_facts"]
    else:
        raw["gold_facts"] = facts
    gt, problems = load(doc(raw, query("q2")))
    assert gt is not None, [p.render() for p in problems]
    assert problems == ()
    assert gt.queries[0].gold_facts == ()
    assert gt.queries[0].retrieval_only
    assert not gt.queries[1].retrieval_only


@pytest.mark.parametrize("question", [
    "Fix the session\nwhen a redirect\r\n  drops its cookies",
    "Fix the session\twhen a redirect\u2028drops its cookies",
    "  Fix the session when a redirect drops its cookies\n\n",
])
def test_a_multi_line_question_is_read_as_one_paragraph(question: str) -> None:
    gt, problems = load(doc(query(question=question)))
    assert gt is not None, [p.render() for p in problems]
    assert problems == ()
    assert gt.queries[0].question == "Fix the session when a redirect drops its cookies"


@pytest.mark.parametrize("question", ["colour \x1b[31mred", "nul \x00 byte", "bell\x07"])
def test_other_control_characters_in_a_question_stay_errors(question: str) -> None:
    gt, problems = load(doc(query(question=question)))
    assert gt is None
    assert only_error(problems).field == "question"


def test_a_source_commit_and_subject_are_accepted() -> None:
    source = {"commit": "0123456789abcdef0123456789abcdef01234567",
              "subject": "fix: keep cookies across redirects (#123)"}
    gt, problems = load(doc(query(source=source)))
    assert gt is not None, [p.render() for p in problems]
    assert problems == ()
    pulled = source | {"subject": "Merge pull request #123 from dev/cookies",
                       "pull_request": 123, "title": "Keep cookies across redirects"}
    gt, problems = load(doc(query(source=pulled)))
    assert gt is not None and problems == (), [p.render() for p in problems]


@pytest.mark.parametrize("source", [
    "abc1234",
    {"commit": "abc1234"},
    {"commit": "abc1234", "subject": "ok", "author": "x"},
    {"commit": "not hex!", "subject": "ok"},
    {"commit": "abc1234", "subject": "two\nlines"},
    {"commit": "abc1234", "subject": "x" * 301},
    {"commit": "abc1234", "subject": 5},
    {"commit": "abc1234", "subject": "ok", "pull_request": 7},              # no title
    {"commit": "abc1234", "subject": "ok", "pull_request": 0, "title": "t"},
    {"commit": "abc1234", "subject": "ok", "pull_request": True, "title": "t"},
    {"commit": "abc1234", "subject": "ok", "pull_request": "7", "title": "t"},
    {"commit": "abc1234", "subject": "ok", "pull_request": 7, "title": "a\x1bb"},
])
def test_a_bad_source_is_an_error(source: object) -> None:
    gt, problems = load(doc(query(source=source)))
    assert gt is None
    assert only_error(problems).field == "source"


def test_a_history_question_whose_file_has_moved_says_so() -> None:
    source = {"commit": "0123456789abcdef0123456789abcdef01234567", "subject": "Fix it"}
    gt, problems = load(doc(query("q1", source=source), query("q2")),
                        present_modules=["src/db.py", "src/util/strings.py"])
    assert gt is None
    first, second = errors(problems)
    assert "does not exist in the indexed root" in first.message
    assert ("the question comes from commit 0123456789ab, and the file has moved or gone "
            "since") in first.message
    assert (first.query_id, second.query_id) == ("q1", "q2")
    assert "comes from commit" not in second.message
