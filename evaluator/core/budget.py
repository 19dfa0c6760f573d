"""An equal token budget for every system (``--budget N|neuralmind``).

Systems hand a model contexts of very different sizes (bm25's top five whole files against
NeuralMind's few hundred tokens), and faithfulness grows with the amount of context. With a
budget every system's context is cut *before* it is judged, so their quality is compared at
the same size:

* ``N``: every system's context is cut to ``N`` tokens;
* ``neuralmind``: every system's context is cut, question by question, to the size of the
  evaluated NeuralMind index's own context for that question (which is not cut).

The cut follows the system's own ranking order (:func:`cut`): its passages (the
``documents`` an answer's context is made of, best first) are kept whole in that order and
the last one that does not fit is truncated; a context that is not the plain join of its
documents (NeuralMind's, laid out in its own order of layers) is cut as one passage.

Every system is counted with the same tokenizer, :func:`estimate_tokens`: characters / 4,
the estimate NeuralMind's own ``neuralmind.context_budget.count_tokens`` falls back on when
tiktoken is absent. tiktoken is not a dependency, and its vocabulary is downloaded on first
use, so a run offline could not count with it; the estimate is the same on every host. On
``psf/requests`` NeuralMind notes that tiktoken counts code 8.5 % lower than characters / 4.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from evaluator.core.systems import Answer

NEURALMIND = "neuralmind"
#: The frontier's budgets, as multiples of the run's budget (per question for neuralmind).
FRONTIER_SCALES = (0.25, 0.5, 1.0, 2.0, 4.0)
CHARS_PER_TOKEN = 4
SEPARATOR = "\n\n"  # between passages of a context


def estimate_tokens(text: str) -> int:
    """The tokens of ``text`` by the one estimate every system is counted with: characters
    / 4, at least 1 for a non-empty text (NeuralMind's fallback count)."""
    return max(1, len(text) // CHARS_PER_TOKEN) if text else 0


def fixed_limit(budget: str | None) -> int | None:
    """The budget's token count when it is a number (``None`` without a budget or for
    ``neuralmind``, whose limit is per question)."""
    return int(budget) if budget is not None and budget != NEURALMIND else None


def cut(answer: Answer, limit: int) -> Answer:
    """``answer`` with its context cut to ``limit`` tokens (:func:`estimate_tokens`) in its
    own ranking order: whole passages best first, the last one truncated; ``tokens`` is the
    cut context's estimate. Its documents are the passages kept when the context is made of
    them; otherwise they are left as they are. A context within the limit is kept whole."""
    joined = bool(answer.documents) and answer.context == SEPARATOR.join(answer.documents)
    pieces = answer.documents if joined else (answer.context,)
    # the most characters whose estimate is within the limit
    room = limit * CHARS_PER_TOKEN + CHARS_PER_TOKEN - 1 if limit > 0 else 0
    kept: list[str] = []
    for piece in pieces:
        room -= len(SEPARATOR) if kept else 0
        if room <= 0:
            break
        kept.append(piece[:room])
        room -= len(kept[-1])
    context = SEPARATOR.join(kept)
    return replace(answer, context=context, tokens=estimate_tokens(context),
                   documents=tuple(kept) if joined else answer.documents)


def recount(answer: Answer) -> Answer:
    """``answer`` with its tokens counted by :func:`estimate_tokens` (not cut)."""
    return replace(answer, tokens=estimate_tokens(answer.context))


def within_budget(answer: Answer, query_id: str, budget: str | None,
                  limits: Mapping[str, int] | None) -> Answer:
    """One answer under the run's budget: unchanged without one; else cut to the fixed
    limit, or to ``limits[query_id]`` (NeuralMind's count for the question), and recounted;
    with ``neuralmind`` and no ``limits`` (the evaluated index itself) only recounted."""
    if budget is None:
        return answer
    limit = fixed_limit(budget)
    if limit is None and limits is not None:
        limit = limits.get(query_id)
    return recount(answer) if limit is None else cut(answer, limit)


def base_limit(answer: Answer, query_id: str, budget: str,
               limits: Mapping[str, int] | None) -> int:
    """The budget of one question before scaling: the fixed number, NeuralMind's count
    for it (``limits``), or, for the evaluated index under ``neuralmind``, its own."""
    fixed = fixed_limit(budget)
    if fixed is not None:
        return fixed
    if limits is not None and query_id in limits:
        return limits[query_id]
    return estimate_tokens(answer.context)


def scaled(limit: int, scale: float) -> int:
    """``limit`` × ``scale`` in whole tokens (at least 1 for a non-zero limit)."""
    return max(1, round(limit * scale)) if limit > 0 else 0
