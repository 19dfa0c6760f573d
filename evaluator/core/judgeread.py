"""How the faithfulness judge (:mod:`evaluator.core.judge`) reads a fact and a context.

A fact is read for its terms (in order), and for what must match exactly: its *names*,
*numbers*, *quoted strings* and *quantity* words, and whether it is negated
(:func:`read_fact`). A context is read line by line: each line is *blank*, a *label*,
*code* or *prose* (:func:`line_kind`), with its terms, which of them a negation cue
precedes, its names and numbers, and the ``def``/``class`` names that enclose it
(:class:`PreparedContext`). The rules that use these readings are in the judge's module
docstring.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, replace

from evaluator.core.judgetext import RAW_WORD, STOP_WORDS, context_lines, stem, words

LABEL_WORDS = 3
STATEMENT_WORDS = 4
NEGATION_WINDOW = 3


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
_EMPTY_QUOTED = re.compile(r"""(?<![\w'"`])(?:''|""|``)(?![\w'"`])""")
_QUOTE_MARKS = "'\"`“”‘’"
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
    if _EMPTY_QUOTED.search(text):
        quoted.append("")  # the empty string, '' or ""
    names: list[str] = []
    for m in re.finditer(r"[^\W\d][\w.]*\w(?:\(\))?|[^\W\d](?:\(\))?", text, re.UNICODE):
        before = text[:m.start()].rstrip()
        start = not before or before[-1] in ".!?:;"
        token = m.group(0)
        if _is_name(token, sentence_start=start):
            names.append(token.rstrip("()").strip("."))
    numbers = {_number(n) for n in _NUMBER.findall(text)}
    quantities: set[str] = set()
    for raw in RAW_WORD.findall(text):
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
    count = len(RAW_WORD.findall(stripped))
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
                       frozenset(r.casefold() for r in RAW_WORD.findall(line)))


class PreparedContext:
    """A context read once so several facts can be judged on it: its lines (see
    :class:`ContextLine`), which lines hold each term, and every name in it."""

    def __init__(self, text: str, *, negation_window: int = NEGATION_WINDOW) -> None:
        self.lines = _with_scopes([_read_line(line, negation_window)
                                   for line in context_lines(text)])
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


def quoted_met(quoted: str, flat: str) -> bool:
    """Whether ``flat`` (a stretch, whitespace collapsed) holds a quoted string of the fact
    *as a quoted string*: verbatim between quote marks (any of ' " ` “ ” ‘ ’, rst's
    double backticks too; whitespace inside the marks normalised), so the quoted word
    'None' is not met by the bare name ``None``; the empty string by ``''`` or ``""``."""
    if not quoted:
        return "''" in flat or '""' in flat
    start = flat.find(quoted)
    while start >= 0:
        before = flat[:start].rstrip()[-1:]
        after = flat[start + len(quoted):].lstrip()[:1]
        if before and before in _QUOTE_MARKS and after and after in _QUOTE_MARKS:
            return True
        start = flat.find(quoted, start + 1)
    return False
