"""Deterministic synthetic results for rendering and comparison tests (no index needed)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from evaluator.core.floors import DEFAULT_POLICY, FloorPolicy, check_floors
from evaluator.core.groundtruth import GroundTruth, Query
from evaluator.core.results import Results, RunInfo
from evaluator.core.scoring import (
    Faithfulness,
    Retrieval,
    ScoringOptions,
    aggregate,
    by_shape,
    score_all,
)
from evaluator.core.systems import Answer

MODULES = tuple(f"pkg/mod_{i:02d}.py" for i in range(12))


def make_inputs(*, n: int = 9, shapes: Sequence[str] = ("focused", "cross-file", "identity"),
                seed: int = 1, quality: float = 0.8,
                question: str = "How does feature {i} work across the package?",
                modules: Sequence[str] = MODULES) -> tuple[GroundTruth, dict[str, Retrieval]]:
    """A ground truth of ``n`` queries and what a (simulated) index returned for each;
    ``quality`` is the chance that a relevant module is retrieved high."""
    rng = random.Random(seed)
    queries, retrievals = [], {}
    for i in range(n):
        relevant = rng.sample(list(modules), 3)
        grades = dict.fromkeys(modules, 0) | dict(zip(relevant, (3, 2, 1), strict=True))
        facts = (f"fact {i} alpha", f"fact {i} beta", f"fact {i} gamma")
        qid = f"q{i:02d}"
        queries.append(Query(qid, question.format(i=i), shapes[i % len(shapes)], grades, facts))
        others = [m for m in modules if m not in relevant]
        rng.shuffle(others)
        ranking = [m for m in relevant if rng.random() < quality] + others[:4]
        if rng.random() > quality:
            ranking = others[:3] + ranking
        found = tuple(f for f in facts if rng.random() < quality)
        recall = len(found) / len(facts)
        retrievals[qid] = Retrieval(
            query_id=qid, ranked_modules=tuple(ranking), context_tokens=500 + 10 * i,
            token_reduction=8.0, latency_ms=3.0,
            faithfulness=Faithfulness(recall, 0.0, recall, found,
                                      tuple(f for f in facts if f not in found)))
    return GroundTruth("retrieval_queries.json", tuple(queries)), retrievals


def make_run(*, commit: str = "0123456789abcdef0123456789abcdef01234567") -> RunInfo:
    return RunInfo(tool_version="0.1.0", neuralmind_version="4.22.1", backend="turbovec",
                   graph_source="builtin", k_values=(1, 3, 5, 10), gain="exponential",
                   threshold=1, queries_file="retrieval_queries.json", queries_sha256="0" * 64,
                   commit=commit, started_at="2026-01-01T00:00:00+00:00",
                   timings={"build_s": 1.0, "queries_s": 0.2, "overhead_s": 0.05,
                            "total_s": 1.25})


def make_results(*, n: int = 9, shapes: Sequence[str] = ("focused", "cross-file", "identity"),
                 seed: int = 1, quality: float = 0.8, policy: FloorPolicy = DEFAULT_POLICY,
                 question: str = "How does feature {i} work across the package?",
                 commit: str = "0123456789abcdef0123456789abcdef01234567",
                 modules: Sequence[str] = MODULES) -> Results:
    """``n`` queries scored (see :func:`make_inputs`), with the floors of ``policy``."""
    ground_truth, retrievals = make_inputs(n=n, shapes=shapes, seed=seed, quality=quality,
                                           question=question, modules=modules)
    rows = score_all(ground_truth, retrievals, ScoringOptions())
    overall = aggregate(rows)
    per_shape = by_shape(rows, ground_truth.shapes)
    run = make_run(commit=commit)
    return Results(run=run, overall=overall, shapes=per_shape, queries=rows,
                   violations=check_floors(policy, overall=overall, shapes=per_shape, rows=rows))


def results_from_rankings(rankings: dict[str, Sequence[str]], *,
                          grades: dict[str, dict[str, int]],
                          shapes: dict[str, str] | None = None,
                          questions: dict[str, str] | None = None,
                          policy: FloorPolicy = DEFAULT_POLICY,
                          commit: str = "0123456789abcdef0123456789abcdef01234567",
                          **run_overrides: object) -> Results:
    """Results with exactly these rankings per question (facts all found): for tests that
    need a specific question to move."""
    from dataclasses import replace

    queries, retrievals = [], {}
    for qid, ranking in rankings.items():
        facts = (f"{qid} fact one", f"{qid} fact two")
        shape = (shapes or {}).get(qid, "focused")
        text = (questions or {}).get(qid, f"Where is {qid} handled?")
        queries.append(Query(qid, text, shape, grades[qid], facts))
        retrievals[qid] = Retrieval(
            query_id=qid, ranked_modules=tuple(ranking), context_tokens=500, token_reduction=8.0,
            latency_ms=3.0, faithfulness=Faithfulness(1.0, 0.0, 1.0, facts, ()))
    ground_truth = GroundTruth("retrieval_queries.json", tuple(queries))
    rows = score_all(ground_truth, retrievals, ScoringOptions())
    overall = aggregate(rows)
    per_shape = by_shape(rows, ground_truth.shapes)
    run = RunInfo(tool_version="0.1.0", neuralmind_version="4.22.1", backend="turbovec",
                  graph_source="builtin", k_values=(1, 3, 5, 10), gain="exponential",
                  threshold=1, queries_file="retrieval_queries.json", queries_sha256="0" * 64,
                  commit=commit, started_at="2026-01-01T00:00:00+00:00",
                  model_fingerprint="5f0c2a9be1d34c77",
                  timings={"build_s": 1.0, "queries_s": 0.2, "overhead_s": 0.05,
                           "total_s": 1.25})
    run = replace(run, **run_overrides)  # type: ignore[arg-type]
    return Results(run=run, overall=overall, shapes=per_shape, queries=rows,
                   violations=check_floors(policy, overall=overall, shapes=per_shape, rows=rows))


def example_answer(question: str, *, before: Sequence[str] = (), perfect: bool = True,
                   otherwise: Sequence[str] = ()) -> Answer:
    """What a fake retrieval system answers to a question of the bundled example's ground
    truth: ``before``, then (``perfect``) the question's graded modules best first, with
    its gold facts as the context; ``otherwise`` (after ``before``) for any other question."""
    from evaluator.app import EXAMPLE_QUERIES
    from evaluator.core.groundtruth_check import load_ground_truth

    gt, _ = load_ground_truth(EXAMPLE_QUERIES.read_text(encoding="utf-8"),
                              str(EXAMPLE_QUERIES), present_modules=None, strict=False)
    query = next((q for q in gt.queries if q.question == question), None)
    if query is None:
        return Answer((*before, *otherwise), "", 10, 0.001)
    graded = sorted((m for m, g in query.grades.items() if g > 0),
                    key=lambda m: (-query.grades[m], m))
    if not perfect:
        return Answer(tuple(before), "", 10, 0.001)
    return Answer((*before, *graded), "\n".join(query.gold_facts), 10, 0.001)
