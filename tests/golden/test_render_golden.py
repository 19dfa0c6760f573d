"""Golden files of the whole comment. Refresh with `pytest --update-golden`, never silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core import measures
from evaluator.core.compare import compare_results
from evaluator.core.floors import FloorPolicy
from evaluator.render import render, render_comment
from tests.factories import make_results, results_from_rankings, view_of

EXPECTED = Path(__file__).parent / "expected"
LENIENT = FloorPolicy(aggregate=(), per_shape=(), zero_miss=False)


def _check(request: pytest.FixtureRequest, name: str, text: str) -> None:
    path = EXPECTED / name
    if request.config.getoption("--update-golden"):
        path.write_text(text)
    assert path.exists(), f"{path} is missing: run pytest --update-golden once and review it"
    assert text == path.read_text(), f"{name} changed; review, then pytest --update-golden"


def _comparison(base, head):
    metrics = list(dict.fromkeys([*measures.headline(), *measures.shape_columns()]))
    return compare_results(base, head, source="merge base 89abcdef0123", metrics=metrics)


def test_pass(request):
    results = make_results(quality=0.95, policy=LENIENT, seed=3)
    assert results.passed
    _check(request, "pass.md", render(view_of(results)))


def test_fail(request):
    results = make_results(quality=0.4, seed=2)
    assert not results.passed
    _check(request, "fail.md", render(view_of(results)))


def test_fail_with_baseline_deltas(request):
    base = make_results(quality=0.9, seed=2)
    head = make_results(quality=0.4, seed=2)
    _check(request, "fail-with-baseline.md",
           render(view_of(head, comparison=_comparison(base, head))))


def test_custom_shape(request):
    results = make_results(shapes=("focused", "api-surface", "cross-file"), seed=5,
                           policy=LENIENT)
    text = render(view_of(results))
    assert "| api-surface |" in text
    _check(request, "custom-shape.md", text)


def test_oversize(request):
    long_question = "Where is the code path for feature {i}? " + "padding words " * 60
    results = make_results(n=400, seed=7, question=long_question)
    full = render(view_of(results))
    assert len(full) > 65_536
    comment = render_comment(view_of(results))
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
    metrics = list(dict.fromkeys([*measures.headline(), *measures.shape_columns()]))
    options = {"source": "merge base 89abcdef0123", "metrics": metrics,
               "primary_metric": "ndcg@5", "alpha": 0.05, "min_effect": 0.02}
    comparison = compare_sections(base, head, compare_results(base, head, **options), **options)
    text = render(view_of(head, comparison=comparison))
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
                      run=replace(head.run, judge="evaluator-judge 3 (terms+minilm)"),
                      systems=(system_run("neuralmind", head.queries, shapes),
                               system_run("bm25", other.queries, shapes)))
    text = render(view_of(results))
    assert "### Systems side by side" in text
    assert "⚠️ the judge separates right from wrong source by only 0.30" in text
    assert " · judge evaluator-judge 3 (terms+minilm) · " in text  # the footer names it
    _check(request, "systems-judge-check.md", text)


def _bm25_rows(rows, *, tokens: float, filtered: dict[str, int]):
    """bm25's rows: ``tokens`` × NeuralMind's context size, and the first two rankings cut
    to two modules after the universe's filter (``filtered`` left out of each)."""
    from dataclasses import replace

    return tuple(replace(r, metrics={**r.metrics, "context_tokens": r.metrics[
        "context_tokens"] * tokens}, **({"ranked_modules": r.ranked_modules[:2],
                                          "filtered_out": filtered} if i < 2 else {}))
        for i, r in enumerate(rows))


