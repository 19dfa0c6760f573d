"""``init`` and review: draft a ground-truth file a maintainer can accept, and show a file
against what NeuralMind retrieves (the pieces; :func:`evaluator.authoring_commands.run_init`
and :func:`evaluator.authoring_commands.run_review` put them together).

``init`` works over the module universe (:mod:`evaluator.core.universe`): it builds the
NeuralMind index of the checkout (with progress), reads the universe's code
(:mod:`evaluator.drafting`), drafts exactly ``--count`` questions in the shape mix (or says,
per missing slot, why fewer), grades every module of the universe (3/2 from the code, 1 for
neighbours in the call graph and for the modules NeuralMind ranks highest), writes one
reason per non-zero grade and the modules NeuralMind retrieved into each question's
``review`` section, and marks the file ``"draft": true`` (the evaluator warns while it is).

Review (``init --review FILE``) asks NeuralMind each question of a ground-truth file and
prints its top modules against the grades: a module retrieved high but graded 0 may be
under-graded; a module graded 2 or 3 that is not retrieved is a miss to look at.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluator.codemap import CodeMap, build_code_map
from evaluator.core.askability import POOL_FACTOR, SKIP_OUTRANKED, askability, most_askable
from evaluator.core.commit_facts import evidence_facts, ranked_facts
from evaluator.core.commit_filters import Judged
from evaluator.core.commit_grades import regraded
from evaluator.core.commit_topics import SKIP_REPEAT, SKIP_TWO_TOPICS, repeats, two_topics
from evaluator.core.commit_wording import wording_reason
from evaluator.core.commits import (
    SKIP_GIVEAWAY,
    Commit,
    HistoryCandidate,
    mine,
    one_line,
    parse_log,
    pull_request,
)
from evaluator.core.giveaway import AnswerNames, answer_names, options_stated, overlaps
from evaluator.core.groundtruth import MAX_SUBJECT_CHARS, GroundTruth
from evaluator.core.universe import Universe
from evaluator.drafting import SHAPES, Candidate, Gate, Plan, all_candidates, anchored, plan
from evaluator.errors import InputError
from evaluator.git_repo import MAX_HISTORY_COMMITS
from evaluator.history_changes import read_change
from evaluator.progress import HEARTBEAT_S, Progress
from evaluator.snapshot import read_source

# ----------------------------------------------------------------------------- init


def _named(question: str) -> set[str]:
    """The code names a drafted question is about (``Cart.checkout()`` → ``checkout``)."""
    names = set()
    for quoted in re.findall(r"`([^`]+)`", question):
        if not quoted.endswith(".py"):
            names.add(quoted.removesuffix("()").rsplit(".", 1)[-1])
    return names


def _mentions(identifiers: frozenset[str], names: set[str]) -> str | None:
    return next((n for n in sorted(names) if n in identifiers), None)


def _retrieval_grades(candidate: Candidate, ranked: Sequence[str], subsystem: set[str],
                      identifiers: Mapping[str, frozenset[str]], *,
                      top: int = 3) -> tuple[dict[str, int], dict[str, str]]:
    """Grade 1 for a module NeuralMind ranks in its ``top`` for the question that is in the
    subsystem of a module graded 2 or 3 (an import between them) *and* whose code (not its
    docstrings) uses a name the question is about; other retrieved modules are only listed
    for review."""
    grades = dict(candidate.grades)
    reasons = dict(candidate.reasons)
    names = set(candidate.about) or _named(candidate.question)
    for rank, module in enumerate(ranked[:top], start=1):
        if module in grades or module not in subsystem:
            continue
        name = _mentions(identifiers.get(module, frozenset()), names)
        if name is not None:
            grades[module] = 1
            reasons[module] = (f"related: NeuralMind ranks it #{rank} for this question, it "
                               f"imports or is imported by the answer's module and it uses "
                               f"`{name}`; keep 1 if the answer touches it, else set 0")
    return grades, reasons


def _anchored_facts(candidate: Candidate, grades: Mapping[str, int],
                    code: CodeMap | None) -> list[str | dict[str, str]]:
    """The candidate's facts, each with the source line(s) it was quoted from as its
    evidence, looked for in the question's grade >= 2 modules (the defining ones first)."""
    if code is None:
        return list(candidate.facts)
    needed = sorted((m for m, g in grades.items() if g >= 2 and m in code.modules),
                    key=lambda m: (-grades[m], m))
    sources = [code.modules[m].source for m in needed]
    return [anchored(fact, sources) for fact in candidate.facts]


