"""What ``--judge-check`` adds to an evaluation, beside the evaluated index.

The judge self-check (:mod:`evaluator.core.judgecheck`) reads the full source of the
ground truth's modules from the checkout and scores it with the headline judge. It reads
the checkout only (never writes it) and runs after the evaluated index is closed. The
``--systems`` references are built from their registry entries
(:data:`evaluator.core.systems.SYSTEMS`) and judged by :mod:`evaluator.evaluate`, like the
evaluated index.
"""

from __future__ import annotations

from pathlib import Path

from evaluator.core.groundtruth import GroundTruth
from evaluator.core.judgecheck import JudgeCheck
from evaluator.judging import BatchEmbed, self_check


def judge_check(ground_truth: GroundTruth, root: Path, *,
                embed: BatchEmbed | None = None) -> JudgeCheck:
    """The self-check on the checkout's modules (the judge's similarity route with
    ``embed``, as for the evaluated contexts)."""
    return self_check(ground_truth, root, embed=embed)
