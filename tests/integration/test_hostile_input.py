"""Input from people who should not control our output: PR authors, forks, odd files.

Each case here was a real hole found in review: HTML through a results file, workflow
commands through control characters, a pasted marker, template code execution, and user
options silently overridden by the Action's defaults.
"""

from __future__ import annotations

import json
import unicodedata

import pytest

from evaluator.render import SUMMARY_LIMIT, render_summary
from tests.factories import make_results, view_of
from tests.fake_github import PR, REPO, Scripted

FAST = ("--backend", "in_memory", "--quiet")
TOKEN = "ghs_hostile-input-TOKEN-77"


@pytest.fixture
def saved(sample_repo, cli, tmp_path) -> dict:
    out = tmp_path / "saved"
    run = cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(out))
    assert run.code == 1, run.stderr
    return json.loads((out / "results.json").read_text())


def _gh_env(server, tmp_path) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR}}))
    return {"GITHUB_API_URL": server.base_url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_TOKEN": TOKEN, "GITHUB_ACTIONS": "true"}


def test_results_file_cannot_inject_html_through_a_violation(saved, cli, server, tmp_path):
    saved["floors"] = {"passed": False, "violations": [{
        "scope": "overall", "metric": "mrr", "value": 0.1,
        "rule": '<img src=https://evil.example/x.png> <a href="https://evil.example">x</a> '
                "<!-- hidden rest"}]}
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(saved))
    run = cli("comment", "--results", str(hostile), "--no-fail-on-floors",
              env=_gh_env(server, tmp_path))
    assert run.code == 0, run.stderr
    body = server.on_issue(PR)[0]["body"]
    assert "<img" not in body and "<a " not in body
    # only our own markers: the sticky key and the state (fingerprint) line, first two lines
    assert body.count("<!--") == 2
    assert all(line.startswith("<!-- neuralmind-retrieval-eval:")
               for line in body.splitlines()[:2])


@pytest.mark.parametrize("field", ["id", "shape", "question"])
def test_control_characters_in_ground_truth_are_refused(sample_repo, cli, field):
    path = sample_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    doc["queries"][0][field] = "focused\n::error title=Injected::PR author controls this"
    path.write_text(json.dumps(doc))
    out = sample_repo.parent / "out"
    run = cli("evaluate", str(sample_repo), *FAST, "--output-dir", str(out),
              env={"GITHUB_ACTIONS": "true"})
    if field == "question":
        # Issue 24: a multi-line question is read as one paragraph, so the newline can
        # no longer start a workflow command of its own.
        assert run.code in (0, 1), run.stderr
        results = json.loads((out / "results.json").read_text())
        assert results["queries"][0]["question"] == \
            "focused ::error title=Injected::PR author controls this"
    else:
        assert run.code == 2
        assert "contains a control character" in run.stderr
    for line in (run.stdout + run.stderr).splitlines():
        assert not line.startswith("::error title=Injected")
    if out.exists():
        for written in out.rglob("*"):
            if written.is_file():
                for line in written.read_text(errors="replace").splitlines():
                    assert not line.startswith("::error title=Injected"), written


def test_control_characters_in_a_results_file_are_refused(saved, cli, server, tmp_path):
    saved["queries"][0]["id"] = "q\n::warning::injected"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(saved))
    run = cli("comment", "--results", str(hostile), env=_gh_env(server, tmp_path))
    assert run.code == 2
    assert "contains a control character" in run.stderr
    assert not any(line.startswith("::warning::injected") for line in run.stdout.splitlines())
    assert server.sent() == []


def test_results_file_missing_a_headline_metric(saved, cli, tmp_path):
    del saved["queries"][0]["metrics"]["ndcg@5"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(saved))
    run = cli("comment", "--results", str(bad), env={})
    assert run.code == 2
    assert "missing metric(s) ndcg@5" in run.stderr


def test_comment_command_fails_when_github_refuses(saved, cli, server, tmp_path):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(saved))
    server.script.append(Scripted("POST", 403, {"message": "Resource not accessible"}))
    run = cli("comment", "--results", str(path), "--no-fail-on-floors",
              env=_gh_env(server, tmp_path))
    assert run.code == 2
    assert "pull-requests: write" in run.stderr


def test_templates_are_sandboxed(sample_repo, cli, tmp_path):
    evil = tmp_path / "evil.md.j2"
    evil.write_text("{{ cycler.__init__.__globals__.os.popen('id').read() }}")
    run = cli("evaluate", str(sample_repo), *FAST, "--template", str(evil))
    assert run.code == 2
    assert "not allowed" in run.stderr or "unsafe" in run.stderr
    assert "uid=" not in run.stdout


