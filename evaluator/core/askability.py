"""Which mined history questions to draft when more than ``--count`` pass every rule
(issue 24, rounds 14 and 16).

The history route judges more candidates than it is asked for (:data:`POOL_FACTOR` times
``--count``, newest first) and drafts the ``--count`` a cold reviewer is likeliest to keep
as drafted. Each candidate gets an **askability** score, the log-odds of a "keep" verdict
under a logistic model of six features of its subject and grades:

* how many modules it grades: a change to one module is the clearest question; two
  modules :data:`TWO_MODULES`, three or more :data:`THREE_OR_MORE` and five or more
  :data:`FIVE_OR_MORE` on top (reviewers regrade cross-file questions most: the
  grade-3 split between modules by changed lines is where they disagree);
* a short subject (at most :data:`SHORT_WORDS` words): :data:`SHORT`;
* its opening verb (after a ``scope:`` prefix, any inflection): one that states a
  behaviour a user sees (:data:`BEHAVIOUR_VERBS`: "Fix", "Allow", "Don't", "Preserve" …)
  :data:`BEHAVIOUR`; one that states work on the code (:data:`CODE_VERBS`: "Update",
  "Use", "Remove", "Refactor" …) :data:`CODE`;
* a code span (a backtick) in it: :data:`CODE_SPAN`;
* a word of condition ("when", "if", "unless", "while", "after", "before", "during"):
  :data:`CONDITION` (the subject names the situation a user meets: "Don't crash when …");
* a dotted name or number (a version, a module path, a file name: ``1.2``, ``os.path``):
  :data:`DOTTED`.

Round 16 refitted the weights (L2-regularised logistic regression, rounded) on the
questions of the first 60 cold reviews of ``benchmarks/init_review/`` (reviews 1–19,
tuning data) **that today's rules still let through**, drafted again at each review's
commit (1,106 reviewed of 4,750 candidates; ``benchmarks/bench_askability.py`` remakes
every figure). Leave one repository out, each review's top 5 by this model are kept
unedited 69 % of the time (round 14's weights 67 %) against 52 % for all; pooled over
the repositories the AUC is 0.60 (round 14's weights 0.62): the gain is at the top of the
ranking, which is all drafting uses. Held out (the twentieth
review, ``fresh19-*``: six repositories no weight or rule saw, paired against round 15's
tool in one blind reading), drafts kept 35 of 120 unedited against 32; of the 16 commits
only one tool drafted, 7 kept against 4. The twenty-first review (six more, with round
17's rules): 25 of 102 against 24, rejected 20 against 23. A score is a ranking, not a
probability to report. Ties go to the newer commit.

The price, said in the docs: cross-file questions are drafted less often (2 % of the
tuning reviews' top 5 against 26 % of all), because reviewers edit them most.

Pure: the caller passes the cleaned question and its grades.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

#: Candidates judged per question asked before the best ``--count`` are chosen: 5 since
#: round 16 (3 before; leave one repository out, the top quarter of a review is kept 69 %
#: of the time, its top third 68 %). A repository with fewer candidates drafts from all.
POOL_FACTOR = 5
SKIP_OUTRANKED = ("outranked: more commits make a question than --count asks, and the "
                  "likelier to be kept as drafted are drafted")
SHORT_WORDS = 4

INTERCEPT = 0.2
TWO_MODULES = -0.6
THREE_OR_MORE = -1.3
FIVE_OR_MORE = -0.9
SHORT = -0.3
BEHAVIOUR = 0.2
CODE = -0.2
CODE_SPAN = 0.1
CONDITION = 0.4
DOTTED = -0.5

BEHAVIOUR_VERBS = frozenset({
    "fix", "allow", "make", "don't", "dont", "avoid", "handle", "support", "prevent",
    "ensure", "raise", "respect", "preserve", "accept"})
CODE_VERBS = frozenset({
    "update", "remove", "use", "refactor", "move", "rename", "bump", "clean", "cleanup",
    "drop", "improve", "simplify", "replace", "tidy", "reorganize", "restructure", "switch"})

_WORD = re.compile(r"[a-z']+")
#: A word that states when something happens: the subject names a situation a user meets.
_CONDITION = re.compile(r"\b(?:when|if|unless|while|after|before|during)\b", re.IGNORECASE)
#: A dotted name or number: a version, a module path or a file name (``1.2``, ``os.path``).
_DOTTED = re.compile(r"\w\.\w")
_SCOPE = re.compile(r"^[^\s:]{1,30}:\s+")
_INFLECTIONS = ("ing", "es", "ed", "s", "d")


def opening_verb(question: str) -> str:
    """The question's first word, lower case, after a ``scope:`` prefix, without an
    inflection when the stem is a listed verb (``Fixes`` → ``fix``, ``Handled`` →
    ``handle``, ``Using`` → ``use``, ``Dropped`` → ``drop``); ``""`` when it opens with no
    word."""
    match = _WORD.match(_SCOPE.sub("", question.strip(), count=1).lower())
    if match is None:
        return ""
    word = match.group(0)
    if word in BEHAVIOUR_VERBS or word in CODE_VERBS:
        return word
    for ending in _INFLECTIONS:
        if not word.endswith(ending):
            continue
        stem = word[:-len(ending)]
        # "using" → use, "dropped" → drop
        for verb in (stem, stem + "e", stem[:-1] if stem[-2:-1] == stem[-1:] else stem):
            if verb in BEHAVIOUR_VERBS or verb in CODE_VERBS:
                return verb
    return word


def features(question: str, grades: Mapping[str, int]) -> tuple[float, ...]:
    """The model's inputs, in :data:`WEIGHTS`' order: 1 (the intercept), two modules,
    three or more, five or more, a short subject, a behaviour verb, a code verb, a code
    span, a condition, a dotted name (each 0 or 1)."""
    modules = sum(1 for grade in grades.values() if grade > 0)
    verb = opening_verb(question)
    return (1.0, float(modules == 2), float(modules >= 3), float(modules >= 5),
            float(len(question.split()) <= SHORT_WORDS), float(verb in BEHAVIOUR_VERBS),
            float(verb in CODE_VERBS), float("`" in question),
            float(_CONDITION.search(question) is not None),
            float(_DOTTED.search(question) is not None))


WEIGHTS = (INTERCEPT, TWO_MODULES, THREE_OR_MORE, FIVE_OR_MORE, SHORT, BEHAVIOUR, CODE,
           CODE_SPAN, CONDITION, DOTTED)


def askability(question: str, grades: Mapping[str, int]) -> float:
    """The log-odds that a cold reviewer keeps ``question`` (with its ``grades``) as
    drafted: the sum of :data:`WEIGHTS` over :func:`features`."""
    return sum(w * x for w, x in zip(WEIGHTS, features(question, grades), strict=True))


def most_askable(scores: Sequence[float], count: int) -> list[int]:
    """The indices of the ``count`` highest ``scores`` (all when fewer), in their given
    order (the caller's, newest first): a tie goes to the earlier index."""
    best = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:max(count, 0)]
    return sorted(best)
