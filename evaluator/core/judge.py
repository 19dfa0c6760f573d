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

The context is read as one stream of content terms (line after line; lines longer than
:data:`MAX_LINE_CHARS` characters are cut into pieces of that size; nothing is truncated).
A fact with *n* distinct terms is looked for in every *span* of at most
:data:`SPAN_PER_TERM` × *n* consecutive context terms; its *coverage* is the best span's
weighted share of the fact's terms (weights: 1 each by default, or the ``weights`` given,
e.g. idf). A fact is **found** when its coverage reaches :data:`COVERAGE_THRESHOLD` (0.7:
all terms of a fact of 3, 3 of 4, 4 of 5, 5 of 6). Spans scale with the fact, so a long
plain-sentence fact may gather its terms from a whole function while a short one must
find them together.

A found fact is **contradicted** when in every span that covers it, some occurrence of a
fact term has a negation cue (no, not, never, cannot, without, …) at most
:data:`NEGATION_WINDOW` words before it on the same line, while the fact itself holds no
negation. Cues are whole words of prose only: a part of an identifier (``InvalidHeader``,
``no_proxy``, ``NotImplementedError``) is never a cue, and neither is Python's ``not``
operator on a line of code (``if not x:``, ``x is not None``, ``a not in b``) — comments
(``# ...``) and docstring lines are prose.

The similarity route (when the run has the embedding model)
---------------------------------------------------------
A *prose* fact (a plain sentence: no code syntax — brackets, ``=``, quotes, ``->``,
``a.b``/``a_b``/``a/b`` joins, camelCase, ``CONSTANT_NAMES``, a leading ``def``/``class``/
``import``/``@``; see :func:`is_prose_fact`) that the terms do not find, but whose best
span holds at least :data:`ROUTE_MIN_COVERAGE` of its terms (some support in words), is
also looked for by meaning: the context is cut into :func:`segments` of
:data:`EMBED_SEGMENT_LINES` lines (at most :data:`EMBED_SEGMENT_CHARS` characters,
overlapping by half, nothing dropped);
the *candidate* is the segment holding the most distinct terms of the fact (the first on
a tie; none when no segment holds any). The fact is **found by similarity** when the
cosine between the MiniLM embeddings of the fact and its candidate reaches
:data:`FACT_SIMILARITY_THRESHOLD`. A fact the terms find but a negation contradicts stays
contradicted (the model is not asked); a fact found by similarity is contradicted by the
same cue rule applied to the spans that hold its best share of terms: when every such span
has a negation cue before one of the fact's terms (and the fact itself holds none). A
sentence model scores "the client does not retry" close to "the client retries", so the
cue must be read before its cosine counts as support. Code-fragment facts are judged by
their terms alone: a sentence model's cosine between two code lines measures how alike they
look (``hmac.compare_digest(a, b)`` against ``hmac.compare_digest(c, d)`` scores 0.55), not
whether one states the other.

Calibration (the bundled example only): the span and coverage threshold are the most
lenient setting that meets the example's goals (separation ≥ 0.9, wrong ≤ 0.1); the
similarity threshold is the smallest 0.01 step above every cosine of an example prose fact
with its candidate in *another* question's source (the highest is 0.37), so on the example
the model adds no fact to a wrong context. :data:`ROUTE_MIN_COVERAGE` changes nothing on the
example; it spares the model the facts with no support in words (its cost). How these carry
to real repositories is in the README.

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
:func:`similarity_verdict` takes vectors computed elsewhere (the MiniLM ONNX model the
index uses, in an adapter): the context cut into :func:`segments` (windows of lines, each
cut further to at most :data:`EMBED_SEGMENT_CHARS` characters so the model's 256 word
pieces hold it: nothing is truncated), each embedded whole, and each fact. A fact's
similarity is its
highest cosine over the segments; it is found at ≥ :data:`SIMILARITY_THRESHOLD`.

Blind spots
-----------
The terms rule checks that the words of a fact are present close together, not that the
context *states* the fact: a segment holding the words in another relation passes. A
paraphrase with other words (synonyms the stemmer does not join) is left to the similarity
route, which needs the model, a prose fact, 0.3 of its terms in some span, and the saying
in the candidate segment; cosine is not entailment, so a segment on the same subject that
says something else can pass. Negation is a word-level heuristic: contradictions expressed
without a cue word ("is disabled" against "is enabled"), or a negated fact against an
affirming context, are not detected.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import snowballstemmer

from evaluator.core.groundtruth import normalize_evidence

SEGMENT_LINES = 12
MAX_LINE_CHARS = 400
SPAN_PER_TERM = 10
COVERAGE_THRESHOLD = 0.7
NEGATION_WINDOW = 3
SIMILARITY_THRESHOLD = 0.5
EMBED_SEGMENT_LINES = 8
EMBED_SEGMENT_CHARS = 800
FACT_SIMILARITY_THRESHOLD = 0.38
ROUTE_MIN_COVERAGE = 0.3
# The judge's identity as results record it: a change of definition bumps the number, and a
# baseline judged otherwise is refused (:mod:`evaluator.core.comparability`).
JUDGE_VERSION = 2

_STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing done down during each either
else etc even ever every few for from further had has have having he her here hers herself
him himself his how however i if in into is it its itself just let lets like may me might
more most much must my myself nor of off on once only or other others our ours ourselves
out over own per same shall she should since so some such than that the their theirs them
themselves then there these they this those though through thus to too under until up upon
us use used uses using very via was we were what when where whether which while who whom
whose why will with within would yet you your yours yourself
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

# Words code abbreviates, read as their abbreviation on both sides (``ctx`` is "context",
# ``max_redirects`` holds "maximum"), and number words read as digits.
ABBREVIATIONS: Mapping[str, str] = {
    "address": "addr", "application": "app", "argument": "arg", "asynchronous": "async",
    "attribute": "attr", "authentication": "auth", "authorization": "auth",
    "authorisation": "auth", "boolean": "bool", "calculate": "calc", "certificate": "cert",
    "character": "char", "command": "cmd", "configuration": "config", "connection": "conn",
    "context": "ctx", "current": "cur", "database": "db", "description": "desc",
    "destination": "dst", "dictionary": "dict", "directory": "dir", "document": "doc",
    "documentation": "doc", "error": "err", "exception": "exc",
    "execute": "exec", "expression": "expr", "function": "func", "hexadecimal": "hex",
    "identifier": "id", "implementation": "impl", "index": "idx", "information": "info",
    "initialize": "init", "initialise": "init", "integer": "int", "length": "len",
    "library": "lib", "maximum": "max", "message": "msg", "minimum": "min", "number": "num",
    "object": "obj", "package": "pkg", "parameter": "param", "position": "pos",
    "previous": "prev", "reference": "ref", "repository": "repo", "request": "req",
    "response": "resp", "source": "src", "specification": "spec", "standard": "std",
    "statistic": "stat", "string": "str", "synchronous": "sync", "temporary": "tmp",
    "temp": "tmp", "utility": "util", "utilities": "util", "value": "val", "variable": "var",
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}

# British spellings read as American ones (both sides), so "colour" meets ``color``.
_BRITISH = re.compile(r"^(colo|behavio|favo|hono|neighbo|flavo|labo|humo)ur", re.UNICODE)
_ISE = re.compile(r"(?<=[a-z]{3})is(e|es|ed|ing|ation|ations|er|ers)$")
# A punctuation character quoted alone in code ("/", ';') is read as its name.
PUNCTUATION_NAMES: Mapping[str, str] = {
    "/": "slash", "\\": "backslash", ";": "semicolon", ":": "colon", ",": "comma",
    ".": "dot", "-": "dash", "_": "underscore", "*": "asterisk", "=": "equals",
    "|": "pipe", "&": "ampersand", "#": "hash", "@": "at-sign", "?": "question-mark",
    "!": "exclamation", "%": "percent", "+": "plus", "~": "tilde", "$": "dollar",
}
_QUOTED_PUNCT = re.compile(r"""(['"])([^\w\s'"]|_)\1""", re.UNICODE)

NEGATION_CUES: frozenset[str] = frozenset({
    "no", "not", "never", "cannot", "can't", "won't", "don't", "doesn't", "didn't",
    "isn't", "aren't", "wasn't", "weren't", "shouldn't", "mustn't", "without", "neither",
    "nor", "none",
})
# Python's ``not`` is an operator on a line of code, not a statement about the fact.
_CODE_LINE = re.compile(r"^\s*(?:if|elif|while|return|assert|and|or|for|lambda|yield|raise)\b"
                        r"|[=(\[{]|:\s*$")
_RAW = re.compile(r"[\w'’]+", re.UNICODE)

_STEMMER = snowballstemmer.stemmer("english")


_ABBREVIATED = {str(_STEMMER.stemWord(k)): v for k, v in ABBREVIATIONS.items()}


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The term of a lower-case word: its Snowball English stem (``headers`` → ``header``),
    or the abbreviation code uses for it (``contexts`` → ``ctx``, ``eight`` → ``8``);
    British spellings are read as American ones first (``colours``, ``serialised``)."""
    word = _ISE.sub(lambda m: "iz" + m.group(1), _BRITISH.sub(r"\1r", word))
    stemmed = str(_STEMMER.stemWord(word))
    return _ABBREVIATED.get(stemmed, stemmed)


def split_identifier(word: str) -> tuple[str, ...]:
    """The parts of an identifier, case-folded: on underscores, case changes, and
    letter/digit boundaries (``HTTPAdapter`` → http, adapter; ``get_URL2`` → get, url, 2)."""
    parts: list[str] = []
    for chunk in word.split("_"):
        current = ""
        for i, ch in enumerate(chunk):
            if current:
                prev = chunk[i - 1]
                nxt = chunk[i + 1] if i + 1 < len(chunk) else ""
                boundary = (
                    (prev.islower() and ch.isupper())
                    or (prev.isupper() and ch.isupper() and nxt.islower())
                    or (prev.isdigit() != ch.isdigit())
                )
                if boundary:
                    parts.append(current)
                    current = ""
            current += ch
        if current:
            parts.append(current)
    return tuple(p.casefold() for p in parts if p)


@dataclass(frozen=True)
class Word:
    """One word of a line: its term (stem, or ``""`` when it carries no content), whether it
    is a negation cue, and whether it is a part of a compound identifier."""

    term: str
    cue: bool
    in_identifier: bool


def _normalise(text: str) -> str:
    """NFKC, and each punctuation character quoted alone replaced by its name."""
    text = unicodedata.normalize("NFKC", text)
    if "'" in text or '"' in text:
        text = _QUOTED_PUNCT.sub(lambda m: f" {PUNCTUATION_NAMES.get(m.group(2), '')} ", text)
    return text


def words(line: str, *, prose: bool | None = None) -> tuple[Word, ...]:
    """The words of one line, in order (see the module docstring for what counts as a cue)."""
    line = _normalise(line)
    if prose is None:
        prose = is_prose(line)
    out: list[Word] = []
    for raw in _RAW.findall(line):
        raw = raw.strip("'’")
        if not raw:
            continue
        parts = split_identifier(raw) if ("'" not in raw and "’" not in raw) else (
            raw.casefold().replace("’", "'"),)
        compound = len(parts) > 1 or "_" in raw
        for part in parts:
            cue = prose and not compound and part in NEGATION_CUES
            content = not cue and len(part) > 1 and part not in STOP_WORDS \
                and part not in NEGATION_CUES and "'" not in part
            out.append(Word(stem(part) if content else "", cue, compound))
    return tuple(out)


def is_prose(line: str) -> bool:
    """A comment, a docstring or text line, as opposed to a line of code (for cues)."""
    stripped = line.strip()
    if stripped.startswith(("#", "//", "*", '"""', "'''", "-", ">")):
        return True
    return not _CODE_LINE.search(stripped)


def terms(text: str) -> frozenset[str]:
    """The distinct content terms of a text."""
    return frozenset(w.term for line in text.splitlines() for w in words(line) if w.term)


_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def tokens(text: str) -> list[str]:
    """Every content term of a text in order, repeats kept (for term frequencies, as BM25
    needs): identifiers split, case-folded, stop words dropped, stemmed — as :func:`terms`,
    without the per-line cue reading."""
    out: list[str] = []
    for raw in _TOKEN.findall(_normalise(text)):
        for part in split_identifier(raw):
            if len(part) > 1 and part not in STOP_WORDS and part not in NEGATION_CUES:
                out.append(stem(part))
    return out


def _lines(text: str) -> list[str]:
    out: list[str] = []
    for line in _normalise(text).splitlines():
        if len(line) <= MAX_LINE_CHARS:
            out.append(line)
        else:
            out += [line[i:i + MAX_LINE_CHARS] for i in range(0, len(line), MAX_LINE_CHARS)]
    return out


def _windows(n: int, size: int) -> list[tuple[int, int]]:
    """Line ranges [start, end): windows of ``size`` lines, a half window apart."""
    if n == 0:
        return []
    if n <= size:
        return [(0, n)]
    step = max(size // 2, 1)
    starts = list(range(0, n - size + 1, step))
    if starts[-1] + size < n:
        starts.append(n - size)
    return [(s, s + size) for s in starts]


def segments(text: str, *, lines: int = SEGMENT_LINES,
             max_chars: int | None = None) -> tuple[str, ...]:
    """The context cut into overlapping windows of ``lines`` lines (nothing dropped);
    with ``max_chars``, a longer window is cut further into overlapping pieces of at most
    that many characters (for a model that reads a bounded number of tokens). Blank segments
    are left out."""
    cut = _lines(text)
    out: list[str] = []
    for a, b in _windows(len(cut), lines):
        window = "\n".join(cut[a:b])
        if max_chars is None or len(window) <= max_chars:
            out.append(window)
            continue
        step = max(max_chars // 2, 1)
        out += [window[i:i + max_chars]
                for i in range(0, max(len(window) - max_chars, 0) + step, step)]
    return tuple(s for s in out if s.strip())


@dataclass(frozen=True)
class FactVerdict:
    """The judge's reading of one gold fact against a context."""

    fact: str
    coverage: float
    found: bool
    contradicted: bool
    missing_terms: tuple[str, ...] = ()
    similarity: float | None = None  # cosine with its candidate, when the route asked
    by_similarity: bool = False  # found by the similarity route, not by its terms
    negated_at_best: bool = False  # every span at its best coverage negates a fact term
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
    """The judge's thresholds (calibrated on the bundled example; see the README)."""

    span_per_term: int = SPAN_PER_TERM
    coverage_threshold: float = COVERAGE_THRESHOLD
    negation_window: int = NEGATION_WINDOW


class PreparedContext:
    """A context read once so several facts can be judged on it: its content terms in order,
    and for each whether a prose negation cue stands at most ``negation_window`` words
    before it on its line."""

    def __init__(self, text: str, *, negation_window: int = NEGATION_WINDOW) -> None:
        self.terms: list[str] = []
        self.negated: list[bool] = []
        self.positions: dict[str, list[int]] = {}
        for line in _lines(text):
            last_cue = -(10**9)
            for i, word in enumerate(words(line)):
                if word.cue:
                    last_cue = i
                elif word.term:
                    self.positions.setdefault(word.term, []).append(len(self.terms))
                    self.terms.append(word.term)
                    self.negated.append(i - last_cue <= negation_window)


def fact_terms(fact: str) -> tuple[frozenset[str], bool]:
    """A fact's content terms and whether the fact itself is negated."""
    ws = [w for line in fact.splitlines() for w in words(line, prose=True)]
    return frozenset(w.term for w in ws if w.term), any(w.cue for w in ws)


def judge_fact(context: PreparedContext, fact: str, *, config: JudgeConfig = JudgeConfig(),
               weights: Mapping[str, float] | None = None) -> FactVerdict:
    """One fact against a prepared context (definition in the module docstring)."""
    wanted, fact_negated = fact_terms(fact)
    occurrences = sorted((pos, term) for term in wanted
                         for pos in context.positions.get(term, ()))
    if not wanted or not occurrences:
        return FactVerdict(fact, 0.0, False, False, tuple(sorted(wanted)))

    def weight(term: str) -> float:
        return 1.0 if weights is None else weights.get(term, max(weights.values(), default=1.0))

    total = math.fsum(weight(t) for t in wanted)
    span = config.span_per_term * len(wanted)
    counts: dict[str, int] = {}
    covered = 0.0
    best, best_present = 0.0, frozenset[str]()
    covering, affirmed = False, False
    best_affirmed = False  # some span at the best coverage has no negated fact term
    lo = 0

    def negated(first: int, last: int) -> bool:
        return any(context.negated[i] for i in range(first, last + 1)
                   if context.terms[i] in wanted)

    for pos, term in occurrences:
        counts[term] = counts.get(term, 0) + 1
        if counts[term] == 1:
            covered += weight(term)
        while pos - occurrences[lo][0] + 1 > span:
            old = occurrences[lo][1]
            counts[old] -= 1
            if counts[old] == 0:
                covered -= weight(old)
                del counts[old]
            lo += 1
        coverage = covered / total if total > 0 else 0.0
        if coverage > best + 1e-12:
            best, best_present = coverage, frozenset(counts)
            best_affirmed = not negated(occurrences[lo][0], pos)
        elif coverage > best - 1e-12 and not best_affirmed:
            best_affirmed = not negated(occurrences[lo][0], pos)
        if coverage >= config.coverage_threshold - 1e-12:
            covering = True
            if not negated(occurrences[lo][0], pos):
                affirmed = True
    contradicted = covering and not affirmed and not fact_negated
    return FactVerdict(fact, round(min(best, 1.0), 6), covering, contradicted,
                       tuple(sorted(wanted - best_present)),
                       negated_at_best=not best_affirmed and not fact_negated)


# (fact, candidate segment) pairs in, one cosine per pair out: the MiniLM model, batched.
Similarity = Callable[[Sequence[tuple[str, str]]], Sequence[float]]

# Code syntax in a fact: brackets, operators, quotes (an apostrophe inside a word, as in
# "doesn't" or "click's", is prose), backticks, ``a.b`` / ``a_b`` joins of identifiers (not a
# decimal "0.5", nor "e.g."), ``a/b`` paths, camelCase, CONSTANT_NAMES and a decorator.
_CODE_SYNTAX = re.compile(
    r"""[()\[\]{}=<>"`|\\]|->|(?<![^\W\d_])'|'(?![^\W\d_])"""
    r"|[^\W\d]\w*\.[^\W\d]\w+|[^\W\d]\w+\.[^\W\d]\w*|\w_\w|\w/\w"
    r"|[a-z][A-Z]|\b[A-Z0-9]+_[A-Z0-9_]+\b|^\s*@")


def is_prose_fact(fact: str) -> bool:
    """Whether a fact is a plain sentence, as opposed to a code fragment (see the module
    docstring): only prose facts take the similarity route."""
    return bool(fact.strip()) and not _CODE_SYNTAX.search(fact)


def judge_id(*, similarity: bool) -> str:
    """The judge as results record it (``judge`` in a run's settings)."""
    return f"evaluator-judge {JUDGE_VERSION} ({'terms+minilm' if similarity else 'terms'})"


def candidate_segments(context: str, facts: Sequence[str]) -> tuple[str | None, ...]:
    """Per fact, the segment of ``context`` holding the most distinct terms of it (the first
    on a tie), or ``None`` when no segment holds any (definition in the module docstring)."""
    pieces = segments(context, lines=EMBED_SEGMENT_LINES, max_chars=EMBED_SEGMENT_CHARS)
    held = [terms(piece) for piece in pieces]
    out: list[str | None] = []
    for fact in facts:
        wanted, _ = fact_terms(fact)
        best, best_count = None, 0
        for piece, have in zip(pieces, held, strict=True):
            count = len(wanted & have)
            if count > best_count:
                best, best_count = piece, count
        out.append(best)
    return tuple(out)


def _with_similarity(context: str, verdicts: tuple[FactVerdict, ...],
                     similar: Similarity) -> tuple[FactVerdict, ...]:
    """The similarity route over the prose facts the terms did not find (one batch)."""
    asked = [i for i, v in enumerate(verdicts) if not v.found and is_prose_fact(v.fact)
             and v.coverage >= ROUTE_MIN_COVERAGE - 1e-12]
    if not asked:
        return verdicts
    candidates = candidate_segments(context, [verdicts[i].fact for i in asked])
    pairs = [(verdicts[i].fact, c) for i, c in zip(asked, candidates, strict=True)
             if c is not None]
    cosines = list(similar(pairs)) if pairs else []
    if len(cosines) != len(pairs):
        raise ValueError(f"the similarity function returned {len(cosines)} values "
                         f"for {len(pairs)} pairs")
    out = list(verdicts)
    it = iter(cosines)
    for i, c in zip(asked, candidates, strict=True):
        cosine = float(next(it)) if c is not None else 0.0
        if not math.isfinite(cosine):
            cosine = 0.0
        hit = cosine >= FACT_SIMILARITY_THRESHOLD
        out[i] = replace(out[i], similarity=round(cosine, 6), found=hit, by_similarity=hit,
                         contradicted=hit and out[i].negated_at_best)
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
        verdicts = _with_similarity(context, verdicts, similar)
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
    evidence span of an anchored fact, else the passage of the context holding most of the
    fact's terms, :func:`candidate_segments`; whitespace normalised to one line), ``None``
    for an unsupported one."""

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
    """One :class:`FactAudit` per fact of ``verdict`` (judged on ``context``)."""
    plain = [f.fact for f in verdict.facts if f.supported and f.evidence is None]
    passages = {fact: normalize_evidence(passage) for fact, passage in
                zip(plain, candidate_segments(context, plain), strict=True) if passage}
    return tuple(FactAudit(f.fact, f.judged_by, f.supported,
                           (f.evidence if f.evidence is not None else passages.get(f.fact))
                           if f.supported else None)
                 for f in verdict.facts)


def idf_weights(documents: Sequence[str]) -> dict[str, float]:
    """BM25's idf of every term over ``documents``: ln(1 + (N - df + 0.5) / (df + 0.5))."""
    df: dict[str, int] = {}
    for doc in documents:
        for term in terms(doc):
            df[term] = df.get(term, 0) + 1
    n = len(documents)
    return {t: math.log(1.0 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}


# ----------------------------------------------------------------------------- embeddings


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 when a vector is empty, zero, or the lengths differ."""
    if not a or not b or len(a) != len(b):
        return 0.0
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    return dot / (na * nb) if na > 0 and nb > 0 else 0.0


def max_similarities(queries: Sequence[Sequence[float]],
                     segments_: Sequence[Sequence[float]]) -> tuple[float, ...]:
    """For each query vector, its highest cosine over the segment vectors (0 if none)."""
    return tuple(max((cosine(q, s) for s in segments_), default=0.0) for q in queries)


@dataclass(frozen=True)
class SimilarityVerdict:
    """The embedding judge: per fact its best cosine over the context's segments."""

    similarities: tuple[float, ...]
    threshold: float

    @property
    def fact_recall(self) -> float:
        """Share of facts whose best segment reaches the threshold (0 with no facts)."""
        n = len(self.similarities)
        return sum(s >= self.threshold for s in self.similarities) / n if n else 0.0


def similarity_verdict(fact_vectors: Sequence[Sequence[float]],
                       segment_vectors: Sequence[Sequence[float]], *,
                       threshold: float = SIMILARITY_THRESHOLD) -> SimilarityVerdict:
    """Each fact's highest cosine over the context segments, found at ≥ ``threshold``."""
    return SimilarityVerdict(max_similarities(fact_vectors, segment_vectors), threshold)