def draft_document(chosen: Sequence[Candidate], universe: Universe, *,
                   retrieved: Mapping[int, Sequence[str]], root_name: str,
                   code: CodeMap | None = None) -> dict[str, Any]:
    """The draft ground-truth document: every module of the universe graded per question,
    each non-zero grade with its reason and NeuralMind's top modules under ``review``."""
    rows: list[dict[str, Any]] = []
    counters: dict[str, int] = {}
    for n, candidate in enumerate(chosen):
        ranked = retrieved.get(n, ())
        subsystem: set[str] = set()
        if code is not None:
            for module, grade in candidate.grades.items():
                if grade >= 2:
                    subsystem |= code.subsystem(module)
        identifiers = {m: info.identifiers for m, info in code.modules.items()} if code \
            else {}
        grades, reasons = _retrieval_grades(candidate, ranked, subsystem, identifiers)
        group = "history" if candidate.source else candidate.shape
        counters[group] = counters.get(group, 0) + 1
        row: dict[str, Any] = {
            "id": f"{group}-{counters[group]:02d}",
            "question": candidate.question,
            "shape": candidate.shape,
            "relevance_grades": {m: grades.get(m, 0) for m in universe.modules},
            # A history fact is a line the commit added: anchored to itself as evidence.
            "gold_facts": [{"fact": f, "evidence": f} for f in candidate.facts]
            if candidate.source else _anchored_facts(candidate, grades, code),
        }
        if candidate.source:
            row["source"] = dict(candidate.source)
        review: dict[str, Any] = {
            "grades": {m: f"{grades[m]}: {reasons[m]}" for m in
                       sorted(grades, key=lambda m: (-grades[m], m)) if grades[m] > 0},
        }
        if ranked:
            review["retrieved"] = [f"#{i} {m} (graded {grades.get(m, 0)})"
                                   for i, m in enumerate(ranked[:5], start=1)]
        row["review"] = review
        rows.append(row)
    return {
        "description": (f"Drafted by retrieval-eval init for {root_name}: check each "
                        "question reads as a teammate would ask it, accept or change the "
                        "grades (review.grades says why each is there; review.retrieved is "
                        "what NeuralMind found), check the facts, then remove \"draft\". "
                        f"Module universe: {universe.summary()}."),
        "draft": True,
        "queries": rows,
    }


def draft_plan(root: Path, universe: Universe, count: int, mix: Mapping[str, float], *,
               progress: Progress) -> tuple[CodeMap, Plan]:
    """Read the universe's code and pick ``count`` questions in the mix (with progress)."""
    code = build_code_map(root, universe.modules)
    symbols = sum(len(m.symbols) for m in code.modules.values())
    progress(f"drafting: read {len(code.modules)} Python modules: {symbols} functions, "
             f"classes and methods, {len(code.edges)} calls between modules, "
             f"{len(code.exports)} exported names, {len(code.entry_points)} entry points")
    gate = Gate(code)
    candidates = all_candidates(code, gate)
    drafted = plan(candidates, count, mix)
    shapes = Counter(c.shape for c in drafted.chosen)
    skipped = ", ".join(f"{n} {reason}" for reason, n in gate.skipped.most_common())
    progress(f"drafting: {len(drafted.chosen)}/{count} questions ("
             + ", ".join(f"{shapes[s]} {s}" for s in SHAPES) + ") from "
             + ", ".join(f"{len(candidates[s])} {s}" for s in SHAPES) + " candidates; "
             + f"skipped: {skipped or 'none'}")
    if not drafted.chosen:
        raise InputError(f"nothing to draft questions from in {root}: no documented public "
                         "Python functions or classes in the module universe",
                         hint="write the ground truth by hand (see docs/ground-truth.md), or widen "
                              "the universe with include")
    return code, drafted


def ask_all(index: Any, chosen: Sequence[Candidate], universe: Universe, *,
            progress: Progress) -> dict[int, tuple[str, ...]]:
    """NeuralMind's ranking (within the universe) for every drafted question."""
    retrieved = {n: universe.filter_ranking(index.ask(c.question).ranked_modules)
                 for n, c in enumerate(chosen)}
    progress(f"review: asked NeuralMind the {len(chosen)} questions")
    return retrieved


# ----------------------------------------------------------------------------- history



