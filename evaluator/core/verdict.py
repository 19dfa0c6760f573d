"""What a reviewer reads first: which questions changed, the lead line, honest significance.

* :func:`lead_line` — ``❌ 1 question worse · 0 better · 17 unchanged — nDCG@5 0.786 →
  0.770``, from the questions' moves and their tally (:mod:`evaluator.core.moves`).
* :func:`significance` / :func:`significance_sentences` — what the paired sign-flip test
  says and what it *cannot* say: per-question changes are deterministic facts of these runs
  (a rerun gives the same numbers), so they are never called noise; the test is about how far
  the change generalises beyond these questions, and with ``m`` changed questions its p-value
  cannot go below ``2 / 2**m`` (:func:`evaluator.core.stats.min_p_value`).
* :func:`touched_questions` — the questions that grade a file the pull request changed.
* :func:`comment_fingerprint` — a short hash of every question's metrics and the verdict, so
  ``comment: on-change`` can tell whether anything moved since the last comment.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from evaluator.core.compare import BaselineComparison
from evaluator.core.moves import QuestionMove, Tally, tally
from evaluator.core.results import Results
from evaluator.core.stats import changes_needed, min_p_value


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def verdict_icon(*, passed: bool, worse: int = 0) -> str:
    """❌ a floor or gate missed; ⚠️ floors met but a question got worse; ✅ otherwise."""
    if not passed:
        return "❌"
    return "⚠️" if worse else "✅"


def lead_line(*, passed: bool, label: str, head_value: float | None,
              base_value: float | None = None, counts: Tally | None = None,
              n_questions: int = 0, missed: int = 0) -> str:
    """The comment's first line: verdict, counts, then the headline move.

    With a baseline: ``❌ 1 question worse · 0 better · 17 unchanged — nDCG@5 0.786 → 0.770``;
    without: ``✅ 18 questions · all floors met — nDCG@5 0.786``.
    """
    def num(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    if counts is not None:
        icon = verdict_icon(passed=passed, worse=counts.worse)
        return (f"{icon} {_plural(counts.worse, 'question')} worse · {counts.better} better · "
                f"{counts.unchanged} unchanged — {label} {num(base_value)} → {num(head_value)}")
    icon = verdict_icon(passed=passed)
    floors = "all floors met" if passed else f"{_plural(missed, 'floor')} missed"
    return f"{icon} {_plural(n_questions, 'question')} · {floors} — {label} {num(head_value)}"


# ----------------------------------------------------------------------------- significance


@dataclass(frozen=True)
class Significance:
    """The paired test's result with the facts needed to word it honestly.

    ``n`` paired questions, ``changed`` of them with a non-zero delta; ``floor`` the smallest
    p-value the exact test can reach with that many (``2 / 2**changed``); ``needed`` the fewest
    changed questions that could reach ``p < alpha``; ``detectable`` the normal-approximation
    smallest detectable change, given only when ``changed ≥ needed`` (below that no change is
    detectable at all, and quoting a figure would mislead).
    """

    metric: str
    n: int
    changed: int
    delta: float
    p_value: float
    significant: bool
    alpha: float
    floor: float
    needed: int
    detectable: float | None

    @property
    def reachable(self) -> bool:
        return self.changed >= self.needed


def significance(comparison: BaselineComparison, moves: Sequence[QuestionMove] | None = None,
                 *, alpha: float | None = None) -> Significance:
    """The primary metric's test from ``comparison`` (its moves and alpha unless given)."""
    primary = comparison.primary
    moves = comparison.moves if moves is None else moves
    alpha = comparison.alpha if alpha is None else alpha
    changed = sum(1 for m in moves if m.metric == primary.metric and m.delta is not None
                  and m.delta != 0.0)
    needed = changes_needed(alpha)
    return Significance(
        metric=primary.metric, n=primary.n, changed=changed, delta=primary.delta,
        p_value=primary.p_value, significant=primary.significant, alpha=alpha,
        floor=min_p_value(changed), needed=needed,
        detectable=comparison.detectable if changed >= needed else None)


def significance_sentences(sig: Significance, label: str) -> tuple[str, ...]:
    """The statistics paragraph: what the test says, then what it could have said."""
    if sig.n == 0:
        return ("No question is scored on both sides, so there is nothing to test.",)
    word = "significant" if sig.significant else "not significant"
    first = (f"Across these {_plural(sig.n, 'question')}, the change in {label} is {word} "
             f"({sig.changed} changed, p = {sig.p_value:.3f}).")
    out = [first]
    if sig.changed == 0:
        return (first,)
    if not sig.reachable:
        out.append(
            f"With only {_plural(sig.changed, 'changed question')} the exact test cannot go "
            f"below p = {sig.floor:.3f}, so no change can be significant at α = {sig.alpha:g}, "
            f"however large: that takes at least {sig.needed} changed questions.")
    elif sig.detectable is not None:
        tail = ": add questions to detect smaller changes" if sig.detectable > 0.1 else ""
        out.append(f"With these questions and this spread of per-question changes, a change in "
                   f"{label} smaller than about {sig.detectable:.2f} would not be significant"
                   f"{tail}.")
    if not sig.significant and sig.p_value < sig.alpha:
        out.append(f"p is below {sig.alpha:g} but the mean change ({sig.delta:+.3f}) is "
                   "smaller than the minimum effect worth reporting.")
    return tuple(out)


# ----------------------------------------------------------------------------- touched files


