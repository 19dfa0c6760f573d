"""Drafting ground truth for a repository: questions, grades for review, candidate facts.

Builds on NeuralMind's own drafting (``project_eval.suggest_questions``: questions from module
docstrings and README headings, with the defining module as gold) and adds what the N-15
format needs: every module graded (3 for the defining module, 0 elsewhere), the next
candidates NeuralMind retrieves listed for review, a shape guess, and candidate gold facts
taken from the defining module's docstring and public names — words the retrieved context
can literally contain. The file is marked ``"draft": true``; the evaluator warns while it is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import Path

from evaluator.core.groundtruth import Query
from evaluator.core.interop import Draft
from evaluator.deps import Index
from evaluator.errors import InputError

_FALLBACK_SUFFIXES = frozenset({".py", ".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".java",
                                ".rb", ".php", ".c", ".h", ".cc", ".cpp", ".hpp", ".cs",
                                ".kt", ".swift", ".scala"})
_DOC_SUFFIXES = frozenset({".md", ".rst", ".txt"})


def indexable(files: Sequence[str]) -> list[str]:
    """The files a ground truth should grade: source files NeuralMind parses, plus docs."""
    try:
        from neuralmind import graphgen

        suffixes = frozenset(graphgen._CODE_SUFFIXES) | _DOC_SUFFIXES
    except (ImportError, AttributeError):
        suffixes = _FALLBACK_SUFFIXES | _DOC_SUFFIXES
    return sorted(f for f in files if Path(f).suffix.lower() in suffixes)


def suggest(root: Path, n: int) -> list[tuple[str, str]]:
    """NeuralMind's drafted questions for ``root``: ``[(question, defining module)]``."""
    from neuralmind import project_eval

    drafts = project_eval.suggest_questions(root, n=n)
    out = []
    for item in drafts:
        gold = item.get("gold") or []
        if item.get("q") and gold:
            out.append((str(item["q"]), str(gold[0])))
    return out


def _public_names(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            and not node.name.startswith("_")]


def _docstring(path: Path) -> str:
    from neuralmind import project_eval

    return str(project_eval._module_docstring(path) or "")


def candidate_facts(root: Path, module: str, *, limit: int = 3) -> list[str]:
    """Short phrases from the module's docstring and its public names (to be reviewed)."""
    path = root / module
    facts: list[str] = []
    doc = " ".join(_docstring(path).split())
    if doc:
        first = re.split(r"(?<=[.!?])\s", doc)[0].rstrip(".!?")
        words = first.split()
        if len(words) >= 2:
            facts.append(" ".join(words[:8]))
    if path.suffix == ".py":
        try:
            names = _public_names(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            names = []
        facts += [f"{name}" for name in names[: max(0, limit - len(facts))]]
    return facts[:limit] or [Path(module).stem.replace("_", " ")]


def guess_shape(question: str, golds: int) -> str:
    """``identity`` for "what is X" questions, else by the number of gold modules."""
    if question.lower().startswith(("what is ", "which class", "which function")):
        return "identity"
    return "focused" if golds <= 1 else "cross-file"


def identity_questions(root: Path, modules: Sequence[str], n: int) -> list[tuple[str, str]]:
    """"What is <Class>?" for public classes — the identity shape NeuralMind does not draft."""
    out: list[tuple[str, str]] = []
    for module in modules:
        if not module.endswith(".py") or Path(module).name.startswith("test_"):
            continue
        try:
            tree = ast.parse((root / module).read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                out.append((f"What is {node.name} and where is it defined?", module))
                break
        if len(out) >= n:
            break
    return out


def draft_queries(root: Path, files: Sequence[str], *, n: int) -> list[Draft]:
    """Drafts over every indexable module: grade 3 for the defining module, 0 elsewhere."""
    modules = indexable(files)
    for module in modules:
        if module.endswith(".py"):
            try:
                (root / module).read_bytes().decode("utf-8")
            except UnicodeDecodeError:
                raise InputError(f"{module} is not UTF-8 text; NeuralMind's drafting reads "
                                 "every Python module as UTF-8",
                                 hint="save it as UTF-8 (PEP 3120), or draft from a copy "
                                      "without it") from None
            except OSError:
                continue
    pairs = suggest(root, n=max(1, n - n // 4))
    seen = {q for q, _ in pairs}
    pairs += [p for p in identity_questions(root, modules, n // 4 or 1) if p[0] not in seen]
    drafts = []
    for i, (question, gold) in enumerate(pairs[:n], start=1):
        if gold not in modules:
            continue
        grades = {m: (3 if m == gold else 0) for m in modules}
        drafts.append(Draft(f"draft-{i:02d}", question, grades, guess_shape(question, 1)))
    return drafts


def review_candidates(index: Index, drafts: Sequence[Draft], *,
                      per_query: int = 3) -> dict[str, list[str]]:
    """For each draft, the modules NeuralMind ranks highest that are graded 0 (to review)."""
    out: dict[str, list[str]] = {}
    for d in drafts:
        query = Query(d.id, d.question, d.shape, d.grades, ("placeholder fact", "x y"))
        retrieval, _seconds = index.ask(query)
        out[d.id] = [m for m in retrieval.ranked_modules
                     if d.grades.get(m, 0) == 0][:per_query]
    return out
