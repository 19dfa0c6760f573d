"""A small, generic vocabulary of code words for the faithfulness judge (judge 5): words that
mean the same in descriptions of code (*synonyms*, read as one term) and words that mean the
opposite (*opposites*, which refuse a stretch that holds the opposite of a word the fact
leaves out).

The lists are a programmer's thesaurus of common verbs and adjectives of code (raise/throw,
error/exception, remove/delete/drop, lower/upper, encode/decode …), written from general
usage, not from the facts of the judge's labelled sets or suites: a word is here because it
is how code and its documentation commonly say the same or the opposite thing. They are read
only by the judge (:func:`evaluator.core.judgetext.words`); BM25's terms are not changed.

Every entry is a word as it appears in text; it is stemmed the way the judge stems words
(:func:`evaluator.core.judgetext.stem`), so ``deletes`` and ``deleted`` are ``delete``.
"""

from __future__ import annotations

# Each line: words that mean the same thing in code descriptions; the first is the term
# the others are read as.
SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("raise", "throw"),
    ("error", "exception"),
    ("remove", "delete", "drop", "discard", "erase", "purge"),
    ("return", "give"),
    ("join", "concatenate", "concat"),
    ("start", "begin"),
    ("end", "finish"),
    ("check", "verify"),
    ("convert", "cast", "coerce", "transform"),
    ("create", "construct", "instantiate"),
    ("find", "search", "lookup"),
    ("ignore", "skip", "omit"),
    ("replace", "substitute"),
    ("keep", "preserve", "retain"),
    ("store", "save"),
    ("copy", "clone", "duplicate"),
    ("merge", "combine"),
    ("call", "invoke"),
    ("lower", "lowercase", "downcase"),
    ("upper", "uppercase", "upcase"),
    ("empty", "blank"),
    ("invalid", "malformed"),
    ("allow", "permit"),
    ("reject", "refuse", "deny", "forbid", "disallow"),
    ("fetch", "retrieve"),
    ("strip", "trim"),
    ("length", "size"),
)

# Pairs of words of opposite meaning (each word stands for its synonym group).
OPPOSITES: tuple[tuple[str, str], ...] = (
    ("lower", "upper"),
    ("first", "last"),
    ("start", "end"),
    ("minimum", "maximum"),
    ("true", "false"),
    ("allow", "reject"),
    ("accept", "reject"),
    ("encode", "decode"),
    ("add", "remove"),
    ("open", "close"),
    ("enable", "disable"),
    ("include", "exclude"),
    ("valid", "invalid"),
    ("prefix", "suffix"),
    ("leading", "trailing"),
    ("input", "output"),
    ("read", "write"),
    ("push", "pop"),
    ("increase", "decrease"),
    ("ascending", "descending"),
    ("synchronous", "asynchronous"),
    ("success", "failure"),
    ("compress", "decompress"),
    ("lock", "unlock"),
    ("left", "right"),
    ("head", "tail"),
    ("show", "hide"),
    ("import", "export"),
    ("upload", "download"),
    ("public", "private"),
    ("local", "remote"),
    ("absolute", "relative"),
    ("older", "newer"),
    ("oldest", "newest"),
    ("ignore", "raise"),
    ("keep", "remove"),
    ("empty", "full"),
)

# A word made the opposite of another by one of these prefixes (``unchanged`` and
# ``changed``, ``invalid`` and ``valid``, ``nonempty`` and ``empty``).
NEGATING_PREFIXES: tuple[str, ...] = ("un", "in", "non", "dis")
