"""Issue 19 (items 2, 3, 4, 8) checked below the corpus: output modes under two umasks and
as a second uid, the one YAML loader, bad text, and the overlap check's comparison count."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaluator import atomic
from tests.hostile.harness import new_world, run_main
from tests.hostile.readable import require_second_uid, unreadable


@pytest.fixture
def umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_an_atomic_write_gets_the_mode_a_plain_open_gives(tmp_path: Path, umask: None,
                                                          mask: int, mode: int) -> None:
    os.umask(mask)
    plain = tmp_path / "plain.txt"
    with open(plain, "w", encoding="utf-8") as handle:
        handle.write("x")
    replaced, created = tmp_path / "results.json", tmp_path / "draft.json"
    atomic.write_text(replaced, "{}")
    atomic.write_text(replaced, "{}")  # over an existing file too
    atomic.write_new(created, "{}")
    assert stat.S_IMODE(plain.stat().st_mode) == mode
    assert stat.S_IMODE(replaced.stat().st_mode) == mode
    assert stat.S_IMODE(created.stat().st_mode) == mode
    assert atomic.current_umask() == mask


def test_every_output_of_an_evaluation_is_readable_by_another_user(tmp_path: Path,
                                                                    umask: None) -> None:
    require_second_uid()
    world = new_world(tmp_path)
    out = world.out
    outcome = run_main(["evaluate", str(world.ws), "--backend", "in_memory", "--quiet",
                        "--no-fail-on-floors", "--cache-dir", str(world.cache),
                        "--output-dir", str(out), "--baseline", "none"], {})
    assert outcome.code == 0, outcome.stderr
    assert {"results.json", "report.md", "qrels.trec", "run.trec"} <= {
        p.name for p in out.iterdir()}
    assert unreadable([out, world.cache]) == []  # the cache: saved by actions/cache


def test_the_readability_check_sees_a_private_file(tmp_path: Path) -> None:
    require_second_uid()
    folder = tmp_path / "out"
    folder.mkdir(mode=0o755)
    (folder / "open.txt").write_text("x")
    private = folder / "private.txt"
    private.write_text("x")
    private.chmod(0o600)
    assert unreadable([folder]) == [f"{private}: Permission denied"]


def test_the_one_yaml_loader_refuses_the_first_anchor_or_alias_by_line() -> None:
    from evaluator.core import yamlfile
    from tests.hostile.cases import alias_bomb

    for text, line in [("a: 1\nb: &x [1]\n", 2), ("a: 1\n\nb: *x\n", 3),
                       ("x:\n" + alias_bomb("  ", levels=40), 2)]:
        for read in (yamlfile.load, yamlfile.compose):
            with pytest.raises(yamlfile.AnchorError) as caught:
                read(text)
            assert caught.value.line == line
    assert yamlfile.load("a: [1, {b: c}]\n") == {"a": [1, {"b": "c"}]}
    shared = ["x"]
    dumped = yamlfile.dump({"a": shared, "b": shared})
    assert "&" not in dumped and "*" not in dumped
    assert yamlfile.load(dumped) == {"a": ["x"], "b": ["x"]}
