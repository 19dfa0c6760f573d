"""The structure stays as designed: one option table, short functions, a thin CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from evaluator import optiondocs, settings
from evaluator.core import options, schemas
from evaluator.core.options import Option, build_settings

ROOT = Path(__file__).resolve().parents[1]
MAX_FUNCTION_LINES = 60


def test_generated_docs_and_action_inputs_are_current():
    assert optiondocs.main(["--check"]) == 0, "run: python -m evaluator.optiondocs"


def _functions():
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield f"{path.relative_to(ROOT)}:{node.name}", node.end_lineno - node.lineno + 1


def test_no_function_is_longer_than_60_lines():
    long = {name: n for name, n in _functions() if n > MAX_FUNCTION_LINES}
    assert not long, long


def test_the_cli_is_thin():
    assert len((ROOT / "evaluator" / "cli.py").read_text().splitlines()) <= 300


@pytest.fixture
def with_deadline(monkeypatch):
    """The option table with one more row, as an engineer would add it, and the typed
    ``Settings`` regenerated from it (what ``python -m evaluator.optiondocs`` writes)."""
    row = Option("deadline", "int", "stop after this many minutes", default=30)
    table = (*options.OPTIONS, row)
    monkeypatch.setattr(options, "OPTIONS", table)
    monkeypatch.setattr(options, "BY_NAME", {o.name: o for o in table})
    monkeypatch.setattr(options, "BY_FILE_KEY", {o.file_key.replace("-", "_"): o
                                                 for o in table if o.file_key})
    monkeypatch.setattr(settings, "OPTIONS", table)
    monkeypatch.setattr(optiondocs, "OPTIONS", table)
    monkeypatch.setattr(schemas, "OPTIONS", table)
    source = optiondocs.settings_class(table)
    namespace = dict(vars(options))
    exec(compile(source, "<generated Settings>", "exec"), namespace)
    monkeypatch.setattr(options, "Settings", namespace["Settings"])
    return row, source


def test_an_option_added_to_the_table_appears_everywhere(with_deadline, tmp_path):
    _row, source = with_deadline
    assert '    deadline: int = field(default_factory=_default("deadline"))' in source
    stale = optiondocs.generated()[ROOT / "evaluator" / "core" / "options.py"]
    assert source in stale, "optiondocs regenerates the typed Settings from the table"
    assert options.Settings().deadline == 30
    args = settings.build_parser().parse_args(["evaluate", str(tmp_path), "--deadline", "45"])
    assert settings.settings_for("evaluate", settings.flag_values(args, "evaluate")).deadline \
        == 45
    assert build_settings([("f.yml", {"deadline": "50"})], file_layer=0).deadline == 50
    (tmp_path / ".retrieval-eval.yml").write_text("deadline: 55\n")
    assert settings.settings_for("evaluate", {"path": str(tmp_path)}).deadline == 55
    command, given, defaults = settings.action_values({"GITHUB_WORKSPACE": str(tmp_path),
                                                       "INPUT_DEADLINE": "60"})
    assert command == "evaluate" and given["deadline"] == "60"
    assert settings.settings_for(command, given, defaults=defaults).deadline == 60
    assert "`--deadline`" in optiondocs.options_table()
    assert "stop after this many minutes" in optiondocs.options_table()
    assert "  deadline:\n" in optiondocs.action_block()
    assert schemas.options_schema()["properties"]["deadline"]["minimum"] == 1
    with pytest.raises(options.ConfigError, match="deadline: 'soon' is not a whole number"):
        build_settings([("command line", {"deadline": "soon"})])


@pytest.mark.parametrize("value", ["0", "-3", "2.5", "soon"])
def test_one_type_one_rule_in_every_layer(with_deadline, tmp_path, value):
    """The parser, the options file, the action input and the schema of one type agree:
    an int option is a whole number of at least 1 wherever it is given."""
    import jsonschema

    layers = [[("command line", {"deadline": value})],
              [("f.yml", {"deadline": value})],
              [("action inputs", settings.action_values(
                  {"GITHUB_WORKSPACE": str(tmp_path), "INPUT_DEADLINE": value})[1])]]
    for layer in layers:
        with pytest.raises(options.ConfigError, match="is not a whole number of at least 1"):
            build_settings(layer, file_layer=0 if layer[0][0] == "f.yml" else None)
    schema = {**schemas.options_schema(), "$schema": None}
    assert not jsonschema.Draft202012Validator(schema).is_valid({"deadline": value})


def test_mypy_rejects_a_misspelled_setting(tmp_path):
    from mypy import api

    probe = tmp_path / "probe.py"
    probe.write_text("from evaluator.core.options import Settings\n\n\n"
                     "def alpha_of(settings: Settings) -> float:\n"
                     "    return settings.alhpa\n\n\n"
                     "def level(settings: Settings) -> str:\n"
                     "    return settings.alpha\n")
    out, _err, status = api.run([str(probe), "--no-incremental", "--follow-imports=silent",
                                 "--config-file", str(ROOT / "pyproject.toml")])
    assert status == 1, out
    assert '"Settings" has no attribute "alhpa"' in out
    assert 'Incompatible return value type (got "float", expected "str")' in out


def test_a_measure_in_the_registry_reaches_scoring_labels_and_outputs():
    from evaluator.core import measures
    from evaluator.publish import step_outputs

    assert measures.label("ndcg@10") == "nDCG@10"
    assert measures.lower_is_better("contradiction")
    assert "ndcg@3" in measures.metric_names((3,))
    from tests.factories import make_results

    outputs = step_outputs(make_results(quality=0.9, seed=1))
    assert set(outputs) == {"passed", *measures.outputs()}


# Where the process environment may be touched: ``main`` reads it once; the NeuralMind
# adapter sets the model folder around its calls into NeuralMind and hands graphify a copy
# without tokens. git gets an environment built from ``Deps.env`` (issue 19), never this one.
ENVIRON_ALLOWED = {"evaluator/cli.py", "evaluator/__main__.py", "evaluator/neuralmind_index.py"}


def test_nothing_below_main_reads_or_sets_the_process_environment():
    users = set()
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv"):
                users.add(str(path.relative_to(ROOT)))
    assert users <= ENVIRON_ALLOWED, users - ENVIRON_ALLOWED


def test_action_yml_inputs_and_outputs_are_the_tables():
    import yaml

    from evaluator.core import measures

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert list(action["inputs"]) == [o.action_input for o in options.OPTIONS if o.action_input]
    assert set(measures.outputs()) | set(optiondocs.FIXED_OUTPUTS) == set(action["outputs"])
    assert action["runs"] == {"using": "docker", "image": "Dockerfile", "args": ["action"]}


# Every test of significance in the application takes the run's settings: no call below may
# fall back on a function's defaults (render.py's systems table once did, with alpha 0.05).
SIGNIFICANCE_CALLS = {"compare": ("alpha", "min_effect"),
                      "compare_results": ("alpha", "min_effect"),
                      "compare_sections": ("alpha", "min_effect"),
                      "check_gates": ("alpha", "min_effect"),
                      "system_table": ("alpha", "min_effect", "seed"),
                      "system_tables": ("alpha", "min_effect", "seed"),
                      "minimum_detectable_effect": ("alpha",)}


def _significance_calls():
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in SIGNIFICANCE_CALLS:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", name, node


def test_no_view_tests_significance_with_default_settings():
    calls = list(_significance_calls())
    assert {name for _, name, _ in calls} >= {"compare_results", "system_tables", "compare"}
    bad = []
    for where, name, node in calls:
        given = {k.arg for k in node.keywords}
        if None in given or not set(SIGNIFICANCE_CALLS[name]) <= given:
            bad.append(f"{where} {name}() without {SIGNIFICANCE_CALLS[name]} given by name")
    assert not bad, bad


def test_the_systems_table_uses_the_runs_recorded_significance_settings():
    """A results file that records a loose alpha shows a ▲ that the default alpha hides."""
    from dataclasses import replace

    from evaluator import render
    from evaluator.core.systems import system_run
    from tests.factories import make_results

    base = make_results(quality=0.5, seed=3)
    better = [replace(q, metrics={**q.metrics, "ndcg@5": min(1.0, q.metrics["ndcg@5"] + 0.05)})
              for q in base.queries]
    shapes = list(base.shapes)
    runs = (system_run("neuralmind", base.queries, shapes),
            system_run("bm25", better, shapes))

    def cells(alpha):
        run = replace(base.run, significance={"alpha": alpha, "min_effect": 0.02, "seed": 0})
        tables = render.systems_view(replace(base, run=run, systems=runs))
        return [c["marker"] for t in tables for row in t["rows"] for c in row["cells"]
                if c["name"] == "ndcg@5"]

    assert "▲" not in cells(1e-9)
    assert "▲" in cells(0.5)
