"""Docs that cannot lie (issue 22, issue 25's rule): what ``docs/judge.md`` quotes from the
tool's output — the footer naming the judge and the share of anchored facts, and the
self-check's figures on the bundled example — is what a real run prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "judge.md"


def test_the_judge_doc_quotes_what_the_tool_prints(tmp_path, cli):
    text = " ".join(DOC.read_text().split())
    out = tmp_path / "out"
    run = cli("evaluate", "--example", "--backend", "in_memory", "--output-dir", str(out),
              "--quiet")
    assert run.code in (0, 1), run.stderr
    [quoted] = re.findall(r"`(judge evaluator-judge [^`]*)`", text)
    assert quoted in (out / "report.md").read_text().splitlines()[-1]
    check = json.loads((out / "results.json").read_text())["judge_check"]
    figures = (f"separates right from wrong source by {check['separation']:.2f} "
               f"({check['right_mean']:.2f} on the right modules, {check['wrong_mean']:.2f} on "
               f"another question's) and the retrieved contexts score "
               f"{check['retrieved_mean']:.2f}")
    assert figures in text
