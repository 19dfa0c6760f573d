"""The faithfulness judge: does a context support a query's gold facts? Offline, deterministic.

Definition (the headline ``faithfulness``)
------------------------------------------
Text is read as *terms*: words are split on everything that is not a letter or digit, then
identifiers are split on underscores, case changes (``InvalidHeader`` → invalid, header;
``HTTPAdapter`` → http, adapter; ``max_retries`` → max, retries) and letter/digit
boundaries; each part is case-folded (NFKC), English stop words and single characters are
dropped, and the rest is stemmed with the Snowball English stemmer (``redirects``,
``redirected`` and ``redirecting`` are one term). So a fact written as a plain sentence
("invalid headers raise an error") meets code written with identifiers
(``raise InvalidHeader(...)``) and the other way round.

The context is read line by line (lines longer than :data:`MAX_LINE_CHARS` characters are
cut into pieces of that size; nothing is truncated). Each line is *blank* (no word), a
*label* — at most :data:`LABEL_WORDS` words and no code syntax, the shape of a list of names
such as ``TimestampSigner (code)`` or ``- SignatureExpired`` — *code* (``=``, ``->``, a
call with an argument ``f(x`` or a method call ``a.b(``, a square or curly bracket, a
trailing ``:``, a decorator, or a statement keyword opening a line of at most
:data:`STATEMENT_WORDS` words such as ``return value``) or *prose*. A line also belongs to
the ``def`` and ``class`` lines of the context that enclose it by indentation: their names
are its *scope* (a line of a method is about its method and its class).

**Stretch.** Support must come from one contiguous stretch of real source text: a run of
at most :data:`STRETCH_LINES` consecutive lines of the context that starts at a line holding
a term of the fact, ends at one (or as far as it can reach) and does not cross a label line
(labels hold no support: a list of names is not a statement). Every such run is a stretch,
the short ones too (judge 4: judge 3 read only the longest run from each line, so a
docstring that states the fact on its first lines and names the same things in another
order further down was refused). Terms found in different stretches never add up; the
terms and names of a stretch include its lines' scope.

**Found by terms.** A fact with *n* distinct terms is found when one stretch

1. holds at least :data:`COVERAGE_THRESHOLD` of its terms (weights: 1 each by default, or
   the ``weights`` given, e.g. idf): all terms of a fact of 3, 3 of 4, 4 of 5, 5 of 6;
2. holds, exactly, every *name* of the fact — a dotted or underscored name, a call ``f()``,
   camelCase or CapWords, a capitalised word inside a sentence (``Timeout``), but not an
   acronym (``URL``) — as a whole identifier, case-sensitive, in the stretch or its scope;
   a dotted name ``a.b`` verbatim, or ``b`` with each capitalised part before it (a class)
   enclosing the stretch or, where ``b`` is a method there (an indented ``def b``,
   ``self.b``, ``cls.b``), named in it, and each other part (a module) in the stretch or
   its scope — so ``def escape(s) -> Markup`` is not ``Markup.escape``; every *number*
   (digits, ``3_600`` read as ``3600``, or a number word two … twelve) as a whole number;
   every *quoted string* ('…', "…", “…”, ‘…’, `…`, and the empty string ``''``) verbatim
   with whitespace normalised *as a quoted string*, between quote marks (the quoted word
   'None' is not met by the name ``None``); and every
   *quantity* word of the fact (all/every/each, any, only, always, once, twice, both,
   first, last, at most, at least, more, less …) by a word of its group or, on a code
   line, a code form of it (``for``/``all(`` for all, ``<=``/``max(`` for at most, …);
3. reads its prose in order: unless the fact terms on its code lines and in its scope
   alone reach the threshold of 1, the fact terms on its prose lines appear in the fact's
   order (the longest common subsequence of the fact's terms and the prose lines' fact
   terms covers every distinct term on them). So a bag of the fact's words in another
   order (a shuffled decoy), or a docstring naming the same things in other roles
   ("replaces entities with characters" against "replaces characters with entities"),
   does not count, while code (whose order is the program's) may state the fact in any
   order;
4. agrees with the fact's polarity, read from the fact itself: a fact without a negation
   cue needs a stretch in which no occurrence of a fact term has a prose cue at most
   :data:`NEGATION_WINDOW` words before it on its line; a negated fact ("Catching Timeout
   will not catch ConnectTimeout") needs a stretch in which some occurrence has one
   (Python's ``not`` counts here).

A fact whose stretches meet 1–3 but none meets 4 is found and **contradicted**. Cues are
whole words of prose only: a part of an identifier (``InvalidHeader``, ``no_proxy``,
``NotImplementedError``) is never a cue, and neither is Python's ``not`` operator on a line
of code for a fact without negation. When unsure the fact is unsupported: precision first.

The similarity route (when the run has the embedding model)
---------------------------------------------------------
A *prose* fact (a plain sentence: no code syntax — brackets, ``=``, quotes, ``->``,
``a.b``/``a_b``/``a/b`` joins, camelCase, ``CONSTANT_NAMES``, a leading ``def``/``class``/
``import``/``@``; see :func:`is_prose_fact`) that the terms do not find is also looked for
by meaning in one *candidate* stretch (:func:`candidate_stretch`): a stretch meeting 2–4
above that holds every *key* term of the fact (a term not in :data:`GENERIC_TERMS`, such as
"salt": a fact whose key content words are absent is never credited by similarity) and at
least :data:`ROUTE_MIN_COVERAGE` of its terms, the one with the highest coverage. The fact
is **found by similarity** when the cosine between the MiniLM embeddings of the fact and of
the candidate (at most :data:`EMBED_SEGMENT_CHARS` characters) reaches
:data:`FACT_SIMILARITY_THRESHOLD`. Code-fragment facts are judged by their terms alone.

Calibration: the thresholds were set on the tuning data only (the bundled example,
``benchmarks/suites`` and the tuning package of ``benchmarks/judge_agreement``); the held-out
packages measure them (``docs/judge.md``).

Anchored facts
--------------
A gold fact that carries ``evidence`` (a verbatim span of the source, see
:mod:`evaluator.core.groundtruth`) is judged by the span alone: it is **found** exactly when
the context contains the span, both read through
:func:`~evaluator.core.groundtruth.normalize_evidence` (NFC, runs of whitespace one space) —
a substring test, so case, punctuation and every character of the span count. An anchored
fact is never contradicted and never takes the terms or similarity routes.

Per query: ``fact_recall`` = found facts / facts, ``contradiction`` = contradicted facts /
facts, ``faithfulness`` = facts found and not contradicted / facts. No facts or an empty
context scores 0.

Embedding judge (``--embed``)
-----------------------------
:func:`~evaluator.core.judgevectors.similarity_verdict` takes vectors computed elsewhere
(the MiniLM ONNX model the index uses, in an adapter): the context cut into
:func:`~evaluator.core.judgetext.segments` (windows of lines, each cut further to at most
:data:`EMBED_SEGMENT_CHARS` characters so the model's 256 word pieces hold it: nothing is
truncated), each embedded whole, and each fact. A fact's similarity is its highest cosine
over the segments; it is found at ≥
:data:`~evaluator.core.judgevectors.SIMILARITY_THRESHOLD`.

Where the parts live
--------------------
Words and terms: :mod:`evaluator.core.judgetext`; reading a fact and a context (names,
numbers, quantities, line kinds, scopes): :mod:`evaluator.core.judgeread`; cosine over
vectors: :mod:`evaluator.core.judgevectors`; the rules, verdicts and audit: here.

Blind spots
-----------
The terms rule checks that a fact's words, names, numbers, quantities and polarity are in
one short stretch, not that the stretch *states* the fact: the same words in another
relation on a line of code pass (which of two names does what is not read). Negation is a
word-level cue: "is disabled" against "is enabled" is not a contradiction. A paraphrase with
other words is left to the similarity route, which needs the model, a prose fact and every
key term in the stretch; cosine is not entailment.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from evaluator.core.groundtruth import normalize_evidence
from evaluator.core.judgeread import (
    NEGATION_WINDOW,
    QUANTIFIERS,
    ContextLine,
    FactReading,
    PreparedContext,
    is_prose_fact,
    quoted_met,
    read_fact,
)
from evaluator.core.judgetext import terms

STRETCH_LINES = 10
COVERAGE_THRESHOLD = 0.7
EMBED_SEGMENT_LINES = 8
EMBED_SEGMENT_CHARS = 800
FACT_SIMILARITY_THRESHOLD = 0.38
ROUTE_MIN_COVERAGE = 0.3
# The judge's identity as results record it: a change of definition bumps the number, and a
# baseline judged otherwise is refused (:mod:`evaluator.core.comparability`).
JUDGE_VERSION = 4


@dataclass(frozen=True)
class FactVerdict:
    """The judge's reading of one gold fact against a context."""

    fact: str
    coverage: float
    found: bool
    contradicted: bool
    missing_terms: tuple[str, ...] = ()
    similarity: float | None = None  # cosine with its candidate stretch, when the route asked
    by_similarity: bool = False  # found by the similarity route, not by its terms
    negated_at_best: bool = False  # the polarity of every fitting stretch disagrees
    stretch: str | None = None  # the lines of the context that support it (when found)
    evidence: str | None = None  # the normalised span of an anchored fact

    @property
    def judged_by(self) -> str:
        """How the fact was judged: ``anchored`` (its evidence span), ``model`` (the
        similarity route was asked) or ``terms``."""
        if self.evidence is not None:
            return "anchored"
        return "model" if self.similarity is not None else "terms"

    @property
    def supported(self) -> bool:
        return self.found and not self.contradicted


