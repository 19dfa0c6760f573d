"""The ``embedding`` reference system: plain vector RAG beside NeuralMind, in two variants.

``embedding`` (``chunks=index``, the default) searches the run's own NeuralMind build, as
NeuralMind's public benchmark's ``embedding-rag`` does (:mod:`evaluator.refsystems.indexsearch`).
``embedding:chunks=code`` is :class:`EmbeddingIndex`, code chunks embedded here:
:func:`embedding_system` is the registry entry's factory and picks one.

``chunks=code``: every module is cut into chunks
(:mod:`evaluator.refsystems.chunks`: functions, methods, class heads, windows), each chunk
embedded as its path, its name and its source (the model reads the first 256 tokens) with
the run's own all-MiniLM-L6-v2 (the one model session of the run, which the judge uses too:
:func:`evaluator.judging.model_session`). A question is embedded alike and the chunks are
ranked by cosine similarity. The ranked modules are the modules in the order of their best
chunk (every module that has a chunk); the context is the source of the top
:data:`TOP_CHUNKS` chunks, which are also its documents.

The chunk vectors are kept in the cache directory, keyed by content
(:mod:`evaluator.refsystems.vectors`): a run re-embeds only the chunks whose text changed.

This is an adapter (it loads the model through :mod:`evaluator.judging`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from evaluator.core.systems import Answer, System
from evaluator.errors import ConfigError
from evaluator.model import ModelSource, model_fingerprint
from evaluator.refsystems.chunks import chunks_of
from evaluator.refsystems.texts import estimate_tokens, read_modules
from evaluator.refsystems.vectors import store_path, vectors_of

TOP_CHUNKS = 8
#: The characters of a chunk's text that are embedded: a little more than the model's 256
#: tokens read, so that tokenizing a long chunk costs no more than it is worth.
EMBED_CHARS = 1200


class EmbeddingIndex:
    """The checkout's chunks and their vectors (embedded once, asked many questions)."""

    def __init__(self, root: Path, files: Sequence[str], *, model: ModelSource,
                 cache_dir: Path) -> None:
        from evaluator.judging import checked_embedder, model_session
        from evaluator.neuralmind_index import neuralmind_version

        checked_embedder(model.path, purpose="the embedding reference system")
        self._embed = model_session(model.path)
        self.chunks = tuple(c for m in read_modules(root, files)
                            for c in chunks_of(m.path, m.text))
        path = store_path(cache_dir, root, model=model_fingerprint(model),
                          library=neuralmind_version())
        self._vectors, self.embedded = vectors_of(
            [c.embedded[:EMBED_CHARS] for c in self.chunks], self._embed, path)

    def rank(self, question: str) -> list[int]:
        """The chunks' indices, best cosine with ``question`` first (ties in file order)."""
        if not self.chunks:
            return []
        query = np.asarray(self._embed([question])[0], dtype=np.float32)
        query /= max(float(np.linalg.norm(query)), 1e-12)
        scores = self._vectors @ query
        return sorted(range(len(self.chunks)), key=lambda i: (-float(scores[i]), i))

    def ask(self, question: str) -> Answer:
        """Every module by its best chunk's cosine with ``question``; the context is the
        top :data:`TOP_CHUNKS` chunks' source, best first."""
        started = time.perf_counter()
        order = self.rank(question)
        ranked = tuple(dict.fromkeys(self.chunks[i].module for i in order))
        documents = tuple(self.chunks[i].text for i in order[:TOP_CHUNKS])
        context = "\n\n".join(documents)
        return Answer(ranked_modules=ranked, context=context, tokens=estimate_tokens(context),
                      seconds=time.perf_counter() - started, documents=documents)


def embedding_system(root: Path, files: Sequence[str], *, chunks: str = "index", depth: int,
                     index: object = None, model: ModelSource | None = None,
                     cache_dir: Path | None = None) -> System:
    """The ``embedding`` entry's factory: ``chunks=index`` searches ``index`` (the run's
    evaluated NeuralMind build), ``chunks=code`` embeds code chunks with ``model``."""
    if chunks == "code":
        if model is None or cache_dir is None:
            raise ValueError("embedding:chunks=code needs the run's model and cache folder")
        return EmbeddingIndex(root, files, model=model, cache_dir=cache_dir)
    from evaluator.refsystems.indexsearch import IndexSearch, Searchable

    if not isinstance(index, Searchable):
        raise ConfigError("--systems embedding searches the run's NeuralMind build, and this "
                          "run's index cannot be searched",
                          hint="use embedding:chunks=code (code chunks embedded with the model)")
    return IndexSearch(files, index=index, depth=depth)
