"""What a pull request controls, against a cold adversarial test's findings: each case
failed before its fix (a traceback's exit 3, a silent last-key-wins, an unbounded read, a
character the comment would show as something else)."""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path

import pytest

from evaluator import app, ground_truth_file
from evaluator.core import yamlfile
from evaluator.core.groundtruth_check import MAX_QUERIES, MAX_QUESTION_CHARS, load_ground_truth
from evaluator.core.textcheck import HIDDEN, visible
from evaluator.escaping import md_escape
from tests.conftest import git, make_repo


def _commit(repo: Path) -> None:
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "add", "-A")
    git(repo, "-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "pr")


def _evaluate(cli, repo: Path, tmp_path: Path, *args: str):
    return cli("evaluate", str(repo), "--backend", "in_memory", "--output-dir",
               str(tmp_path / "out"), *args)


def _questions(repo: Path) -> dict:
    return json.loads((repo / "retrieval_queries.json").read_text())


def test_an_options_file_that_links_to_itself_is_named(tmp_path, cli):
    repo = make_repo(tmp_path / "r")
    (repo / ".retrieval-eval.yml").symlink_to(".retrieval-eval.yml")
    _commit(repo)
    run = _evaluate(cli, repo, tmp_path)
    assert run.code == 2, run.stderr
    assert "is a link that leads nowhere (or to itself)" in run.stderr


def test_a_baseline_with_a_huge_metric_is_refused_not_overflowed(tmp_path, cli):
    repo = make_repo(tmp_path / "r")
    assert _evaluate(cli, repo, tmp_path).code in (0, 1)
    data = json.loads((tmp_path / "out" / "results.json").read_text())
    data["queries"][0]["metrics"]["ndcg@5"] = 1e308
    (repo / "base.json").write_text(json.dumps(data))
    (repo / ".retrieval-eval.yml").write_text("baseline: file:base.json\n")
    _commit(repo)
    run = cli("evaluate", str(repo), "--backend", "in_memory", "--output-dir",
              str(tmp_path / "out2"))
    assert run.code == 2, run.stderr
    assert "1e+308 is no metric value" in run.stderr


def test_a_key_written_twice_is_an_error_in_json_and_yaml():
    doc = ('{"queries": [{"id": "q", "question": "Where?", "shape": "focused", '
           '"relevance_grades": {"a.py": 3, "a.py": 0}}]}')
    gt, problems = load_ground_truth(doc, "q.json", present_modules=["a.py"])
    assert gt is None and any("'a.py' appears twice" in p.message for p in problems)
    yaml_doc = ("queries:\n  - id: q\n    question: Where?\n"
                "    relevance_grades: {a.py: 3, a.py: 0}\n")
    gt, problems = load_ground_truth(yaml_doc, "q.yaml", present_modules=["a.py"])
    assert gt is None and any("'a.py' appears twice" in p.message for p in problems)
    assert problems[0].line == 4
    with pytest.raises(yamlfile.DuplicateKeyError):
        yamlfile.load("floors: {ndcg@5: 0.9}\nfloors: {}\n")
    assert yamlfile.load("a: {b: 1}\nc: {b: 2}\nd: [x, x]\n") == {
        "a": {"b": 1}, "c": {"b": 2}, "d": ["x", "x"]}


@pytest.mark.parametrize("k", ["1,2000", ",".join(str(i) for i in range(1, 30))])
def test_cut_offs_are_bounded(tmp_path, cli, k):
    run = cli("evaluate", "--example", "--backend", "in_memory", "--k", k,
              "--output-dir", str(tmp_path / "o"))
    assert run.code == 2 and "(at most 20 of them, each at most 1000)" in run.stderr


def test_a_question_too_long_and_too_many_questions_are_errors():
    long = {"queries": [{"id": "q", "question": "x" * (MAX_QUESTION_CHARS + 1),
                         "shape": "focused", "relevance_grades": {"a.py": 3}}]}
    gt, problems = load_ground_truth(json.dumps(long), "q.json", present_modules=["a.py"])
    assert gt is None and "over the 20,000 a question may hold" in problems[0].message
    many = {"queries": [{"id": f"q{i}", "question": "Where?", "shape": "focused",
                         "relevance_grades": {"a.py": 3}} for i in range(MAX_QUERIES + 1)]}
    gt, problems = load_ground_truth(json.dumps(many), "q.json", present_modules=["a.py"])
    assert gt is None and "over the 10,000 one evaluation asks" in problems[0].message


def test_files_read_are_bounded(tmp_path, cli, monkeypatch):
    repo = make_repo(tmp_path / "r")
    monkeypatch.setattr(ground_truth_file, "MAX_GROUND_TRUTH_BYTES", 1024)
    run = _evaluate(cli, repo, tmp_path)
    assert run.code == 2 and "ground-truth file" in run.stderr and "is over" in run.stderr
    monkeypatch.undo()
    assert _evaluate(cli, repo, tmp_path).code in (0, 1)
    monkeypatch.setattr(app, "MAX_RESULTS_BYTES", 1024)
    run = cli("comment", "--results", str(tmp_path / "out" / "results.json"), "--preview")
    assert run.code == 2 and "results file" in run.stderr and "is over" in run.stderr


def test_an_entity_in_a_question_is_shown_as_written():
    assert md_escape("signed &#x202E;txt &amp; &#8203;") == \
        "signed &amp;#x202E;txt &amp;amp; &amp;#8203;"


def test_every_format_character_but_the_joiners_is_shown_as_its_code_point():
    if sys.maxunicode < 0x10FFFF:  # pragma: no cover - every CPython build is wide
        pytest.skip("narrow build")
    fmt = {chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) == "Cf"}
    missed = sorted(f"U+{ord(c):04X}" for c in fmt - {"\u200c", "\u200d"}
                    if not HIDDEN.fullmatch(c))
    assert not missed, missed
    assert HIDDEN.search("\u200c\u200d") is None  # scripts and emoji need them
    assert visible("a\u3164b\u034f") == "a<U+3164>b<U+034F>"  # shown as nothing too


