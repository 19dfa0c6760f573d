"""The history route's shortcuts over syntax trees give what the long way gives:
``commit_chores.same_tree`` decides ``ast.dump(a) == ast.dump(b)`` without writing either
out (checked against ``ast.dump`` on tricky pairs, on this project's own modules, each with
itself and its neighbour, before and after the cosmetic rewrite, and on single-token edits),
and ``commit_filters.docstring_lines`` walks statements only yet finds every docstring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.core.commit_chores import _Cosmetic, same_tree

SOURCES = sorted((Path(__file__).resolve().parents[2] / "evaluator").rglob("*.py"))


def _dumped_equal(one: ast.AST, two: ast.AST) -> bool:
    return ast.dump(one, include_attributes=False) == ast.dump(two, include_attributes=False)


@pytest.mark.parametrize(("one", "two"), [
    ("x = 1", "x = 1.0"), ("x = 1", "x = True"), ("x = 0.0", "x = -0.0"),
    ("x = u'a'", "x = 'a'"), ("f(a, b)", "f(a, c)"), ("f(a)", "f(a, b)"),
    ("def f(): pass", "async def f(): pass"), ("x: int", "x: int = 1"),
    ("import a", "import a as a"), ("global a, b", "global a, c"), ("x = b'a'", "x = 'a'"),
    ("x = 1", "x = 1"), ("def f(a=1):\n    return a", "def f(a=1):\n    return a"),
    ("x = (1, 2)", "x = [1, 2]"), ("x = None", "x = ..."),
])
def test_tricky_pairs_agree_with_ast_dump(one, two):
    a, b = ast.parse(one), ast.parse(two)
    assert same_tree(a, b) == _dumped_equal(a, b)


def test_a_node_built_without_an_optional_field_is_one_parsed_with_none():
    built, parsed = ast.Constant(value=None), ast.parse("None", mode="eval").body
    assert same_tree(built, parsed) and _dumped_equal(built, parsed)


@pytest.mark.parametrize("index", range(0, len(SOURCES), 7))
def test_real_modules_agree_with_ast_dump(index):
    text = SOURCES[index].read_text(encoding="utf-8")
    other = SOURCES[(index + 1) % len(SOURCES)].read_text(encoding="utf-8")
    for a, b in ((ast.parse(text), ast.parse(text)), (ast.parse(text), ast.parse(other))):
        assert same_tree(a, b) == _dumped_equal(a, b)
        a, b = _Cosmetic().visit(a), _Cosmetic().visit(b)
        assert same_tree(a, b) == _dumped_equal(a, b)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(SOURCES), st.integers(min_value=0), st.sampled_from(
    ["0", "1.0", "True", "None", "'x'", "x", "f()", "-1"]))
def test_one_changed_token_agrees_with_ast_dump(path, seed, replacement):
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    leaves = [n for n in ast.walk(tree) if isinstance(n, ast.Constant | ast.Name)]
    if not leaves:
        return
    node = leaves[seed % len(leaves)]
    lines = text.splitlines(keepends=True)
    if node.lineno != node.end_lineno:
        return
    line = lines[node.lineno - 1]
    lines[node.lineno - 1] = line[:node.col_offset] + replacement + line[node.end_col_offset:]
    try:
        changed = ast.parse("".join(lines))
    except SyntaxError:
        return
    assert same_tree(tree, changed) == _dumped_equal(tree, changed)


@pytest.mark.parametrize("index", range(0, len(SOURCES), 5))
def test_docstring_lines_are_those_a_full_walk_finds(index):
    """The walk over statements only finds every docstring a walk of every node finds."""
    from evaluator.core.commit_filters import _docstring_of, docstring_lines

    tree = ast.parse(SOURCES[index].read_text(encoding="utf-8"))
    full: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef |
                      ast.AsyncFunctionDef) and (doc := _docstring_of(node.body)):
            full.update(range(doc.lineno, (doc.end_lineno or doc.lineno) + 1))
    assert docstring_lines(tree) == full


def test_docstrings_nested_in_try_match_and_handlers_are_found():
    source = '''try:
    pass
except E:
    def f():
        """In a handler."""
match x:
    case 1:
        class C:
            """In a case."""
with y:
    if z:
        async def g():
            """In a block."""
'''
    from evaluator.core.commit_filters import docstring_lines

    assert docstring_lines(ast.parse(source)) == {5, 9, 13}
