"""The judge's self-check on a suite: does it tell right source from wrong source here, and
does it refuse false statements of the suite's own facts?

Definition: for every query, two contexts are scored against its gold facts —

* **right**: the full text of its modules of grade ≥ 2, best grade first (then by path);
* **wrong**: the full text of one grade-3 module of *another* query that this query grades
  0 (or leaves ungraded): the first such module of the next query in file order that has
  one, wrapping around.

``separation`` = mean score on right − mean score on wrong, over the queries that have
both (a query without a grade ≥ 2 module, or without any wrong module, is skipped and
counted in ``skipped``; so is a query without gold facts, which is scored for ranking
only).

Beside it, like the product sees the judge:

* **false versions**: each gold fact is made false deterministically by
  :func:`false_versions` (a number changed, two names swapped, a negation added or
  removed) and the false versions are judged on the *right* context; ``false_credit`` =
  credited false versions / false versions;
* **retrieved**: the mean faithfulness of the contexts the evaluated system actually
  retrieved (given by the caller, :func:`with_retrieved`).

The check warns when separation < :data:`MIN_SEPARATION`, when the wrong mean is above
:data:`MAX_WRONG` or when false versions are credited above :data:`MAX_FALSE_CREDIT`: the
faithfulness figures and floor then mean little for the suite.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from evaluator.core.groundtruth import GroundTruth, Query
from evaluator.core.judgeread import read_fact

MIN_SEPARATION = 0.8
MAX_WRONG = 0.1
MAX_FALSE_CREDIT = 0.1


@dataclass(frozen=True)
class CheckPair:
    """The two contexts of one query: its right modules and another query's module."""

    query: Query
    right_modules: tuple[str, ...]
    wrong_module: str
    wrong_from: str


@dataclass(frozen=True)
class CheckRow:
    query_id: str
    right: float
    wrong: float
    wrong_module: str
    wrong_from: str
    false_versions: int = 0
    false_credited: int = 0


@dataclass(frozen=True)
class JudgeCheck:
    """The self-check's outcome (see the module docstring)."""

    rows: tuple[CheckRow, ...]
    skipped: tuple[str, ...]
    right_mean: float | None
    wrong_mean: float | None
    separation: float | None
    false_credit: float | None = None
    retrieved_mean: float | None = None

    @property
    def problems(self) -> tuple[str, ...]:
        """What the check found wrong, each as a phrase (empty when nothing)."""
        if self.separation is None:
            return ()
        out = []
        if self.separation < MIN_SEPARATION:
            out.append(f"separates right from wrong source by only {self.separation:.2f} "
                       f"(below {MIN_SEPARATION})")
        if self.wrong_mean is not None and self.wrong_mean > MAX_WRONG:
            out.append(f"scores another question's source {self.wrong_mean:.2f} "
                       f"(above {MAX_WRONG})")
        if self.false_credit is not None and self.false_credit > MAX_FALSE_CREDIT:
            out.append(f"credits {self.false_credit:.2f} of the false versions of the facts "
                       f"(above {MAX_FALSE_CREDIT})")
        return tuple(out)

    @property
    def warning(self) -> str | None:
        """The warning to show, or ``None`` when the judge passes the check."""
        if self.separation is None:
            return ("the judge self-check found no query with gold facts, a grade ≥ 2 module "
                    "and another query's grade-3 module; the faithfulness floor cannot be "
                    "checked")
        if not self.problems:
            return None
        return (f"the judge {'; '.join(self.problems)} on this suite: the faithfulness "
                "figures and floor mean little here; anchor the gold facts with evidence "
                "or rewrite them as sentences the source states")

    @property
    def sentence(self) -> str:
        if self.separation is None:
            return "the judge self-check had no query to check"
        text = (f"the judge separates right from wrong source by {self.separation:.2f} on "
                f"this suite ({self.right_mean:.2f} on the right modules, "
                f"{self.wrong_mean:.2f} on another question's)")
        total = sum(r.false_versions for r in self.rows)
        if self.false_credit is not None:
            credited = sum(r.false_credited for r in self.rows)
            text += f"; it credits {credited} of {total} false versions of the facts"
        if self.retrieved_mean is not None:
            text += f"; the retrieved contexts score {self.retrieved_mean:.2f}"
        return text


