"""Words and terms, as the faithfulness judge (:mod:`evaluator.core.judge`) and BM25 read them.

Text is read as *terms*: words are split on everything that is not a letter or digit, then
identifiers are split on underscores, case changes (``InvalidHeader`` → invalid, header;
``HTTPAdapter`` → http, adapter; ``max_retries`` → max, retries) and letter/digit
boundaries; each part is case-folded (NFKC), English stop words and single characters are
dropped, and the rest is stemmed with the Snowball English stemmer (``redirects``,
``redirected`` and ``redirecting`` are one term). Words code abbreviates are read as their
abbreviation on both sides. A word is a negation *cue* only as a whole word of prose.

Also here: a text cut into lines of at most :data:`MAX_LINE_CHARS` characters
(:func:`context_lines`) and into overlapping windows (:func:`segments`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import snowballstemmer

SEGMENT_LINES = 12
MAX_LINE_CHARS = 400

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
RAW_WORD = re.compile(r"[\w'’]+", re.UNICODE)

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


def normalise(text: str) -> str:
    """NFKC, and each punctuation character quoted alone replaced by its name."""
    text = unicodedata.normalize("NFKC", text)
    if "'" in text or '"' in text:
        text = _QUOTED_PUNCT.sub(lambda m: f" {PUNCTUATION_NAMES.get(m.group(2), '')} ", text)
    return text


def words(line: str, *, prose: bool | None = None) -> tuple[Word, ...]:
    """The words of one line, in order (see the module docstring for what counts as a cue)."""
    line = normalise(line)
    if prose is None:
        prose = is_prose(line)
    out: list[Word] = []
    for raw in RAW_WORD.findall(line):
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
    for raw in _TOKEN.findall(normalise(text)):
        for part in split_identifier(raw):
            if len(part) > 1 and part not in STOP_WORDS and part not in NEGATION_CUES:
                out.append(stem(part))
    return out


def context_lines(text: str) -> list[str]:
    out: list[str] = []
    for line in normalise(text).splitlines():
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
    cut = context_lines(text)
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
