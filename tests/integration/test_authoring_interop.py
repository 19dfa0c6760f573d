"""Ground-truth authoring and interoperability: init, validate, import, TREC export."""

from __future__ import annotations

import ast
import json
import math
import re
import subprocess
from pathlib import Path

import pytest
import pytrec_eval

from evaluator.core import interop
from evaluator.core.groundtruth import normalize_evidence
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.paths import EXAMPLE_QUERIES
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


def _graded(q: dict, least: int) -> list[str]:
    return [m for m, g in q["relevance_grades"].items() if g >= least]


@pytest.mark.parametrize("count", [1, 5, 12])
def test_init_drafts_exactly_count_reviewable_questions(tmp_path, cli, count):
    repo = make_repo(tmp_path / "r", {"tests/test_x.py": "def test_x():\n    assert 1\n",
                                      "docs/conf.py": "project = 'x'\n",
                                      "LICENSE": "MIT\n"})
    (repo / "retrieval_queries.json").unlink()
    run = cli("init", str(repo), "--backend", "in_memory", "--cache-dir", str(tmp_path / "c"),
              "--count", str(count))
    assert run.code == 0, run.stderr
    doc = json.loads((repo / "retrieval_queries.json").read_text())
    assert doc["draft"] is True
    assert len(doc["queries"]) == count
    if count >= 3:
        assert {q["shape"] for q in doc["queries"]} == {"focused", "cross-file", "identity"}
    modules = set(doc["queries"][0]["relevance_grades"])
    # The default universe: the code, not tests, docs, licences or the README.
    assert {"auth/handlers.py", "users/crud.py"} <= modules
    assert not modules & {"README.md", "tests/test_x.py", "docs/conf.py", "LICENSE"}
    for q in doc["queries"]:
        assert set(q["relevance_grades"]) == modules
        assert sorted(q["relevance_grades"].values()).count(3) == 1
        assert 2 <= len(q["gold_facts"]) <= 4
        assert q["question"].endswith("?")
        sources = [(repo / m).read_text() for m in _graded(q, 2)]
        for entry in q["gold_facts"]:
            # Every drafted fact is anchored: the whole source line(s) it was quoted from.
            assert set(entry) == {"fact", "evidence"}, entry
            fact, span = entry["fact"], normalize_evidence(entry["evidence"])
            assert any(fact.lower() in text.lower() for text in sources), (fact, q["id"])
            assert normalize_evidence(fact) in span
            assert any(span in normalize_evidence(text) for text in sources), (span, q["id"])
            # whole lines, a docstring's quotes or a comment's # aside
            first = entry["evidence"].splitlines()[0].strip()
            assert any(re.sub(r'^(\"\"\"|#+ ?)|\"\"\"$', "", line.strip()) == first
                       for text in sources for line in text.splitlines()), first
        reasons = q["review"]["grades"]
        assert set(reasons) == set(_graded(q, 1))
        assert all(reasons[m].startswith(f"{q['relevance_grades'][m]}: ") for m in reasons)
        assert all(m.split(" ")[1] in modules for m in q["review"].get("retrieved", []))
    assert any(q["review"].get("retrieved") for q in doc["queries"])
    # Progress while it works, with counts.
    assert "universe: 13 modules; left out" in run.stderr
    assert "index: building the NeuralMind index" in run.stderr
    assert f"drafting: {count}/{count} questions" in run.stderr
    validated = cli("validate", str(repo), "--strict")
    assert validated.code == 0, validated.stdout + validated.stderr
    assert f"{count} quer" in validated.stdout and "0 error(s)" in validated.stdout  # issue 25
    # Issue 24: the docstring route asks from what the code does, never naming its answer
    # (it drafted 9 of 12 such questions on this example before).
    assert "names its answer" not in validated.stdout
    assert all("`" not in q["question"] and ".py" not in q["question"] for q in doc["queries"])
    again = cli("init", str(repo), "--no-review")
    assert again.code == 2 and "never overwritten" in again.stderr
    evaluated = cli("evaluate", str(repo), *FAST)
    assert "marked as a draft" in evaluated.stderr


