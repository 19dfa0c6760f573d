"""docs/systems.md quotes what the tool prints (issue 25's rule): its example tables are
excerpts of the reports of real runs on the bundled example (``in_memory``: deterministic,
no model). ``pytest tests/test_docs_systems.py --update-golden`` rewrites them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "systems.md"
BEGIN = "<!-- {}:begin (tests/test_docs_systems.py --update-golden) -->\n"
END = "<!-- {}:end -->"


def _overall_table(report: str) -> str:
    """The systems section's first table (all questions), with its footnotes."""
    section = report[report.index("### Systems side by side"):]
    start = section.index("| System |")
    end = section.index("\n\n", start)
    return section[start:end + 1]


def _frontier(report: str) -> str:
    """The frontier: its chart and its table."""
    section = report[report.index("#### Quality and context size"):]
    start = section.index("```mermaid")
    table = section.index("| System |", start)
    return section[start:section.index("\n\n", table) + 1]


def _check(request: pytest.FixtureRequest, name: str, excerpt: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN.format(name)) + r"(.*?)" + re.escape(END.format(name)),
                         re.S)
    found = pattern.search(text)
    assert found, f"docs/systems.md lacks the {name} markers"
    if request.config.getoption("--update-golden"):
        DOC.write_text(text[:found.start(1)] + excerpt + text[found.end(1):], encoding="utf-8")
        return
    assert found.group(1) == excerpt, (f"docs/systems.md's {name} differs from the run; "
                                       "review, then pytest tests/test_docs_systems.py "
                                       "--update-golden")


def _report(cli, tmp_path: Path, *args: str) -> str:
    out = tmp_path / "out"
    run = cli("evaluate", "--example", "--backend", "in_memory", "--output-dir", str(out),
              "--systems", "neuralmind,bm25", "--quiet", *args)
    assert run.code in (0, 1), run.stderr
    return (out / "report.md").read_text(encoding="utf-8")


def test_the_unbudgeted_example_is_a_real_run(cli, tmp_path, request):
    report = _report(cli, tmp_path)
    table = _overall_table(report)
    assert "| bm25 ≠ |" in table  # five whole files against NeuralMind's few hundred tokens
    _check(request, "example-unbudgeted", table)


def test_the_budgeted_example_is_a_real_run(cli, tmp_path, request):
    report = _report(cli, tmp_path, "--budget", "neuralmind")
    assert "≠" not in _overall_table(report)
    _check(request, "example-budget", _overall_table(report) + "\n" + _frontier(report))


def test_the_depth_notes_are_a_real_run(cli, tmp_path, request):
    """Issue 23 item 1: NeuralMind's rankings short of the default depth (10) are said."""
    report = _report(cli, tmp_path)
    notes = "".join(line + "\n" for line in report.splitlines() if line.startswith("- † "))
    assert "- † @10 not measurable: neuralmind returned fewer than 10 modules" in notes
    assert "bm25" not in notes
    _check(request, "depth-notes", notes)
