"""The ranking depth through the command line (issue 23 item 1: ``--depth N``), on a real
git repository with the deterministic backend: NeuralMind's query returns what it returns
(no top-k), so its rankings short of the depth are flagged and its @k cells marked; bm25
ranks everything it has and is never flagged."""

from __future__ import annotations

from pathlib import Path

from evaluator.errors import EXIT_FLOORS, EXIT_INPUT, EXIT_OK
from tests.conftest import make_repo

# A module per word of the sample's questions would make every ranking long: a few extra
# modules of the universe are enough for the universe to be larger than NeuralMind's answers.
EXTRA = {f"sample_project/extra_{i}.py": f'"""Helper {i}."""\n\n\ndef helper_{i}():\n'
         f"    return {i}\n" for i in range(12)}


def evaluate(cli, tmp_path: Path, *args: str) -> tuple[dict, str]:
    repo = tmp_path / "repo"
    if not repo.exists():
        make_repo(repo, EXTRA)
    out = tmp_path / f"out{len(list(tmp_path.glob('out*')))}"
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", "neuralmind,bm25", "--quiet", *args)
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    return run.results(out), (out / "report.md").read_text(encoding="utf-8")


def test_rankings_short_of_the_depth_are_flagged_and_marked(cli, tmp_path):
    doc, report = evaluate(cli, tmp_path, "--k", "5,10")
    assert doc["run"]["depth"] == 10  # the largest k reported
    modules = doc["run"]["universe"]["modules"]
    assert modules > 10
    first, bm25 = doc["systems"]
    for block in (doc, first):
        for q in block["queries"]:
            assert q.get("short_of_depth", False) == (len(q["ranked_modules"]) < 10), q["id"]
    assert not any(q.get("short_of_depth") for q in bm25["queries"])
    short = [q for q in first["queries"] if q.get("short_of_depth")]
    assert short  # the in-memory backend's answers hold 5 to 7 modules
    n = len(first["queries"])
    assert (f"- † @10 not measurable: neuralmind returned fewer than 10 modules on "
            f"{len(short)} of {n} questions and could not rank deeper (ranking depth 10)"
            ) in report
    # the table's columns are at 5: marked only where a ranking held fewer than 5
    at5 = [q for q in short if len(q["ranked_modules"]) < 5]
    row = next(line for line in report.splitlines() if line.startswith("| neuralmind |"))
    assert ("†" in row) == bool(at5)
    assert "not measurable: bm25" not in report


def test_a_depth_within_the_answers_flags_only_the_shorter_ones(cli, tmp_path):
    doc, report = evaluate(cli, tmp_path, "--k", "1,3,5", "--depth", "6")
    assert doc["run"]["depth"] == 6
    first = doc["systems"][0]
    short = [q["id"] for q in first["queries"] if q.get("short_of_depth")]
    assert short == [q["id"] for q in first["queries"] if len(q["ranked_modules"]) < 6]
    assert 0 < len(short) < len(first["queries"])
    # metrics are at 5 at most: nothing is beyond what a ranking of 5 holds
    assert "not measurable" not in report


def test_a_bad_depth_is_refused(cli, tmp_path):
    repo = make_repo(tmp_path / "repo")
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--depth", "0")
    assert run.code == EXIT_INPUT
    assert "depth" in run.stderr and "at least 1" in run.stderr
