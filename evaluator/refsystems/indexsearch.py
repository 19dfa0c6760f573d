"""``embedding`` (``chunks=index``, the default): plain vector search over the run's own
NeuralMind build, NeuralMind's public benchmark's ``embedding-rag``.

The harness's baseline (``evals/public/backends.py`` in github.com/dfrostar/neuralmind) is
``NeuralMind.search(question, n=8)``: the top 8 nodes of NeuralMind's own index by vector
similarity, with no synapses and no progressive disclosure; it "isolates what NeuralMind
adds over plain vector search". A node of that index is a function, method, class, module
or docstring, embedded as its qualified name, its module and its docstring
(``neuralmind/node_text.py``) with the run's all-MiniLM-L6-v2 (whatever backend the build
has: ``--backend in_memory`` searches by its word overlap, as that backend does).

This system asks the evaluated index's build itself (:meth:`Searchable.search`, the
:class:`evaluator.neuralmind_index.NeuralMindIndex` the run built and asked; nothing is
built or embedded again):

* **ranking**: the files of the hits, in hit order, each once: those of the top
  :data:`TOP_HITS` hits first, then, while fewer than ``depth`` modules of the universe are
  ranked and the index has more nodes, those of a deeper search (``n`` doubled each time);
  like every system's, the ranking is then filtered to the module universe by the run;
* **context**: the source of the top :data:`TOP_HITS` hits, best first: the code chunk
  (:mod:`evaluator.refsystems.chunks`: the function, the class head, the window) holding
  the line the hit's node starts on, read from the build's snapshot; a hit without a file
  or a line, or whose line is in no chunk, gives the text NeuralMind embedded for it.
  Tokens are characters / 4, as for every reference system.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from evaluator.core.systems import Answer
from evaluator.neuralmind_index import IndexHit
from evaluator.refsystems.chunks import Chunk, chunks_of
from evaluator.refsystems.texts import estimate_tokens
from evaluator.snapshot import read_source

#: The hits whose source is the context: the harness's ``RAG_TOP_K``.
TOP_HITS = 8


@runtime_checkable
class Searchable(Protocol):
    """A built NeuralMind index that can be searched (the run's evaluated index)."""

    @property
    def tree(self) -> Path: ...

    def search(self, question: str, n: int) -> tuple[IndexHit, ...]: ...


class IndexSearch:
    """Vector search over a built NeuralMind index (the module docstring says what)."""

    def __init__(self, files: Sequence[str], *, index: Searchable, depth: int) -> None:
        self._index = index
        self._universe = frozenset(files)
        self._depth = depth
        self._chunks: dict[str, tuple[Chunk, ...]] = {}

    def ranking(self, question: str) -> tuple[tuple[IndexHit, ...], tuple[str, ...]]:
        """The top :data:`TOP_HITS` hits and the ranked files (see the module docstring)."""
        n = TOP_HITS
        top = hits = self._index.search(question, n)
        ranked = _files(hits)
        while sum(1 for m in ranked if m in self._universe) < self._depth and len(hits) >= n:
            n *= 2
            hits = self._index.search(question, n)
            ranked = tuple(dict.fromkeys((*ranked, *_files(hits))))
        return top[:TOP_HITS], ranked

    def source(self, hit: IndexHit) -> str:
        """The source of ``hit``'s node: the chunk holding its line, else its document."""
        if not hit.module or hit.line is None:
            return hit.document
        if hit.module not in self._chunks:
            text = read_source(self._index.tree, hit.module)
            self._chunks[hit.module] = chunks_of(hit.module, text) if text else ()
        for chunk in self._chunks[hit.module]:
            if chunk.line <= hit.line <= chunk.line + chunk.text.count("\n"):
                return chunk.text
        return hit.document

    def ask(self, question: str) -> Answer:
        started = time.perf_counter()
        top, ranked = self.ranking(question)
        documents = tuple(self.source(hit) for hit in top)
        context = "\n\n".join(documents)
        return Answer(ranked_modules=ranked, context=context, tokens=estimate_tokens(context),
                      seconds=time.perf_counter() - started, documents=documents)


def _files(hits: Sequence[IndexHit]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(h.module for h in hits if h.module))