@dataclass(frozen=True)
class Verdict:
    """A context judged against a query's gold facts (the headline judge)."""

    faithfulness: float
    fact_recall: float
    contradiction: float
    facts: tuple[FactVerdict, ...]

    @property
    def facts_found(self) -> tuple[str, ...]:
        return tuple(f.fact for f in self.facts if f.found and not f.contradicted)

    @property
    def facts_missing(self) -> tuple[str, ...]:
        return tuple(f.fact for f in self.facts if not f.found or f.contradicted)


@dataclass(frozen=True)
class JudgeConfig:
    """The judge's thresholds (see the module docstring and docs/judge.md)."""

    stretch_lines: int = STRETCH_LINES
    coverage_threshold: float = COVERAGE_THRESHOLD
    negation_window: int = NEGATION_WINDOW


@dataclass(frozen=True)
class Stretch:
    """A candidate stretch [start, end) for one fact, and what it meets."""

    start: int
    end: int
    coverage: float
    present: frozenset[str]
    exact: bool  # names, numbers, quoted strings and quantities met
    ordered: bool  # code, or prose holding the fact's terms in the fact's order
    polarity: bool  # its negation agrees with the fact's


def _lcs(a: Sequence[str], b: Sequence[str]) -> int:
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _stretch(context: PreparedContext, reading: FactReading, start: int, end: int,
             weight: Callable[[str], float], total: float, threshold: float) -> Stretch:
    lines = context.lines[start:end]
    scope = frozenset().union(*(line.scope_terms for line in lines)) & reading.wanted
    present = frozenset(t for line in lines for t in line.terms if t in reading.wanted) | scope

    def share(held: frozenset[str]) -> float:
        return math.fsum(weight(t) for t in held) / total if total > 0 else 0.0

    coverage = share(present)
    own = frozenset().union(*(line.names for line in lines))
    scope_names = frozenset().union(*(line.scope_names for line in lines))
    numbers = frozenset().union(*(line.numbers for line in lines))
    flat = " ".join(line.flat for line in lines)
    lowered = frozenset().union(*(line.lowered for line in lines))
    code = any(line.kind == "code" for line in lines)
    exact = (all(_name_met(n, lines, own, scope_names) for n in reading.names)
             and reading.numbers <= numbers
             and all(quoted_met(q, flat) for q in reading.quoted)
             and all(_quantity_met(q, lowered, flat if code else "")
                     for q in reading.quantities))
    in_code = scope | frozenset(t for line in lines if line.kind == "code"
                                for t in line.terms if t in reading.wanted)
    prose = [t for line in lines if line.kind != "code" for t in line.terms
             if t in reading.wanted]
    ordered = (share(in_code) >= threshold - 1e-12
               or _lcs(reading.sequence, prose) >= len(set(prose)))
    flags = [(neg, neg_any) for line in lines
             for t, neg, neg_any in zip(line.terms, line.negated, line.negated_any, strict=True)
             if t in reading.wanted]
    polarity = (any(a for _, a in flags) if reading.negated
                else not any(n for n, _ in flags))
    return Stretch(start, end, coverage, present, exact, ordered, polarity)


