"""The benchmark scripts still reach the evaluator's names after modules move.

The scripts are not imported by the suite (they download sources and run for minutes), so a
name that moves between modules (``universe_of`` went from ``evaluator.authoring`` to
``evaluator.validation``) breaks them silently. Every ``from evaluator... import name`` in
them, at the top or inside a function, must resolve.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.rglob("*.py"))


def _evaluator_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every import of the evaluator package in ``path``."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module \
                and node.module.split(".")[0] == "evaluator":
            found += [(node.lineno, node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names
                      if alias.name.split(".")[0] == "evaluator"]
    return found


def _unresolved(path: Path) -> list[str]:
    problems = []
    for line, module, name in _evaluator_imports(path):
        try:
            loaded = importlib.import_module(module)
        except ImportError as err:
            problems.append(f"{path.name}:{line}: {module}: {err}")
            continue
        if name is not None and name != "*" and not hasattr(loaded, name):
            try:
                importlib.import_module(f"{module}.{name}")  # a submodule
            except ImportError:
                problems.append(f"{path.name}:{line}: {module} has no {name}")
    return problems


def test_the_scripts_import_the_evaluator():
    assert sum(bool(_evaluator_imports(p)) for p in SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(BENCHMARKS)))
def test_every_evaluator_name_a_script_imports_exists(script: Path):
    assert _unresolved(script) == []


def test_a_moved_name_is_caught(tmp_path: Path):
    script = tmp_path / "bench_moved.py"
    script.write_text("def main():\n    from evaluator.authoring import universe_of\n",
                      encoding="utf-8")
    assert _unresolved(script) == ["bench_moved.py:2: evaluator.authoring has no universe_of"]