def test_systems_not_like_for_like_and_short_rankings(request):
    """Issue 23: without --budget a context more than twice the size is marked ≠, and a
    system that returned fewer than 5 modules after the universe's filter says so."""
    from dataclasses import replace

    from evaluator.core.systems import system_run

    head = make_results(quality=0.9, policy=LENIENT, seed=4)
    other = make_results(quality=0.4, policy=LENIENT, seed=4)
    shapes = tuple(head.shapes)
    bm25 = _bm25_rows(other.queries, tokens=80.0, filtered={"docs": 3, "tests": 2})
    results = replace(head, systems=(system_run("neuralmind", head.queries, shapes),
                                     system_run("bm25", bm25, shapes)))
    text = render(view_of(results))
    assert "| bm25 ≠ |" in text and "| neuralmind ≠ |" not in text
    assert "≠: a mean context more than twice or less than half the size of neuralmind's" \
        in text
    assert ("- bm25 returned fewer than 5 modules on 2 of 9 questions (10 filtered out: "
            "6 docs, 4 tests)") in text
    _check(request, "systems-unlike.md", text)


def test_systems_at_a_budget_with_the_frontier(request):
    """Issue 23: --budget neuralmind: the cut is named, no ≠ where the sizes agree, and
    the quality-vs-tokens frontier is a Mermaid xychart with its numbers."""
    from dataclasses import replace

    from evaluator.core.systems import FrontierPoint, system_run

    head = make_results(quality=0.9, policy=LENIENT, seed=4)
    other = make_results(quality=0.4, policy=LENIENT, seed=4)
    shapes = tuple(head.shapes)
    scales = (0.25, 0.5, 1.0, 2.0, 4.0)
    mine = tuple(FrontierPoint(s, 540 * min(s, 1.0), q)
                 for s, q in zip(scales, (0.3, 0.6, 0.85, 0.85, 0.85), strict=True))
    theirs = tuple(FrontierPoint(s, 540 * s, q)
                   for s, q in zip(scales, (0.1, 0.2, 0.4, 0.6, 0.8), strict=True))
    results = replace(head, run=replace(head.run, budget="neuralmind"), systems=(
        replace(system_run("neuralmind", head.queries, shapes), frontier=mine),
        replace(system_run("bm25", other.queries, shapes), frontier=theirs)))
    text = render(view_of(results))
    assert "cut to the evaluated index's own context size for each question" in text
    assert "≠" not in text
    assert "xychart-beta" in text and "line [0.100, 0.200, 0.400, 0.600, 0.800]" in text
    assert "| bm25 | 0.100 at 135 tokens |" in text
    _check(request, "systems-budget.md", text)


# ------------------------------------------------------------------ issue 11: the verdict

SHAPES = ("focused", "cross-file", "identity")
N = 18
SHA = "fedcba9876543210fedcba9876543210fedcba98"


def _grades(i: int) -> dict[str, int]:
    return {f"src/pkg/mod_{i:02d}.py": 3, "src/pkg/__init__.py": 1 if i % 4 == 0 else 0,
            f"src/pkg/help_{i % 5}.py": 2}


def _ranking(i: int, rank: int | None) -> list[str]:
    """Question i's list with its grade-3 module at ``rank`` (None: not retrieved)."""
    rest = [f"src/pkg/help_{i % 5}.py", "src/pkg/__init__.py", "src/pkg/util.py",
            "src/pkg/cli.py", "src/pkg/core.py", "src/pkg/types.py"]
    if rank is not None:
        rest.insert(rank - 1, f"src/pkg/mod_{i:02d}.py")
    return rest


def _suite(ranks: dict[int, int | None], **run) -> object:
    return results_from_rankings(
        {f"q{i:02d}": _ranking(i, ranks.get(i, 1 if i % 3 else 2)) for i in range(N)},
        grades={f"q{i:02d}": _grades(i) for i in range(N)},
        shapes={f"q{i:02d}": SHAPES[i % 3] for i in range(N)},
        questions={f"q{i:02d}": f"Where does the package handle concern {i}?" for i in range(N)},
        commit=SHA, **run)


def _extras(**kwargs):
    from evaluator.core.floors import DEFAULT_POLICY
    from evaluator.report_views import Extras
    return Extras(floors=DEFAULT_POLICY, **kwargs)


def _compare(base, head):
    return compare_results(base, head, source="merge base 89abcdef0123",
                           metrics=list(dict.fromkeys([*measures.headline(),
                                                       *measures.shape_columns()])))


