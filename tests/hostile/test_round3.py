"""Issue 19 (items 2, 3, 4, 8) checked below the corpus: output modes under two umasks and
as a second uid, the one YAML loader, bad text, and the overlap check's comparison count."""

from __future__ import annotations

import copy
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evaluator import atomic
from evaluator.app import compare_with_baseline
from evaluator.core.options import Settings
from evaluator.core.results import Results
from evaluator.core.results_reader import from_dict
from evaluator.errors import ResultsError
from evaluator.render import render
from tests.factories import view_of
from tests.hostile.harness import new_world, run_main
from tests.hostile.readable import require_second_uid, unreadable

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


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


def _minimal(doc: object, accepts: Callable[[object], bool]) -> object:
    """``doc`` with every key, list item and list the reader does not require removed,
    one at a time (greedy): the least a schema-valid results file may hold."""
    def walk(node: object) -> None:
        if isinstance(node, dict):
            for key in list(node):
                value = node.pop(key)
                if not accepts(doc):
                    node[key] = value
                    walk(value)
        elif isinstance(node, list):
            kept = list(node)
            for trial in ([], kept[:1]):  # no item, then only the first
                node[:] = trial
                if accepts(doc):
                    break
            else:
                node[:] = kept
            for item in node:
                walk(item)
    walk(doc)
    return doc


def _reads(doc: object) -> bool:
    try:
        from_dict(copy.deepcopy(doc), "minimal.json")
    except ResultsError:
        return False
    return True


@pytest.fixture(scope="module")
def saved_doc(tmp_path_factory: pytest.TempPathFactory) -> dict:
    world = new_world(tmp_path_factory.mktemp("minimal"))
    outcome = run_main(["evaluate", str(world.ws), "--backend", "in_memory", "--quiet",
                        "--no-fail-on-floors", "--cache-dir", str(world.cache),
                        "--output-dir", str(world.out)], {})
    assert outcome.code == 0, outcome.stderr
    return json.loads((world.out / "results.json").read_text())


def _key_paths(node: object, here: tuple[object, ...] = ()) -> dict[tuple[object, ...], bool]:
    """Every dict key's path (list positions as ``"*"``) -> whether it holds a container."""
    found: dict[tuple[object, ...], bool] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            path = (*here, key)
            found[path] = found.get(path, False) or isinstance(value, dict | list)
            found.update(_key_paths(value, path))
    elif isinstance(node, list):
        for value in node:
            found.update(_key_paths(value, (*here, "*")))
    return found


def _without(doc: object, path: tuple[object, ...]) -> object:
    """A copy of ``doc`` with the key at ``path`` removed everywhere it occurs."""
    out = copy.deepcopy(doc)
    nodes = [out]
    for step in path[:-1]:
        nodes = [c for n in nodes for c in (n if step == "*" and isinstance(n, list) else
                                            [n.get(step)] if isinstance(n, dict) else [])]
    for n in nodes:
        if isinstance(n, dict):
            n.pop(path[-1], None)
    return out


def _render_all(pairs: list[tuple[Results, Results | None]]) -> None:
    for head, base in pairs:
        comparison = compare_with_baseline(head, base, "base.json", Settings())
        for name in sorted(p.name for p in TEMPLATES.glob("*.j2")):
            assert render(view_of(head, comparison=comparison), name=name).strip()


def test_every_template_renders_whatever_the_reader_accepts(saved_doc: dict) -> None:
    """What the reader lets a results file leave out, the built-in templates render without,
    as the head and as the baseline (issue 19: a ``by_shape`` entry without
    ``faithfulness`` passed the reader, then crashed summary.txt.j2 with exit 3). Three
    kinds of file: every optional value left out (the structure kept), each optional
    object or list left out on its own, and the greedy minimal file."""
    full = copy.deepcopy(saved_doc)
    full["queries"] = full["queries"][:4]
    whole = from_dict(copy.deepcopy(full), "full.json")
    paths = _key_paths(full)
    stripped: object = full
    for path in sorted((p for p, holds in paths.items() if not holds), key=len, reverse=True):
        if _reads(candidate := _without(stripped, path)):
            stripped = candidate
    assert stripped != full
    bare = from_dict(stripped, "stripped.json")
    _render_all([(bare, None), (bare, bare), (bare, whole), (whole, bare)])
    for path in (p for p, holds in paths.items() if holds):
        if _reads(doc := _without(full, path)):
            variant = from_dict(doc, f"without {path}")
            _render_all([(variant, whole), (whole, variant)])
    minimal = from_dict(_minimal(copy.deepcopy(full), _reads), "minimal.json")
    _render_all([(minimal, None), (minimal, minimal), (minimal, whole), (whole, minimal)])
