"""One candidate set for every system (issue 23 item 1): every system ranks the module
universe that is scored, and what a ranking held outside it is filtered out in one place,
counted per reason, and said in the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.cli import EXAMPLE_QUERIES
from evaluator.core import systems
from evaluator.core.systems import Answer
from evaluator.errors import EXIT_FLOORS, EXIT_OK
from tests.conftest import make_repo

QUESTIONS = [q["question"] for q in json.loads(EXAMPLE_QUERIES.read_text())["queries"]]


def noisy_repo(path: Path) -> Path:
    """The sample project plus a changelog, docs and tests that repeat every question's
    words, so a ranker over every file puts them on top."""
    every = "\n".join(QUESTIONS * 3)
    files = {"CHANGELOG.md": f"# Changes\n\n{every}\n",
             "docs/guide.md": f"# Guide\n\n{every}\n",
             "tests/test_everything.py": "".join(f"# {q}\n" for q in QUESTIONS * 3)
             + "def test_nothing():\n    pass\n"}
    return make_repo(path, files)


def universe_of(doc: dict) -> set[str]:
    expected = {m for q in doc["queries"] for ms in q["expected"].values() for m in ms}
    assert expected  # the graded modules are modules
    return expected


def run_on_noisy_repo(cli, tmp_path: Path, systems: str) -> tuple[dict, Path]:
    """``evaluate --systems SYSTEMS`` on :func:`noisy_repo`: its results and its folder."""
    repo = noisy_repo(tmp_path / "repo")
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", systems, "--quiet")
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    return run.results(out), out


def test_bm25_and_neuralmind_rank_the_same_universe(cli, tmp_path):
    doc, _out = run_on_noisy_repo(cli, tmp_path, "neuralmind,bm25")
    noise = ("CHANGELOG.md", "docs/", "tests/")
    first, bm25 = doc["systems"]
    for block in (first, bm25):
        ranked = [m for q in block["queries"] for m in q["ranked_modules"]]
        assert ranked, block["label"]
        assert not [m for m in ranked if m.startswith(noise)], block["label"]
    # bm25 was given the universe's files only: nothing of its ranking had to be filtered
    assert all("filtered_out" not in q for q in bm25["queries"])
    # the evaluated block is the evaluation's own rows, filter counts included
    assert [q.get("filtered_out") for q in doc["queries"]] == \
        [q.get("filtered_out") for q in first["queries"]]


class EverythingSystem:
    """A system that ignores the files it is given and ranks every file of the checkout
    holding a word of the question (as a tool that reads the folder would)."""

    def __init__(self, root: Path, files: tuple[str, ...]) -> None:
        self.texts = {p.relative_to(root).as_posix(): p.read_text(errors="replace")
                      for p in sorted(root.rglob("*"))
                      if p.is_file() and ".git" not in p.parts and p.suffix in (".py", ".md")}

    def ask(self, question: str) -> Answer:
        words = {w for w in question.lower().split() if len(w) > 3}
        ranked = tuple(sorted((m for m, t in self.texts.items()
                               if words & set(t.lower().split())),
                              key=lambda m: (not m.startswith(("docs/", "tests/")), m)))
        return Answer(ranked_modules=ranked, context="", tokens=0, seconds=0.0)


@pytest.fixture
def everything():
    entry = systems.register(systems.SystemEntry(
        "everything", "every file holding a word of the question",
        factory="tests.integration.test_candidate_set:EverythingSystem"))
    yield entry
    del systems.SYSTEMS["everything"]


def test_a_system_that_reads_the_whole_folder_is_filtered_and_told(everything, cli, tmp_path):
    doc, out = run_on_noisy_repo(cli, tmp_path, "neuralmind,everything")
    block = doc["systems"][1]
    for q in block["queries"]:
        assert not [m for m in q["ranked_modules"] if m.startswith(("docs/", "tests/"))]
        # the changelog and the guide are docs (and the sample's README when it matches)
        assert q["filtered_out"]["tests"] == 1 and q["filtered_out"]["docs"] >= 2
    report = (out / "report.md").read_text(encoding="utf-8")
    short = [q for q in block["queries"] if len(q["ranked_modules"]) < 5]
    assert short  # the universe's code shares few words with some questions
    docs = sum(q["filtered_out"]["docs"] for q in short)
    assert (f"everything returned fewer than 5 modules on {len(short)} of "
            f"{len(block['queries'])} questions ({docs + len(short)} filtered out: "
            f"{docs} docs, {len(short)} tests)") in report


def test_the_report_says_what_a_short_ranking_returned_and_why():
    from dataclasses import replace

    from evaluator.core.results import to_dict
    from evaluator.core.results_reader import from_dict
    from evaluator.render import render
    from tests.factories import results_from_rankings, view_of

    results = results_from_rankings({"q1": ["a.py"], "q2": []},
                                    grades={"q1": {"a.py": 3}, "q2": {"b.py": 3}})
    rows = (replace(results.queries[0], filtered_out={"tests": 5}),
            replace(results.queries[1], filtered_out={"docs": 3, "tests": 1}))
    results = replace(results, queries=rows)
    report = render(view_of(results))
    assert "- returned 1 module (5 filtered out: tests)" in report
    assert "| – | (returned 0 modules (4 filtered out: 3 docs, 1 tests)) | – |" in report
    assert "nothing retrieved" not in report
    assert from_dict(to_dict(results), "results.json").queries == rows  # kept in results.json
    plain = replace(results, queries=tuple(replace(r, filtered_out={}) for r in rows))
    assert "| – | (nothing retrieved) | – |" in render(view_of(plain))
    assert "- returned" not in render(view_of(plain))  # nothing filtered: the table says it all


def test_split_ranking_keeps_order_and_counts_reasons():
    from evaluator.core.universe import UniverseSpec, select_universe

    universe = select_universe(["pkg/a.py", "pkg/b.py", "tests/test_a.py", "README.md"],
                               UniverseSpec())
    ranked = ("tests/test_a.py", "pkg/b.py", "README.md", "docs/x.md", "pkg/new.py",
              "pkg/a.py", "setup.py")
    kept, filtered = universe.split_ranking(ranked)
    # a file of another commit (pkg/new.py) is judged by the same rules
    assert kept == ("pkg/b.py", "pkg/new.py", "pkg/a.py")
    assert filtered == {"docs": 2, "packaging": 1, "tests": 1}


# ---------------------------------------------- real issue descriptions (bench_issues.py)

ISSUES = Path(__file__).resolve().parents[2] / "benchmarks" / "issue_instances.json"
REFERENCE = "neuralmind,bm25,embedding,grep,full-file,oracle"


def issue_questions(*ids: str) -> dict[str, str]:
    """Real SWE-bench issue descriptions of the benchmark's data file, asked the way
    bench_issues.py asks them: the title and first prose paragraph, whitespace normalised."""
    rows = {i["id"]: i for i in json.loads(ISSUES.read_text(encoding="utf-8"))["instances"]}
    return {i: " ".join(f"{rows[i]['title']}\n{rows[i]['first_paragraph']}".split())
            for i in ids}


def issue_repo(path: Path) -> tuple[Path, dict[str, str]]:
    """A small package whose changelog, docs and tests repeat two real issue descriptions
    word for word (as a project's do once the issue is fixed), and its ground truth."""
    asked = issue_questions("psf__requests-1963", "pallets__flask-5014")
    every = "\n\n".join(list(asked.values()) * 3)
    files = {
        "web/sessions.py": "class Session:\n    def resolve_redirects(self, resp, req):\n"
                           "        prepared = req.copy()\n        return prepared\n",
        "web/blueprints.py": "class Blueprint:\n    def __init__(self, name):\n"
                             "        self.name = name\n",
        "web/helpers.py": "def join(*parts):\n    return '/'.join(parts)\n",
        "CHANGELOG.md": f"# Changes\n\n{every}\n",
        "docs/redirects.md": f"# Redirects and blueprints\n\n{every}\n",
        "tests/test_issues.py": "".join(f"# {q}\n" for q in asked.values())
                                + "def test_nothing():\n    pass\n",
        "retrieval_queries.json": json.dumps({"queries": [
            {"id": "requests-1963", "question": asked["psf__requests-1963"],
             "shape": "focused", "relevance_grades": {"web/sessions.py": 3}},
            {"id": "flask-5014", "question": asked["pallets__flask-5014"],
             "shape": "focused", "relevance_grades": {"web/blueprints.py": 3}}]}),
    }
    return make_repo(path, files, sample=False), asked


def test_every_system_ranks_the_same_universe_on_real_issue_texts(everything, cli, tmp_path):
    repo, asked = issue_repo(tmp_path / "repo")
    assert all(len(q.split()) > 20 for q in asked.values())  # real descriptions, not titles
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--output-dir", str(out),
              "--systems", f"{REFERENCE},everything", "--quiet")
    assert run.code in (EXIT_OK, EXIT_FLOORS), run.stderr
    doc = run.results(out)
    universe = {"web/sessions.py", "web/blueprints.py", "web/helpers.py"}
    assert doc["run"]["universe"]["modules"] == len(universe)
    blocks = {b["label"]: b for b in doc["systems"]}
    assert list(blocks) == [*REFERENCE.split(","), "everything"]
    for label, block in blocks.items():
        assert [q["id"] for q in block["queries"]] == ["requests-1963", "flask-5014"], label
        for q in block["queries"]:
            assert set(q["ranked_modules"]) <= universe, (label, q["id"])
    # the systems that are handed the universe's files find the fixed module, with
    # nothing to filter ...
    for label in ("bm25", "grep", "full-file", "oracle"):
        assert [q["ranked_modules"][0] for q in blocks[label]["queries"]] == \
            ["web/sessions.py", "web/blueprints.py"], label
        assert all("filtered_out" not in q for q in blocks[label]["queries"]), label
    # ... and one that reads the whole folder had the changelog, docs and tests taken out
    for q in blocks["everything"]["queries"]:
        assert q["filtered_out"] == {"docs": 2, "tests": 1}, q["id"]
    # every system is scored on the same grades over the same modules: the oracle's ceiling
    assert all(q["metrics"]["ndcg@5"] == 1.0 for q in blocks["oracle"]["queries"])