def test_a_broken_template_fails_before_any_work(sample_repo, cli, tmp_path):
    typo = tmp_path / "typo.md.j2"
    typo.write_text('{% extends "builtin/comment.md.j2" %}{% block footer %}{{ nosuchvar }}'
                    "{% endblock %}")
    out = tmp_path / "out"
    run = cli("evaluate", str(sample_repo), "--backend", "in_memory", "--template", str(typo),
              "--output-dir", str(out))
    assert run.code == 2
    assert "nosuchvar" in run.stderr
    assert "building" not in run.stderr and not out.exists()


def test_draft_must_be_a_boolean(sample_repo, cli):
    path = sample_repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    doc["draft"] = "false"
    path.write_text(json.dumps(doc))
    run = cli("validate", str(sample_repo))
    assert run.code == 2
    assert '"draft" must be true or false' in run.stdout


def test_unicode_normalisation_of_module_paths(tmp_path, cli):
    from tests.conftest import make_repo

    nfd = unicodedata.normalize("NFD", "café.py")
    queries = {"queries": [{"id": "q", "question": "Where is the coffee code?",
                            "shape": "focused",
                            "relevance_grades": {unicodedata.normalize("NFC", "café.py"): 3},
                            "gold_facts": ["brew coffee", "def brew"]}]}
    repo = make_repo(tmp_path / "r", {nfd: '"""Brew coffee."""\n\ndef brew():\n    return 1\n',
                                      "retrieval_queries.json": json.dumps(queries)},
                     sample=False)
    run = cli("validate", str(repo))
    assert run.code == 0, run.stdout + run.stderr


def test_job_summary_stays_under_githubs_limit():
    results = make_results(n=1500, question="Where is feature {i}? " + "detail " * 30)
    summary = render_summary(view_of(results))
    assert len(summary.text) <= SUMMARY_LIMIT
    assert summary.dropped


def test_action_inputs_left_empty_keep_the_options_file(sample_repo, cli, tmp_path):
    (sample_repo / ".retrieval-eval.yml").write_text(
        "k: [1, 3]\nbackend: in_memory\ncomment: false\nfloors: {}\nshape-floors: {}\n"
        "zero-miss: false\n")
    env = {"GITHUB_WORKSPACE": str(sample_repo), "GITHUB_OUTPUT": str(tmp_path / "o.txt"),
           **{f"INPUT_{n}": "" for n in ("QUERIES", "K", "BACKEND", "GRAPH-SOURCE", "COMMENT",
                                          "COMMENT-KEY", "BASELINE", "CACHE-DIR")}}
    run = cli("action", env=env)
    assert run.code == 0, run.stderr
    doc = json.loads((sample_repo / ".retrieval-eval/results/results.json").read_text())
    assert doc["run"]["k_values"] == [1, 3, 5]
    assert doc["run"]["backend"] == "in_memory"
    assert "comment not posted" not in run.stderr


def test_validate_finds_yaml_and_the_options_files_queries(sample_repo, cli):
    doc = json.loads((sample_repo / "retrieval_queries.json").read_text())
    (sample_repo / "retrieval_queries.json").unlink()
    import yaml

    (sample_repo / "retrieval_queries.yaml").write_text(yaml.safe_dump(doc))
    assert cli("validate", str(sample_repo)).code == 0
    (sample_repo / "gt").mkdir()
    (sample_repo / "retrieval_queries.yaml").rename(sample_repo / "gt" / "q.yml")
    (sample_repo / ".retrieval-eval.yml").write_text("queries: gt/q.yml\n")
    run = cli("validate", str(sample_repo))
    assert run.code == 0, run.stderr
    (sample_repo / "gt" / "q.yml").write_bytes(b"queries: [\xff\xfe]\n")
    bad = cli("validate", str(sample_repo))
    assert bad.code == 2 and "cannot read" in bad.stderr and "Traceback" not in bad.stderr


def test_trec_export_is_skipped_when_whitespace_would_split_columns(tmp_path, cli):
    from tests.conftest import make_repo

    queries = {"queries": [{"id": "focused 01", "question": "Where is x?", "shape": "focused",
                            "relevance_grades": {"dir with space/x.py": 3},
                            "gold_facts": ["def x", "return 1"]}]}
    repo = make_repo(tmp_path / "r", {"dir with space/x.py": "def x():\n    return 1\n",
                                      "retrieval_queries.json": json.dumps(queries)},
                     sample=False)
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), *FAST, "--output-dir", str(out))
    assert run.code == 1, run.stderr
    assert "no TREC export" in run.stderr
    assert not (out / "qrels.trec").exists() and (out / "results.json").exists()