def test_init_says_why_it_drafts_fewer(tmp_path, cli):
    repo = make_repo(tmp_path / "r")
    out = tmp_path / "draft.json"
    run = cli("init", str(repo), "--no-review", "--count", "200", "--output", str(out))
    assert run.code == 0, run.stderr
    drafted = len(json.loads(out.read_text())["queries"])
    assert drafted < 200
    empty = [line for line in run.stderr.splitlines() if "slot left empty" in line]
    assert len(empty) == 200 - drafted
    assert all(line.startswith("warning: ") for line in empty)
    assert f"{drafted} draft question(s) of 200 asked" in run.stdout


def test_init_mix_and_universe_flags(tmp_path, cli):
    repo = make_repo(tmp_path / "r")
    out = tmp_path / "draft.json"
    run = cli("init", str(repo), "--no-review", "--count", "4", "--mix",
              "focused=1,identity=0,cross-file=0", "--exclude", "default,billing/",
              "--output", str(out))
    assert run.code == 0, run.stderr
    doc = json.loads(out.read_text())
    assert {q["shape"] for q in doc["queries"]} == {"focused"}
    assert not any(m.startswith("billing/") for m in doc["queries"][0]["relevance_grades"])
    bad = cli("init", str(repo), "--mix", "focussed=1", "--output", str(tmp_path / "x.json"))
    assert bad.code == 2 and "mix: 'focussed=1'" in bad.stderr
    bad_glob = cli("init", str(repo), "--include", "../x", "--output", str(tmp_path / "y.json"))
    assert bad_glob.code == 2 and "'..'" in bad_glob.stderr


def test_init_review_shows_retrieval_against_grades(sample_repo, cli, tmp_path):
    run = cli("init", str(sample_repo), "--review", str(sample_repo / "retrieval_queries.json"),
              "--backend", "in_memory", "--cache-dir", str(tmp_path / "c"))
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("focused-01 (focused): ")
    assert any(re.match(r"^  #1 \S+  grade [0-3]", line) for line in lines)
    assert any("retrieved but graded 0" in line or "missed:" in line for line in lines)


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
    assert "19 queries, 0 error(s), 0 warning(s)" in run.stdout


def test_import_neuralmind_eval(sample_repo, cli):
    (sample_repo / "retrieval_queries.json").unlink()
    (sample_repo / ".neuralmind.eval.yaml").write_text(
        "- q: How are refunds issued?\n  gold: billing/stripe_client.py\n"
        "- q: How does login work?\n  gold: [auth/handlers.py, auth/jwt_utils.py]\n")
    run = cli("import", "neuralmind-eval", str(sample_repo))
    assert run.code == 0, run.stderr
    text = (sample_repo / "retrieval_queries.json").read_text()
    doc = json.loads(text)
    first, second = doc["queries"]
    assert first["shape"] == "focused" and second["shape"] == "cross-file"
    assert first["relevance_grades"]["billing/stripe_client.py"] == 3
    assert first["relevance_grades"]["auth/handlers.py"] == 0
    assert second["relevance_grades"]["auth/jwt_utils.py"] == 3
    assert cli("validate", str(sample_repo)).code == 0
    # Imported questions are retrieval-only: no fact is made up (issue 24).
    assert all(not q.get("gold_facts") for q in doc["queries"])
    # The document writer knows anchored facts: the bundled example's, written and read
    # back, are the same.
    example = Path(EXAMPLE_QUERIES).read_text(encoding="utf-8")
    gt, _problems = load_ground_truth(example, "example.json")
    assert gt is not None and all(q.anchored for q in gt.queries)
    again = interop.document(gt.queries, {q.id: [
        {"fact": f, "evidence": e} if e is not None else f
        for f, e in zip(q.gold_facts, q.evidence or [None] * len(q.gold_facts), strict=True)]
        for q in gt.queries}, draft=True, description="round trip")
    assert [q["gold_facts"] for q in again["queries"]] == [
        q["gold_facts"] for q in json.loads(example)["queries"]]


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


def test_heartbeat_reports_while_a_step_runs():
    import io
    import time

    from evaluator.progress import Progress, heartbeat

    stream = io.StringIO()
    with heartbeat(Progress(stream), "index", every=0.02):
        time.sleep(0.1)
    lines = stream.getvalue().splitlines()
    assert lines and all("index: still running (" in line for line in lines)
    quiet = io.StringIO()
    with heartbeat(Progress(quiet, quiet=True), "index", every=0.02):
        time.sleep(0.05)
    assert quiet.getvalue() == ""