@pytest.mark.parametrize(("body", "needle"), [
    ('{% set ns = namespace(x=2) %}{% for i in range(16) %}{% set ns.x = ns.x * ns.x %}'
     '{% endfor %}{{ ns.x > 5 }}', "a product that large"),
    ("{{ (99999 ** 60) ** 64 > 1 }}", "a power that large"),
    ('{{ (["x" * 3999999] * 500)|join }}', "over the 4,000,000 limit"),
    ('{{ ["x" * 3000000, "y" * 3000000]|join }}', "a join of 6,000,000"),
    ('{{ ("x" * 3999999).replace("x", "x" * 500)|length }}', "a replacement of"),
    ('{{ ("\\t" * 20000).expandtabs(1000)|length }}', "expanded tabs of"),
    ('{{ "-".join(["x" * 3000000, "y" * 3000000])|length }}', "a join of"),
])
def test_a_template_cannot_build_a_huge_value_in_one_call(tmp_path, body, needle):
    """Each of these is one C call: the time budget cannot stop it midway, so its size is
    checked before it runs."""
    from evaluator.errors import InputError
    from evaluator.template_sandbox import render_template

    template = tmp_path / "t.md.j2"
    template.write_text(body)
    with pytest.raises(InputError) as raised:
        render_template(template, "t.md.j2", {})
    assert needle in str(raised.value)


def test_ordinary_template_arithmetic_and_joins_still_work(tmp_path):
    from evaluator.template_sandbox import render_template

    template = tmp_path / "t.md.j2"
    template.write_text('{{ 2 ** 10 }} {{ 12 * 12 }} {{ ["a", "b"]|join(", ") }} '
                        '{{ "a\\tb".expandtabs(4) }} {{ "x-y".replace("-", "+") }} '
                        '{{ ("ab" * 3) }} {{ "/".join(["p", "q"]) }}')
    assert render_template(template, "t.md.j2", {}) == "1024 144 a, b a b x+y ababab p/q"


@pytest.mark.parametrize(("b_path", "b_queries", "needle"), [
    ("lnk", "auth/q2.json", "overlap: a file under both paths"),
    ("users", "lnkq.json", "read the same ground truth auth/q.json"),
])
def test_a_committed_link_cannot_make_two_sections_one(tmp_path, cli, b_path, b_queries,
                                                       needle):
    repo = make_repo(tmp_path / "r")
    one = json.dumps({"queries": [{"id": "s1", "question": "How are tokens signed?",
                                   "shape": "focused", "relevance_grades": {"jwt_utils.py": 3}}]})
    (repo / "auth" / "q.json").write_text(one)
    (repo / "auth" / "q2.json").write_text(one)
    (repo / "lnk").symlink_to("auth")
    (repo / "lnkq.json").symlink_to("auth/q.json")
    (repo / ".retrieval-eval.yml").write_text(
        "sections: {a: {path: auth, queries: auth/q.json}, "
        f"b: {{path: {b_path}, queries: {b_queries}}}}}\n")
    _commit(repo)
    run = _evaluate(cli, repo, tmp_path)
    assert run.code == 2, run.stdout + run.stderr
    assert "once links are followed" in run.stderr and needle in run.stderr
