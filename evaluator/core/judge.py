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
a term of the fact and does not cross a label line (labels hold no support: a list of names
is not a statement). Terms found in different stretches never add up; the terms and names
of a stretch include its lines' scope.

**Found by terms.** A fact with *n* distinct terms is found when one stretch

1. holds at least :data:`COVERAGE_THRESHOLD` of its terms (weights: 1 each by default, or
   the ``weights`` given, e.g. idf): all terms of a fact of 3, 3 of 4, 4 of 5, 5 of 6;
2. holds, exactly, every *name* of the fact — a dotted or underscored name, a call ``f()``,
   camelCase or CapWords, a capitalised word inside a sentence (``Timeout``), but not an
   acronym (``URL``) — as a whole identifier, case-sensitive (for ``a.b`` every part, in
   the stretch or its scope); every *number* (digits, ``3_600``
   read as ``3600``, or a number word two … twelve) as a whole number; every *quoted
   string* ('…', "…", “…”, ‘…’, `…`) verbatim with whitespace normalised; and every
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
packages measure them (README, *The faithfulness judge*).

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
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

import snowballstemmer

from evaluator.core.groundtruth import normalize_evidence

SEGMENT_LINES = 12
STRETCH_LINES = 10
LABEL_WORDS = 3
STATEMENT_WORDS = 4
MAX_LINE_CHARS = 400
COVERAGE_THRESHOLD = 0.7
NEGATION_WINDOW = 3
SIMILARITY_THRESHOLD = 0.5
EMBED_SEGMENT_LINES = 8
EMBED_SEGMENT_CHARS = 800
FACT_SIMILARITY_THRESHOLD = 0.38
ROUTE_MIN_COVERAGE = 0.3
# The judge's identity as results record it: a change of definition bumps the number, and a
# baseline judged otherwise is refused (:mod:`evaluator.core.comparability`).
JUDGE_VERSION = 3

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
    "address": "addr", "separator": "sep", "application": "app", "argument": "arg",
    "asynchronous": "async",
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
    "nor", "none", "rather", "instead",
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
            cue = prose and not compound and part in NEGATION_CUES and raw != "None"
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
    """The judge's thresholds (see the module docstring and the README)."""

    stretch_lines: int = STRETCH_LINES
    coverage_threshold: float = COVERAGE_THRESHOLD
    negation_window: int = NEGATION_WINDOW


# ------------------------------------------------------------------------- reading a fact

# Code statements, and code syntax on a line (for telling code from prose and labels).
_STATEMENT = re.compile(
    r"^\s*(?:async\s+)?(?:def|class|return|raise|import|from|if|elif|else|for|while|with|"
    r"try|except|finally|assert|yield|lambda|await|pass|break|continue|del|global|"
    r"nonlocal)\b")
_CODE_MARK = re.compile(r"=|->|\w\([^)\s]|\w\.\w+\(|[\[{]|:\s*$|^\s*@|^\s*[)\]}]")
_LIST_MARK = re.compile(r"^\s*(?:[-*•+]|\d+[.)])\s+")
_NAME = re.compile(r"[^\W\d]\w*(?:\.[^\W\d]\w*)*", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])\d[\d_]*(?:\.\d+)?(?![\w.]*[^\W\d_])", re.UNICODE)
_QUOTED = re.compile(r"""(?<!\w)(['"“‘`])(.+?)(['"”’`])(?!\w)""", re.UNICODE)
_CLOSING = {"'": "'", '"': '"', "“": "”", "‘": "’", "`": "`"}
NUMBER_WORDS: Mapping[str, str] = {
    "zero": "0", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
}
# Quantities read from the fact: each group must be met in the stretch by one of its words
# (any case) or, on a line of code, by one of its code forms.
QUANTIFIERS: Mapping[str, tuple[frozenset[str], tuple[str, ...]]] = {
    "all": (frozenset({"all", "every", "each"}), ("for ", "all(")),
    "any": (frozenset({"any"}), ("any(",)),
    "only": (frozenset({"only"}), ()),
    "always": (frozenset({"always"}), ()),
    "once": (frozenset({"once"}), ()),
    "twice": (frozenset({"twice"}), ()),
    "both": (frozenset({"both"}), ()),
    "first": (frozenset({"first"}), ("[0]",)),
    "last": (frozenset({"last"}), ("[-1]",)),
    "most": (frozenset({"most", "max", "maximum"}), ("<=", "max(")),
    "least": (frozenset({"least", "min", "minimum"}), (">=", "min(")),
    "more": (frozenset({"more", "greater", "longer", "larger", "exceeds", "over"}), (">",)),
    "less": (frozenset({"less", "fewer", "shorter", "smaller", "under"}), ("<",)),
}
_QUANTIFIER_OF = {w: group for group, (ws, _) in QUANTIFIERS.items() for w in ws
                  if w not in {"max", "maximum", "min", "minimum", "over", "under"}}
