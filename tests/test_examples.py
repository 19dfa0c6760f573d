"""The example workflows use the action as it is: every input they set exists in action.yml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.yml"))
ACTION = "/neuralmind-retrieval-eval"


def _inputs() -> set[str]:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    return set(action["inputs"])


def _our_steps(workflow: Path) -> list[dict[str, object]]:
    data = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    return [step for job in data["jobs"].values() for step in job.get("steps", [])
            if ACTION in str(step.get("uses", ""))]


def test_there_are_examples_using_the_action():
    assert [p.name for p in EXAMPLES if _our_steps(p)], "no example workflow uses the action"


@pytest.mark.parametrize("workflow", EXAMPLES, ids=lambda p: p.name)
def test_example_inputs_are_action_inputs(workflow: Path):
    known = _inputs()
    for step in _our_steps(workflow):
        unknown = set(step.get("with") or {}) - known  # type: ignore[arg-type]
        assert not unknown, f"{workflow.name} sets inputs action.yml does not have: {unknown}"


def test_an_example_compares_systems_at_an_equal_budget():
    """Issue 23: the example workflows show a budgeted comparison."""
    budgeted = [p.name for p in EXAMPLES for step in _our_steps(p)
                if isinstance(step.get("with"), dict) and step["with"].get("budget")
                and "," in str(step["with"].get("systems", ""))]
    assert budgeted == ["systems.yml"]