def _name_met(name: str, lines: Sequence[ContextLine], own: frozenset[str],
              scope: frozenset[str]) -> bool:
    """Whether a stretch holds a name of the fact: a plain name as a whole identifier of
    its lines or their scope; a dotted name ``a.b`` verbatim, or ``b`` with every class
    (capitalised) part before it enclosing the stretch (``Markup.escape``: ``def escape``
    inside ``class Markup``) or named in a stretch where ``b`` is a method (an indented
    ``def b``, ``self.b`` or ``cls.b``), and every other part in the stretch or its scope
    (``hmac.compare_digest``). So ``def escape(s) -> Markup`` is not ``Markup.escape``."""
    parts = name.split(".")
    last = parts[-1]
    if len(parts) == 1 or name in own:
        return last in own or last in scope
    if last not in own and last not in scope:
        return False
    method = any(f"self.{last}" in line.names or f"cls.{last}" in line.names
                 or last in _METHOD.findall(line.text) for line in lines)
    return all(p in scope or (method and p in own) if p[:1].isupper()
               else (p in own or p in scope) for p in parts[:-1])


_METHOD = re.compile(r"^\s+(?:async\s+)?def\s+(\w+)")


def _quantity_met(group: str, lowered: frozenset[str], code: str) -> bool:
    words_, forms = QUANTIFIERS[group]
    return bool(words_ & lowered) or any(form in code for form in forms)