# Words too common in descriptions of code to carry a fact: every other term of a fact is
# a *key* term, which the similarity route requires in its candidate stretch.
_GENERIC_TEXT = """
return returns returned call called calls function method class object value values
default defaults argument arguments parameter parameters pass passed given give gives
take takes set sets get gets make makes create creates created result results data
instance attribute type name list string integer boolean true false option options
handle handles work works provide provides support supports accept accepts contain
contains include includes new check checks based code line lines keyword keywords
"""
GENERIC_TERMS: frozenset[str] = frozenset(
    stem(w) for w in _GENERIC_TEXT.split() if w not in STOP_WORDS)


@dataclass(frozen=True)
class FactReading:
    """What a fact asks of a stretch: its content terms (in order and as a set), its exact
    names, numbers, quoted strings and quantities, and whether it is negated."""

    text: str
    sequence: tuple[str, ...]
    wanted: frozenset[str]
    names: tuple[str, ...]
    numbers: frozenset[str]
    quoted: tuple[str, ...]
    quantities: frozenset[str]
    negated: bool

    @property
    def key_terms(self) -> frozenset[str]:
        return frozenset(t for t in self.wanted if t not in GENERIC_TERMS)


def _is_name(token: str, *, sentence_start: bool) -> bool:
    """Whether a word of a fact is a code name that must match exactly: a dotted or
    underscored name, a call ``f()``, camelCase or CapWords (two capitals, not an acronym),
    or a capitalised word inside a sentence."""
    bare = token.rstrip("()")
    if "." in bare or "_" in bare.strip("_") or token.endswith("()"):
        return True
    if bare.isupper():
        return False  # an acronym: URL, HTTP, JSON
    capitals = sum(ch.isupper() for ch in bare)
    if capitals >= 2 or (capitals == 1 and not bare[0].isupper()):
        return True
    return capitals == 1 and not sentence_start and len(bare) > 1


def _number(token: str) -> str:
    return token.replace("_", "")


def read_fact(fact: str) -> FactReading:
    """A fact read the way the judge uses it (definition in the module docstring)."""
    text = unicodedata.normalize("NFKC", fact)
    quoted = []
    for m in _QUOTED.finditer(text):
        if _CLOSING[m.group(1)] == m.group(3) and m.group(2).strip():
            quoted.append(" ".join(m.group(2).split()))
    names: list[str] = []
    for m in re.finditer(r"[^\W\d][\w.]*\w(?:\(\))?|[^\W\d](?:\(\))?", text, re.UNICODE):
        before = text[:m.start()].rstrip()
        start = not before or before[-1] in ".!?:;"
        token = m.group(0)
        if _is_name(token, sentence_start=start):
            names.append(token.rstrip("()").strip("."))
    numbers = {_number(n) for n in _NUMBER.findall(text)}
    quantities: set[str] = set()
    for raw in _RAW.findall(text):
        low = raw.casefold()
        if low in NUMBER_WORDS:
            numbers.add(NUMBER_WORDS[low])
        if low in _QUANTIFIER_OF:
            quantities.add(_QUANTIFIER_OF[low])
    ws = [w for line in text.splitlines() for w in words(line, prose=True)]
    sequence = tuple(w.term for w in ws if w.term)
    return FactReading(text=fact, sequence=sequence, wanted=frozenset(sequence),
                       names=tuple(dict.fromkeys(names)), numbers=frozenset(numbers),
                       quoted=tuple(quoted), quantities=frozenset(quantities),
                       negated=any(w.cue for w in ws))


def fact_terms(fact: str) -> tuple[frozenset[str], bool]:
    """A fact's content terms and whether the fact itself is negated."""
    reading = read_fact(fact)
    return reading.wanted, reading.negated


# ---------------------------------------------------------------------- reading a context


def line_kind(line: str) -> str:
    """``blank`` (no word), ``label`` (a list entry of at most three words and no code
    syntax, such as ``TimestampSigner (code)`` or ``- SignatureExpired``), ``code`` or
    ``prose`` (definition in the module docstring)."""
    stripped = line.strip()
    count = len(_RAW.findall(stripped))
    if count == 0:
        return "blank"
    if _CODE_MARK.search(stripped) or (_STATEMENT.match(stripped)
                                       and count <= STATEMENT_WORDS):
        return "code"
    if count <= LABEL_WORDS:
        return "label"
    return "prose"


@dataclass(frozen=True)
class ContextLine:
    """One line of a context as the judge reads it."""

    text: str
    flat: str  # whitespace collapsed
    kind: str
    terms: tuple[str, ...]
    negated: tuple[bool, ...]  # a prose cue at most the window's words before the term
    negated_any: tuple[bool, ...]  # the same, counting Python's ``not`` too
    names: frozenset[str]
    numbers: frozenset[str]
    lowered: frozenset[str]  # its words, case-folded (for quantities)
    scope_terms: frozenset[str] = frozenset()  # of the enclosing ``def``/``class`` names
    scope_names: frozenset[str] = frozenset()


