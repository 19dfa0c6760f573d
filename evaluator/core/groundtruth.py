"""The ground-truth model (``retrieval_queries.json``, the N-15 format): its rules, queries
and text checks (reading and validating a file: :mod:`evaluator.core.groundtruth_check`).

"N-15" is the name of the ground-truth format this evaluator reads (graded relevance per
module, 2–4 gold facts, every query grading every module); messages spell out the rule they
refer to rather than the name.

A ground-truth file is ``{"queries": [...]}`` (JSON or YAML; unknown top-level keys are
ignored). Each query has:

* ``id`` — a unique, non-empty string;
* ``question`` — the non-empty question asked of the index;
* ``shape`` — ``focused`` (one defining module), ``cross-file`` (the answer spans modules)
  or ``identity`` (what/where is X); other labels are allowed and reported as their own group;
* ``relevance_grades`` — ``{module path: grade}``, grade an integer 0–3 (3 = defines the
  answer, 2 = needed, 1 = related, 0 = not relevant); at least one grade ≥ 1. The N-15
  "complete coverage" rule asks every query to grade every module; a module that is
  ungraded for a query counts as grade 0;
* ``gold_facts`` — 2–4 short facts the retrieved context should contain. Each is a plain
  string (judged by its words), or an *anchored* fact ``{"fact": "<the statement>",
  "evidence": "<a verbatim span of the source: one or a few lines>"}`` (no other keys),
  which is supported exactly when the retrieved context holds the span, compared with
  whitespace normalised (:func:`normalize_evidence`). Absent or empty makes the question
  *retrieval-only*: it is scored for ranking, and faithfulness is neither computed nor
  floored for it;
* ``source`` (optional) — ``{commit, subject}``: the commit a question drafted from the
  repository's history comes from (``init --from-history``), with ``pull_request`` (its
  number) and ``title`` when the question is a merged pull request's title.

A question may span lines (a pull request's description): its whitespace, newlines included,
is normalised to single spaces, so it reads as one paragraph; other control characters are
errors.

Validation reports *every* problem at once. Errors stop the evaluation; warnings are
reported and the evaluation goes on (``strict`` turns incomplete coverage into an error).
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Severity = Literal["error", "warning"]

KNOWN_SHAPES: tuple[str, ...] = ("focused", "cross-file", "identity")
#: The shape mix ``init`` drafts by default (weights).
DEFAULT_MIX: Mapping[str, float] = {"focused": 0.4, "cross-file": 0.35, "identity": 0.25}
MIN_GRADE = 0
MAX_GRADE = 3
MIN_FACTS = 2
MAX_FACTS = 4
QUERY_FIELDS: tuple[str, ...] = ("id", "question", "shape", "relevance_grades")
OPTIONAL_QUERY_FIELDS: tuple[str, ...] = ("gold_facts", "source", "notes", "review")
MAX_SUBJECT_CHARS = 300
#: The keys of an anchored fact, ``{"fact": ..., "evidence": ...}``.
FACT_KEYS: tuple[str, ...] = ("fact", "evidence")
#: A span shorter than this (whitespace normalised) occurs in almost any source.
MIN_EVIDENCE_CHARS = 8


@dataclass(frozen=True)
class Problem:
    """One validation finding, located by file, query id and field."""

    severity: Severity
    message: str
    file: str
    query_id: str | None = None
    field: str | None = None
    line: int | None = None

    def render(self) -> str:
        return f"{self.severity}: {self.located()}"

    def located(self) -> str:
        """Where and what, without the severity (a workflow annotation carries that)."""
        where = self.file + (f":{self.line}" if self.line else "")
        if self.query_id is not None:
            where += f": query {self.query_id!r}"
        if self.field is not None:
            where += f", field {self.field}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class Query:
    """One ground-truth question; ``grades`` holds every graded module (POSIX paths)."""

    id: str
    question: str
    shape: str
    grades: Mapping[str, int]
    gold_facts: tuple[str, ...]
    #: Per fact, its evidence span as written (``None`` for an unanchored fact); empty when
    #: no fact is anchored. Compare spans through :func:`normalize_evidence`.
    evidence: tuple[str | None, ...] = ()

    def evidence_of(self, index: int) -> str | None:
        """The evidence span of fact ``index`` as written, or ``None`` when unanchored."""
        return self.evidence[index] if index < len(self.evidence) else None

    @property
    def anchored(self) -> int:
        """How many of the query's facts carry evidence."""
        return sum(e is not None for e in self.evidence)

    @property
    def retrieval_only(self) -> bool:
        """A question without gold facts: scored for ranking only (no faithfulness)."""
        return not self.gold_facts

    def grade(self, module: str) -> int:
        """The grade of ``module`` for this query; ungraded modules count as 0."""
        return self.grades.get(module, 0)

    def modules_with_grade(self, grade: int) -> tuple[str, ...]:
        return tuple(sorted(m for m, g in self.grades.items() if g == grade))


@dataclass(frozen=True)
class GroundTruth:
    """A validated ground-truth file."""

    source: str
    queries: tuple[Query, ...]
    draft: bool = False
    problems: tuple[Problem, ...] = field(default=())

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == "warning")

    @property
    def shapes(self) -> tuple[str, ...]:
        """Shapes in display order: the documented ones first, then other labels sorted."""
        return shape_order(q.shape for q in self.queries)

    def modules(self) -> frozenset[str]:
        return frozenset(m for q in self.queries for m in q.grades)


