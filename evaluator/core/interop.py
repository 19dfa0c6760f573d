"""Data in and out: TREC qrels/run files, BEIR qrels and queries, NeuralMind's eval file.

Export (every evaluation with ``--output-dir``): ``qrels.trec`` holds every graded module of
every query (``qid 0 module grade``); ``run.trec`` (and ``run.base.trec`` with a baseline)
holds each query's ranked modules as ``qid Q0 module rank score tag`` with strictly
decreasing scores (``score = N − rank + 1``), so trec_eval, ranx and ir_measures score it
exactly as this evaluator does (linear gain; for the exponential gain rewrite the qrels'
grades to ``2^g − 1``).

Import builds ground-truth documents (``{"queries": [...]}``) from:

* NeuralMind's ``.neuralmind.eval.yaml`` (``q`` + ``gold``): gold files get grade 3, every
  other module 0; the shape is ``focused`` for one gold file, ``cross-file`` for more;
* TREC qrels (``qid iter doc grade``) or BEIR qrels (TSV with a ``query-id corpus-id score``
  header) plus a queries file (TSV ``qid<TAB>text`` or BEIR ``queries.jsonl``).
  Grades outside 0–3 are rejected, or clipped into 0–3 with ``clip=True``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.core import textcheck
from evaluator.core.groundtruth import (
    GroundTruth,
    Query,
    has_control,
    normalize_module,
    one_paragraph,
)
from evaluator.core.results import Results
from evaluator.errors import InputError


def trec_problem(ground_truth: GroundTruth, results: Iterable[Results]) -> str | None:
    """Why the TREC files cannot be written faithfully (whitespace splits their columns)."""
    names = [q.id for q in ground_truth.queries] + [m for q in ground_truth.queries
                                                     for m in q.grades]
    names += [m for r in results for row in r.queries for m in row.ranked_modules]
    bad = sorted({n for n in names if any(c.isspace() for c in n)})
    if bad:
        return (f"TREC files split columns on whitespace, and {len(bad)} query id(s) or "
                f"module path(s) contain some (e.g. {bad[0]!r})")
    return None


def qrels_text(ground_truth: GroundTruth) -> str:
    lines = [f"{q.id} 0 {module} {grade}" for q in ground_truth.queries
             for module, grade in sorted(q.grades.items())]
    return "\n".join(lines) + "\n"


def run_text(results: Results, tag: str) -> str:
    lines = []
    for row in results.queries:
        n = len(row.ranked_modules)
        lines += [f"{row.id} Q0 {module} {rank} {n - rank + 1} {tag}"
                  for rank, module in enumerate(row.ranked_modules, start=1)]
    return "\n".join(lines) + ("\n" if lines else "")


# ----------------------------------------------------------------------------- import


@dataclass(frozen=True)
class Draft:
    """One imported query before facts are added."""

    id: str
    question: str
    grades: Mapping[str, int]
    shape: str


def _shape(grades: Mapping[str, int]) -> str:
    return "focused" if sum(1 for g in grades.values() if g >= 1) <= 1 else "cross-file"


def _module(raw: str, where: str) -> str:
    norm = normalize_module(raw)
    if norm is None:
        raise InputError(f"{where}: {raw!r} is not a path relative to the repository root")
    return norm


def _question(raw: str, where: str, problems: list[str]) -> str:
    """An imported question as one paragraph (a multi-line BEIR or YAML question is read
    the way ``validate`` reads it); ``""`` with a problem when another control character
    remains."""
    question = one_paragraph(raw)
    if has_control(question):
        problems.append(f"{where}: the question holds a control character (an escape, a "
                        "NUL …) that a ground truth cannot hold")
        return ""
    return question


def _not_modules(paths: Iterable[str], universe: Iterable[str],
                 present: Iterable[str]) -> str:
    """``paths`` that are not modules, said the way a user can act on: files of the
    checkout outside the module universe, and files missing from the checkout."""
    known, files = set(universe), set(present)
    outside = sorted(p for p in paths if p not in known and p in files)
    missing = sorted(p for p in paths if p not in known and p not in files)
    parts = []
    if outside:
        parts.append(f"outside the module universe: {', '.join(outside[:5])} (grade them "
                     "only after adding them with the include option)")
    if missing:
        parts.append(f"not in the checkout: {', '.join(missing[:5])}")
    return "; ".join(parts)


def from_neuralmind_eval(data: Any, source: str, modules: Iterable[str],
                         present: Iterable[str] = ()) -> list[Draft]:
    """``.neuralmind.eval.yaml``: a list (or ``{questions: [...]}``) of ``{q, gold}``;
    ``present`` are the checkout's files (to tell a file left out of the universe from a
    missing one)."""
    entries = data.get("questions") if isinstance(data, Mapping) else data
    if not isinstance(entries, list) or not entries:
        raise InputError(f"{source}: expected a list of {{q, gold}} entries")
    universe = sorted(set(modules))
    drafts: list[Draft] = []
    seen: set[str] = set()
    problems: list[str] = []
    for i, entry in enumerate(entries, start=1):
        where = f"{source}: entry {i}"
        if not isinstance(entry, Mapping):
            problems.append(f"{where} is not a mapping")
            continue
        question = _question(str(entry.get("q") or entry.get("question") or ""), where,
                             problems)
        gold = entry.get("gold")
        gold_list = [gold] if isinstance(gold, str) else gold
        if not question or not isinstance(gold_list, list) or not gold_list:
            if not problems or not problems[-1].startswith(f"{where}:"):
                problems.append(f"{where} needs a non-empty 'q' and 'gold'")
            continue
        if question.lower() in seen:
            problems.append(f"{where} repeats the question {question!r}")
            continue
        seen.add(question.lower())
        try:
            golds = {_module(str(g), where) for g in gold_list}
        except InputError as err:
            problems.append(str(err))
            continue
        unknown = sorted(golds - set(universe))
        if unknown:
            problems.append(f"{where}: gold file(s) {_not_modules(unknown, universe, present)}")
            continue
        grades = {m: (3 if m in golds else 0) for m in universe}
        drafts.append(Draft(f"q{i:02d}", question, grades, _shape(grades)))
    if problems:
        raise InputError(f"{source}: cannot import:\n  " + "\n  ".join(problems))
    return drafts


def parse_qrels(text: str, source: str, *, clip: bool = False) -> dict[str, dict[str, int]]:
    """TREC (``qid iter doc grade``) or BEIR TSV (``query-id corpus-id score`` header)."""
    qrels: dict[str, dict[str, int]] = {}
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts or line.startswith("#"):
            continue
        if n == 1 and parts[0].lower() in ("query-id", "query_id", "qid"):
            continue
        if len(parts) == 4:
            qid, _iteration, doc, grade_text = parts
        elif len(parts) == 3:
            qid, doc, grade_text = parts
        else:
            problems.append(f"line {n}: expected 'qid iter doc grade' or 'qid doc grade'")
            continue
        try:
            grade = int(grade_text)
        except ValueError:
            problems.append(f"line {n}: grade {grade_text!r} is not an integer")
            continue
        if not 0 <= grade <= 3:
            if not clip:
                problems.append(f"line {n}: grade {grade} is outside 0-3 (import with "
                                "--clip-grades to clip it into 0-3)")
                continue
            grade = min(max(grade, 0), 3)
        try:
            module = _module(doc, f"line {n}")
        except InputError as err:
            problems.append(str(err))
            continue
        qrels.setdefault(qid, {})[module] = grade
    if problems:
        raise InputError(f"{source}: cannot import:\n  " + "\n  ".join(problems[:20])
                         + (f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""))
    if not qrels:
        raise InputError(f"{source}: no judgments found")
    return qrels


def parse_queries(text: str, source: str) -> dict[str, str]:
    """TSV ``qid<TAB>question`` or BEIR ``queries.jsonl`` (``{"_id", "text"}`` per line)."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            try:
                item = json.loads(line)
                qid, question = str(item["_id"]), str(item["text"])
            except (ValueError, KeyError, TypeError):
                problems.append(f"line {n}: expected a JSON object with _id and text")
                continue
        else:
            if "\t" not in line:
                problems.append(f"line {n}: expected 'qid<TAB>question'")
                continue
            qid, question = line.split("\t", 1)
        before = len(problems)
        qid = qid.strip()
        if not (textcheck.valid(qid) and textcheck.valid(question)):
            problems.append(f"line {n}: the query {textcheck.MESSAGE}")
        else:
            question = _question(question, f"line {n}", problems)
        if len(problems) > before:
            pass
        elif qid in seen:
            problems.append(f"line {n}: query {qid!r} appears twice")
        elif not question:
            problems.append(f"line {n}: query {qid!r} is empty")
        else:
            out[qid] = question
        seen.add(qid)
    if problems:
        raise InputError(f"{source}: cannot import:\n  " + "\n  ".join(problems))
    return out


