"""Every faithfulness column of one context, the way the evaluator and ``retrieval-eval judge``
compute them (one code path for both).

Columns per query:

* ``faithfulness``, ``fact_recall``, ``contradiction`` — the evaluator's judge
  (:mod:`evaluator.core.judge`: stemmed, identifier-aware term coverage in spans scaled
  to the fact, a negation cue that never fires on identifiers or on Python's ``not``; and
  when the run has the embedding model, the similarity route for prose facts the terms
  miss — ``embed`` below);
* ``faithfulness_n15``, ``fact_recall_n15``, ``contradiction_n15`` — NeuralMind's own judge
  (``neuralmind.ragas``), kept so numbers stay comparable with its N-15 runner and with
  results written before the new judge;
* with ``columns`` (the model, ``--embed``): ``faithfulness_embed`` — the share of facts
  found by the judge *or* by similarity (below), and not contradicted; ``context_recall``
  — the share of facts whose best context segment reaches cosine
  :data:`~evaluator.core.judgevectors.SIMILARITY_THRESHOLD` with the MiniLM model the index
  uses, the context segmented so nothing is truncated; and
  ``context_precision`` — over the retrieved documents (when given), the mean share of the
  facts a document supports (a segment of it at cosine ≥ the threshold with the fact): a
  document counts fully only when it supports every fact. N-15 counted a document relevant
  at any positive cosine with the facts' centroid, so every document was.
  ``answer_relevance`` is not computed (``None``): no answer is generated, and the cosine
  between a whole context and the question did not tell right from wrong context (0.25
  against 0.20 on requests, issue 12).

NeuralMind's judge and the ONNX embedder come from the NeuralMind adapter
(:mod:`evaluator.neuralmind_index`: ``n15_columns``, ``minilm_embedder``). The evaluator
judges every retrieval system's answers here (:func:`judge_answer`), the ``*_n15`` columns
included: no system judges its own context.
"""

from __future__ import annotations

import json
import math
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator.core import textcheck
from evaluator.core.groundtruth import GroundTruth, Query
from evaluator.core.judge import (
    EMBED_SEGMENT_CHARS,
    EMBED_SEGMENT_LINES,
    FactAudit,
    FactVerdict,
    Similarity,
    audit,
    judge,
    judge_id,
)
from evaluator.core.judgecheck import JudgeCheck, judge_check, modules_needed
from evaluator.core.judgetext import segments
from evaluator.core.judgevectors import SIMILARITY_THRESHOLD, cosine, max_similarities
from evaluator.core.scoring import Faithfulness, Retrieval
from evaluator.core.systems import Answer
from evaluator.errors import BuildError, InputError
from evaluator.model import HOW_TO_PROVIDE
from evaluator.neuralmind_index import BatchEmbed, minilm_embedder, n15_columns

__all__ = ["JUDGE_COLUMNS", "BatchEmbed", "JudgeResult", "cached_embedder", "checked_embedder",
           "faithfulness_of", "judge_answer", "judge_contexts", "judge_report",
           "minilm_embedder", "model_session", "n15_columns",
           "read_contexts", "run_judge", "score_context", "self_check", "similarity_of"]

# Texts in, one vector per text out (the MiniLM ONNX model, batched).

MAX_CONTEXTS_BYTES = 64 * 1024 * 1024
JUDGE_COLUMNS: tuple[str, ...] = (
    "faithfulness", "fact_recall", "contradiction",
    "faithfulness_n15", "fact_recall_n15", "contradiction_n15",
    "faithfulness_embed", "context_precision", "context_recall", "answer_relevance",
)


@dataclass(frozen=True)
class JudgeResult:
    """Every judge column of one context, and which facts were found."""

    query_id: str
    judge: str
    faithfulness: float
    fact_recall: float
    contradiction: float
    faithfulness_n15: float
    fact_recall_n15: float
    contradiction_n15: float
    facts_found: tuple[str, ...]
    facts_missing: tuple[str, ...]
    coverage: tuple[float, ...]
    found_by: tuple[str | None, ...] = ()
    fact_similarity: tuple[float | None, ...] = ()
    faithfulness_embed: float | None = None
    context_precision: float | None = None
    context_recall: float | None = None
    answer_relevance: float | None = None
    similarities: tuple[float, ...] | None = None
    audit: tuple[FactAudit, ...] = ()

    def columns(self) -> dict[str, float | None]:
        return {c: getattr(self, c) for c in JUDGE_COLUMNS}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query_id": self.query_id, "judge": self.judge}
        out |= {c: _round(v) for c, v in self.columns().items()}
        out["facts_found"] = list(self.facts_found)
        out["facts_missing"] = list(self.facts_missing)
        out["coverage"] = [round(c, 4) for c in self.coverage]
        out["found_by"] = list(self.found_by)
        out["fact_similarity"] = [_round(v) for v in self.fact_similarity]
        if self.similarities is not None:
            out["similarities"] = [round(s, 4) for s in self.similarities]
        out["facts"] = [a.to_dict() for a in self.audit]
        return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def embed_segments(text: str) -> tuple[str, ...]:
    """The pieces of a text the embedding columns embed (short enough for the model)."""
    return segments(text, lines=EMBED_SEGMENT_LINES, max_chars=EMBED_SEGMENT_CHARS)