def test_one_question_regression(request):
    base, head = _suite({}), _suite({7: None})
    text = render(view_of(head, comparison=_compare(base, head), extras=_extras()))
    first = text.splitlines()[:15]
    assert first[0].startswith("## ⚠️ 1 question worse · 0 better · 17 unchanged — nDCG@5")
    assert any("`q07`" in line and "not retrieved" in line for line in first)
    assert "noise" not in text
    assert "at least 6 changed questions" in text
    _check(request, "one-question-regression.md", text)


def test_many_question_significant_drop(request):
    base = _suite({})
    head = _suite({i: (None if i % 2 else 5) for i in range(12)})
    comparison = _compare(base, head)
    assert comparison.primary.significant
    text = render(view_of(head, comparison=comparison, extras=_extras()))
    assert text.startswith("## ⚠️ 12 questions worse · 0 better · 6 unchanged")
    assert "the change in nDCG@5 is significant (12 changed, p = 0.000)" in text
    _check(request, "many-question-drop.md", text)


def test_improvement(request):
    base = _suite({2: None, 5: 4, 8: 3})
    head = _suite({})
    text = render(view_of(head, comparison=_compare(base, head), extras=_extras()))
    assert text.startswith("## ✅ 0 questions worse · 3 better · 15 unchanged")
    _check(request, "improvement.md", text)


def test_mismatched_baseline_refused_or_warned(request):
    from evaluator.core.comparability import require_comparable
    from evaluator.errors import InputError

    base = _suite({}, backend="in_memory", model_fingerprint=None, neuralmind_version="4.21.0")
    head = _suite({7: None})
    with pytest.raises(InputError) as err:
        require_comparable(base.run, head.run)
    _check(request, "mismatch-refused.txt", f"error: {err.value}\n")
    differences = require_comparable(base.run, head.run, mismatch="warn")
    text = render(view_of(head, comparison=_compare(base, head),
                          extras=_extras(mismatch=differences)))
    assert "The baseline is not comparable" in "\n".join(text.splitlines()[:6])
    _check(request, "mismatch-warned.md", text)


def test_pr_touched_section(request):
    from evaluator.report_views import links
    base, head = _suite({}), _suite({7: None, 9: 3})
    extras = _extras(changed_files=("src/pkg/mod_07.py", "src/pkg/__init__.py", "README.md"),
                     links=links("https://github.com", "octo/widgets", SHA))
    text = render(view_of(head, comparison=_compare(base, head), extras=extras))
    section = text.split("### Questions grading files this PR changed")[1].split("\n\n")[1]
    assert section.splitlines()[0].startswith("- ❌ `q07`")
    assert (f"[`src/pkg/mod_07.py`](https://github.com/octo/widgets/blob/{SHA}/"
            "src/pkg/mod_07.py) (3)") in section
    _check(request, "pr-touched.md", section + "\n")


def test_mermaid_chart(request):
    base, head = _suite({}), _suite({7: None, 9: 3, 10: 2})
    text = render(view_of(head, comparison=_compare(base, head), extras=_extras()))
    charts = [block.split("```")[0] for block in text.split("```mermaid\n")[1:]]
    assert len(charts) == 2
    _check(request, "mermaid-chart.md", "".join(f"```mermaid\n{c}```\n\n" for c in charts))


def test_history_trend(request):
    from evaluator.core import history
    h = history.History()
    for i, value in enumerate((0.71, 0.74, 0.74, 0.78, 0.77)):
        h = history.append(h, history.Entry(f"{i + 10:07x}", f"2026-01-0{i + 1}", 18,
                                            {"ndcg@5": value}))
    head = _suite({})
    h = history.append(h, history.entry_for(head))
    text = render(view_of(head, extras=_extras(history=h, history_count=5)))
    section = text.split("### nDCG@5 on the default branch\n\n")[1].split("\n\n")[0]
    assert section.count('"') == 2 * 5 + 4  # 5 commits on the axis, title, y label
    _check(request, "history-trend.md", section + "\n")


