"""The structure stays as designed: one option table, short functions, a thin CLI."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from evaluator import optiondocs, settings
from evaluator.core import options, schemas, systems
from evaluator.core.options import Option, build_settings
from evaluator.core.systems import Answer

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


YAML_READERS = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all",
                "full_load_all", "unsafe_load_all", "compose", "compose_all", "parse", "scan"}
YAML_LOADERS = {f"{c}{kind}Loader" for c in ("", "C") for kind in ("", "Base", "Safe", "Full",
                                                                   "Unsafe")}


def _touches_yaml_loading(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return (node.module or "").startswith("yaml")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.value.id == "yaml" and (node.attr in YAML_READERS or "Loader" in node.attr)
    return isinstance(node, ast.Name) and node.id in YAML_LOADERS


def test_every_yaml_read_goes_through_the_one_loader_that_refuses_aliases():
    """Only evaluator/core/yamlfile.py touches PyYAML's readers and loader classes
    (issue 19: a nested-alias bomb in any YAML the tool reads hung it)."""
    users = {str(path.relative_to(ROOT))
             for path in sorted((ROOT / "evaluator").rglob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if _touches_yaml_loading(node)}
    assert users == {"evaluator/core/yamlfile.py"}, users


def test_action_yml_inputs_and_outputs_are_the_tables():
    import yaml

    from evaluator.core import measures

    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert list(action["inputs"]) == [o.action_input for o in options.OPTIONS if o.action_input]
    assert set(measures.outputs()) | set(optiondocs.FIXED_OUTPUTS) == set(action["outputs"])
    assert action["runs"] == {"using": "docker", "image": "Dockerfile", "args": ["action"]}


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Which modules of ``evaluator/`` each module imports: every import statement, at the
    top, inside a function or under ``TYPE_CHECKING`` alike (a type-only import is still an
    edge: the two modules cannot be read apart)."""
    paths = {_module_name(p): p for p in sorted((root / "evaluator").rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        edges = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                edges |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            elif isinstance(node, ast.ImportFrom):
                raise AssertionError(f"{name}: a relative import; spell the module out")
        graph[name] = {m for m in edges if m in paths and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each cycle of ``graph`` once, as the path that closes it (depth-first)."""
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:  # on the current path: the path from it closes a cycle
                found.append([*path[path.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*path, nxt])
        state[node] = 2

    for start in sorted(graph):
        if start not in state:
            visit(start, [start])
    return found


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
    graph = import_graph()
    assert "evaluator.core.options" in graph["evaluator.settings"]  # top-level import
    assert "evaluator.judging" in graph["evaluator.references"]
    assert "evaluator.core.systems" in graph["evaluator.evaluate"]  # inside a function too


def test_evaluator_has_no_import_cycles():
    assert cycles(import_graph()) == []


class EchoSystem:
    """A tiny retrieval system for the registry test: the checkout's files whose path shares
    a word with the question (``case=keep``: matched with case kept)."""

    def __init__(self, root: Path, files: tuple[str, ...], *, case: str = "fold") -> None:
        self.files = sorted(files)
        self.fold = case == "fold"

    def _words(self, text: str) -> set[str]:
        return set(re.findall(r"[A-Za-z]+", text.lower() if self.fold else text))

    def ask(self, question: str) -> Answer:
        words = self._words(question)
        ranked = tuple(f for f in self.files if self._words(f) & words)
        return Answer(ranked_modules=ranked, context=" ".join(ranked), tokens=len(ranked),
                      seconds=0.0)


@pytest.fixture
def with_echo():
    """One more system registered, as an engineer would add it (and nothing else)."""
    entry = systems.register(systems.SystemEntry(
        "echo", "the files whose path shares a word with the question",
        factory="tests.test_design:EchoSystem", options={"case": ("fold", "keep")}))
    yield entry
    del systems.SYSTEMS["echo"]


def test_a_system_added_to_the_registry_appears_everywhere(with_echo, sample_repo, tmp_path,
                                                          capsys):
    from tests.integration.test_app_fake_index import deps_with

    with pytest.raises(ValueError, match="registered twice"):
        systems.register(with_echo)
    with pytest.raises(ValueError, match="module:attribute"):
        systems.SystemEntry("odd", "no factory path", factory="tests.test_design.EchoSystem")
    with pytest.raises(ValueError, match="only it, is built on a snapshot"):
        systems.SystemEntry("odd", "a second index", factory="m:f", needs=frozenset({"graph"}))
    assert [s.label for s in systems.parse_systems("neuralmind,echo,echo:case=keep")] == [
        "neuralmind", "echo", "echo:case=keep"]
    with pytest.raises(options.ConfigError, match=r"options: case=…"):
        systems.parse_systems("neuralmind,echo:depth=2")
    with pytest.raises(options.ConfigError, match="must be neuralmind"):
        systems.parse_systems("echo,neuralmind")
    assert settings.settings_for("evaluate", {"path": str(sample_repo),
                                              "systems": "neuralmind,echo"}).systems \
        == "neuralmind,echo"
    with pytest.raises(SystemExit):
        settings.build_parser().parse_args(["evaluate", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert ("neuralmind, bm25, embedding, grep, full-file, oracle, echo, "
            "neuralmind:graph=graphify") in shown
    assert "echo:case=keep" in shown
    docs = "".join(optiondocs.generated_docs().values())
    assert ("| `echo` | `case` = fold\\|keep | the checkout only | every module it matches, "
            "`--depth` deep or more | the files whose path ") in docs
    assert "echo:case=keep" in optiondocs.options_table()
    # … and an evaluation runs it beside the evaluated index, its answers judged and scored.
    run = settings.settings_for("evaluate", {
        "path": str(sample_repo), "baseline": "none", "cache_dir": str(tmp_path / "c"),
        "backend": "in_memory", "systems": "neuralmind,echo:case=keep"})
    from evaluator import app

    blocks = app.run_evaluate(run, deps_with(perfect=True)).results.systems
    assert [b.label for b in blocks] == ["neuralmind", "echo:case=keep"]
    echo = {q.id: q for q in blocks[1].queries}
    assert echo and all(set(q.metrics) >= {"ndcg@5", "faithfulness"} for q in echo.values())
    assert blocks[0].overall.metrics["hit_rate"] == 1.0


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
    """A results file that records a loose alpha shows a ▲ that the default alpha hides; one
    that records none is tested with the command's settings, never a function's defaults."""
    from dataclasses import replace

    from evaluator import report_views, reporting
    from evaluator.core.options import Settings
    from evaluator.core.systems import system_run
    from tests.factories import make_results

    base = make_results(quality=0.5, seed=3)
    better = [replace(q, metrics={**q.metrics, "ndcg@5": min(1.0, q.metrics["ndcg@5"] + 0.05)})
              for q in base.queries]
    shapes = list(base.shapes)
    runs = (system_run("neuralmind", base.queries, shapes),
            system_run("bm25", better, shapes))

    def cells(recorded, settings=None):
        run = replace(base.run, significance=recorded)
        results = replace(base, run=run, systems=runs)
        test = reporting.run_test(results, settings or Settings())
        tables = report_views.systems_view(results, test=test)
        return [c["marker"] for t in tables for row in t["rows"] for c in row["cells"]
                if c["name"] == "ndcg@5"]

    assert "▲" not in cells({"alpha": 1e-9, "min_effect": 0.02, "seed": 0})
    assert "▲" in cells({"alpha": 0.5, "min_effect": 0.02, "seed": 0})
    assert "▲" not in cells({}, Settings(alpha=1e-9))
    assert "▲" in cells({}, Settings(alpha=0.5))


# Presentation only formats and writes (issue 21 item 3): what the report shows — the views,
# significance, the changed files (git) and the history update — is computed by the
# application (evaluator.reporting, evaluator.report_views) and carried in the outcome.
PRESENTATION = ("evaluator/render.py", "evaluator/publish.py", "evaluator/escaping.py",
                "evaluator/template_sandbox.py")
COMPUTATION_MODULES = {"evaluator.core.stats", "evaluator.core.compare",
                       "evaluator.core.systems", "evaluator.core.history",
                       "evaluator.core.moves", "evaluator.baseline", "evaluator.reporting",
                       "evaluator.core.verdict.significance", "evaluator.history_file.record",
                       "evaluator.history_file.with_entry", "evaluator.report_views.report_view",
                       "evaluator.report_views.systems_view"}
COMPUTATION_CALLS = {"significance", "significance_of", "system_tables", "changed_files",
                     "repo_prefix", "entry_for", "report_view", "systems_view", "record",
                     "with_entry", "compare_results", "RunInfo", "Results"}


def _computation_in(source: str) -> list[str]:
    """Imports (outside ``if TYPE_CHECKING``) and calls of the report's computation."""
    tree = ast.parse(source)
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and getattr(node.test, "id", "") == "TYPE_CHECKING"
                   for stmt in node.body for n in ast.walk(stmt)}
    found = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
            found += sorted(names & COMPUTATION_MODULES)
        elif isinstance(node, ast.Import):
            found += sorted({a.name for a in node.names} & COMPUTATION_MODULES)
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
            if name in COMPUTATION_CALLS:
                found.append(f"{name}()")
    return found


def test_render_and_publish_only_format_and_write():
    found = {path: hits for path in PRESENTATION
             if (hits := _computation_in((ROOT / path).read_text(encoding="utf-8")))}
    assert not found, found


def test_the_presentation_check_sees_computation():
    """The check above fails on what render.py and publish.py did before issue 21."""
    before = ("from evaluator.core.results import significance_of\n"
              "from evaluator.core.systems import system_tables\n"
              "from evaluator.baseline import _pr_shas\n"
              "from evaluator import history_file\n"
              "def f(deps, root, results):\n"
              "    deps.git.changed_files(root, 'a', 'b')\n"
              "    history_file.record(root, results)\n"
              "    return Results(run=RunInfo())\n")
    assert sorted(_computation_in(before)) == [
        "Results()", "RunInfo()", "changed_files()", "evaluator.baseline",
        "evaluator.core.systems", "record()"]
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n" \
            "    from evaluator.reporting import Report\n"
    assert _computation_in(typed) == []


MY_MODULES = ("app.py", "authoring_commands.py", "render.py", "escaping.py",
              "template_sandbox.py", "report_views.py", "reporting.py", "publish.py",
              "core/measures.py")


def test_the_report_and_application_modules_are_at_most_600_lines():
    sizes = {m: len((ROOT / "evaluator" / m).read_text(encoding="utf-8").splitlines())
             for m in MY_MODULES}
    assert all(n <= 600 for n in sizes.values()), sizes


@pytest.fixture
def with_top1(monkeypatch):
    """One more measure, registered as an engineer would add it: one row, nothing else."""
    from evaluator.core import measures

    row = measures.Measure(
        "top1", "Top-1", "higher", "1 if the first module is relevant", "trec_eval P.1",
        lambda x: float(bool(x.ranking) and x.grades.get(x.ranking[0], 0) >= x.threshold),
        report="always", shape_column=True, system_column=True, tracked=True,
        detail="top-1")
    monkeypatch.setattr(measures, "MEASURES", (*measures.MEASURES, row))
    return row


def test_a_measure_added_to_the_registry_reaches_every_list(with_top1, with_echo, sample_repo,
                                                            tmp_path):
    from evaluator import app
    from evaluator.core import history
    from evaluator.render import render, render_text
    from tests.integration.test_app_fake_index import deps_with

    run = settings.settings_for("evaluate", {
        "path": str(sample_repo), "baseline": "none", "cache_dir": str(tmp_path / "c"),
        "backend": "in_memory", "systems": "neuralmind,echo"})
    outcome = app.run_evaluate(run, deps_with(perfect=True))
    results = outcome.results
    assert results.overall.metrics["top1"] == 1.0
    assert all("top1" in s.metrics for s in results.shapes.values())
    assert outcome.report is not None
    view = outcome.report.view
    assert all("top1" in t["columns"] for t in view.values["systems"])  # the systems table
    entry = history.entry_for(results)  # the history's tracked metrics
    assert entry is not None and entry.metrics["top1"] == 1.0
    doc = history.append(history.History(), entry)
    assert history.parse(history.dumps(doc), "h.json").entries[0].metrics["top1"] == 1.0
    report = render(view)
    assert "| Top-1 |" in report  # the headline table
    assert " · top-1 1.000</summary>" in report  # each question's summary line
    assert "Top-1" in render_text(view)  # the terminal summary's shape and systems columns


def test_one_row_per_measure_and_one_primary_metric():
    from evaluator.core import measures

    names = [m.name for m in measures.MEASURES]
    assert len(names) == len(set(names)), "a measure is one row, parameterised by k"
    assert [m.name for m in measures.MEASURES if m.primary] == ["ndcg"]
    assert measures.PRIMARY_METRIC == "ndcg@5"
    # mrr and hit_rate keep their bare names (the N-15 runner's) as the value at k = 5.
    ks = (1, 5, 10)
    names_at = measures.metric_names(ks)
    assert {"mrr", "hit_rate", "mrr@1", "mrr@10", "hit_rate@10"} <= set(names_at)
    assert measures.label("mrr") == "MRR@5" and measures.label("hit_rate@10") == "Hit rate@10"
    from evaluator.core.metrics import Gain

    x = measures.MeasureInput(("b", "a"), {"a": 3}, 5, 1, Gain.EXPONENTIAL, {})
    values = measures.compute_all(x, ks)
    assert values["mrr"] == values["mrr@5"] == 0.5 and values["mrr@1"] == 0.0
    assert values["hit_rate"] == values["hit_rate@5"] == 1.0 and values["hit_rate@1"] == 0.0


def test_the_judge_columns_are_the_registrys():
    from dataclasses import fields

    from evaluator.core import measures
    from evaluator.judging import JUDGE_COLUMNS, JudgeResult

    assert measures.judge_columns() == JUDGE_COLUMNS
    assert set(JUDGE_COLUMNS) <= {f.name for f in fields(JudgeResult)}


def test_the_default_primary_metric_is_written_once():
    """``"ndcg@5"`` as a default lives in the registry only (issue 21 item 5)."""
    hits = []
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # A default floor names the metric it floors (N-15's nDCG@5 floor), not a default.
        floors = {id(c.args[0]) for c in ast.walk(tree) if isinstance(c, ast.Call)
                  and getattr(c.func, "id", "") == "Floor" and c.args}
        hits += [f"{path.relative_to(ROOT)}:{node.lineno}" for node in ast.walk(tree)
                 if isinstance(node, ast.Constant) and node.value == "ndcg@5"
                 and id(node) not in floors]
    assert hits == [], hits


def test_the_template_sandbox_is_the_only_module_that_imports_jinja2():
    users = set()
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n.split(".")[0] == "jinja2" for n in names):
                users.add(str(path.relative_to(ROOT)))
    assert users == {"evaluator/template_sandbox.py"}


TOKEN_NAMES = ("GITHUB_TOKEN", "INPUT_GITHUB-TOKEN")


def _reads_token(node: ast.AST) -> bool:
    """A read of a token variable: ``env.get("GITHUB_TOKEN")``, ``env["GITHUB_TOKEN"]``,
    ``"GITHUB_TOKEN" in env`` or the name bound to a constant (``TOKEN_SOURCES``)."""
    return (isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.strip() in TOKEN_NAMES)


def test_only_the_settings_layer_reads_the_github_token():
    """Issue 21: the token is read once (evaluator/settings.py, ``token_of``) with one
    precedence, and reaches the HTTP client through Settings and Deps; no other module
    names the variables it comes from (messages that tell the user about them are prose,
    not a lookup: they hold more than the bare name)."""
    readers = set()
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        if any(_reads_token(node) for node in ast.walk(ast.parse(path.read_text("utf-8")))):
            readers.add(str(path.relative_to(ROOT)))
    assert readers == {"evaluator/settings.py"}


def test_the_token_finder_finds_reads():
    for source in ('env.get("GITHUB_TOKEN")', 'env["INPUT_GITHUB-TOKEN"]',
                   "'GITHUB_TOKEN' in os.environ", 'NAMES = ("INPUT_GITHUB-TOKEN",)'):
        assert any(_reads_token(n) for n in ast.walk(ast.parse(source))), source
    assert not any(_reads_token(n) for n in ast.walk(ast.parse('x = "set GITHUB_TOKEN"')))


def test_the_token_is_never_shown_by_settings_or_deps():
    from evaluator.deps import real_deps

    secret = "ghs_design-token-DO-NOT-PRINT"
    settings = build_settings([("environment", {"github_token": secret})])
    deps = real_deps({}, None, None, github_token=secret)  # type: ignore[arg-type]
    assert settings.github_token == deps.github_token == secret
    assert secret not in repr(settings) + repr(deps)


def test_only_the_http_transport_imports_requests():
    """Issue 21: the GitHub room is split by duty; the HTTP transport (retries, budget,
    deadline, size caps, scrubbing) is the one module that imports ``requests``."""
    importers = set()
    for path in sorted((ROOT / "evaluator").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "requests" or n.startswith("requests.") for n in names):
                importers.add(str(path.relative_to(ROOT)))
    assert importers == {"evaluator/http_transport.py"}


# The rooms below the application that get only the values they need (issue 21 item 4):
# no function there takes the whole Settings, except where sharding meets it (its small
# ShardingSettings is made from it, and the section loop hands it to evaluate()).
NARROW_ROOMS = ("sharding.py", "snapshot.py", "git_command.py", "git_repo.py",
                "github_context.py", "http_transport.py", "github_comments.py", "scrub.py")
SETTINGS_ALLOWED = {"sharding.py:of", "sharding.py:evaluate_sections",
                    "sharding.py:_section_settings"}


def _takes_settings(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
    return any(a.annotation is not None and ast.unparse(a.annotation) == "Settings"
               for a in arguments)


def test_sharding_and_snapshots_get_what_they_need_not_the_whole_settings():
    takers = set()
    for name in NARROW_ROOMS:
        tree = ast.parse((ROOT / "evaluator" / name).read_text(encoding="utf-8"))
        takers |= {f"{name}:{node.name}" for node in ast.walk(tree)
                   if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                   and _takes_settings(node)}
    assert takers == SETTINGS_ALLOWED
    # the snapshot helpers live in the rooms evaluate.py was split into (issue 21 item 4)
    functions = [node for name in ("evaluate.py", "checkout_files.py", "side.py")
                 for node in ast.walk(ast.parse((ROOT / "evaluator" / name).read_text(
                     encoding="utf-8"))) if isinstance(node, ast.FunctionDef)]
    helpers = {"_snapshot_for", "_own_files", "_own_folders"}
    assert helpers <= {node.name for node in functions}
    assert not helpers & {node.name for node in functions if _takes_settings(node)}