def _history_reason(found: HistoryCandidate, module: str, surviving: Mapping[str, int]) \
        -> str:
    total = sum(found.lines.values())
    then = found.paths_then[module]
    moved = f" (then {then})" if then != module else ""
    role = "defines the change" if found.grades[module] == 3 else "needed: also changed"
    return (f"{role}: commit {found.commit.sha[:12]} changed {found.lines[module]} of its "
            f"{total} changed module line(s) here{moved}, "
            f"{surviving.get(module, 0)} added code line(s) of them still here")


def history_candidate(found: HistoryCandidate, judged: Judged,
                      texts: Mapping[str, str | None]) -> Candidate:
    """The draft question of a mined commit whose change was judged worth asking
    (:func:`evaluator.history_changes.read_change`): grade 3 for the modules holding most
    of its surviving added code lines, 2 for the rest, with a reason each, and up to 4
    evidence facts: lines the commit added (not moved, not version markers) that still
    exist, word for word, in today's file (the files graded 3 first); none makes it a
    retrieval-only question. ``found`` is already :func:`regraded`; ``texts`` holds each
    graded module's text today."""
    groups: list[tuple[int, list[str]]] = []
    for module in sorted(found.grades, key=lambda m: (-found.grades[m], -found.lines[m], m)):
        lines = [one_line(text) for text in judged.fact_lines.get(module, ())]
        if lines:
            groups.append((found.grades[module], evidence_facts(
                lines, (texts.get(module) or "").splitlines(), about=found.question)))
    facts = ranked_facts(groups, about=found.question)
    facts = facts if len(facts) >= 2 else []
    return Candidate(shape=found.shape, question=found.question, grades=dict(found.grades),
                     reasons={m: _history_reason(found, m, judged.surviving)
                              for m in found.grades},
                     facts=tuple(facts), key=f"commit:{found.commit.sha}",
                     source=_source(found.commit))


def _source(commit: Commit) -> dict[str, str | int]:
    """``source``: the commit and its subject, and a merged pull request's number and
    title when the question is that title."""
    out: dict[str, str | int] = {"commit": commit.sha,
                                 "subject": commit.subject[:MAX_SUBJECT_CHARS]}
    pull = pull_request(commit)
    if pull is not None:
        out["pull_request"] = pull[0]
        out["title"] = pull[1][:MAX_SUBJECT_CHARS]
    return out


def _grade3(grades: Mapping[str, int]) -> frozenset[str]:
    return frozenset(m for m, g in grades.items() if g == 3)


def _judged_question(root: Path, found: HistoryCandidate, judged: Judged, *,
                     names: dict[str, AnswerNames], texts: dict[str, str | None],
                     asked: Sequence[tuple[str, frozenset[str]]],
                     ) -> tuple[HistoryCandidate, str | None]:
    """``found`` regraded by its judged change, and why it asks no question (``None``: it
    does); reads each graded module's text and names into ``texts`` and ``names`` once."""
    if judged.reason is not None:
        return found, judged.reason
    found = regraded(found, judged.weights, judged.ungraded)
    for module in found.grades:
        if module not in names:
            texts[module] = read_source(root, module)
            names[module] = answer_names(module, texts[module])
    # A subject that names its answer's file or symbol, or an option the change adds, is
    # found by keyword search.
    if overlaps(found.question, found.grades.items(), names).names_answer or \
            options_stated(found.question, judged.options):
        return found, SKIP_GIVEAWAY
    if repeats(found.question, _grade3(found.grades), asked):
        return found, SKIP_REPEAT
    if two_topics(found.question, {m: texts[m] for m in found.grades}):
        return found, SKIP_TWO_TOPICS
    return found, wording_reason(found.question)  # last: the others say more


#: What ``init --from-history`` adds to a shortfall when a shallow clone stops its history.
SHALLOW_HISTORY_HINT = ("the clone is shallow, so its history stops early: fetch the whole "
                        "history (`git fetch --unshallow`, or `fetch-depth: 0` on "
                        "actions/checkout) and run it again")