_EMBEDDERS: dict[str, BatchEmbed] = {}
MEMO_TEXTS = 4096


def memoized(embed: BatchEmbed, *, size: int = MEMO_TEXTS) -> BatchEmbed:
    """``embed`` with the vectors of the last ``size`` distinct texts kept: NeuralMind's
    contexts share passages across questions (and the self-check rereads modules), so a
    candidate segment is embedded once per run."""
    memo: OrderedDict[str, tuple[float, ...]] = OrderedDict()

    def embed_memo(texts: Sequence[str]) -> list[tuple[float, ...]]:
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            for text, vector in zip(missing, embed(missing), strict=True):
                memo[text] = tuple(float(x) for x in vector)
        out = []
        for text in texts:
            memo.move_to_end(text)
            out.append(memo[text])
        while len(memo) > size:
            memo.popitem(last=False)
        return out
    return embed_memo


def checked_embedder(model_dir: Path | None, *, purpose: str) -> BatchEmbed:
    """:func:`cached_embedder`, loaded now: a model folder that cannot be loaded is one
    :class:`BuildError` naming what needed it, not a crash in the middle of judging."""
    embed = cached_embedder(model_dir)
    try:
        embed(["probe"])
    except Exception as err:
        _EMBEDDERS.pop(str(model_dir or ""), None)
        _SESSIONS.pop(str(model_dir or ""), None)
        raise BuildError(f"{purpose} needs the embedding model, which could not be loaded "
                         f"from {model_dir or 'NeuralMind default'}: "
                         f"{type(err).__name__}: {err}", hint=HOW_TO_PROVIDE) from None
    return embed


def cached_embedder(model_dir: Path | None) -> BatchEmbed:
    """One MiniLM embedder per model folder for the whole process (the ONNX session is
    loaded once, however many contexts, systems and self-checks are judged), memoized."""
    key = str(model_dir or "")
    if key not in _EMBEDDERS:
        _EMBEDDERS[key] = memoized(model_session(model_dir))
    return _EMBEDDERS[key]


_SESSIONS: dict[str, BatchEmbed] = {}


def model_session(model_dir: Path | None) -> BatchEmbed:
    """The process's one MiniLM embedder of a model folder, unmemoized: the judge's
    (:func:`cached_embedder`) wraps it, and the ``embedding`` reference system embeds a
    whole checkout through it (no second model load, no churn of the judge's memo)."""
    key = str(model_dir or "")
    if key not in _SESSIONS:
        _SESSIONS[key] = minilm_embedder(model_dir)
    return _SESSIONS[key]


def similarity_of(embed: BatchEmbed) -> Similarity:
    """The judge's similarity route through ``embed``: every distinct text embedded once.

    The model pads a batch to its longest text, so the (short) facts go in one batch and
    each (long) candidate segment alone: mixing them made a fact cost as much as a segment
    and doubled the route's time."""
    def similar(pairs: Sequence[tuple[str, str]]) -> list[float]:
        facts = list(dict.fromkeys(fact for fact, _ in pairs))
        vectors = dict(zip(facts, embed(facts), strict=True))
        for segment in dict.fromkeys(segment for _, segment in pairs):
            if segment not in vectors:
                vectors[segment] = embed([segment])[0]
        return [cosine(vectors[fact], vectors[segment]) for fact, segment in pairs]
    return similar


