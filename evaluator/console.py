"""What ``validate``, ``init``, ``import`` and ``judge`` print or write: the ground truth's
problems (or workflow annotations), a review's lines, a drafted ground truth, the judge's
JSON report.

Apart from :mod:`evaluator.publish` (reports, comments, the GitHub API) so that these
commands start without importing jinja2 or requests.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from evaluator import atomic
from evaluator.deps import Deps
from evaluator.runner import Runner, neutralize
from evaluator.validation import Validation

if TYPE_CHECKING:
    from evaluator.authoring_commands import Drafted, Judged


def publish_validation(validation: Validation, deps: Deps, *, github_format: bool) -> None:
    """Each problem as a line (or a workflow annotation), then the counts, on stdout."""
    runner = Runner(None, None, True, deps.stdout)
    for problem in validation.problems:
        if github_format:
            runner.annotate(problem.severity, problem.located(), file=problem.file,
                            line=problem.line, title="ground truth")
        else:
            print(neutralize(problem.render()), file=deps.stdout)
    print(neutralize(validation.summary), file=deps.stdout)


def print_lines(lines: Sequence[str], deps: Deps) -> None:
    """A report made of lines (``init --review``), on stdout."""
    for line in lines:
        print(neutralize(line), file=deps.stdout)


def write_draft(drafted: Drafted, deps: Deps) -> None:
    """Write the drafted ground truth (never over an existing file) and say so."""
    doc: dict[str, Any] = drafted.document
    atomic.write_new(drafted.target, json.dumps(doc, indent=2, ensure_ascii=False) + "\n",
                     hint="choose another --output, or move the file away")
    print(neutralize(f"wrote {drafted.target}: {drafted.summary}"), file=deps.stdout)


def write_judged(judged: Judged, deps: Deps) -> None:
    """The ``judge`` report as JSON: to ``--output`` (atomically) or to stdout."""
    text = json.dumps(judged.report, indent=2, ensure_ascii=False) + "\n"
    for note in judged.notes:
        print(neutralize(f"warning: {note}"), file=deps.stderr)
    if judged.target is None:
        deps.stdout.write(text)
        return
    atomic.write_text(judged.target, text)
    print(neutralize(f"wrote {judged.target}: {judged.report['n']} queries judged"),
          file=deps.stderr)
