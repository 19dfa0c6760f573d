"""Evidence spans end to end on real git repositories: ``validate`` finds every span in the
question's needed modules, and a pull request that deletes a span is reported as
ground-truth drift (a ``::warning`` at the fact's line, a line in the report, the results)."""

from __future__ import annotations

import json
from pathlib import Path

from evaluator.core.results_reader import from_dict
from tests.conftest import git, make_repo

FAST = ("--backend", "in_memory", "--quiet")
IDENTITY = ("-c", "user.email=t@example.com", "-c", "user.name=t")
# identity-05's third fact quotes this line of auth/handlers.py (its grade-3 module).
SPAN = "return hmac.compare_digest(plain.encode(), hashed.encode())"
MODULE = "auth/handlers.py"


def _fact_line(repo: Path, qid: str, index: int) -> int:
    """The line of fact ``index`` of ``qid`` in the repository's ground truth."""
    lines = (repo / "retrieval_queries.json").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if f'"id": "{qid}"' in line)
    facts = next(i for i in range(start, len(lines)) if '"gold_facts"' in lines[i])
    objects = [i for i in range(facts, len(lines)) if lines[i].strip() == "{"]
    return objects[index] + 1


def _delete_span(repo: Path) -> None:
    path = repo / MODULE
    text = path.read_text()
    assert SPAN in text
    path.write_text(text.replace(SPAN, "return plain == hashed"))
    git(repo, *IDENTITY, "commit", "-qam", "compare passwords with ==")


def test_the_bundled_example_validates_with_every_fact_anchored(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    doc = json.loads((repo / "retrieval_queries.json").read_text())
    facts = [f for q in doc["queries"] for f in q["gold_facts"]]
    assert facts and all(isinstance(f, dict) and set(f) == {"fact", "evidence"} for f in facts)
    run = cli("validate", str(repo))
    assert run.code == 0, run.stdout + run.stderr
    assert "0 error(s)" in run.stdout


def test_validate_refuses_a_span_that_is_not_in_the_needed_modules(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    _delete_span(repo)
    run = cli("validate", str(repo), "--format", "github")
    assert run.code == 2, run.stdout + run.stderr
    [line] = [x for x in run.stdout.splitlines() if x.startswith("::error")]
    assert f"line={_fact_line(repo, 'identity-05', 2)}," in line
    assert "identity-05" in line and "gold_facts[2].evidence" in line
    assert "is not in any of its grade >= 2 modules (auth/handlers.py)" in line
    assert "Traceback" not in run.stderr


def test_a_pull_request_deleting_a_span_is_reported_as_drift(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    _delete_span(repo)
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), *FAST, "--baseline", "ref:HEAD~1", "--quiet",
              "--output-dir", str(out), env={"GITHUB_ACTIONS": "true"})
    assert run.code in (0, 1), run.stderr
    line = _fact_line(repo, "identity-05", 2)
    warnings = [x for x in run.stdout.splitlines()
                if x.startswith("::warning") and "title=ground-truth drift" in x]
    assert len(warnings) == 1, run.stdout
    assert "file=retrieval_queries.json" in warnings[0] or "retrieval_queries.json" in warnings[0]
    assert f"line={line}," in warnings[0]
    assert f"was in {MODULE} at the base commit" in warnings[0]
    report = (out / "report.md").read_text()
    assert "Ground truth and code disagree" in report
    assert "ground-truth drift: the evidence of fact 3 of question 'identity-05'" in report
    results = from_dict(json.loads((out / "results.json").read_text()), "results.json")
    [drift] = results.run.drift
    assert (drift.query_id, drift.field, drift.line) == (
        "identity-05", "gold_facts[2].evidence", line)
    # the fact is judged by its span: the head's context cannot hold it any more
    audit = {a.fact: a for a in results.query("identity-05").faithfulness.facts}
    fact = audit["hmac.compare_digest(plain.encode(), hashed.encode())"]
    assert (fact.judged_by, fact.found, fact.span) == ("anchored", False, None)
    # the base side, where the span exists, is not reported
    assert "drift" not in json.loads((out / "results.json").read_text()).get("baseline", {})


def test_no_drift_when_the_span_is_unchanged(tmp_path, cli):
    repo = make_repo(tmp_path / "repo")
    (repo / "README.md").write_text("a change that touches no span\n")
    git(repo, *IDENTITY, "add", "-A")
    git(repo, *IDENTITY, "commit", "-qm", "docs")
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), *FAST, "--baseline", "ref:HEAD~1", "--quiet",
              "--output-dir", str(out), env={"GITHUB_ACTIONS": "true"})
    assert run.code in (0, 1), run.stderr
    assert "ground-truth drift" not in run.stdout
    doc = json.loads((out / "results.json").read_text())
    assert "drift" not in doc["run"]
    assert doc["faithfulness_judge"]["anchored"] == doc["faithfulness_judge"]["facts"] == 67
    assert "faithfulness, 67 of 67 facts anchored" in (out / "report.md").read_text()

