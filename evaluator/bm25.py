"""The ``bm25`` reference system: the indexed modules ranked by BM25 over their text.

A lexical baseline beside NeuralMind, as information-retrieval practice reports one beside
every system. It is given the module universe's files (the candidates every system is scored
on); each of them with a suffix NeuralMind indexes (:data:`SUFFIXES`) is one document; its
text and the question are read with the judge's code-aware tokenizer
(:func:`evaluator.core.judgetext.tokens`: identifiers split on case and underscores, stemmed,
stop words dropped) and scored with Okapi BM25 (``rank_bm25.BM25Okapi``, k1 = 1.5,
b = 0.75) with Lucene's idf, ln(1 + (N − df + 0.5) / (df + 0.5)), which stays positive for
a term most modules hold (the library's own idf turns negative there and is floored by an
average, so that in a small corpus a matching module can score below zero). The ranking is
the modules holding a term of the question (score > 0), best first, ties broken by path;
the context is the text of the top :data:`CONTEXT_MODULES` modules. Like every system it
only answers (:class:`~evaluator.core.systems.Answer`); the evaluator judges its contexts
like NeuralMind's.

This is an adapter: the only module that imports ``rank_bm25``.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evaluator.core.judgetext import tokens
from evaluator.core.systems import Answer

# The suffixes NeuralMind's IR maps to a language (neuralmind.ir._SUFFIX_LANG).
SUFFIXES = (".py", ".pyi", ".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".go", ".rs",
            ".java", ".rb", ".md", ".markdown", ".rst")
MAX_FILE_BYTES = 2 * 1024 * 1024
CONTEXT_MODULES = 5
MAX_RANKED = 100


def _okapi(corpus: list[list[str]]) -> Any:
    import math

    from rank_bm25 import BM25Okapi

    class LuceneIdfOkapi(BM25Okapi):  # type: ignore[misc]
        def _calc_idf(self, nd: dict[str, int]) -> None:
            n = self.corpus_size
            self.idf = {w: math.log(1.0 + (n - df + 0.5) / (df + 0.5)) for w, df in nd.items()}
            self.average_idf = sum(self.idf.values()) / len(self.idf) if self.idf else 0.0

    return LuceneIdfOkapi(corpus)


def read_modules(root: Path, files: Sequence[str]) -> list[tuple[str, str]]:
    """``(path, text)`` of each module among ``files`` by path: a file with one of the
    :data:`SUFFIXES`, at most :data:`MAX_FILE_BYTES`, read as UTF-8 (undecodable bytes
    replaced), its path NFC-normalized like the ground truth's (the reference systems of
    :mod:`evaluator.refsystems` read the checkout by the same rule)."""
    out = []
    for name in sorted(files):
        if not name.endswith(SUFFIXES):
            continue
        path = root / name
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.append((unicodedata.normalize("NFC", name), text))
    return out


class BM25Index:
    """BM25 over the modules of a checkout (built once, asked many questions)."""

    def __init__(self, root: Path, files: Sequence[str], *, depth: int = 0) -> None:
        # ranks at most MAX_RANKED modules, or the run's ranking depth when deeper
        self.max_ranked = max(MAX_RANKED, depth)
        self.modules: list[str] = []
        self.texts: list[str] = []
        corpus: list[list[str]] = []
        for name, text in read_modules(root, files):
            self.modules.append(name)
            self.texts.append(text)
            corpus.append(tokens(text))
        self._bm25 = _okapi(corpus) if corpus and any(corpus) else None
        self._position = {m: i for i, m in enumerate(self.modules)}

    def text_of(self, module: str) -> str:
        return self.texts[self._position[module]]

    def ask(self, question: str) -> Answer:
        """The modules holding a term of ``question``, best first (at most
        :data:`MAX_RANKED`, or the ranking depth when deeper); the context is the text of
        the top :data:`CONTEXT_MODULES`, which are also the documents; ``tokens`` counts the
        context's characters / 4 (NeuralMind's fallback estimate when tiktoken is absent)."""
        started = time.perf_counter()
        ranked: list[tuple[float, str, int]] = []
        terms = tokens(question)
        if self._bm25 is not None and terms:
            scores = self._bm25.get_scores(terms)
            ranked = sorted(((float(s), m, i) for i, (s, m) in
                             enumerate(zip(scores, self.modules, strict=True)) if s > 0),
                            key=lambda t: (-t[0], t[1]))[:self.max_ranked]
        documents = tuple(self.texts[i] for _, _, i in ranked[:CONTEXT_MODULES])
        context = "\n\n".join(documents)
        return Answer(ranked_modules=tuple(m for _, m, _ in ranked), context=context,
                      tokens=len(context) // 4, seconds=time.perf_counter() - started,
                      documents=documents)