def score_context(query: Query, context: str, *, documents: Sequence[str] | None = None,
                  embed: BatchEmbed | None = None,
                  columns: BatchEmbed | None = None) -> JudgeResult:
    """Every judge column of ``context`` against ``query``'s gold facts. With ``embed`` (the
    run's judge model) the headline judge takes its similarity route; with ``columns`` (the
    model, ``--embed``) the embedding columns are computed."""
    facts = list(query.gold_facts)
    verdict = judge(context, facts, similar=similarity_of(embed) if embed else None,
                    evidence=query.evidence)
    faith_n15, recall_n15, contra_n15 = n15_columns(context, facts)
    precision = recall = combined = None
    sims: tuple[float, ...] | None = None
    if columns is not None:
        pieces = embed_segments(context)
        fact_vectors = list(columns(facts)) if facts else []
        piece_vectors = list(columns(list(pieces))) if pieces else []
        sims = max_similarities(fact_vectors, piece_vectors)
        recall = sum(s >= SIMILARITY_THRESHOLD for s in sims) / len(sims) if sims else 0.0
        supported = [(f.found or s >= SIMILARITY_THRESHOLD) and not f.contradicted
                     for f, s in zip(verdict.facts, sims, strict=True)]
        combined = sum(supported) / len(supported) if supported else 0.0
        if documents is not None:
            precision = _document_precision(documents, fact_vectors, columns)
    return JudgeResult(
        query_id=query.id, judge=judge_id(similarity=embed is not None),
        faithfulness=verdict.faithfulness, fact_recall=verdict.fact_recall,
        contradiction=verdict.contradiction, faithfulness_n15=faith_n15,
        fact_recall_n15=recall_n15, contradiction_n15=contra_n15,
        facts_found=verdict.facts_found, facts_missing=verdict.facts_missing,
        coverage=tuple(f.coverage for f in verdict.facts),
        found_by=tuple(_found_by(f) for f in verdict.facts),
        fact_similarity=tuple(f.similarity for f in verdict.facts),
        faithfulness_embed=combined, context_precision=precision, context_recall=recall,
        similarities=sims, audit=audit(context, verdict))


def _found_by(fact: FactVerdict) -> str | None:
    if not fact.found or fact.contradicted:
        return None
    if fact.evidence is not None:
        return "anchored"
    return "similarity" if fact.by_similarity else "terms"


def faithfulness_of(query: Query, context: str, *, documents: Sequence[str] | None = None,
                    embed: BatchEmbed | None = None, columns: BatchEmbed | None = None,
                    ) -> tuple[Faithfulness, dict[str, float | None]]:
    """The evaluator's view of :func:`score_context`: the headline :class:`Faithfulness`
    and the further columns (the N-15 judge's, ``faithfulness_embed``) by measure name."""
    r = score_context(query, context, documents=documents, embed=embed, columns=columns)
    faith = Faithfulness(fact_recall=r.fact_recall, contradiction=r.contradiction,
                         faithfulness=r.faithfulness, facts_found=r.facts_found,
                         facts_missing=r.facts_missing, facts=r.audit,
                         context_precision=r.context_precision,
                         context_recall=r.context_recall, answer_relevance=None)
    extra = {"faithfulness_n15": r.faithfulness_n15, "fact_recall_n15": r.fact_recall_n15,
             "contradiction_n15": r.contradiction_n15,
             "faithfulness_embed": r.faithfulness_embed}
    return faith, extra


def judge_answer(query: Query, answer: Answer, *, embed: BatchEmbed | None = None,
                 columns: BatchEmbed | None = None) -> Retrieval:
    """A system's answer to ``query``, judged: the one place the evaluator judges a context
    (every system's alike, whatever system answered). ``embed`` and ``columns`` as for
    :func:`score_context`; the answer's documents feed context precision."""
    faith, extra = faithfulness_of(query, answer.context, documents=answer.documents,
                                   embed=embed, columns=columns)
    return Retrieval(query_id=query.id, ranked_modules=answer.ranked_modules,
                     context_tokens=answer.tokens, token_reduction=answer.token_reduction,
                     latency_ms=answer.seconds * 1000.0, faithfulness=faith, columns=extra)


def _document_precision(documents: Sequence[str], fact_vectors: Sequence[Sequence[float]],
                        embed: BatchEmbed) -> float:
    """Mean over documents of the share of facts with a document segment at cosine ≥ the
    threshold (0 with no documents or no facts)."""
    if not documents or not fact_vectors:
        return 0.0
    total = 0.0
    for doc in documents:
        pieces = embed_segments(doc)
        if not pieces:
            continue
        sims = max_similarities(fact_vectors, list(embed(list(pieces))))
        total += sum(s >= SIMILARITY_THRESHOLD for s in sims) / len(sims)
    return total / len(documents)