def stretches(context: PreparedContext, reading: FactReading, *, config: JudgeConfig,
              weights: Mapping[str, float] | None = None) -> list[Stretch]:
    """Every candidate stretch of ``context`` for a fact: from each line holding one of its
    terms, to each later line holding one (and to the last line it can reach), at most
    ``config.stretch_lines`` lines in all, stopping before a label; ordered by start, then
    shortest first."""
    if not reading.wanted:
        return []

    def weight(term: str) -> float:
        return 1.0 if weights is None else weights.get(term, max(weights.values(), default=1.0))

    total = math.fsum(weight(t) for t in reading.wanted)
    holding = {i for t in reading.wanted for i in context.lines_of.get(t, ())}
    out = []
    for start in sorted(holding):
        if context.lines[start].kind == "label":
            continue
        end = start
        while (end < len(context.lines) and end - start < config.stretch_lines
               and (end == start or context.lines[end].kind != "label")):
            end += 1
        for stop in range(start + 1, end + 1):
            if stop == end or stop - 1 in holding:
                out.append(_stretch(context, reading, start, stop, weight, total,
                                    config.coverage_threshold))
    return out


def _text(context: PreparedContext, s: Stretch) -> str:
    return "\n".join(line.text for line in context.lines[s.start:s.end])


def judge_fact(context: PreparedContext, fact: str, *, config: JudgeConfig = JudgeConfig(),
               weights: Mapping[str, float] | None = None) -> FactVerdict:
    """One fact against a prepared context (definition in the module docstring)."""
    reading = read_fact(fact)
    found = stretches(context, reading, config=config, weights=weights)
    if not found:
        return FactVerdict(fact, 0.0, False, False, tuple(sorted(reading.wanted)))
    best = max(found, key=lambda s: (s.coverage, -s.start))
    fitting = [s for s in found if s.coverage >= config.coverage_threshold - 1e-12
               and s.exact and s.ordered]
    supporting = next((s for s in fitting if s.polarity), None)
    contradicted = bool(fitting) and supporting is None
    return FactVerdict(
        fact, round(min(best.coverage, 1.0), 6), bool(fitting), contradicted,
        tuple(sorted(reading.wanted - best.present)), negated_at_best=contradicted,
        stretch=_text(context, supporting) if supporting is not None else None)


