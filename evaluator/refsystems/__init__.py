"""The reference systems of ``--systems`` beside NeuralMind and ``bm25``.

Each is an entry of the registry (:data:`evaluator.core.systems.SYSTEMS`) whose factory is
``(root, files, **options, **provided) -> System`` and lives in a module of its own here:

* :mod:`~evaluator.refsystems.embedding`: plain vector RAG: a search of the run's own
  NeuralMind build (:mod:`~evaluator.refsystems.indexsearch`, the default) or code chunks
  embedded with the run's MiniLM model (``chunks=code``);
* :mod:`~evaluator.refsystems.grep`: files ranked by the matches of the question's keywords;
* :mod:`~evaluator.refsystems.fullfile`: whole files of bm25's top modules;
* :mod:`~evaluator.refsystems.oracle`: the graded modules' source, the ceiling.

``provided`` is what the run hands an entry by its needs (:func:`provided`): the run's
model and cache folder (``model``), its ground truth (``ground_truth``), the evaluated
index's open build (``index``). Nothing is built twice: the systems read the head checkout's
files the run listed (those its snapshot holds), ``embedding`` searches the evaluated
build while it is open, and ``embedding:chunks=code`` embeds through the run's one model
session.
"""

from __future__ import annotations

from collections.abc import Set
from pathlib import Path
from typing import Any

from evaluator.core.groundtruth import GroundTruth
from evaluator.model import ModelSource


def provided(needs: Set[str], *, model: ModelSource, cache_dir: Path,
             ground_truth: GroundTruth, index: Any = None) -> dict[str, Any]:
    """The keyword arguments a reference system's factory gets for its ``needs``
    (``index``: the evaluated index's open build, for the need ``index``)."""
    out: dict[str, Any] = {}
    if "index" in needs:
        out["index"] = index
    if "model" in needs:
        out |= {"model": model, "cache_dir": cache_dir}
    if "ground_truth" in needs:
        out["ground_truth"] = ground_truth
    return out