def from_qrels(qrels: Mapping[str, Mapping[str, int]], queries: Mapping[str, str],
               modules: Iterable[str], *, source: str, present: Iterable[str] = ()
               ) -> list[Draft]:
    universe = set(modules)
    problems = []
    unknown_q = sorted(set(qrels) - set(queries))
    if unknown_q:
        problems.append(f"judged queries without a question: {', '.join(unknown_q[:10])}")
    for qid, judged in sorted(qrels.items()):
        missing = sorted(set(judged) - universe)
        if missing:
            problems.append(f"query {qid}: judged modules "
                            f"{_not_modules(missing, universe, present)}")
        if judged and max(judged.values()) < 1:
            problems.append(f"query {qid}: no module has grade >= 1")
    if problems:
        raise InputError(f"{source}: cannot import:\n  " + "\n  ".join(problems))
    drafts = []
    for qid, question in queries.items():
        if qid not in qrels:
            continue
        grades = dict.fromkeys(sorted(universe), 0) | dict(qrels[qid])
        drafts.append(Draft(qid, question, grades, _shape(grades)))
    return drafts


def document(queries: Sequence[Query | Draft],
             facts: Mapping[str, Sequence[str | Mapping[str, str]]], *,
             draft: bool, description: str,
             review: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """A ground-truth document (the N-15 format) ready for ``json.dumps``; a fact is a
    string or an anchored ``{"fact", "evidence"}`` (written as given)."""
    rows: list[dict[str, Any]] = []
    for q in queries:
        row: dict[str, Any] = {
            "id": q.id, "question": q.question, "shape": q.shape,
            "relevance_grades": dict(sorted(q.grades.items())),
            "gold_facts": [f if isinstance(f, str) else {"fact": f["fact"],
                                                         "evidence": f["evidence"]}
                           for f in facts.get(q.id, ())],
        }
        if review and review.get(q.id):
            row["review"] = {"candidates": list(review[q.id]),
                             "note": "retrieved for this question but graded 0: grade them"}
        rows.append(row)
    doc: dict[str, Any] = {"description": description}
    if draft:
        doc["draft"] = True
    doc["queries"] = rows
    return doc
