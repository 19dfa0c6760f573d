"""Rendering through Jinja: escaping of user text, templates that extend or break."""

from __future__ import annotations

import pytest

from evaluator.errors import InputError
from evaluator.render import md_escape, render, render_comment, render_text
from tests.factories import make_results


@pytest.mark.parametrize(("text", "expected"), [
    ("a | b", "a &#124; b"),
    ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
    ("ping @octocat now", "ping &#64;octocat now"),
    ("mail a@b.io", "mail a@b.io"),
    ("use `rm -rf`", "use &#96;rm -rf&#96;"),
    ("hit_rate and _private_", "hit_rate and \\_private\\_"),
    ("[link](http://x)", "\\[link\\](http://x)"),
    ("line\nbreak | cell", "line break &#124; cell"),
    ("# heading", "\\# heading"),
])
def test_md_escape(text, expected):
    assert md_escape(text) == expected


def test_user_text_cannot_break_the_comment():
    hostile = "Where is <img src=x onerror=alert(1)> | @admin `code` [x](y)? {i}"
    results = make_results(n=3, question=hostile,
                           modules=("a|b.py", "<b>.py", "@team/c.py", "d.py", "e.py"))
    text = render(results)
    assert "<img" not in text and "<b>" not in text
    assert " @admin" not in text and "@team" not in text
    assert "&#64;admin" in text
    for line in text.splitlines():
        if line.startswith("| ") and "Retrieved module" not in line:
            # A table row keeps its column count: user pipes are entities, not separators.
            assert line.count(" | ") <= 7, line


def test_custom_template_extends_the_builtin(tmp_path):
    custom = tmp_path / "mine.md.j2"
    custom.write_text('{% extends "builtin/comment.md.j2" %}'
                      "{% block footer %}custom footer for {{ n_queries }} queries{% endblock %}")
    text = render(make_results(n=4), template=custom)
    assert "| Metric | Value |" in text
    assert text.rstrip().endswith("custom footer for 4 queries")


def test_template_typo_fails_loudly_with_its_line(tmp_path):
    custom = tmp_path / "typo.md.j2"
    custom.write_text("line one\n{{ n_querie }}\n")
    with pytest.raises(InputError, match="n_querie"):
        render(make_results(n=2), template=custom)
    broken = tmp_path / "broken.md.j2"
    broken.write_text("ok\n{% for x in %}\n")
    with pytest.raises(InputError, match="line 2"):
        render(make_results(n=2), template=broken)


def test_comment_within_budget_says_what_it_dropped():
    results = make_results(n=60, question="question {i} " + "word " * 40)
    comment = render_comment(results, limit=12_000)
    assert len(comment.text) <= 12_000
    assert comment.dropped[0].startswith("per-query details beyond the worst")
    tiny = render_comment(results, limit=3_000)
    assert len(tiny.text) <= 3_000
    assert "the per-query section" in tiny.dropped


def test_terminal_summary_is_plain_text():
    text = render_text(make_results(n=6, question="what about hit_rate <x>? {i}"))
    assert "&#" not in text and "\\_" not in text
    assert text.startswith(("PASS", "FAIL"))