def test_explain_flags_under_graded_and_missed_modules():
    from evaluator.authoring import explain
    from evaluator.core.groundtruth_check import load_ground_truth

    text = json.dumps({"queries": [{
        "id": "q1", "question": "How is a token signed?", "shape": "focused",
        "relevance_grades": {"a.py": 3, "b.py": 2, "c.py": 0},
        "gold_facts": ["sign_token(", "JWT_SECRET"]}]})
    gt, problems = load_ground_truth(text, "gt.json")
    assert gt is not None, problems
    lines = explain(gt, {"q1": ["c.py", "a.py"]}, top=5)
    assert lines == [
        "q1 (focused): How is a token signed?",
        "  #1 c.py  grade 0  <- retrieved but graded 0: under-graded?",
        "  #2 a.py  grade 3",
        "  missed: b.py (grade 2) is not in the top 5",
    ]
    assert explain(gt, {}, top=5)[1] == "  NeuralMind retrieved no module of the universe"


def test_retrieval_grade_needs_an_import_link_and_a_use_of_the_name():
    from evaluator.authoring import _retrieval_grades
    from evaluator.drafting import Candidate

    candidate = Candidate("focused", "How does `Cart.checkout()` in `cart.py` charge?",
                          {"cart.py": 3}, {"cart.py": "defines `Cart.checkout`"},
                          ("def checkout(", "Charge the customer"), "cart.py:Cart.checkout")
    identifiers = {"shop.py": frozenset({"cart", "checkout", "user"}),
                   "audit.py": frozenset({"cart"}), "other.py": frozenset({"checkout"})}
    grades, reasons = _retrieval_grades(candidate, ["other.py", "audit.py", "shop.py"],
                                        {"audit.py", "shop.py"}, identifiers)
    assert grades == {"cart.py": 3, "shop.py": 1}
    assert "ranks it #3" in reasons["shop.py"] and "`checkout`" in reasons["shop.py"]
    # A question phrased without names: the names it is about come with the candidate.
    unnamed = Candidate("focused", "How does the code charge the customer?", {"cart.py": 3},
                        {"cart.py": "defines `Cart.checkout`"},
                        ("def checkout(", "Charge the customer"), "cart.py:Cart.checkout",
                        about=("checkout",))
    assert _retrieval_grades(unnamed, ["other.py", "audit.py", "shop.py"],
                             {"audit.py", "shop.py"}, identifiers)[0] == grades


# ----------------------------------------------------------------------------- issue 24


def test_import_reads_a_multi_line_beir_question_as_validate_does(sample_repo, cli, tmp_path):
    """``import trec`` wrote BEIR's multi-line questions, which ``validate`` then refused
    as "control character"; both now read them as one paragraph."""
    (sample_repo / "retrieval_queries.json").unlink()
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 auth/handlers.py 3\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "Login fails after a redirect.\n\n"
                                   "Steps:\r\n  1. log in\n  2. follow the link"}) + "\n")
    run = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
              str(queries))
    assert run.code == 0, run.stderr
    doc = json.loads((sample_repo / "retrieval_queries.json").read_text())
    (query,) = doc["queries"]
    assert query["question"] == ("Login fails after a redirect. Steps: 1. log in 2. follow "
                                 "the link")
    validated = cli("validate", str(sample_repo))
    assert validated.code == 0, validated.stdout + validated.stderr


