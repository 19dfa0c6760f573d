"""Holes found by the final review of the round, each closed: committed links followed out
of the checkout (template includes, ``.neuralmind.yaml``, section folders, pyproject), Python
exceptions escaping as internal errors (template arithmetic, corrupt zip members, hostile
nesting, a symlink loop, a non-UTF-8 module), and writes that were not atomic."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from evaluator import atomic, history_file
from evaluator.artifact import read_zip
from evaluator.codemap import _entry_points, build_code_map
from evaluator.core import history
from evaluator.core.results import to_dict
from evaluator.core.results_reader import from_dict
from evaluator.core.stats import min_p_value
from evaluator.drafting import verbatim
from evaluator.errors import GitHubError, InputError, ResultsError
from evaluator.paths import check_not_root
from evaluator.render import render
from tests.conftest import make_repo
from tests.factories import make_results, view_of

FAST = ("--backend", "in_memory", "--quiet")
SECRET = "ghp_SECRETVALUE_review"


def _outside_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.cfg"
    secret.parent.mkdir(parents=True)
    secret.write_text(f"token: [{SECRET}\n", encoding="utf-8")  # invalid YAML too
    return secret


def test_a_template_cannot_include_a_file_outside_its_folder(tmp_path):
    secret = _outside_secret(tmp_path)
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "leak").symlink_to(secret)
    (folder / "comment.md.j2").write_text('{% include "leak" %}', encoding="utf-8")
    with pytest.raises(InputError, match="resolves outside") as err:
        render(view_of(make_results()), template=folder / "comment.md.j2")
    assert SECRET not in str(err.value)


@pytest.mark.parametrize("expression", ["{{ 1 / 0 }}", "{{ [] [3] }}",
                                        '{{ "%d" % "x" }}'])
def test_a_template_that_fails_at_run_time_is_one_input_error(tmp_path, expression):
    template = tmp_path / "comment.md.j2"
    template.write_text(expression, encoding="utf-8")
    with pytest.raises(InputError, match="failed to render"):
        render(view_of(make_results()), template=template)


def test_the_smallest_p_value_does_not_overflow_for_large_suites():
    assert min_p_value(5000) == 0.0
    assert all(min_p_value(m) == 2 / 2**m for m in range(2, 100))


def test_a_corrupt_compressed_member_is_refused_by_name():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("results.json", json.dumps(to_dict(make_results())) * 20)
    data = bytearray(buffer.getvalue())
    start = 30 + len("results.json")  # the member's compressed data, after its header
    data[start:start + 64] = bytes(64)
    with pytest.raises(GitHubError, match=r'"results\.json" cannot be read: corrupt'):
        read_zip(bytes(data))


def test_a_run_missing_fields_names_them_not_a_python_signature():
    doc = to_dict(make_results())
    del doc["run"]["backend"], doc["run"]["gain"]
    with pytest.raises(ResultsError) as err:
        from_dict(doc, "results.json")
    assert "missing fields: " in err.value.message and "backend" in err.value.message
    assert "__init__" not in err.value.message


def test_atomic_write_new_never_overwrites_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "draft.json"
    atomic.write_new(target, "first\n")
    with pytest.raises(InputError, match="already exists; it is never overwritten"):
        atomic.write_new(target, "second\n", hint="choose another --output")
    assert target.read_text(encoding="utf-8") == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["draft.json"]


def test_a_history_that_cannot_be_written_is_one_input_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    with pytest.raises(InputError, match="cannot create its folder"):
        history_file.save(blocker / "sub" / "history.json", history.History())


def test_an_output_folder_behind_a_symlink_loop_is_an_input_error(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(InputError, match="cannot resolve"):
        check_not_root(loop / "out", tmp_path, setting="output-dir")


def test_drafting_survives_hostile_modules_and_links(tmp_path):
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text('"""Package."""\n', encoding="utf-8")
    (root / "pkg" / "deep.py").write_text("x = " + "(" * 200_000 + ")" * 200_000 + "\n",
                                          encoding="utf-8")
    (root / "pyproject.toml").symlink_to("/dev/zero")
    code = build_code_map(root, ["pkg/__init__.py", "pkg/deep.py"])
    assert "pkg/deep.py" in code.modules  # read, its syntax tree skipped
    assert _entry_points(root, {}) == {}
    assert verbatim("Return the value", "x\n# return the value here\n")
    assert not verbatim("the value", "the values")


def test_a_linked_neuralmind_yaml_is_never_read(tmp_path, cli):
    secret = _outside_secret(tmp_path)
    repo = make_repo(tmp_path / "checkout")
    (repo / ".neuralmind.yaml").symlink_to(secret)
    out = tmp_path / "out"
    run = cli("evaluate", str(repo), *FAST, "--output-dir", str(out))
    assert run.code in (0, 1), run.stderr
    assert SECRET not in run.stdout + run.stderr
    assert SECRET not in (out / "results.json").read_text(encoding="utf-8")


def test_a_bad_neuralmind_yaml_is_named_by_line_without_its_text(tmp_path):
    from evaluator.errors import BuildError
    from evaluator.neuralmind_index import _write_project_config

    config = tmp_path / ".neuralmind.yaml"
    config.write_text(f"ok: 1\ntoken: [{SECRET}\n", encoding="utf-8")
    (tmp_path / "tree").mkdir()
    with pytest.raises(BuildError) as err:
        _write_project_config(tmp_path / "tree", config, "builtin")
    assert "is not valid YAML" in err.value.message and SECRET not in err.value.message


def test_a_section_folder_linked_out_of_the_checkout_is_refused(tmp_path, cli):
    _outside_secret(tmp_path)
    repo = make_repo(tmp_path / "checkout")
    (repo / "lnk").symlink_to(tmp_path / "outside")
    (repo / ".retrieval-eval.yml").write_text("sections:\n  evil:\n    path: lnk\n",
                                              encoding="utf-8")
    for command, flags in (("evaluate", (*FAST, "--output-dir", str(tmp_path / "out"))),
                           ("validate", ())):
        run = cli(command, str(repo), *flags)
        assert run.code == 2, (command, run.stderr)
        assert "section evil: path" in run.stderr and "resolves outside" in run.stderr
        assert "Traceback" not in run.stderr
