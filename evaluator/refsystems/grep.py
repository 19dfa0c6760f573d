"""The ``grep`` reference system: files ranked by how often they hold the question's keywords.

What "grep for it and open the files" gives an agent, as ripgrep-style tools do: the
question's keywords (:func:`keywords`: its words of three or more letters, lowercased,
without English function words), each counted in every module as a whole word, ignoring
case (``rg -i -w``'s matches); a module's score is its total count. The ranking is every
module with a match, most matches first, ties by path; the context is the whole text of
the top :data:`CONTEXT_FILES`, which are also its documents.

Pure Python (the standard library's ``re``), though the ``ripgrep`` binary does install
from PyPI (``ripgrep`` 14.1.0 wheels for Linux x86-64 and aarch64 and Windows; 15.1.0 for
macOS arm64 and otherwise a source distribution that needs Rust): NeuralMind's public
benchmark's "ripgrep" baseline counts its matches with ``re`` too, so the same counts make
the two comparable question by question, and a reading of the files the run already listed
needs no native binary in the lock and the image.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path

from evaluator.core.systems import Answer
from evaluator.refsystems.texts import estimate_tokens, read_modules

CONTEXT_FILES = 5
MAX_RANKED = 100

#: English function words and question words: never a keyword.
STOP_WORDS = frozenset((
    "a", "about", "across", "after", "all", "also", "an", "and", "any", "are", "as", "at",
    "be", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had",
    "has", "have", "how", "if", "in", "into", "is", "it", "its", "may", "might", "more",
    "most", "must", "not", "of", "on", "or", "out", "over", "per", "should", "so", "such",
    "than", "that", "the", "their", "them", "then", "there", "these", "they", "this",
    "those", "through", "to", "under", "up", "use", "used", "uses", "using", "via", "was",
    "were", "what", "when", "where", "whether", "which", "while", "who", "why", "will",
    "with", "within", "without", "would", "you", "your"))

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]+")


def keywords(question: str) -> tuple[str, ...]:
    """The question's keywords, in order, each once."""
    words = (w.lower() for w in _WORD.findall(question))
    return tuple(dict.fromkeys(w for w in words if len(w) > 2 and w not in STOP_WORDS))


class GrepIndex:
    """Keyword matches over the modules of a checkout (read once, asked many questions)."""

    def __init__(self, root: Path, files: Sequence[str], *, depth: int = 0) -> None:
        self.modules = read_modules(root, files)
        # at most MAX_RANKED modules, or the run's ranking depth when deeper
        self.max_ranked = max(MAX_RANKED, depth)
        self._lowered = [m.text.lower() for m in self.modules]

    def ask(self, question: str) -> Answer:
        """The modules holding a keyword, most whole-word matches first (at most
        :data:`MAX_RANKED`, or the ranking depth when deeper); the context is the text of
        the top :data:`CONTEXT_FILES`."""
        started = time.perf_counter()
        patterns = [re.compile(rf"\b{re.escape(term)}\b") for term in keywords(question)]
        scored = []
        for module, text in zip(self.modules, self._lowered, strict=True):
            hits = sum(len(p.findall(text)) for p in patterns)
            if hits:
                scored.append((-hits, module.path, module.text))
        scored.sort()
        documents = tuple(text for _, _, text in scored[:CONTEXT_FILES])
        context = "\n\n".join(documents)
        return Answer(ranked_modules=tuple(path for _, path, _ in scored[:self.max_ranked]),
                      context=context, tokens=estimate_tokens(context),
                      seconds=time.perf_counter() - started, documents=documents)
