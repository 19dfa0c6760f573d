"""Golden files of the whole comment. Refresh with `pytest --update-golden`, never silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.compare import compare_results
from evaluator.core.floors import FloorPolicy
from evaluator.render import HEADLINE, SHAPE_COLUMNS, render, render_comment
from tests.factories import make_results

EXPECTED = Path(__file__).parent / "expected"
LENIENT = FloorPolicy(aggregate=(), per_shape=(), zero_miss=False)


def _check(request: pytest.FixtureRequest, name: str, text: str) -> None:
    path = EXPECTED / name
    if request.config.getoption("--update-golden"):
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run pytest --update-golden once and review it"
    assert text == path.read_text(), f"{name} changed; review, then pytest --update-golden"


def _comparison(base, head):
    metrics = list(dict.fromkeys([*HEADLINE, *SHAPE_COLUMNS]))
    return compare_results(base, head, source="merge base 89abcdef0123", metrics=metrics)


def test_pass(request):
    results = make_results(quality=0.95, policy=LENIENT, seed=3)
    assert results.passed
    _check(request, "pass.md", render(results))


def test_fail(request):
    results = make_results(quality=0.4, seed=2)
    assert not results.passed
    _check(request, "fail.md", render(results))


def test_fail_with_baseline_deltas(request):
    base = make_results(quality=0.9, seed=2)
    head = make_results(quality=0.4, seed=2)
    _check(request, "fail-with-baseline.md", render(head, comparison=_comparison(base, head)))


def test_custom_shape(request):
    results = make_results(shapes=("focused", "api-surface", "cross-file"), seed=5,
                           policy=LENIENT)
    text = render(results)
    assert "| api-surface |" in text
    _check(request, "custom-shape.md", text)


def test_oversize(request):
    long_question = "Where is the code path for feature {i}? " + "padding words " * 60
    results = make_results(n=400, seed=7, question=long_question)
    full = render(results)
    assert len(full) > 65_536
    comment = render_comment(results)
    assert len(comment.text) <= 65_536 - 512
    assert comment.dropped
    assert "To fit a GitHub comment this leaves out" in comment.text
    _check(request, "oversize.md", comment.text)


def _sectioned(quality: float):
    from dataclasses import replace

    from evaluator.core.results import combine_sections, pooled_index

    sections = {}
    for i, name in enumerate(("api", "cli", "web")):
        # web keeps the zero-miss floor: a section's floors gate only that section.
        policy = FloorPolicy(aggregate=(), per_shape=(), zero_miss=name == "web")
        result = make_results(n=4 + i, seed=11 + i, quality=quality - 0.2 * i, policy=policy)
        sections[name] = replace(result, run=replace(result.run, root=f"packages/{name}"))
    run = replace(next(iter(sections.values())).run, root=".",
                  index=pooled_index([s.run for s in sections.values()]))
    return combine_sections(run, sections)


def test_sections_with_baseline(request):
    from evaluator.core.compare import compare_sections

    base, head = _sectioned(0.9), _sectioned(0.7)
    metrics = list(dict.fromkeys([*HEADLINE, *SHAPE_COLUMNS]))
    options = {"source": "merge base 89abcdef0123", "metrics": metrics}
    comparison = compare_sections(base, head, compare_results(base, head, **options), **options)
    text = render(head, comparison=comparison)
    assert "### By section" in text and "<details><summary>" in text
    _check(request, "sections-with-baseline.md", text)


def test_systems_and_judge_check(request):
    from dataclasses import replace

    from evaluator.core.judgecheck import CheckRow, summarise
    from evaluator.core.systems import system_run

    head = make_results(quality=0.9, policy=LENIENT, seed=4)
    other = make_results(quality=0.4, policy=LENIENT, seed=4)
    shapes = tuple(head.shapes)
    check = summarise([CheckRow(q.id, 0.6, 0.3, "other.py", "q0") for q in head.queries], [])
    results = replace(head, judge_check=check,
                      systems=(system_run("neuralmind", head.queries, shapes),
                               system_run("bm25", other.queries, shapes)))
    text = render(results)
    assert "### Systems side by side" in text
    assert "⚠️ the judge separates right from wrong source by only 0.30" in text
    _check(request, "systems-judge-check.md", text)