# (fact, candidate stretch) pairs in, one cosine per pair out: the MiniLM model, batched.
Similarity = Callable[[Sequence[tuple[str, str]]], Sequence[float]]

# Code syntax in a fact: brackets, operators, quotes (an apostrophe inside a word, as in

def judge_id(*, similarity: bool) -> str:
    """The judge as results record it (``judge`` in a run's settings)."""
    return f"evaluator-judge {JUDGE_VERSION} ({'terms+minilm' if similarity else 'terms'})"


def candidate_stretch(context: PreparedContext, fact: str, *,
                      config: JudgeConfig = JudgeConfig()) -> str | None:
    """The stretch the similarity route asks the model about, or ``None``: among the
    stretches that meet the fact's names, numbers, quoted strings, quantities, order and
    polarity, hold every key term and at least :data:`ROUTE_MIN_COVERAGE` of its terms, the
    one with the highest coverage (the first, then the longest, on a tie); at most
    :data:`EMBED_SEGMENT_CHARS` characters of it are read."""
    reading = read_fact(fact)
    keys = reading.key_terms
    fits = [s for s in stretches(context, reading, config=config)
            if s.exact and s.ordered and s.polarity and keys <= s.present
            and s.coverage >= ROUTE_MIN_COVERAGE - 1e-12]
    if not fits:
        return None
    best = max(fits, key=lambda s: (s.coverage, -s.start, s.end))
    return _text(context, best)[:EMBED_SEGMENT_CHARS]


def _with_similarity(context: PreparedContext, verdicts: tuple[FactVerdict, ...],
                     similar: Similarity, config: JudgeConfig) -> tuple[FactVerdict, ...]:
    """The similarity route over the prose facts the terms did not find (one batch)."""
    asked = [i for i, v in enumerate(verdicts)
             if not v.found and is_prose_fact(v.fact) and v.coverage >= ROUTE_MIN_COVERAGE]
    candidates = {i: c for i in asked
                  if (c := candidate_stretch(context, verdicts[i].fact, config=config))}
    if not candidates:
        return verdicts
    order = sorted(candidates)
    pairs = [(verdicts[i].fact, candidates[i]) for i in order]
    cosines = list(similar(pairs))
    if len(cosines) != len(pairs):
        raise ValueError(f"the similarity function returned {len(cosines)} values "
                         f"for {len(pairs)} pairs")
    out = list(verdicts)
    for i, value in zip(order, cosines, strict=True):
        cosine_ = float(value) if math.isfinite(float(value)) else 0.0
        hit = cosine_ >= FACT_SIMILARITY_THRESHOLD
        out[i] = replace(out[i], similarity=round(cosine_, 6), found=hit, by_similarity=hit,
                         stretch=candidates[i] if hit else None)
    return tuple(out)