def test_a_bare_baseline_that_is_no_file_suggests_a_ref(sample_repo, cli):
    run = cli("evaluate", str(sample_repo), *FAST, "--baseline", "main")
    assert run.code == 2
    assert "baseline file main does not exist" in run.stderr
    assert "write ref:main" in run.stderr


def test_action_baseline_file_must_be_inside_the_workspace(sample_repo, cli, tmp_path):
    env = {"GITHUB_WORKSPACE": str(sample_repo), "INPUT_BASELINE": "file:/etc/hostname",
           "INPUT_BACKEND": "in_memory"}
    run = cli("action", env=env)
    assert run.code == 2
    assert "outside the workspace" in run.stderr



@pytest.mark.parametrize("forged", [
    "::error title=Security::Approved by maintainers",
    "##[error]forged",
])
def test_results_file_cannot_forge_workflow_commands_on_the_console(saved, cli, server,
                                                                   tmp_path, forged):
    """The runner reads `::cmd::` after leading blanks and `##[cmd]` anywhere in a line."""
    shape = next(iter(saved["by_shape"]))
    saved["by_shape"][forged] = saved["by_shape"].pop(shape)
    for q in saved["queries"]:
        if q["shape"] == shape:
            q["shape"] = forged
    saved["queries"][0]["id"] = forged
    saved["run"]["neuralmind_version"] = f"4.22 {forged}"
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(saved))
    run = cli("comment", "--results", str(hostile), "--no-fail-on-floors",
              env=_gh_env(server, tmp_path))
    assert run.code == 0, run.stderr
    for line in (run.stdout + run.stderr).splitlines():
        assert not line.lstrip().startswith("::error title=Security"), line
        assert "##[error]" not in line, line


def test_results_file_timings_keys_are_checked(saved, cli, tmp_path):
    saved["run"]["timings"]["x\n::error title=forged::stderr"] = 1.0
    hostile = tmp_path / "hostile.json"
    hostile.write_text(json.dumps(saved))
    run = cli("comment", "--results", str(hostile), env={})
    assert run.code == 2
    assert not any(line.startswith("::error title=forged") for line in run.stderr.splitlines())


def test_what_evaluate_writes_the_comment_can_read(tmp_path, cli, server):
    """A control character in a fact is refused at load; a file name with a tab is not indexed."""
    from tests.conftest import make_repo

    repo = make_repo(tmp_path / "r", {"auth/tab\tcopy.py": "def copy():\n    return 1\n"})
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), *FAST, "--output-dir", str(out))
    assert run.code == 1, run.stderr
    assert "hold control characters or a backslash are not indexed" in run.stderr
    posted = cli("comment", "--results", str(out / "results.json"), "--no-fail-on-floors",
                 env=_gh_env(server, tmp_path))
    assert posted.code == 0, posted.stderr
    path = repo / "retrieval_queries.json"
    doc = json.loads(path.read_text())
    doc["queries"][0]["gold_facts"][0]["fact"] += "\u0007"  # the example's facts are anchored
    path.write_text(json.dumps(doc))
    refused = cli("validate", str(repo))
    assert refused.code == 2 and "contains a control character" in refused.stdout
    doc["queries"][0]["gold_facts"][0]["fact"] = "a fact"
    doc["queries"][0]["gold_facts"][0]["evidence"] += "\u001b[2J"
    path.write_text(json.dumps(doc))
    refused = cli("validate", str(repo))
    assert refused.code == 2 and "control character other than whitespace" in refused.stdout


def test_job_summary_limit_counts_bytes_not_characters():
    results = make_results(n=1500, question="检索质量评估问题编号 {i}：" + "模块之间的调用关系" * 5)
    summary = render_summary(view_of(results))
    assert len(summary.text.encode("utf-8")) <= SUMMARY_LIMIT
    assert summary.dropped


def test_action_bare_baseline_path_must_be_inside_the_workspace(sample_repo, cli):
    env = {"GITHUB_WORKSPACE": str(sample_repo), "INPUT_BASELINE": "/etc/hostname",
           "INPUT_BACKEND": "in_memory"}
    run = cli("action", env=env)
    assert run.code == 2
    assert "outside the workspace" in run.stderr
