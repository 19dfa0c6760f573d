"""The ``oracle`` reference system: the ceiling, read from the ground truth's grades.

For each question it returns what a perfect retriever would: the question's graded modules
ranked by grade (3 first, ties by path), and as the context the source of its top-graded
modules (the grade-3 ones; the highest grade present when none is graded 3). Every other
system's scores read against it: how much of the gap to the ceiling a system closes, and
how many tokens the needed source itself takes.

It needs the ground truth (``ground_truth`` in the registry's needs): a question the
ground truth does not hold gets an empty answer.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from evaluator.core.groundtruth import GroundTruth
from evaluator.core.systems import Answer
from evaluator.judging import read_modules
from evaluator.refsystems.texts import estimate_tokens


class Oracle:
    """The ground truth's answer to each of its questions."""

    def __init__(self, root: Path, files: Sequence[str], *,
                 ground_truth: GroundTruth) -> None:
        self._grades: dict[str, dict[str, int]] = {}
        for query in ground_truth.queries:  # a question asked twice: the union, best grade
            grades = self._grades.setdefault(query.question, {})
            for module, grade in query.grades.items():
                grades[module] = max(grade, grades.get(module, 0))
        needed = {m for g in self._grades.values() for m in g}
        # the judge self-check's reader: the modules' source, as the self-check scores it
        self._texts = read_modules(root, sorted(needed.intersection(files)))

    def ask(self, question: str) -> Answer:
        started = time.perf_counter()
        grades = {m: g for m, g in self._grades.get(question, {}).items() if g > 0}
        ranked = tuple(sorted(grades, key=lambda m: (-grades[m], m)))
        top = max(grades.values(), default=0)
        documents = tuple(self._texts[m] for m in ranked
                          if grades[m] == top and m in self._texts)
        context = "\n\n".join(documents)
        return Answer(ranked_modules=ranked, context=context, tokens=estimate_tokens(context),
                      seconds=time.perf_counter() - started, documents=documents)
