"""The scenario that motivated the verdict-first comment (issue 11), on a real git repository.

On pallets/click a branch deleted the docstrings of one module; one question's defining
module fell out of the ranking, yet the comment showed it in its fifth section under a ✅ and
"within noise, p = 1.000". Here the sample project plays click: a branch strips every
docstring from one module, the PR is evaluated against the base branch and commented on
through the fake GitHub, and the regressed question must be in the comment's first 15 lines.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from tests.conftest import git
from tests.fake_github import PR, REPO

TOKEN = "ghs_click-scenario-T0KEN"
IDENTITY = ("-c", "user.email=t@example.com", "-c", "user.name=t")


def strip_docstrings(source: str) -> str:
    """The module without any docstring (module, class, function): code unchanged."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree) + "\n"


def _branch_without_docstrings(repo: Path, module: str) -> None:
    git(repo, "checkout", "-qb", "strip-docstrings")
    path = repo / module
    stripped = strip_docstrings(path.read_text())
    assert stripped != path.read_text()
    path.write_text(stripped)
    git(repo, *IDENTITY, "commit", "-qam", f"Remove the docstrings of {module}")


def _defining(queries_file: Path, module: str) -> set[str]:
    doc = json.loads(queries_file.read_text())
    return {q["id"] for q in doc["queries"]
            if q["relevance_grades"].get(module) == 3}


def _pr_env(tmp_path: Path, server, repo: Path) -> dict[str, str]:
    event = tmp_path / "event.json"
    base = git(repo, "rev-parse", "main").strip()
    head = git(repo, "rev-parse", "HEAD").strip()
    event.write_text(json.dumps({"pull_request": {"number": PR, "head": {"sha": head},
                                                  "base": {"sha": base}}}))
    return {"GITHUB_API_URL": server.base_url, "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event),
            "GITHUB_TOKEN": TOKEN, "GITHUB_ACTIONS": "true",
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "GITHUB_OUTPUT": str(tmp_path / "output.txt")}


def _run(cli, repo, env, *backend: str):
    return cli("evaluate", str(repo), *backend, "--baseline", "ref:main", "--comment",
               "--output-dir", str(repo.parent / "out"), "--quiet", env=env)


def _assert_regression_leads(server, repo: Path, module: str) -> list[str]:
    [comment] = server.on_issue(PR)
    lines = [line for line in comment["body"].splitlines() if not line.startswith("<!--")]
    first = "\n".join(lines[:15])
    assert "question" in lines[0] and "worse" in lines[0], lines[0]
    regressed = [qid for qid in _defining(repo / "retrieval_queries.json", module)
                 if f"`{qid}`" in first]
    assert regressed, first
    assert f"`{module}`" in first
    assert "noise" not in comment["body"]
    return regressed


def test_docstrings_removed_from_one_module_lead_the_comment(sample_repo, cli, server,
                                                             tmp_path):
    """Deterministic backend: billing/stripe_client.py loses its docstrings."""
    module = "billing/stripe_client.py"
    _branch_without_docstrings(sample_repo, module)
    env = _pr_env(tmp_path, server, sample_repo)
    run = _run(cli, sample_repo, env, "--backend", "in_memory")
    assert run.code in (0, 1), run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    _assert_regression_leads(server, sample_repo, module)


def test_with_the_real_model(sample_repo, cli, server, tmp_path, model_dir, monkeypatch):
    """The real embedding model: auth/handlers.py loses its docstrings."""
    monkeypatch.setenv("NEURALMIND_ONNX_MODEL_DIR", str(model_dir))
    module = "auth/handlers.py"
    _branch_without_docstrings(sample_repo, module)
    env = _pr_env(tmp_path, server, sample_repo) | {"NEURALMIND_ONNX_MODEL_DIR": str(model_dir)}
    run = _run(cli, sample_repo, env)
    assert run.code in (0, 1), run.stderr
    regressed = _assert_regression_leads(server, sample_repo, module)
    assert regressed


@pytest.mark.parametrize("source", ['"""doc"""\nx = 1\n',
                                    'def f():\n    """doc"""\n    return 1\n'])
def test_strip_docstrings(source):
    out = strip_docstrings(source)
    assert "doc" not in out
    compile(out, "<stripped>", "exec")
