"""What ``--judge-check`` and ``--systems`` add to an evaluation, beside the evaluated index.

* The judge self-check (:mod:`evaluator.core.judgecheck`) reads the full source of the
  ground truth's modules from the checkout and scores it with the headline judge.
* The ``bm25`` reference system (:mod:`evaluator.bm25`) ranks the checkout's modules for
  every question; its contexts are judged through :mod:`evaluator.judging`, like
  NeuralMind's. NeuralMind variants (``neuralmind:graph=…``, ``neuralmind:backend=…``) are
  evaluated by :mod:`evaluator.evaluate` on their own snapshot.

Both read the checkout only (never write it) and run after the evaluated index is closed.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from evaluator.bm25 import BM25Index, retrievals
from evaluator.core.groundtruth import GroundTruth
from evaluator.core.judgecheck import JudgeCheck
from evaluator.core.scoring import ScoringOptions, score_all
from evaluator.core.systems import SystemRun, system_run
from evaluator.judging import BatchEmbed, self_check


def judge_check(ground_truth: GroundTruth, root: Path, *,
                embed: BatchEmbed | None = None) -> JudgeCheck:
    """The self-check on the checkout's modules (the judge's similarity route with
    ``embed``, as for the evaluated contexts)."""
    return self_check(ground_truth, root, embed=embed)


def bm25_run(root: Path, files: Sequence[str], ground_truth: GroundTruth,
             scoring: ScoringOptions, *, embed: BatchEmbed | None = None,
             columns: BatchEmbed | None = None) -> SystemRun:
    """The ``bm25`` system's block: built over the checkout, asked every question, scored
    (its contexts judged like the evaluated index's: ``embed`` for the similarity route,
    ``columns`` for the ``--embed`` columns)."""
    index = BM25Index(root, files)
    answers, _seconds = retrievals(index, ground_truth.queries, embed=embed, columns=columns)
    rows = score_all(ground_truth, answers, scoring)
    return system_run("bm25", rows, ground_truth.shapes)
