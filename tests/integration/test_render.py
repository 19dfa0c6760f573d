"""Rendering through Jinja: escaping of user text, templates that extend or break."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.core.textcheck import visible
from evaluator.errors import InputError
from evaluator.escaping import md_code, md_escape
from evaluator.render import render, render_comment, render_text
from evaluator.report_views import links
from tests.factories import make_results, view_of
from tests.mdcheck import inline_code, problems


@pytest.mark.parametrize(("text", "expected"), [
    ("a | b", "a &#124; b"),
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("ping @octocat now", "ping &#64;octocat now"),
    ("mail a@b.io", "mail a@b.io"),
    # a code span the user wrote stays one (issue 25: it rendered as a literal &#96;);
    # a lone backtick or tilde is escaped (a later one would pair with it)
    ("use `rm -rf`", "use `rm -rf`"),
    ("use `<b>|@x`", "use `&lt;b&gt;\\|&#64;x`"),
    ("a lone ` tick", "a lone \\` tick"),
    ("roughly ~ 5 and ~strike~", "roughly \\~ 5 and \\~strike\\~"),
    ("hit_rate and _private_", "hit_rate and \\_private\\_"),
    ("[link](http://x)", "\\[link\\](http://x)"),
    ("line\nbreak | cell", "line break &#124; cell"),
    ("# heading", "\\# heading"),
])
def test_md_escape(text, expected):
    assert md_escape(text) == expected


HOSTILE_MODULES = ("a|b.py", "<b>.py", "@team/c.py", "d`e.py", "[x](javascript:y).py",
                   "::error::f.py", "`g.py`", "h\\|.py")


def test_user_text_cannot_break_the_comment():
    hostile = "Where is <img src=x onerror=alert(1)> | @admin `code` [x](y)? {i}"
    results = make_results(n=3, question=hostile, modules=HOSTILE_MODULES)
    text = render(view_of(results))
    # Prose is entity-escaped; paths are inert code spans. Checked as GitHub parses it.
    assert "&#64;admin" in text
    assert problems(text) == []
    spans = inline_code(text)
    graded = {m for q in results.queries for ms in q.expected.values() for m in ms}
    for module in graded:
        assert module in spans, module
    for line in text.splitlines():
        assert not line.startswith("::"), line


def test_hostile_paths_stay_inert_in_every_section():
    """Changed questions, touched files with links, floors and charts, all at once."""
    from evaluator.core.compare import compare_results
    from evaluator.core.floors import DEFAULT_POLICY
    from evaluator.report_views import Extras, links

    base = make_results(n=6, seed=3, quality=0.95, modules=HOSTILE_MODULES,
                        question="@admin <script> | {i}")
    head = make_results(n=6, seed=3, quality=0.3, modules=HOSTILE_MODULES,
                        question="@admin <script> | {i}")
    comparison = compare_results(base, head, source="base", metrics=["ndcg@5", "hit_rate"])
    extras = Extras(floors=DEFAULT_POLICY, changed_files=HOSTILE_MODULES,
                    links=links("https://github.com", "o/r", "ab" * 20))
    text = render(view_of(head, comparison=comparison, extras=extras))
    assert "### Questions grading files this PR changed" in text
    assert problems(text) == []
    assert "```mermaid" in text
    for line in text.splitlines():
        assert not line.startswith("::"), line


@pytest.mark.parametrize(("text", "expected"), [
    ("pkg/__init__.py", "`pkg/__init__.py`"),
    ("a`b", "``a`b``"),
    ("`a`", "`` `a` ``"),
    ("a|b", "`a\\|b`"),
    ("two\nlines", "`two lines`"),
    ("", "` `"),
])
def test_md_code(text, expected):
    assert md_code(text) == expected


@pytest.mark.parametrize(("server", "repo", "sha", "ok"), [
    ("https://github.com", "o/r", "ab" * 20, True),
    ("https://ghe.example.com:8443/", "o/r", "ab" * 20, True),
    ("javascript:alert(1)", "o/r", "ab" * 20, False),
    ("https://github.com/evil?x=", "o/r", "ab" * 20, False),
    ("https://github.com", "o/r)[x](y", "ab" * 20, False),
    ("https://github.com", "o/r", "main", False),
    (None, "o/r", "ab" * 20, False),
])
def test_links_are_built_only_from_valid_parts(server, repo, sha, ok):
    made = links(server, repo, sha)
    assert (made is not None) == ok
    if made is not None:
        url = made.url("pkg/a b(1).py")
        assert url.endswith("/o/r/blob/" + "ab" * 20 + "/pkg/a%20b%281%29.py")


def test_custom_template_extends_the_builtin(tmp_path):
    custom = tmp_path / "mine.md.j2"
    custom.write_text('{% extends "builtin/comment.md.j2" %}'
                      "{% block footer %}custom footer for {{ n_queries }} queries{% endblock %}")
    text = render(view_of(make_results(n=4)), template=custom)
    assert "| Metric | Value |" in text
    assert text.rstrip().endswith("custom footer for 4 queries")


def test_template_typo_fails_loudly_with_its_line(tmp_path):
    custom = tmp_path / "typo.md.j2"
    custom.write_text("line one\n{{ n_querie }}\n")
    with pytest.raises(InputError, match="n_querie"):
        render(view_of(make_results(n=2)), template=custom)
    broken = tmp_path / "broken.md.j2"
    broken.write_text("ok\n{% for x in %}\n")
    with pytest.raises(InputError, match="line 2"):
        render(view_of(make_results(n=2)), template=broken)


def test_comment_within_budget_says_what_it_dropped():
    results = make_results(n=60, question="question {i} " + "word " * 40)
    comment = render_comment(view_of(results), limit=12_000)
    assert len(comment.text) <= 12_000
    assert comment.dropped[0].startswith("per-query details beyond the worst")
    tiny = render_comment(view_of(results), limit=3_000)
    assert len(tiny.text) <= 3_000
    assert "the per-query section" in tiny.dropped


def test_terminal_summary_is_plain_text():
    text = render_text(view_of(make_results(n=6, question="what about hit_rate <x>? {i}")))
    assert "&#" not in text and "\\_" not in text
    assert text.startswith(("PASS", "FAIL"))


def test_the_markdown_check_itself_catches_injections():
    bad = ("| a | b |\n|---|---|\n| `x` | <img src=x> ping @admin |\n\n[x](http://evil.example)\n"
           "<script>1</script>\n")
    found = problems(bad)
    assert any("<img" in p for p in found)
    assert any("mention" in p for p in found)
    assert any("evil.example" in p for p in found)
    assert any("<script>" in p for p in found)
    assert problems("`@admin <b>` &#64;admin\n\n<details><summary>x</summary>\n\n</details>\n") \
        == []


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1,
               max_size=40))
def test_md_code_is_one_inert_span_in_a_table_cell(text):
    """Any path (control characters are refused when results are read): one code span
    holding exactly the text (an invisible character written as its code point, so the
    reader sees it), no HTML, and the table keeps its two cells."""
    shown = visible(" ".join(text.split()))
    cell = md_code(text)
    markdown = f"| a | b |\n|---|---|\n| {cell} | x |\n"
    assert problems(markdown) == []
    spans = inline_code(markdown)
    if shown:
        # CommonMark strips one leading and trailing space when both are present
        assert spans == [shown] or spans == [shown.strip()], (cell, spans)
