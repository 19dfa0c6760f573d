"""The hostile-input corpus (issue 9): every row of ``cases.ALL`` through ``main(argv)``."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.hostile.cases import ALL, FAST
from tests.hostile.faults import FaultServer, fault_server
from tests.hostile.harness import Case, Verdict, judge, new_world, run_main


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
    judge(case, world, argv, env, server, on_result=_tally(case))


def _tally(case: Case) -> Callable[[Verdict], None] | None:
    """With CORPUS_TALLY=FILE, one JSON line per case (the before/after totals)."""
    target = os.environ.get("CORPUS_TALLY")
    if not target:
        return None

    def write(verdict: Verdict) -> None:
        row = {"id": case.id, "hang": verdict.hang, "traceback": verdict.traceback,
               "leak": bool(verdict.leak), "wrong_code": bool(verdict.wrong_code),
               "lost_results": verdict.lost_results,
               "outside_writes": bool(verdict.outside_writes),
               "checkout_changed": bool(verdict.checkout_changed),
               "unreadable": bool(verdict.unreadable),
               "message": bool(verdict.message), "extra": bool(verdict.extra),
               "detail": "; ".join(verdict.problems())[:300]}
        with open(target, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(row) + "\n")
    return write
