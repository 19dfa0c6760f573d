"""Evidence spans against source text: where a fact's span is, whether it still exists, and
drift (a span a pull request deleted or changed).

An anchored fact (:mod:`evaluator.core.groundtruth`) quotes a verbatim span of the code that
states it. The span is looked for in the question's *needed* modules (grade >= 2), compared
with whitespace normalised (:func:`~evaluator.core.groundtruth.normalize_evidence`).

* :func:`source_span` — the whole line(s) of a text that hold a phrase, without a
  docstring's quotes or a comment's ``#`` around them (how ``init`` drafts evidence for a
  fact it quoted from the source);
* :func:`missing_spans` — anchored facts whose span is in none of their needed modules;
* :func:`drift` — anchored facts whose span was in a needed module at the base commit and is
  in none at the head: the pull request deleted or changed the code the fact quotes, so the
  ground truth has drifted from the code.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass

from evaluator.core.groundtruth import GroundTruth, Query, normalize_evidence

#: How a drift message starts (a missing span that the base commit held).
DRIFT = "ground-truth drift"
#: A drafted span is at most this many lines (a fact quoted across more is not drafted).
MAX_SPAN_LINES = 4


def needed_modules(query: Query) -> tuple[str, ...]:
    """The modules an anchored fact's span must be in: the query's grade >= 2 modules."""
    return tuple(sorted(m for m, g in query.grades.items() if g >= 2))


def evidence_modules(ground_truth: GroundTruth) -> tuple[str, ...]:
    """Every module some anchored fact's span must be looked for in."""
    return tuple(sorted({m for q in ground_truth.queries if q.anchored
                         for m in needed_modules(q)}))


def source_span(phrase: str, text: str, *, max_lines: int = MAX_SPAN_LINES) -> str | None:
    """The fewest whole consecutive lines of ``text`` holding ``phrase`` (whitespace
    normalised), first occurrence, common indentation removed; ``None`` when no run of at
    most ``max_lines`` lines holds it."""
    wanted = normalize_evidence(phrase)
    if not wanted or wanted not in normalize_evidence(text):
        return None
    lines = text.splitlines()
    for size in range(1, max_lines + 1):
        for start in range(len(lines) - size + 1):
            chunk = lines[start:start + size]
            if wanted in normalize_evidence(" ".join(chunk)):
                span = textwrap.dedent("\n".join(chunk)).strip("\n")
                bare = _PROSE_MARKS.sub("", span)
                return bare if wanted in normalize_evidence(bare) else span
    return None


# A docstring's quotes or a comment's ``#`` around the lines: indexes such as NeuralMind's
# quote a docstring's text without them, so a span keeps the text alone.
_PROSE_MARKS = re.compile(r'^\s*(?:[rRuU]?(?:"""|\'\'\')|#+ ?)|(?:"""|\'\'\')\s*$')


def span_in(evidence: str, texts: Mapping[str, str], modules: tuple[str, ...]) -> tuple[str, ...]:
    """The modules among ``modules`` whose text (in ``texts``) holds ``evidence``."""
    span = normalize_evidence(evidence)
    return tuple(m for m in modules if m in texts and span in normalize_evidence(texts[m]))


@dataclass(frozen=True)
class SpanIssue:
    """An anchored fact whose span is missing (``was_in`` empty) or has drifted (``was_in``:
    the modules that held it at the base commit)."""

    query_id: str
    fact_index: int
    fact: str
    evidence: str  # normalised
    modules: tuple[str, ...]  # the needed modules it was looked for in
    was_in: tuple[str, ...] = ()

    @property
    def drifted(self) -> bool:
        return bool(self.was_in)

    def message(self) -> str:
        shown = self.evidence if len(self.evidence) <= 120 else self.evidence[:117] + "..."
        if self.drifted:
            return (f"{DRIFT}: the evidence of fact {self.fact_index + 1} of "
                    f"question {self.query_id!r} ({shown!r}) was in "
                    f"{', '.join(self.was_in)} at the base commit and is in none of its "
                    "grade >= 2 modules now: the change deleted or rewrote the code the fact "
                    "quotes; update the fact's evidence (or the fact)")
        where = ", ".join(self.modules) if self.modules else "no module (none has grade >= 2)"
        return (f"the evidence of fact {self.fact_index + 1} of question {self.query_id!r} "
                f"({shown!r}) is not in any of its grade >= 2 modules ({where}), so the fact "
                "can never be found; quote the span verbatim from one of them")


def missing_spans(ground_truth: GroundTruth, texts: Mapping[str, str]) -> tuple[SpanIssue, ...]:
    """Anchored facts whose span is in none of their query's needed modules (``texts``: the
    module texts at the evaluated commit; a module absent from it holds nothing)."""
    out = []
    for q in ground_truth.queries:
        modules = needed_modules(q)
        for i, fact in enumerate(q.gold_facts):
            evidence = q.evidence_of(i)
            if evidence is not None and not span_in(evidence, texts, modules):
                out.append(SpanIssue(q.id, i, fact, normalize_evidence(evidence), modules))
    return tuple(out)


def drift(ground_truth: GroundTruth, base: Mapping[str, str],
          head: Mapping[str, str]) -> tuple[SpanIssue, ...]:
    """Every span missing at the head (``head`` texts), marked as drift when the base
    (``base`` texts) held it in a needed module."""
    return tuple(
        SpanIssue(i.query_id, i.fact_index, i.fact, i.evidence, i.modules,
                  was_in=span_in(i.evidence, base, i.modules))
        for i in missing_spans(ground_truth, head))