def test_import_refuses_a_question_with_an_escape(sample_repo, cli, tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 auth/handlers.py 3\n")
    queries = tmp_path / "queries.jsonl"
    queries.write_text(json.dumps({"_id": "q1", "text": "red \x1b[31m text"}) + "\n")
    out = tmp_path / "o.json"
    run = cli("import", "trec", str(sample_repo), "--qrels", str(qrels), "--queries",
              str(queries), "--output", str(out))
    assert run.code == 2 and "control character" in run.stderr
    assert not out.exists()


def test_imported_questions_are_retrieval_only_not_docstring_facts(sample_repo, cli):
    """``import`` made facts of module docstrings ("requests.models ~~~~~~~~ This module…");
    it now drafts none: the questions are retrieval-only until someone quotes facts."""
    (sample_repo / "retrieval_queries.json").unlink()
    (sample_repo / ".neuralmind.eval.yaml").write_text(
        "- q: |\n    How are refunds\n    issued?\n  gold: billing/stripe_client.py\n")
    run = cli("import", "neuralmind-eval", str(sample_repo))
    assert run.code == 0, run.stderr
    doc = json.loads((sample_repo / "retrieval_queries.json").read_text())
    (query,) = doc["queries"]
    assert query["question"] == "How are refunds issued?"
    assert query["gold_facts"] == []
    assert "retrieval-only" in doc["description"]
    validated = cli("validate", str(sample_repo))
    assert validated.code == 0, validated.stdout + validated.stderr
    assert "0 error(s), 1 warning(s)" in validated.stdout   # the draft, nothing on facts
    assert "gold_facts" not in validated.stdout + validated.stderr


@pytest.mark.parametrize("fmt", ["neuralmind-eval", "trec"])
def test_import_says_outside_the_module_universe_for_a_file_that_exists(sample_repo, cli,
                                                                         tmp_path, fmt):
    (sample_repo / "retrieval_queries.json").unlink()
    (sample_repo / "tests").mkdir(exist_ok=True)
    (sample_repo / "tests" / "test_auth.py").write_text("def test_login():\n    pass\n")
    # In the checkout: git's tracked files are the checkout (README, Reproducibility).
    subprocess.run(["git", "-C", str(sample_repo), "add", "tests/test_auth.py"], check=True)
    if fmt == "trec":
        qrels = tmp_path / "qrels.txt"
        qrels.write_text("q1 0 tests/test_auth.py 3\nq1 0 gone.py 1\n")
        queries = tmp_path / "queries.tsv"
        queries.write_text("q1\tHow is login tested?\n")
        args = ["--qrels", str(qrels), "--queries", str(queries)]
    else:
        (sample_repo / ".neuralmind.eval.yaml").write_text(
            "- q: How is login tested?\n  gold: [tests/test_auth.py, gone.py]\n")
        args = []
    run = cli("import", fmt, str(sample_repo), *args)
    assert run.code == 2
    assert "outside the module universe: tests/test_auth.py" in run.stderr
    assert "not in the checkout: gone.py" in run.stderr


def test_validate_warns_about_a_question_that_names_its_answer(sample_repo, cli):
    """Issue 24: a question naming its grade-3 file or a symbol defined there is found by
    keyword search alone; validate says so (a warning: the file stays valid)."""
    path = sample_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    target = next(q for q in doc["queries"]
                  if q["relevance_grades"].get("auth/jwt_utils.py") == 3)
    target["question"] = "How does `jwt_utils.py` sign a token?"
    path.write_text(json.dumps(doc))
    run = cli("validate", str(sample_repo))
    assert run.code == 0, run.stdout + run.stderr
    out = run.stdout + run.stderr
    assert f"query {target['id']!r}, field question: the question names its answer " \
           "(jwt_utils, jwt_utils.py" in out
    # The bundled identity questions ask "What is TokenExpiredError …?": naming the thing
    # is what an identity question does, so they are not warned about.
    flagged = re.findall(r"query '([^']+)', field question: the question names", out)
    assert flagged == [target["id"]]


def test_validate_warns_about_a_backticked_public_name_of_a_grade_2_module(sample_repo, cli):
    """Issue 24 (round 6, tenacity history-19 `` `stop_after_delay` ``): a public class or
    function of a module graded 2, spelt as code, names the answer too."""
    path = sample_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    target, name = next(
        (q, node.name) for q in doc["queries"] if q["shape"] != "identity"
        for module, grade in sorted(q["relevance_grades"].items())
        if grade == 2 and module.endswith(".py")
        for node in ast.parse((sample_repo / module).read_text()).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"))
    target["question"] = f"When is `{name}` needed on the way to an answer?"
    path.write_text(json.dumps(doc))
    out = cli("validate", str(sample_repo))
    assert out.code == 0, out.stdout + out.stderr
    assert f"query {target['id']!r}, field question: the question names its answer " \
           f"({name}, of a module graded 3, or a public class or function of one graded 2)" \
        in out.stdout + out.stderr