def _read_line(line: str, window: int) -> ContextLine:
    kind = line_kind(line)
    prose_words = words(line, prose=kind == "prose")
    any_words = words(line, prose=True)
    terms_: list[str] = []
    negated: list[bool] = []
    negated_any: list[bool] = []
    last_cue = last_any = -(10**9)
    for i, (w, a) in enumerate(zip(prose_words, any_words, strict=True)):
        if w.cue:
            last_cue = i
        if a.cue:
            last_any = i
        if w.term:
            terms_.append(w.term)
            negated.append(i - last_cue <= window)
            negated_any.append(i - last_any <= window)
    names: set[str] = set()
    for m in _NAME.finditer(line):
        names.add(m.group(0))
        names.update(m.group(0).split("."))
    return ContextLine(line, " ".join(line.split()), kind, tuple(terms_), tuple(negated),
                       tuple(negated_any), frozenset(names),
                       frozenset(_number(n) for n in _NUMBER.findall(line)),
                       frozenset(r.casefold() for r in _RAW.findall(line)))


class PreparedContext:
    """A context read once so several facts can be judged on it: its lines (see
    :class:`ContextLine`), which lines hold each term, and every name in it."""

    def __init__(self, text: str, *, negation_window: int = NEGATION_WINDOW) -> None:
        self.lines = _with_scopes([_read_line(line, negation_window) for line in _lines(text)])
        self.lines_of: dict[str, list[int]] = {}
        names: set[str] = set()
        for i, line in enumerate(self.lines):
            for term in dict.fromkeys(line.terms):
                self.lines_of.setdefault(term, []).append(i)
            names |= line.names
        self.names = frozenset(names)


_DEFINITION = re.compile(r"^(\s*)(?:async\s+)?(?:def|class)\s+([^\W\d]\w*)", re.UNICODE)


def _with_scopes(lines: list[ContextLine]) -> list[ContextLine]:
    """Each line with the names of the ``def`` and ``class`` lines of the context that
    enclose it (by indentation): a line of a method is about its class and its method."""
    stack: list[tuple[int, str]] = []
    out = []
    for line in lines:
        if line.text.strip():
            indent = len(line.text) - len(line.text.lstrip())
            while stack and stack[-1][0] >= indent:
                stack.pop()
        if stack:
            names = frozenset(name for _, name in stack)
            scope_terms = frozenset(w.term for name in names for w in words(name) if w.term)
            line = replace(line, scope_terms=scope_terms, scope_names=names)
        out.append(line)
        match = _DEFINITION.match(line.text)
        if match:
            stack.append((len(match.group(1)), match.group(2)))
    return out


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
    names = frozenset().union(*(line.names | line.scope_names for line in lines))
    numbers = frozenset().union(*(line.numbers for line in lines))
    flat = " ".join(line.flat for line in lines)
    lowered = frozenset().union(*(line.lowered for line in lines))
    code = any(line.kind == "code" for line in lines)
    exact = (all(all(p in names for p in n.split(".")) for n in reading.names)
             and reading.numbers <= numbers
             and all(q in flat for q in reading.quoted)
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


def _quantity_met(group: str, lowered: frozenset[str], code: str) -> bool:
    words_, forms = QUANTIFIERS[group]
    return bool(words_ & lowered) or any(form in code for form in forms)


def stretches(context: PreparedContext, reading: FactReading, *, config: JudgeConfig,
              weights: Mapping[str, float] | None = None) -> list[Stretch]:
    """Every candidate stretch of ``context`` for a fact: from each line holding one of its
    terms, the next lines up to ``config.stretch_lines`` in all, stopping before a label."""
    if not reading.wanted:
        return []

    def weight(term: str) -> float:
        return 1.0 if weights is None else weights.get(term, max(weights.values(), default=1.0))

    total = math.fsum(weight(t) for t in reading.wanted)
    starts = sorted({i for t in reading.wanted for i in context.lines_of.get(t, ())})
    out = []
    for start in starts:
        end = start
        while (end < len(context.lines) and end - start < config.stretch_lines
               and (end == start or context.lines[end].kind != "label")):
            end += 1
        if context.lines[start].kind == "label":
            continue
        out.append(_stretch(context, reading, start, end, weight, total,
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


def candidate_stretch(context: PreparedContext, fact: str, *,
                      config: JudgeConfig = JudgeConfig()) -> str | None:
    """The stretch the similarity route asks the model about, or ``None``: among the
    stretches that meet the fact's names, numbers, quoted strings, quantities, order and
    polarity, hold every key term and at least :data:`ROUTE_MIN_COVERAGE` of its terms, the
    one with the highest coverage (the first on a tie); at most
    :data:`EMBED_SEGMENT_CHARS` characters of it are read."""
    reading = read_fact(fact)
    keys = reading.key_terms
    fits = [s for s in stretches(context, reading, config=config)
            if s.exact and s.ordered and s.polarity and keys <= s.present
            and s.coverage >= ROUTE_MIN_COVERAGE - 1e-12]
    if not fits:
        return None
    best = max(fits, key=lambda s: (s.coverage, -s.start))
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