def anchored_fact(normalised_context: str, fact: str, evidence: str) -> FactVerdict:
    """An anchored fact against a context already read through
    :func:`~evaluator.core.groundtruth.normalize_evidence`: found exactly when the context
    contains the normalised span (an empty span is never found)."""
    span = normalize_evidence(evidence)
    found = bool(span) and span in normalised_context
    return FactVerdict(fact, 1.0 if found else 0.0, found, False, evidence=span)


def judge(context: str, facts: Sequence[str], *, config: JudgeConfig = JudgeConfig(),
          weights: Mapping[str, float] | None = None,
          similar: Similarity | None = None,
          evidence: Sequence[str | None] = ()) -> Verdict:
    """Judge ``context`` against ``facts`` (definition in the module docstring); with
    ``similar``, prose facts the terms miss take the similarity route. ``evidence`` holds,
    per fact, its span (``None``: unanchored); an anchored fact is judged by its span alone."""
    spans = [evidence[i] if i < len(evidence) else None for i in range(len(facts))]
    plain = [f for f, e in zip(facts, spans, strict=True) if e is None]
    prepared = PreparedContext(context if plain else "", negation_window=config.negation_window)
    verdicts = tuple(judge_fact(prepared, f, config=config, weights=weights) for f in plain)
    if similar is not None and context.strip() and plain:
        verdicts = _with_similarity(prepared, verdicts, similar, config)
    if len(plain) < len(facts):
        normalised, judged = normalize_evidence(context), iter(verdicts)
        verdicts = tuple(next(judged) if e is None else anchored_fact(normalised, f, e)
                         for f, e in zip(facts, spans, strict=True))
    n = len(verdicts)
    if n == 0:
        return Verdict(0.0, 0.0, 0.0, ())
    found = sum(v.found for v in verdicts)
    contradicted = sum(v.contradicted for v in verdicts)
    return Verdict(faithfulness=(found - contradicted) / n, fact_recall=found / n,
                   contradiction=contradicted / n, facts=verdicts)


@dataclass(frozen=True)
class FactAudit:
    """How one gold fact was judged, for a reviewer to check: ``judged_by`` is
    ``anchored``, ``terms`` or ``model``; ``span`` is what supported a supported fact (the
    evidence span of an anchored fact, else the stretch that supported it — the first, and
    of those starting there the shortest — or the model's candidate stretch; whitespace
    normalised to one line), ``None`` for an unsupported one."""

    fact: str
    judged_by: str
    found: bool
    span: str | None = None

    def to_dict(self) -> dict[str, str | bool | None]:
        """As results hold it: ``{"fact", "judged_by", "found", "span"}``."""
        return {"fact": self.fact, "judged_by": self.judged_by, "found": self.found,
                "span": self.span}


JUDGED_BY: tuple[str, ...] = ("anchored", "terms", "model")


def anchored_share(audits: Iterable[FactAudit]) -> tuple[int, int]:
    """``(anchored facts, facts)`` over ``audits``."""
    seen = list(audits)
    return sum(a.judged_by == "anchored" for a in seen), len(seen)


def audit(context: str, verdict: Verdict) -> tuple[FactAudit, ...]:
    """One :class:`FactAudit` per fact of ``verdict`` (judged on ``context``; the verdict
    carries each supported fact's stretch or span)."""
    def span(f: FactVerdict) -> str | None:
        if not f.supported:
            return None
        if f.evidence is not None:
            return f.evidence
        return normalize_evidence(f.stretch) if f.stretch else None

    return tuple(FactAudit(f.fact, f.judged_by, f.supported, span(f)) for f in verdict.facts)


def idf_weights(documents: Sequence[str]) -> dict[str, float]:
    """BM25's idf of every term over ``documents``: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    df: dict[str, int] = {}
    for doc in documents:
        for term in terms(doc):
            df[term] = df.get(term, 0) + 1
    n = len(documents)
    return {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