def shape_order(labels: Iterable[str]) -> tuple[str, ...]:
    """The distinct ``labels`` in display order: the documented shapes first, then the
    others sorted."""
    present = set(labels)
    return tuple(s for s in KNOWN_SHAPES if s in present) + tuple(
        sorted(present - set(KNOWN_SHAPES)))


#: The largest ground-truth file read (10,000 questions of full grades fit in a few MB).
MAX_GROUND_TRUTH_BYTES = 16 * 1024 * 1024

# Control characters, line separators and the bidirectional embeddings, overrides and
# isolates that reorder how text is shown ("Trojan Source", CVE-2021-42574).
_CONTROL = re.compile(r"[\x00-\x1f\x7f\u0085\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (newline, tab, escape, line separators, a
    bidirectional override or isolate)."""
    return bool(_CONTROL.search(text))


def unnameable(path: str) -> bool:
    """Whether a file's path is one no ground truth can name: it holds a control character,
    or a backslash (:func:`normalize_module` reads one as a folder separator)."""
    return has_control(path) or "\\" in path


_LINE_SPACE = re.compile(r"[ \t\n\r\x0b\x0c\x85\u2028\u2029]+")


def one_paragraph(text: str) -> str:
    """``text`` with its runs of spaces, tabs and line breaks as single spaces, stripped:
    how a multi-line question (a pull request's description) is read. Other control
    characters (an escape, a NUL) stay, for :func:`has_control` to refuse."""
    return _LINE_SPACE.sub(" ", text).strip()


def normalize_evidence(text: str) -> str:
    """An evidence span (or a context) as compared: Unicode NFC, every run of whitespace
    one space, stripped. So a span written on one line matches the same code split over
    lines or indented otherwise, and ``é`` typed precomposed matches a decomposed one."""
    return " ".join(unicodedata.normalize("NFC", text).split())


# Whitespace is allowed in a span (it is normalised away); other control characters are not.
#: Control characters an evidence span may not hold (tabs and newlines it may).
EVIDENCE_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def normalize_module(path: str) -> str | None:
    """A module path as POSIX, relative to the indexed root; ``None`` when it escapes it.

    Backslashes become slashes, ``./`` and duplicate slashes go, ``a/../b`` folds, and the
    text is put in Unicode NFC (so ``café.py`` typed on macOS matches the checkout's).
    Absolute paths, paths that climb out of the root (``../x``) and paths with control
    characters are rejected.
    """
    norm = unicodedata.normalize("NFC", path.strip().replace("\\", "/"))
    if not norm or has_control(norm):
        return None
    # Fold to a fixed point: folding ``x/..`` can expose whitespace (``x/../ b``), and
    # stripping it can expose more to fold, so one pass would not be idempotent.
    while True:
        folded = posixpath.normpath(norm).strip()
        if folded == norm:
            break
        norm = folded
    # Checked after folding, so ``x/../C:/y`` and ``x/../ /y`` cannot slip through.
    if (norm in ("", ".", "..") or norm.startswith(("/", "../"))
            or (len(norm) > 1 and norm[1] == ":")):
        return None
    return norm


#: Words too common in code for a fact made of them alone to tell contexts apart.
GENERIC_WORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "has", "have", "in",
    "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "with", "api",
    "app", "arg", "args", "attr", "bool", "call", "class", "cli", "code", "config", "data",
    "def", "default", "dict", "error", "errors", "false", "file", "files", "func",
    "function", "get", "id", "import", "init", "int", "item", "items", "key", "kwargs",
    "list", "main", "method", "module", "name", "none", "obj", "object", "option",
    "options", "param", "params", "path", "return", "run", "self", "set", "str", "string",
    "test", "true", "type", "util", "utils", "value", "values", "var",
))


def fact_problem(fact: str) -> str | None:
    """Why the faithfulness judge cannot use ``fact`` (``None`` when it can).

    The judge (NeuralMind's ``ragas.fact_recall``) counts a fact as found when every one of
    its lowercase alphanumeric tokens occurs *somewhere* in the retrieved context, as a
    substring. So a fact without letters or digits is never found, one shorter than 2
    characters is ignored, and one made only of short or everyday words is found in almost
    any context and measures nothing.
    """
    tokens = re.findall(r"[a-z0-9]+", fact.lower())
    if len(fact.strip()) < 2:
        return "is shorter than 2 characters, so the judge ignores it"
    if not tokens:
        return "has no letters or digits, so the judge can never find it"
    if all(len(t) <= 3 or t in GENERIC_WORDS for t in tokens):
        return ("is made only of short or generic words, which occur in almost any "
                "retrieved context, so finding it says nothing; quote something specific "
                "to the answer (a signature, a constant, a docstring clause)")
    return None


def parse_mix(text: str) -> dict[str, float]:
    """``focused=5,cross-file=4,identity=3`` (weights or counts; missing shapes get 0)."""
    out: dict[str, float] = dict.fromkeys(KNOWN_SHAPES, 0.0)
    for part in text.split(","):
        name, sep, value = part.partition("=")
        name = name.strip()
        if not sep or name not in KNOWN_SHAPES:
            raise ValueError(f"{part.strip()!r}: write shape=weight with a shape among "
                             f"{', '.join(KNOWN_SHAPES)}")
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{part.strip()!r}: the weight must be a number") from None
        if number < 0:
            raise ValueError(f"{part.strip()!r}: the weight cannot be negative")
        out[name] = number
    if sum(out.values()) <= 0:
        raise ValueError("at least one shape needs a positive weight")
    return out
