"""The small frictions of a newcomer's first hour (issue 25), each as behaviour."""

from __future__ import annotations

import json
from dataclasses import replace

from evaluator.core.floors import Floor, FloorPolicy, check_floors
from evaluator.core.groundtruth_check import load_ground_truth
from evaluator.render import Extras, render
from evaluator.settings import build_parser
from tests.factories import make_results

FAST = ("--backend", "in_memory", "--quiet")


def _help(command: str) -> str:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return " ".join(sub.choices[command].format_help().split())


def test_negated_flags_say_what_they_do():
    text = _help("evaluate")
    assert "--no-comment do not post the pull-request comment (comment: never)" in text
    assert "--no-fail-on-floors report a missed floor or gate but exit 0" in text
    assert "not: the pull-request comment" not in text


def test_validate_prints_its_result_line_on_stdout(sample_repo, cli):
    run = cli("validate", str(sample_repo))
    assert run.code == 0
    assert run.stdout.strip().splitlines()[-1].startswith(
        f"{sample_repo / 'retrieval_queries.json'}: 19 queries, 0 error(s)")


def test_one_fact_is_one_fact():
    doc = {"queries": [{"id": "q1", "question": "Where is x?", "shape": "focused",
                        "relevance_grades": {"a.py": 3}, "gold_facts": ["alpha beta"]}]}
    _gt, problems = load_ground_truth(json.dumps(doc), "q.json")
    [message] = [p.message for p in problems if "fact" in p.message and "has 1" in p.message]
    assert message.startswith("has 1 fact;"), message


def test_the_error_annotation_says_error_once_and_names_the_problem(sample_repo, cli):
    queries = sample_repo / "retrieval_queries.json"
    doc = json.loads(queries.read_text())
    doc["queries"][0]["relevance_grades"]["no/such.py"] = 3
    queries.write_text(json.dumps(doc))
    run = cli("evaluate", str(sample_repo), *FAST, env={"GITHUB_ACTIONS": "true"})
    assert run.code == 2
    [annotation] = [line for line in run.stdout.splitlines() if line.startswith("::error")]
    message = annotation.split("::", 2)[2]
    assert "error:" not in message and "no/such.py" in message, annotation


def test_images_are_not_warned_about_but_other_binaries_are(tmp_path, cli):
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "r", {"docs/logo.png": b"\x89PNG\0\1" * 100,
                                      "data/blob.dat": b"\0\1\2" * 100})
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--no-fail-on-floors")
    warnings = [line for line in run.stderr.splitlines() if line.startswith("warning:")]
    assert not any("logo.png" in w for w in warnings), warnings
    assert any("blob.dat" in w for w in warnings), warnings
    assert "docs/logo.png" in run.stderr  # still said, as a progress line


def test_a_strict_floor_met_exactly_is_not_short_by_minus_zero():
    policy = FloorPolicy((Floor("faithfulness", ">", 0.0),), (), False)
    results = make_results(quality=0.9, seed=2, policy=policy)
    rows = tuple(replace(q, metrics={**q.metrics, "faithfulness": 0.0})
                 for q in results.queries)
    from evaluator.core.scoring import aggregate

    overall = aggregate(rows)
    results = replace(results, queries=rows, overall=overall, violations=check_floors(
        policy, overall=overall, shapes=results.shapes, rows=rows))
    report = render(results, extras=Extras(floors=policy))
    assert "-0.000" not in report
    assert "Faithfulness 0.000, floor > 0 · equal to the floor, which it must exceed" in report


def test_config_given_a_folder_says_so(sample_repo, cli, tmp_path):
    run = cli("evaluate", str(sample_repo), *FAST, "--config", str(tmp_path))
    assert run.code == 2
    assert f"options file {tmp_path} is a folder, not a file" in run.stderr
    assert "does not exist" not in run.stderr