def _audited(results):
    """Every fact of ``results`` with an audit: the first of each question anchored (its
    span, one with a pipe and a backtick), the second judged by terms, the third by the
    model; and one drifted span."""
    from dataclasses import replace

    from evaluator.core.groundtruth import Problem
    from evaluator.core.judge import FactAudit

    spans = ("def alpha(x: int) -> int | None:", "raise Beta(`x`)", "return {\"a\": 1}")
    rows = []
    for i, q in enumerate(results.queries):
        faith = q.faithfulness
        facts = (*faith.facts_found, *faith.facts_missing)
        audit = tuple(FactAudit(f, ("anchored", "terms", "model")[j % 3], f in faith.facts_found,
                                spans[i % 3] if f in faith.facts_found else None)
                      for j, f in enumerate(facts))
        rows.append(replace(q, faithfulness=replace(faith, facts=audit)))
    drift = (Problem("warning", "ground-truth drift: the evidence of fact 1 of question 'q00' "
                     "('def alpha(x: int) -> int | None:') was in pkg/mod_01.py at the base "
                     "commit and is in none of its grade >= 2 modules now: the change deleted "
                     "or rewrote the code the fact quotes; update the fact's evidence (or the "
                     "fact)", "retrieval_queries.json", "q00", "gold_facts[0].evidence", 14),)
    return replace(results, queries=tuple(rows),
                   run=replace(results.run, judge="evaluator-judge 2 (terms+minilm)",
                               drift=drift))


def test_faithfulness_audit_and_drift(request):
    results = _audited(make_results(n=3, seed=4, policy=LENIENT))
    text = render(view_of(results))
    assert "faithfulness, 3 of 9 facts anchored" in text
    assert "Faithfulness audit" in text and "Ground truth and code disagree" in text
    _check(request, "faithfulness-audit.md", text)


def test_by_overlap_and_retrieval_only(request):
    """Issue 24: the By-overlap table (questions naming their answer apart) and the note on
    retrieval-only questions (no gold facts: faithfulness neither computed nor floored)."""
    from dataclasses import replace

    from evaluator.core.giveaway import Overlap

    results = make_results(quality=0.8, policy=LENIENT, seed=5)
    rows = []
    for n, row in enumerate(results.queries):
        named = ("echo",) if n % 3 == 0 else ()
        metrics = dict(row.metrics)
        if n % 4 == 0:   # retrieval-only
            metrics.update(faithfulness=None, fact_recall=None, contradiction=None)
        rows.append(replace(row, metrics=metrics,
                            overlap=Overlap(shared=("echo",), named=named, share=0.5)))
    from evaluator.core.scoring import aggregate, by_shape

    rescored = replace(results, queries=tuple(rows), overall=aggregate(rows),
                       shapes=by_shape(rows, list(results.shapes)))
    _check(request, "by-overlap.md", render(view_of(rescored)))


def test_systems_short_of_depth(request):
    """Issue 23 item 1: where a system could not rank as deep as --depth (NeuralMind's query
    returns what it returns), its @k cells beyond what it returned are marked † with a
    footnote; a system that ranked everything it had is not marked."""
    from dataclasses import replace

    from evaluator.core.systems import system_run

    head = make_results(quality=0.9, policy=LENIENT, seed=4)
    other = make_results(quality=0.4, policy=LENIENT, seed=4)
    shapes = tuple(head.shapes)
    short = tuple(replace(r, ranked_modules=r.ranked_modules[:3], short_of_depth=True)
                  if i in (0, 4, 7) else r for i, r in enumerate(head.queries))
    # bm25 ranked everything it had: two modules on one question, not short of depth
    bm25 = tuple(replace(r, ranked_modules=r.ranked_modules[:2]) if i == 0 else r
                 for i, r in enumerate(other.queries))
    results = replace(head, run=replace(head.run, depth=10), queries=short,
                      systems=(system_run("neuralmind", short, shapes),
                               system_run("bm25", bm25, shapes)))
    text = render(view_of(results))
    assert ("- † @5 not measurable: neuralmind returned fewer than 5 modules on 3 of 9 "
            "questions and could not rank deeper (ranking depth 10)") in text
    neuralmind_row = next(line for line in text.splitlines() if line.startswith("| neuralmind"))
    bm25_row = next(line for line in text.splitlines() if line.startswith("| bm25"))
    assert neuralmind_row.count("†") == 6  # the six @5 columns, not faithfulness or tokens
    assert "not measurable: bm25" not in text
    assert "†" not in bm25_row
    _check(request, "systems-depth.md", text)