def history_plan(root: Path, universe: Universe, git: Any, *, count: int,
                 since: str | None, progress: Progress,
                 decisions: dict[str, str] | None = None) -> tuple[list[Candidate], list[str]]:
    """``count`` questions from the newest commits of the checkout (after ``since``), or
    fewer with the reason for the shortfall: every commit read that was skipped, by
    reason. The log's candidates are judged by their diffs, newest first, until
    ``POOL_FACTOR * count`` make a question (older ones are not read); of those, the
    ``count`` most askable (:mod:`evaluator.core.askability`) are drafted, newest first,
    and the rest are counted as outranked. ``decisions``, when given, receives each
    decided commit's skip reason, or ``"drafted"`` (for benchmarks)."""
    log = git.commit_log(root, since=since, limit=MAX_HISTORY_COMMITS)
    mined = mine(parse_log(log), is_module_path=universe.admits, modules=universe.modules)
    names: dict[str, AnswerNames] = {}
    texts: dict[str, str | None] = {}  # each graded module's text, read once
    pool: list[tuple[str, Candidate]] = []  # (commit, question) passing every rule
    counted = dict(mined.skipped)
    decided = decisions if decisions is not None else {}
    decided.update(mined.reasons)
    judged_n = 0
    asked: list[tuple[str, frozenset[str]]] = []
    for found in mined.candidates:
        if len(pool) >= count * POOL_FACTOR:
            break
        if progress.elapsed() - progress.last >= HEARTBEAT_S / 2:  # (a huge module is slow)
            progress(f"history: judged {judged_n} of {len(mined.candidates)} candidate "
                     f"commit(s) so far, {len(pool)} make a question")
        judged_n += 1
        judged = read_change(root, git, found)
        found, reason = _judged_question(root, found, judged, names=names, texts=texts,
                                         asked=asked)
        decided[found.commit.sha] = reason or "drafted"
        if reason is not None:
            counted[reason] = counted.get(reason, 0) + 1
        else:
            pool.append((found.commit.sha, history_candidate(found, judged, texts)))
            asked.append((found.question, _grade3(found.grades)))
    best = set(most_askable([askability(c.question, c.grades) for _, c in pool], count))
    chosen = [candidate for i, (_, candidate) in enumerate(pool) if i in best]
    for sha in (sha for i, (sha, _) in enumerate(pool) if i not in best):
        decided[sha] = SKIP_OUTRANKED
        counted[SKIP_OUTRANKED] = counted.get(SKIP_OUTRANKED, 0) + 1
    skipped = ", ".join(f"{n} {reason}" for reason, n in
                        sorted(counted.items(), key=lambda kv: (-kv[1], kv[0])))
    scope = f"after {since}" if since else "of HEAD"
    limit = f" (the newest {MAX_HISTORY_COMMITS})" if mined.read >= MAX_HISTORY_COMMITS \
        else ""
    rest = len(mined.candidates) - judged_n
    unread = (f" (the {rest} older candidate(s) not judged: {POOL_FACTOR} × --count make "
              f"one)" if rest else "")
    progress(f"history: read {mined.read} commit(s) {scope}{limit}: "
             f"{len(pool)} make a question{unread}, {len(chosen)} drafted; skipped: "
             f"{skipped or 'none'}")
    shortfall = []
    if len(chosen) < count:
        shallow = f"; {SHALLOW_HISTORY_HINT}" if git.is_shallow(root) else ""
        shortfall.append(f"{count - len(chosen)} history question(s) short of --count "
                         f"{count}: only {len(chosen)} of the {mined.read} "
                         f"commit(s) read {scope}{limit} make a question (skipped: "
                         f"{skipped or 'none'}){shallow}")
    return chosen, shortfall


# ----------------------------------------------------------------------------- review


def explain(ground_truth: GroundTruth, ranked: Mapping[str, Sequence[str]], *,
            top: int = 5) -> list[str]:
    """Per question, the ``top`` modules retrieved against their grades, and the modules
    graded 2 or 3 that were not retrieved that high."""
    lines: list[str] = []
    for query in ground_truth.queries:
        got = list(ranked.get(query.id, ()))[:top]
        lines.append(f"{query.id} ({query.shape}): {query.question}")
        if not got:
            lines.append("  NeuralMind retrieved no module of the universe")
        for rank, module in enumerate(got, start=1):
            grade = query.grade(module)
            flag = "  <- retrieved but graded 0: under-graded?" if grade == 0 else ""
            lines.append(f"  #{rank} {module}  grade {grade}{flag}")
        missed = [m for m, g in sorted(query.grades.items(), key=lambda kv: (-kv[1], kv[0]))
                  if g >= 2 and m not in got]
        for module in missed:
            lines.append(f"  missed: {module} (grade {query.grade(module)}) is not in the "
                         f"top {top}")
    return lines
