"""The ranking depth rule (issue 23 item 1: ``--depth N``)."""

from __future__ import annotations

import pytest

from evaluator.core.depth import (
    at_k,
    depth_reach,
    ranking_depth,
    short_of_depth,
    unmeasurable,
)


def test_the_depth_defaults_to_the_largest_k_reported():
    assert ranking_depth(None, (1, 3, 5, 10)) == 10
    assert ranking_depth(None, (5,)) == 5
    assert ranking_depth(20, (5, 10)) == 20
    with pytest.raises(ValueError):
        ranking_depth(None, ())


def test_a_system_that_ranks_everything_it_has_is_never_short():
    assert depth_reach(10, 50, ranks_all=True) is None
    assert not short_of_depth(0, depth_reach(10, 50, ranks_all=True))


def test_a_system_that_cannot_rank_deeper_is_short_below_the_reachable_depth():
    reach = depth_reach(10, 50, ranks_all=False)
    assert reach == 10
    assert short_of_depth(7, reach) and not short_of_depth(10, reach)
    # a universe smaller than the depth: every module of it is as deep as anyone can rank
    small = depth_reach(10, 6, ranks_all=False)
    assert small == 6
    assert not short_of_depth(6, small) and short_of_depth(5, small)


def test_metrics_at_k_beyond_a_short_ranking_are_not_measurable():
    # (returned modules, short of depth) per question
    rankings = [(3, True), (7, True), (10, False), (2, False)]
    marks = unmeasurable("neuralmind", rankings, (10, 1, 5))
    assert [(m.k, m.short, m.total) for m in marks] == [(5, 1, 4), (10, 2, 4)]
    assert marks[1].label == "neuralmind"
    # a question that ranked everything it had (2 modules, not short) is measured
    assert unmeasurable("bm25", [(2, False)], (5, 10)) == ()


def test_the_cut_off_of_a_metric_name():
    assert at_k("recall@10") == 10 and at_k("ndcg@5") == 5
    assert at_k("faithfulness") is None and at_k("context_tokens") is None


@pytest.mark.parametrize("factory", ["evaluator.bm25:BM25Index",
                                     "evaluator.refsystems.grep:GrepIndex",
                                     "evaluator.refsystems.fullfile:FullFile"])
def test_a_capped_ranker_is_asked_for_the_depth(tmp_path, factory):
    """bm25 and grep cap their rankings at 100 modules; asked for a deeper ranking they
    rank as deep as asked (every module holding a word of the question)."""
    from evaluator.core.systems import SystemEntry
    from evaluator.deps import load_factory
    from evaluator.system_runs import depth_for

    names = [f"pkg/mod_{i:03}.py" for i in range(130)]
    for i, name in enumerate(names):
        path = tmp_path / name
        path.parent.mkdir(exist_ok=True)
        path.write_text(f"def parse_header_{i}():\n    return 'parse header'\n")
    make = load_factory(SystemEntry("x", "x", factory=factory))
    assert depth_for(make, 120) == {"depth": 120}
    question = "Where is the header parsed?"
    assert len(make(tmp_path, names).ask(question).ranked_modules) == 100
    assert len(make(tmp_path, names, **depth_for(make, 120)).ask(question)
               .ranked_modules) == 120
    # never fewer than the cap it had
    assert len(make(tmp_path, names, depth=10).ask(question).ranked_modules) == 100


def test_a_factory_without_depth_keeps_its_contract():
    from evaluator.system_runs import depth_for

    def factory(root, files):
        return None

    assert depth_for(factory, 10) == {}


def test_the_flag_and_the_depth_survive_results_json():
    """``comment --results`` renders from the file: the flags and the depth are read back,
    and a flag of the wrong type is refused with the field named."""
    from dataclasses import replace

    from evaluator.core.results import to_dict
    from evaluator.core.results_reader import from_dict
    from evaluator.core.systems import system_run
    from evaluator.errors import InputError
    from tests.factories import make_results

    head = make_results(seed=4)
    rows = tuple(replace(r, short_of_depth=i == 1) for i, r in enumerate(head.queries))
    results = replace(head, run=replace(head.run, depth=10), queries=rows,
                      systems=(system_run("neuralmind", rows, tuple(head.shapes)),))
    doc = to_dict(results)
    assert [q.get("short_of_depth", False) for q in doc["queries"]][:3] == [False, True, False]
    back = from_dict(doc, "results.json")
    assert back.run.depth == 10
    assert [q.short_of_depth for q in back.queries] == [q.short_of_depth for q in rows]
    assert [q.short_of_depth for q in back.systems[0].queries] == \
        [q.short_of_depth for q in rows]
    doc["systems"][0]["queries"][0]["short_of_depth"] = "yes"
    with pytest.raises(InputError, match=r"systems\[0\]\.queries\[0\]\.short_of_depth"):
        from_dict(doc, "results.json")
