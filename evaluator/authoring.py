"""``init`` and review: draft a ground-truth file a maintainer can accept, and show a file
against what NeuralMind retrieves (the pieces; :func:`evaluator.app.run_init` and
:func:`evaluator.app.run_review` put them together).

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

import ast
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from evaluator.core.groundtruth import GroundTruth
from evaluator.core.universe import Universe, UniverseSpec, select_universe
from evaluator.drafting import (
    SHAPES,
    Candidate,
    CodeMap,
    Plan,
    all_candidates,
    anchored,
    build_code_map,
    plan,
)
from evaluator.errors import InputError
from evaluator.neuralmind_index import code_suffixes
from evaluator.progress import Progress


def _public_defs(source: str) -> list[tuple[str, str]]:
    """Each public top-level function or class: its name and its definition line."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # hostile nesting too
        return []
    lines = source.splitlines()
    return [(node.name, lines[node.lineno - 1].strip()) for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and not node.name.startswith("_") and 0 < node.lineno <= len(lines)]


def _docstring(path: Path) -> str:
    from neuralmind import project_eval

    return str(project_eval._module_docstring(path) or "")


def candidate_facts(root: Path, module: str, *, limit: int = 3) -> list[str | dict[str, str]]:
    """Short phrases from the module's docstring and its public names (to be reviewed),
    each anchored: the docstring phrase by the line(s) it is quoted from, a name by its
    definition line (the module's stem, the fallback, is a plain fact)."""
    path = root / module
    facts: list[str | dict[str, str]] = []
    try:
        text: str | None = path.read_bytes().decode("utf-8")
    except OSError:
        text = None
    except UnicodeDecodeError:
        raise InputError(f"{module} is not UTF-8 text; drafting reads every module of the "
                         "module universe as UTF-8",
                         hint="save it as UTF-8, or leave it out with the exclude "
                              "option") from None
    doc = " ".join(_docstring(path).split()) if text is not None else ""
    if doc:
        first = re.split(r"(?<=[.!?])\s", doc)[0].rstrip(".!?")
        words = first.split()
        if len(words) >= 2 and text is not None:
            facts.append(anchored(" ".join(words[:8]), [text]))
    if path.suffix == ".py" and text is not None:
        defs = _public_defs(text)
        facts += [{"fact": name, "evidence": line}
                  for name, line in defs[: max(0, limit - len(facts))]]
    return facts[:limit] or [Path(module).stem.replace("_", " ")]




# ----------------------------------------------------------------------------- init


def universe_of(files: Sequence[str], spec: UniverseSpec | None) -> Universe:
    """The module universe of ``files`` with NeuralMind's code suffixes as the sources."""
    return select_universe(files, spec or UniverseSpec(), source_suffixes=code_suffixes())


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
    names = _named(candidate.question)
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
        counters[candidate.shape] = counters.get(candidate.shape, 0) + 1
        row: dict[str, Any] = {
            "id": f"{candidate.shape}-{counters[candidate.shape]:02d}",
            "question": candidate.question,
            "shape": candidate.shape,
            "relevance_grades": {m: grades.get(m, 0) for m in universe.modules},
            "gold_facts": _anchored_facts(candidate, grades, code),
        }
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
    candidates = all_candidates(code)
    drafted = plan(candidates, count, mix)
    shapes = Counter(c.shape for c in drafted.chosen)
    progress(f"drafting: {len(drafted.chosen)}/{count} questions ("
             + ", ".join(f"{shapes[s]} {s}" for s in SHAPES) + ") from "
             + ", ".join(f"{len(candidates[s])} {s}" for s in SHAPES) + " candidates")
    if not drafted.chosen:
        raise InputError(f"nothing to draft questions from in {root}: no documented public "
                         "Python functions or classes in the module universe",
                         hint="write the ground truth by hand (see the README), or widen "
                              "the universe with include")
    return code, drafted


def ask_all(index: Any, chosen: Sequence[Candidate], universe: Universe, *,
            progress: Progress) -> dict[int, tuple[str, ...]]:
    """NeuralMind's ranking (within the universe) for every drafted question."""
    retrieved = {n: universe.filter_ranking(index.ask(c.question).ranked_modules)
                 for n, c in enumerate(chosen)}
    progress(f"review: asked NeuralMind the {len(chosen)} questions")
    return retrieved


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