def check_pairs(ground_truth: GroundTruth) -> tuple[list[CheckPair], list[str]]:
    """Each query's right modules and wrong module; the ids of the queries skipped."""
    queries = ground_truth.queries
    pairs: list[CheckPair] = []
    skipped: list[str] = []
    for i, query in enumerate(queries):
        right = tuple(sorted((m for m, g in query.grades.items() if g >= 2),
                             key=lambda m: (-query.grades[m], m)))
        wrong: tuple[str, str] | None = None
        for step in range(1, len(queries)):
            other = queries[(i + step) % len(queries)]
            found = [m for m in other.modules_with_grade(3) if query.grade(m) == 0]
            if found:
                wrong = (found[0], other.id)
                break
        if not right or wrong is None or not query.gold_facts:
            skipped.append(query.id)
            continue
        pairs.append(CheckPair(query, right, wrong[0], wrong[1]))
    return pairs, skipped


_AUXILIARY = re.compile(
    r"\b(is|are|was|were|can|could|will|would|does|do|did|has|have|had|must|should|may)"
    r"(?:(?<=can)(not)\b|\b(\s+(?:not|never)\b)?)", re.IGNORECASE)
_DIGITS = re.compile(r"(?<![\w.])(\d+)(?![\w.]*[^\W\d_])")


def false_versions(fact: str) -> tuple[str, ...]:
    """Deterministic false versions of a fact, each differing from it in one way: its first
    number changed (n → n + 1), its first two distinct names swapped, and its first
    auxiliary verb negated ("is" → "is not") or un-negated ("is not" → "is"). A fact none
    of these applies to gets "It is not true that …" instead."""
    out: list[str] = []
    number = _DIGITS.search(fact)
    if number:
        out.append(fact[:number.start()] + str(int(number.group(1)) + 1) + fact[number.end():])
    names = [n for n in read_fact(fact).names if n]
    if len(names) >= 2 and names[0] != names[1]:
        a, b = names[0], names[1]
        swapped = re.sub(rf"(?<!\w){re.escape(a)}(?!\w)|(?<!\w){re.escape(b)}(?!\w)",
                         lambda m: b if m.group(0) == a else a, fact)
        if swapped != fact:
            out.append(swapped)
    aux = _AUXILIARY.search(fact)
    if aux:
        negated = aux.group(2) or aux.group(3)
        flipped = aux.group(1) if negated else f"{aux.group(1)} not"
        out.append(fact[:aux.start()] + flipped + fact[aux.end():])
    if not out:
        out.append(f"It is not true that {fact[:1].lower()}{fact[1:]}")
    return tuple(dict.fromkeys(v for v in out if v != fact))


def judge_check(ground_truth: GroundTruth, texts: Mapping[str, str],
                score: Callable[[Query, str], float],
                credit: Callable[[str, str], bool] | None = None) -> JudgeCheck:
    """Run the self-check: ``texts`` maps module paths to their text (a module missing from
    it reads as empty), ``score`` is the judge (context → faithfulness), ``credit`` (when
    given) whether the judge credits one fact on a context, for the false versions."""
    pairs, skipped = check_pairs(ground_truth)
    rows = []
    for pair in pairs:
        right = "\n\n".join(texts.get(m, "") for m in pair.right_modules)
        # An anchored fact's verdict is its span's presence, whatever its words say: only
        # the unanchored facts' false versions test the judge.
        versions = [v for i, fact in enumerate(pair.query.gold_facts)
                    if pair.query.evidence_of(i) is None for v in false_versions(fact)]
        credited = sum(credit(v, right) for v in versions) if credit is not None else 0
        rows.append(CheckRow(pair.query.id, score(pair.query, right),
                             score(pair.query, texts.get(pair.wrong_module, "")),
                             pair.wrong_module, pair.wrong_from,
                             len(versions) if credit is not None else 0, credited))
    return summarise(rows, skipped)


def summarise(rows: Sequence[CheckRow], skipped: Sequence[str], *,
              retrieved_mean: float | None = None) -> JudgeCheck:
    if not rows:
        return JudgeCheck((), tuple(skipped), None, None, None, None, retrieved_mean)
    right = math.fsum(r.right for r in rows) / len(rows)
    wrong = math.fsum(r.wrong for r in rows) / len(rows)
    total = sum(r.false_versions for r in rows)
    false = sum(r.false_credited for r in rows) / total if total else None
    return JudgeCheck(tuple(rows), tuple(skipped), right, wrong, right - wrong, false,
                      retrieved_mean)


def with_retrieved(check: JudgeCheck, faithfulness: Sequence[float]) -> JudgeCheck:
    """The check with the mean faithfulness of the retrieved contexts (none: unchanged)."""
    if not faithfulness:
        return check
    return replace(check, retrieved_mean=math.fsum(faithfulness) / len(faithfulness))


def modules_needed(ground_truth: GroundTruth) -> tuple[str, ...]:
    """Every module the self-check reads (to load their text once)."""
    pairs, _ = check_pairs(ground_truth)
    return tuple(sorted({m for p in pairs for m in (*p.right_modules, p.wrong_module)}))
