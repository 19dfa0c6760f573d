"""The code stays clean: ruff everywhere, mypy (strict on the pure core), and the core's purity."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "evaluator" / "core"
FORBIDDEN_IN_CORE = {"jinja2", "markupsafe", "requests", "neuralmind", "subprocess", "os",
                     "evaluator.github_context", "evaluator.github_comments",
                     "evaluator.http_transport", "evaluator.render", "evaluator.snapshot",
                     "evaluator.git_command", "evaluator.git_repo",
                     "evaluator.neuralmind_index", "evaluator.runner"}


def _tool(name: str) -> str:
    path = Path(sys.executable).with_name(name)
    found = str(path) if path.exists() else shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (pip install -e '.[test]')")
    return found


def test_ruff_is_clean():
    proc = subprocess.run([_tool("ruff"), "check", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_mypy_is_clean():
    proc = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("module", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_core_is_pure(module: Path):
    """The core imports no I/O library, no adapter, and never reads os.environ."""
    tree = ast.parse(module.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module)
    bad = {m for m in imported for f in FORBIDDEN_IN_CORE if m == f or m.startswith(f + ".")}
    assert not bad, f"{module.name} imports {sorted(bad)}"
    assert "environ" not in module.read_text()


WORKFLOWS = sorted(str(p.relative_to(ROOT))
                   for p in [*(ROOT / "examples").glob("*.yml"),
                             *(ROOT / ".github" / "workflows").glob("*.yml")])


def test_the_linted_workflows_include_the_release_and_dogfood_ones():
    assert {".github/workflows/release.yml", ".github/workflows/dogfood.yml"} <= set(WORKFLOWS)


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True)


def test_action_and_workflows_match_the_github_schemas():
    tool = _tool("check-jsonschema")
    action = _run(tool, "--builtin-schema", "vendor.github-actions", "action.yml")
    assert action.returncode == 0, action.stdout + action.stderr
    workflows = _run(tool, "--builtin-schema", "vendor.github-workflows", *WORKFLOWS)
    assert workflows.returncode == 0, workflows.stdout + workflows.stderr


def test_zizmor_finds_nothing():
    proc = _run(_tool("zizmor"), "--offline", *WORKFLOWS, "action.yml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "No findings" in proc.stdout + proc.stderr


def test_hadolint_is_clean():
    proc = _run(_tool("hadolint"), "Dockerfile")
    assert proc.returncode == 0, proc.stdout + proc.stderr