def read_contexts(path: Path, ground_truth: GroundTruth) -> dict[str, str]:
    """The contexts file of ``judge``: a JSON object mapping query ids to texts.

    Every id must be a query of the ground truth; every value a string. Queries without a
    context are not scored."""
    try:
        size = path.stat().st_size
    except OSError as err:
        raise InputError(f"cannot read the contexts file {path}: {err.strerror or err}",
                         hint="pass --contexts FILE, a JSON object {query id: text}") from None
    if size > MAX_CONTEXTS_BYTES:
        raise InputError(f"the contexts file {path} is larger than "
                         f"{MAX_CONTEXTS_BYTES // (1024 * 1024)} MB")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as err:
        raise InputError(f"the contexts file {path} is not valid JSON: {err}",
                         hint="write a JSON object {query id: context text}") from None
    if not isinstance(data, dict):
        raise InputError(f"the contexts file {path} must hold a JSON object "
                         "{query id: context text}")
    where = textcheck.first_bad_string(data)
    if where is not None:
        raise InputError(f"the contexts file {path}: {where} {textcheck.MESSAGE}")
    known = {q.id for q in ground_truth.queries}
    unknown = sorted(k for k in data if k not in known)
    if unknown:
        shown = ", ".join(repr(k) for k in unknown[:5])
        raise InputError(f"the contexts file {path} names {len(unknown)} query id(s) that the "
                         f"ground truth does not hold: {shown}")
    bad = sorted(k for k, v in data.items() if not isinstance(v, str))
    if bad:
        raise InputError(f"the contexts file {path}: the context of {bad[0]!r} is not a string")
    return {str(k): str(v) for k, v in data.items()}


def judge_contexts(ground_truth: GroundTruth, contexts: Mapping[str, str], *,
                   embed: BatchEmbed | None = None, columns: BatchEmbed | None = None,
                   ) -> list[JudgeResult]:
    """Score each given context against its query (in ground-truth order)."""
    return [score_context(q, contexts[q.id], embed=embed, columns=columns)
            for q in ground_truth.queries if q.id in contexts]


def judge_report(results: Sequence[JudgeResult], *, judge: str) -> dict[str, Any]:
    """The ``judge`` command's JSON: the judge, one entry per query and the means."""
    means: dict[str, float | None] = {}
    for column in JUDGE_COLUMNS:
        values = [v for r in results if (v := r.columns()[column]) is not None]
        means[column] = _round(math.fsum(values) / len(values)) if values else None
    return {"judge": judge, "queries": {r.query_id: r.to_json() for r in results},
            "mean": means, "n": len(results)}


def run_judge(*, ground_truth: GroundTruth, contexts_path: Path,
              embed: BatchEmbed | None = None,
              columns: BatchEmbed | None = None) -> dict[str, Any]:
    """The ``judge`` command: every judge column of each given context, as JSON."""
    contexts = read_contexts(contexts_path, ground_truth)
    return judge_report(judge_contexts(ground_truth, contexts, embed=embed, columns=columns),
                        judge=judge_id(similarity=embed is not None))


MAX_MODULE_BYTES = 2 * 1024 * 1024


def read_modules(tree: Path, modules: Sequence[str]) -> dict[str, str]:
    """The text of each module under ``tree`` (a module outside it, missing, not a regular
    file or over :data:`MAX_MODULE_BYTES` reads as absent)."""
    root = tree.resolve()
    texts: dict[str, str] = {}
    for module in modules:
        path = (root / module).resolve()
        if not path.is_relative_to(root):  # resolved: a link out of the tree is refused
            continue
        try:
            if not path.is_file() or path.stat().st_size > MAX_MODULE_BYTES:
                continue
            texts[module] = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return texts


def self_check(ground_truth: GroundTruth, tree: Path, *,
               embed: BatchEmbed | None = None) -> JudgeCheck:
    """The judge self-check (:mod:`evaluator.core.judgecheck`) on the modules in ``tree``,
    scored with the headline judge (its similarity route with ``embed``)."""
    texts = read_modules(tree, modules_needed(ground_truth))
    similar = similarity_of(embed) if embed else None
    return judge_check(ground_truth, texts,
                       lambda query, text: judge(text, query.gold_facts, similar=similar,
                                                 evidence=query.evidence).faithfulness,
                       lambda fact, text: judge(text, [fact],
                                                similar=similar).faithfulness == 1.0)
