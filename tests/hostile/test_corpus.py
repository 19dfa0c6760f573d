"""The hostile-input corpus (issue 9): every row of ``cases.ALL`` through ``main(argv)``."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile.cases import ALL, FAST
from tests.hostile.faults import FaultServer, fault_server
from tests.hostile.harness import Case, judge, new_world, run_main


@pytest.fixture(scope="session")
def saved_results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One results.json from a fast evaluation of the sample project (shared, read-only)."""
    root = tmp_path_factory.mktemp("corpus-saved")
    world = new_world(root)
    out = root / "saved-out"
    outcome = run_main(["evaluate", str(world.ws), *FAST, "--cache-dir", str(root / "c"),
                        "--output-dir", str(out)], {})
    assert outcome.code == 0, outcome.stderr
    json.loads((out / "results.json").read_text())
    return out / "results.json"


@pytest.fixture
def server() -> Iterator[FaultServer]:
    with fault_server() as fake:
        yield fake


def _param(case: Case) -> object:
    return pytest.param(case, id=case.id, marks=[pytest.mark.slow] if case.slow else [])


def test_corpus_is_large_and_unique() -> None:
    ids = [c.id for c in ALL]
    assert len(ids) == len(set(ids))
    assert len(ids) >= 120


@pytest.mark.parametrize("case", [_param(c) for c in ALL])
def test_hostile_input(case: Case, tmp_path: Path, saved_results: Path,
                       server: FaultServer) -> None:
    world = new_world(tmp_path, server.base_url)
    world.results.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(saved_results, world.results)
    if case.serve is not None:
        case.serve(server)
    argv, env = case.setup(world)
    judge(case, world, argv, env, server)