@dataclass(frozen=True)
class TouchedQuestion:
    """A question that grades (≥ 1) a file the pull request changed, and how it moved."""

    id: str
    shape: str
    question: str
    files: tuple[tuple[str, int], ...]  # (path relative to the evaluated root, grade)
    move: QuestionMove | None  # None without a baseline or when the question is new


def root_relative(files: Iterable[str], root: str) -> tuple[str, ...]:
    """Repository paths → paths relative to the evaluated ``root`` (others dropped)."""
    prefix = PurePosixPath(root.strip() or ".")
    out = []
    for name in files:
        path = PurePosixPath(name)
        if str(prefix) in ("", "."):
            out.append(str(path))
            continue
        try:
            out.append(str(path.relative_to(prefix)))
        except ValueError:
            continue
    return tuple(dict.fromkeys(out))


def touched_questions(head: Results, changed_files: Iterable[str],
                      moves: Sequence[QuestionMove] = ()) -> tuple[TouchedQuestion, ...]:
    """The head's questions grading any of ``changed_files`` (root-relative), worst first."""
    changed = set(changed_files)
    by_id = {m.id: m for m in moves}
    order = {m.id: i for i, m in enumerate(moves)}
    out = []
    for row in head.queries:
        files = tuple(sorted(((m, g) for g, ms in row.expected.items() if g >= 1 for m in ms
                              if m in changed), key=lambda fg: (-fg[1], fg[0])))
        if files:
            out.append(TouchedQuestion(row.id, row.shape, row.question, files, by_id.get(row.id)))
    return tuple(sorted(out, key=lambda t: (order.get(t.id, len(order)), t.id)))


# ----------------------------------------------------------------------------- fingerprint


def _rounded(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, 6)


def comment_fingerprint(head: Results, *, passed: bool, base: Results | None = None,
                        comparison: BaselineComparison | None = None) -> str:
    """16 hex digits over every question's metrics (head, and the baseline's when given as
    results or through ``comparison``'s per-question moves) and the verdict: equal
    fingerprints mean the comment would report the same facts."""
    def rows(results: Results | None) -> list[object]:
        if results is None:
            return []
        return [[q.id, sorted((k, _rounded(v)) for k, v in q.metrics.items())]
                for q in sorted(results.queries, key=lambda q: q.id)]

    moves = [[m.id, _rounded(m.before), _rounded(m.after)]
             for m in sorted(comparison.moves, key=lambda m: m.id)] if comparison else []
    doc = json.dumps({"passed": passed, "head": rows(head), "base": rows(base),
                      "moves": moves}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()[:16]


# ----------------------------------------------------------------------------- step outputs


def step_outputs(*, passed: bool, comparison: BaselineComparison | None,
                 comment_id: int | None = None) -> dict[str, str]:
    """The step outputs of the verdict: ``verdict`` (pass|fail), ``questions-worse``,
    ``questions-better``, ``questions-unchanged``, ``primary-delta`` (the primary metric's
    paired mean change, 4 decimals; empty without a baseline) and ``comment-id`` (empty when
    no comment was written)."""
    out = {"verdict": "pass" if passed else "fail", "comment-id": str(comment_id or "")}
    if comparison is None:
        return out | {"questions-worse": "", "questions-better": "",
                      "questions-unchanged": "", "primary-delta": ""}
    counts = tally(comparison.moves)
    return out | {"questions-worse": str(counts.worse), "questions-better": str(counts.better),
                  "questions-unchanged": str(counts.unchanged),
                  "primary-delta": f"{comparison.primary.delta:.4f}"}


# ----------------------------------------------------------------------------- annotations


_JSON_ID = re.compile(r'"id"\s*:\s*("(?:[^"\\]|\\.)*")')
_YAML_ID = re.compile(r"^\s*(?:-\s+)?id\s*:\s*(.+?)\s*(?:#.*)?$")


def question_lines(text: str) -> dict[str, int]:
    """1-based line of each question's ``id`` in a ground-truth file (JSON or YAML text), for
    an annotation on the line that defines the question. The first occurrence wins; ids the
    scan cannot read are simply absent (the annotation then names the file only)."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.splitlines()[:_MAX_SCAN_LINES], start=1):
        for match in _JSON_ID.finditer(line):
            try:
                value = json.loads(match.group(1))
            except ValueError:
                continue
            if isinstance(value, str):
                lines.setdefault(value, number)
        yaml = _YAML_ID.match(line)
        if yaml and '"id"' not in line:
            raw = yaml.group(1)
            if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
                raw = raw[1:-1]
            lines.setdefault(raw, number)
    return lines


_MAX_SCAN_LINES = 200_000


def worse_annotations(comparison: BaselineComparison, lines: dict[str, int]
                      ) -> tuple[tuple[str, int | None, str], ...]:
    """``(question id, line or None, message)`` for each question that got worse."""
    out = []
    for move in comparison.moves:
        if move.direction != "worse":
            continue
        where = ""
        if move.module is not None:
            where = (f"; {move.module} rank {_rank_text(move.rank_before)} → "
                     f"{_rank_text(move.rank_after)}")
        before = "n/a" if move.before is None else f"{move.before:.3f}"
        after = "n/a" if move.after is None else f"{move.after:.3f}"
        out.append((move.id, lines.get(move.id),
                    f"question {move.id} got worse: {move.metric} {before} → {after}{where}"))
    return tuple(out)


def _rank_text(rank: int | None) -> str:
    return "not retrieved" if rank is None else f"#{rank}"
