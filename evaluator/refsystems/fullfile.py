"""The ``full-file`` reference system: whole files of bm25's top modules, pasted.

The "paste the files" baseline: the ranking is ``bm25``'s
(:class:`evaluator.bm25.BM25Index`); the context is the whole text of its top ``top``
modules (option ``top``: 10, the largest cut scored by default, or 5, 20, or ``all``: every
module, bm25's ranking first and then the rest by path, NeuralMind's public benchmark's
"full-file" ceiling). It costs what an agent that opens those files pays.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from evaluator.bm25 import BM25Index
from evaluator.core.systems import Answer
from evaluator.refsystems.texts import estimate_tokens

TOP = ("10", "5", "20", "all")


class FullFile:
    """bm25's ranking with the whole files of its top ``top`` modules as the context."""

    def __init__(self, root: Path, files: Sequence[str], *, top: str = TOP[0],
                 depth: int = 0) -> None:
        if top not in TOP:
            raise ValueError(f"full-file: top must be one of {', '.join(TOP)}, not {top!r}")
        self._bm25 = BM25Index(root, files, depth=depth)
        self._top = None if top == "all" else int(top)

    def ask(self, question: str) -> Answer:
        started = time.perf_counter()
        ranked = self._bm25.ask(question).ranked_modules
        if self._top is None:
            ranked += tuple(sorted(set(self._bm25.modules) - set(ranked)))
        documents = tuple(self._bm25.text_of(m) for m in ranked[:self._top])
        context = "\n\n".join(documents)
        return Answer(ranked_modules=ranked, context=context, tokens=estimate_tokens(context),
                      seconds=time.perf_counter() - started, documents=documents)
