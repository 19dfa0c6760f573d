"""A mined commit that repeats a drafted question, or whose subject joins two unrelated
changes (issue 24's held-out review).

Decided against the questions already drafted and the modules' sources:

* a **repeat**: its subject says what an already drafted question says (the content words
  of one hold the other's), or it has the same grade-3 modules as one and shares most of
  its words: ``Improve generic typing`` after ``Improve generic typing further``;
* **two topics**: its subject joins two changes (``X and <verb> Y``, ``X; Y``) and the
  modules it touched are unrelated (none imports another).

Pure: the caller reads the sources.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence

from evaluator.core.giveaway import words

SKIP_REPEAT = "repeats a drafted question (its subject, or its grade-3 modules and words)"
SKIP_TWO_TOPICS = "two topics in one subject (\"X and Y\" over unrelated modules)"

_VERBS = (r"add|allow|avoid|change|clean|deprecate|drop|fix|handle|improve|make|move|raise|"
          r"remove|rename|replace|return|set|support|switch|update|use|document|refactor")
_JOIN = re.compile(r";\s+\S|\s(?:and|&)\s+(?:also\s+)?(?:" + _VERBS + r")(?:e?s|e?d|ing)?\b"
                   # "X & related changes", and a list "X, Y and Z"
                   r"|\s(?:and|&)\s+(?:other\s+|some\s+)?related\s+changes?\b"
                   r"|\S,\s+[^,]+?,?\s+(?:and|&)\s+\S", re.IGNORECASE)


def repeats(question: str, grade3: frozenset[str],
            drafted: Sequence[tuple[str, frozenset[str]]]) -> bool:
    """``question`` (with its grade-3 modules) says what one of ``drafted`` says."""
    own = words(question)
    if not own:
        return False
    for other, other3 in drafted:
        theirs = words(other)
        if not theirs:
            continue
        if own <= theirs or theirs <= own:
            return True
        if grade3 == other3 and len(own & theirs) * 3 >= 2 * min(len(own), len(theirs)):
            return True
    return False


def _imports(source: str, stem: str) -> bool:
    return re.search(r"^\s*(?:from\s+\S*\b" + re.escape(stem) + r"\b\s+import|import\s+.*\b"
                     + re.escape(stem) + r"\b|from\s+\S+\s+import\s+.*\b" + re.escape(stem)
                     + r"\b)", source, re.MULTILINE) is not None


def two_topics(question: str, sources: Mapping[str, str | None]) -> bool:
    """The subject joins two changes and the touched modules (``sources``: path → today's
    source) are unrelated: no one of them imports another by its module name."""
    if _JOIN.search(question) is None or len(sources) < 2:
        return False
    stems = {m: posixpath.splitext(posixpath.basename(m))[0] for m in sources}
    for module, source in sources.items():
        for other, stem in stems.items():
            if other != module and source is not None and stem != "__init__" and \
                    _imports(source, stem):
                return False
    return True
