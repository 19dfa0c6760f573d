"""Ground-truth authoring and interoperability: init, validate, import, TREC export."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import pytrec_eval

from tests.conftest import make_repo

FAST = ("--backend", "in_memory", "--quiet")


def _trec_means(out: Path, measures: set[str], *, exponential: bool = False) -> dict[str, float]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (out / "qrels.trec").read_text().splitlines():
        qid, _it, doc, grade = line.split()
        g = int(grade)
        qrels.setdefault(qid, {})[doc] = (2**g - 1) if exponential else g
    run: dict[str, dict[str, float]] = {}
    for line in (out / "run.trec").read_text().splitlines():
        qid, _q0, doc, _rank, score, _tag = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    scored = pytrec_eval.RelevanceEvaluator(qrels, measures, relevance_level=1).evaluate(run)
    keys = {m.replace(".", "_") for m in measures}
    # A query the index answered with nothing scores 0 and still counts in the mean.
    return {k: sum(scored.get(q, {}).get(k, 0.0) for q in qrels) / len(qrels) for k in keys}


@pytest.mark.parametrize("gain", ["linear", "exponential"])
def test_trec_export_rescored_by_pytrec_eval_gives_our_numbers(sample_repo, cli, tmp_path,
                                                               gain):
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--output-dir", str(out), "--gain", gain, *FAST)
    assert run.code == 1, run.stderr
    ours = run.results(out)["overall"]["metrics"]
    trec = _trec_means(out, {"recall.5", "P.5", "ndcg_cut.5", "success.5", "recall.10"},
                       exponential=gain == "exponential")
    assert math.isclose(trec["recall_5"], ours["recall@5"], abs_tol=1e-9)
    assert math.isclose(trec["recall_10"], ours["recall@10"], abs_tol=1e-9)
    assert math.isclose(trec["P_5"], ours["precision@5"], abs_tol=1e-9)
    assert math.isclose(trec["ndcg_cut_5"], ours["ndcg@5"], abs_tol=1e-9)
    assert math.isclose(trec["success_5"], ours["hit_rate"], abs_tol=1e-9)


def test_export_writes_one_run_per_side(sample_repo, cli, tmp_path):
    (sample_repo / "api" / "routes.py").write_text("# emptied\n")
    from tests.conftest import git

    git(sample_repo, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qam", "edit")
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--output-dir", str(out), "--baseline",
              "ref:HEAD~1", *FAST)
    assert run.code == 1, run.stderr
    head = (out / "run.trec").read_text()
    base = (out / "run.base.trec").read_text()
    assert head.split()[5] == "head" and base.split()[5] == "base"
    assert head != base


def test_init_drafts_a_reviewable_file_and_never_overwrites(tmp_path, cli):
    repo = make_repo(tmp_path / "r")
    (repo / "retrieval_queries.json").unlink()
    run = cli("init", str(repo), "--backend", "in_memory", "--cache-dir", str(tmp_path / "c"),
              "--count", "8")
    assert run.code == 0, run.stderr
    doc = json.loads((repo / "retrieval_queries.json").read_text())
    assert doc["draft"] is True
    assert 1 <= len(doc["queries"]) <= 8
    modules = set(doc["queries"][0]["relevance_grades"])
    assert {"auth/handlers.py", "README.md", "users/crud.py"} <= modules
    for q in doc["queries"]:
        assert set(q["relevance_grades"]) == modules
        assert sorted(q["relevance_grades"].values()).count(3) == 1
        assert q["gold_facts"]
        assert q["shape"] in ("focused", "cross-file", "identity")
        assert all(m in modules for m in q.get("review", {}).get("candidates", []))
    assert any(q.get("review", {}).get("candidates") for q in doc["queries"])
    again = cli("init", str(repo), "--no-review")
    assert again.code == 2 and "never overwritten" in again.stderr
    evaluated = cli("evaluate", str(repo), *FAST)
    assert "marked as a draft" in evaluated.stderr


def test_validate_github_annotations_point_at_file_and_line(sample_repo, cli):
    path = sample_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    doc["queries"][1]["relevance_grades"]["users/crudd.py"] = 2
    path.write_text(json.dumps(doc, indent=2))
    run = cli("validate", str(sample_repo), "--format", "github")
    assert run.code == 2
    line = next(n for n, text in enumerate(path.read_text().splitlines(), 1)
                if '"users/crudd.py"' in text)
    assert f"::error file={path},line={line},title=ground truth::" in run.stdout
    assert "did you mean 'users/crud.py'" in run.stdout
    ok = cli("validate", str(sample_repo), "--queries", str(sample_repo / "missing.json"))
    assert ok.code == 2 and "does not exist" in ok.stderr


def test_validate_clean_file_exits_zero(sample_repo, cli):
    run = cli("validate", str(sample_repo), "--strict")
    assert run.code == 0, run.stdout + run.stderr
    assert "19 queries, 0 error(s), 0 warning(s)" in run.stderr


def test_import_neuralmind_eval(sample_repo, cli):
    (sample_repo / "retrieval_queries.json").unlink()
    (sample_repo / ".neuralmind.eval.yaml").write_text(
        "- q: How are refunds issued?\n  gold: billing/stripe_client.py\n"
        "- q: How does login work?\n  gold: [auth/handlers.py, auth/jwt_utils.py]\n")
    run = cli("import", "neuralmind-eval", str(sample_repo))
    assert run.code == 0, run.stderr
    doc = json.loads((sample_repo / "retrieval_queries.json").read_text())
    first, second = doc["queries"]
    assert first["shape"] == "focused" and second["shape"] == "cross-file"
    assert first["relevance_grades"]["billing/stripe_client.py"] == 3
    assert first["relevance_grades"]["auth/handlers.py"] == 0
    assert second["relevance_grades"]["auth/jwt_utils.py"] == 3
    assert cli("validate", str(sample_repo)).code == 0


@pytest.mark.parametrize(("content", "needle"), [
    ("- q: Where?\n  gold: nowhere.py\n", "not in the checkout: nowhere.py"),
    ("- q: ''\n  gold: auth/handlers.py\n", "needs a non-empty 'q' and 'gold'"),
    ("- q: Same?\n  gold: auth/handlers.py\n- q: same?\n  gold: users/crud.py\n",
     "repeats the question"),
    ("[]\n", "expected a list"),
])
def test_import_neuralmind_eval_bad_input(sample_repo, cli, content, needle):
    (sample_repo / "retrieval_queries.json").unlink()
    (sample_repo / ".neuralmind.eval.yaml").write_text(content)
    run = cli("import", "neuralmind-eval", str(sample_repo))
    assert run.code == 2
    assert needle in run.stderr
    assert not (sample_repo / "retrieval_queries.json").exists()


def test_import_trec_and_beir(sample_repo, cli, tmp_path):
    (sample_repo / "retrieval_queries.json").unlink()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 auth/handlers.py 3\nq1 0 users/crud.py 1\nq2 0 db/connection.py 2\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text('{"_id": "q1", "text": "How does login work?"}\n'
                       '{"_id": "q2", "text": "Where is the database?"}\n')
    run = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
              str(queries))
    assert run.code == 0, run.stderr
    doc = json.loads((sample_repo / "retrieval_queries.json").read_text())
    assert [q["id"] for q in doc["queries"]] == ["q1", "q2"]
    assert doc["queries"][0]["shape"] == "cross-file"
    assert doc["queries"][1]["relevance_grades"]["db/connection.py"] == 2
    beir = tmp_path / "beir.tsv"
    beir.write_text("query-id\tcorpus-id\tscore\nq1\tauth/handlers.py\t1\n")
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("q1\tHow does login work?\n")
    out = tmp_path / "beir.json"
    run = cli("import", "trec", str(sample_repo), "--qrels", str(beir), "--queries", str(tsv),
              "--output", str(out))
    assert run.code == 0, run.stderr
    assert json.loads(out.read_text())["queries"][0]["relevance_grades"]["auth/handlers.py"] == 1


def test_import_trec_grades_outside_range_are_refused_or_clipped(sample_repo, cli, tmp_path):
    (sample_repo / "retrieval_queries.json").unlink()
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 auth/handlers.py 5\n")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tHow does login work?\n")
    run = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
              str(queries))
    assert run.code == 2 and "grade 5 is outside 0-3" in run.stderr and "--clip-grades" in \
        run.stderr
    run = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
              str(queries), "--clip-grades")
    assert run.code == 0
    doc = json.loads((sample_repo / "retrieval_queries.json").read_text())
    assert doc["queries"][0]["relevance_grades"]["auth/handlers.py"] == 3


def test_import_trec_bad_queries(sample_repo, cli, tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 auth/handlers.py 2\n")
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\t \nq1\tagain\n")
    run = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
              str(queries), "--output", str(tmp_path / "o.json"))
    assert run.code == 2
    assert "is empty" in run.stderr and "appears twice" in run.stderr
    exists = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
                 str(queries))
    assert exists.code == 2 and "already exists" in exists.stderr
