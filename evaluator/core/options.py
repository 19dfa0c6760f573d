"""The option table: every option of every command, declared once.

Each :class:`Option` row names the option, its type (how a value is read), choices,
default, help, command-line flag, options-file key and GitHub Action input. From this table
come the argument parser, the options-file reader and the Action-input reader
(:mod:`evaluator.settings`), the README's option table and ``action.yml``'s inputs
(:mod:`evaluator.optiondocs`). Adding an option is one row of ``OPTIONS``; its value is then
``settings.<name>``.

Values arrive in layers, each overriding the one before: the built-in defaults, the Action's
own defaults (``action_default``, Action runs only), the options file
(``.retrieval-eval.yml``: kebab-case or snake_case keys), then the flags or Action inputs.
:func:`build_settings` reads every layer with the same parsers and reports every problem at
once. Floors live only in the options file::

    k: [1, 3, 5, 10]
    floors:                    # replaces the defaults; {} turns them off
      recall@5: 0.50           # a bare number means >=
      contradiction: "<= 0.20"
    shape-floors: {hit_rate: 0.70}
    zero-miss: true
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from copy import deepcopy
from dataclasses import dataclass, field, fields, replace
from typing import Any

from evaluator.core.floors import DEFAULT_POLICY, Floor, FloorPolicy
from evaluator.core.groundtruth import DEFAULT_MIX
from evaluator.core.measures import PRIMARY_METRIC, effective_k, metric_names, unit
from evaluator.core.metrics import Gain
from evaluator.core.option_types import (
    COMMENT_MODES,
    TYPES,
    Errors,
    OptionType,
)
from evaluator.core.scoring import DEFAULT_K
from evaluator.core.stats import DEFAULT_TEST
from evaluator.core.systems import DEFAULT_SYSTEMS, parse_systems, systems_help
from evaluator.errors import ConfigError

DERIVE = "<derive>"  # flag/file key/input spelled from the name: cache_dir → --cache-dir
EVALUATE = ("evaluate",)
ACTION_ORIGIN = "action inputs"  # the layer of the Action's inputs: problems say "input <name>"


# ----------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Option:
    """One option. ``flag``/``file_key``/``action_input``: ``DERIVE`` spells them from the
    name, ``None`` means the option has none. ``commands``: the subcommands that take it.
    ``negation``: a flag that sets a switch to false (``--no-comment``); ``flag_sets``: the
    value a switch flag sets; ``flag_help``: the help of a flag that turns something off
    (``--no-…``), which ``help`` (what the option's value means) would describe backwards.
    ``action_default``: the Action's default, below the options file (relative paths are
    relative to the workspace)."""

    name: str
    type: str
    help: str
    default: Any = None
    choices: tuple[str, ...] = ()
    commands: tuple[str, ...] = EVALUATE
    flag: str | None = DERIVE
    file_key: str | None = DERIVE
    action_input: str | None = DERIVE
    negation: str | None = None
    flag_sets: bool = True
    flag_help: str | None = None
    action_default: Any = None
    positional: bool = False
    required: bool = False
    metavar: str | None = None
    fold_dashes: bool = False  # ``in-memory`` spells ``in_memory``
    help_from: Callable[[], str] | None = None  # help read from a registry when shown

    @property
    def help_text(self) -> str:
        """The help shown everywhere (parser, README, ``action.yml``, schema)."""
        return self.help_from() if self.help_from is not None else self.help

    @property
    def typed_default(self) -> str | None:
        """The default as it is typed on the command line (``12``, ``1,3,5,10``,
        ``focused=0.4,…``); None for none, a switch, or a value with no such spelling."""
        value = self.default
        if isinstance(value, bool) or value in (None, (), {}):
            return None
        if isinstance(value, Mapping):
            return ",".join(f"{k}={v}" for k, v in value.items())
        if isinstance(value, tuple):
            return ",".join(map(str, value)) if all(isinstance(v, int) for v in value) \
                else None
        return str(value)

    def __post_init__(self) -> None:
        kebab = self.name.replace("_", "-")
        for attr, derived in (("flag", f"--{kebab}"), ("file_key", kebab),
                              ("action_input", kebab)):
            if getattr(self, attr) == DERIVE:
                object.__setattr__(self, attr, None if self.positional and attr == "flag"
                                   else derived)
        if self.type not in TYPES:
            raise ValueError(f"option {self.name}: unknown type {self.type!r}")

    @property
    def kind(self) -> OptionType:
        """The type object: how values are read, the schema, the Python type."""
        return TYPES[self.type]

    @property
    def annotation(self) -> str:
        """The value's Python type in :class:`Settings`."""
        python = self.kind.python
        return python if self.default is not None or python == "Any" else f"{python} | None"

    def parse(self, value: Any, where: str, errors: Errors) -> Any:
        if value is None:
            if self.default is not None:
                errors.append(f"{where}: needs a value")
            return self.default
        return self.kind.read(value, where, errors, self)


def _o(name: str, type_: str, help_: str, **kw: Any) -> Option:
    return Option(name, type_, help_, **kw)


_LOCAL = {"file_key": None, "action_input": None}  # command-line only
_FILE = {"flag": None, "action_input": None}  # options file only

OPTIONS: tuple[Option, ...] = (
    _o("path", "path", "the indexed root; module paths in the ground truth are relative to it "
       "(default: the current directory)", positional=True, file_key=None,
       commands=("evaluate", "validate", "init", "import"), action_default="."),
    _o("example", "bool", "evaluate the bundled example (NeuralMind's sample_project)",
       **_LOCAL),
    _o("queries", "path", "ground-truth file (JSON or YAML); default retrieval_queries.json "
       "(or .yaml/.yml) in PATH", default="retrieval_queries.json",
       commands=("evaluate", "validate", "judge")),
    _o("config", "path", "options file (default: PATH/.retrieval-eval.yml if present)",
       file_key=None, commands=("evaluate", "validate", "init", "import", "merge")),
    _o("output_dir", "path", "where results.json, report.md and the TREC export are written "
       "(never indexed)", action_default=".retrieval-eval/results",
       commands=("evaluate", "merge")),
    _o("sections", "sections", "the parts of a monorepo, each with its own path, queries, "
       "floors and module universe (see Sections and shards)", **_FILE),
    _o("section", "text", "evaluate only this section of the options file's sections",
       file_key=None),
    _o("shard", "shard", "evaluate shard I of N (by section when there are sections, else by "
       "question) and write the part results.part-I-of-N.json for `merge`", file_key=None,
       metavar="I/N"),
    _o("parts", "paths", "the parts written by evaluate --shard, or folders holding them "
       "(mode: merge)", positional=True, commands=("merge",), file_key=None,
       metavar="PART"),
    _o("k", "k", "cut-offs, comma separated (5, the headline cut, is always computed)",
       default=DEFAULT_K, metavar="1,3,5,10"),
    _o("gain", "gain", "nDCG gain: 2^rel − 1 (exponential) or rel (linear)",
       default=Gain.EXPONENTIAL, choices=("exponential", "linear"), action_input=None),
    _o("relevance_threshold", "int", "grade from which a module counts as relevant",
       default=1, choices=("1", "2", "3"), action_input=None),
    _o("backend", "text", "NeuralMind's embedding backend (auto), or its deterministic "
       "offline one (in_memory: no model, so the faithfulness judge uses its terms rule "
       "alone)", default="auto", choices=("auto", "in_memory"),
       fold_dashes=True, commands=("evaluate", "init", "judge")),
    _o("graph_source", "text", "NeuralMind's tree-sitter graph (builtin) or graphify's",
       default="builtin", choices=("builtin", "graphify")),
    _o("cache_dir", "path", "snapshots, indexes and the model folder (never indexed; cache it "
       "with actions/cache)", commands=("evaluate", "init", "judge"),
       action_default=".retrieval-eval/cache"),
    _o("strict", "bool", "incomplete relevance-grade coverage is an error, not a warning",
       default=False, commands=("evaluate", "validate")),
    _o("include", "globs", "module universe: only the files these globs match are modules "
       "(graded and ranked); default: every source file", default=(),
       commands=("evaluate", "validate", "init", "import"), metavar="GLOB,..."),
    _o("exclude", "globs", "module universe: files left out; replaces the default list "
       "(tests, docs, examples, benchmarks, CI, packaging, scripts, licences, generated, "
       "vendored), "
       "which the word default stands for", commands=("evaluate", "validate", "init", "import"),
       metavar="GLOB,..."),
    _o("embed", "bool", "also compute the embedding columns (faithfulness_embed, context "
       "precision, context recall) with the MiniLM model", default=False,
       commands=("evaluate", "judge")),
    _o("judge_check", "bool", "also score each query's judge on the full source of its grade "
       "≥ 2 modules, on another query's grade-3 module and on false versions of its facts, "
       "and report the separation beside the retrieved contexts' score (always on for "
       "--example)", default=False),
    _o("systems", "text", "", help_from=systems_help, default=DEFAULT_SYSTEMS,
       metavar="SYSTEMS"),
    _o("budget", "budget", "cut every system's context to N tokens, or to the evaluated "
       "NeuralMind index's own count for each question (neuralmind), before it is judged: "
       "whole passages in the system's ranking order, the last one truncated; every system "
       "counted alike, as characters / 4 (see docs/systems.md)", metavar="N|neuralmind"),
    _o("depth", "int", "ranking depth: ask each system for at least N modules where it can "
       "(default: the largest k reported); a metric at a k deeper than a system could rank "
       "for a question is marked not measurable (see docs/systems.md)", metavar="N"),
    _o("fail_on_floors", "bool", "fail when a floor or gate is missed (false: report it and "
       "exit 0)", default=True, flag="--no-fail-on-floors", flag_sets=False,
       flag_help="report a missed floor or gate but exit 0 (fail-on-floors: false)",
       commands=("evaluate", "comment", "merge")),
    _o("baseline", "text", "what to compare with: none | auto (the PR's merge base) | "
       "ref:<git-ref> | file:<results.json>", commands=("evaluate", "comment", "merge"),
       action_default="auto"),
    _o("comment", "comment", "the pull-request comment: always (post or update it), on-change "
       "(only when a question's metrics or the verdict changed since the last one), "
       "on-failure (only when the check fails; an existing one is still updated), never; "
       "the flag means always", default="never", negation="--no-comment",
       flag_help="do not post the pull-request comment (comment: never)",
       action_default="always", choices=(*COMMENT_MODES, "true", "false"),
       commands=("evaluate", "comment", "merge")),
    _o("hide_previous", "bool", "post a new comment each run and minimize the superseded ones "
       "(a timeline) instead of editing one comment in place", default=False,
       commands=("evaluate", "comment", "merge")),
    _o("baseline_mismatch", "text", "a baseline measured with other settings (model, backend, "
       "graph source, NeuralMind version, k, gain, threshold): error (exit 2) or warn (compare "
       "with a warning banner)", default="error", choices=("error", "warn"),
       commands=("evaluate", "comment", "merge")),
    _o("history", "path", "a JSON file of the headline metrics per commit: read for a trend "
       "chart, and on pushes to the default branch this run is added (keep it with "
       "actions/cache or an artifact)", commands=("evaluate", "comment", "merge")),
    _o("preview", "bool", "print the exact comment Markdown instead of posting it (no token, "
       "no network)", default=False, commands=("comment",), **_LOCAL),
    _o("pr", "int", "pull request number (default: from the event file)",
       commands=("evaluate", "comment", "merge"), file_key=None),
    _o("comment_key", "text", "keeps separate sticky comments for separate evaluations in one "
       "pull request", default="default", commands=("evaluate", "comment", "merge")),
    _o("template", "path", "a Jinja template extending builtin/comment.md.j2",
       commands=("evaluate", "comment", "merge")),
    _o("comment_timeout", "seconds", "total seconds for talking to GitHub (every request, "
       "retry and wait of the comment phase); a server that answers slowly or asks to wait "
       "longer makes the comment fail instead of holding the job; at most 900",
       default=120.0, commands=("evaluate", "comment", "merge"), metavar="SECONDS"),
    _o("quiet", "bool", "no progress on stderr (warnings and the summary still print)",
       default=False, commands=("evaluate", "comment", "init", "merge"), action_input=None),
    _o("primary_metric", "text", "the metric tested for significance against the baseline",
       default=PRIMARY_METRIC, **_FILE),
    _o("alpha", "level", "significance level of the paired randomization test",
       default=DEFAULT_TEST.alpha, **_FILE),
    _o("min_effect", "fraction", "smallest change of the primary metric called significant",
       default=DEFAULT_TEST.min_effect, **_FILE),
    _o("aggregate_floors", "floors", "floors on the overall means (replace the defaults; {} "
       "turns them off)", default=DEFAULT_POLICY.aggregate, file_key="floors",
       flag=None, action_input=None),
    _o("shape_floors", "floors", "floors on every shape's means",
       default=DEFAULT_POLICY.per_shape, **_FILE),
    _o("zero_miss", "bool", "no query may have recall@5 = 0", default=DEFAULT_POLICY.zero_miss,
       **_FILE),
    _o("max_drop", "drops", "regression gate: metric → the largest allowed drop from the "
       "baseline", default={}, **_FILE),
    _o("max_drop_significant_only", "bool", "a drop fails max-drop only when significant",
       default=False, **_FILE),
    _o("fail_on_new_failures", "bool", "regression gate: no query may lose its top-5 hit",
       default=False, **_FILE),
    _o("results", "path", "results.json from `evaluate` (mode: comment); not needed with "
       "`run-id`", commands=("comment",), file_key=None),
    _o("run_id", "int", "the evaluation's workflow run (mode: comment, in a `workflow_run` "
       "workflow: `github.event.workflow_run.id`): its results artifact is downloaded "
       "through the API, checked as data (size, zip members, results schema, the pull "
       "request against the run's head commit) and posted; needs `actions: read`",
       commands=("comment",), file_key=None, metavar="ID"),
    _o("artifact_name", "text", "the name of the results artifact of `run-id` (it holds "
       "results.json and pr.json)", default="retrieval-eval", commands=("comment",),
       file_key=None, action_default="retrieval-eval"),
    _o("format", "text", "github: workflow annotations pointing at file and line",
       default="text", choices=("text", "github"), commands=("validate",), **_LOCAL),
    _o("count", "int", "how many questions to draft (exactly, or a reason per missing one)",
       default=12, commands=("init",), **_LOCAL),
    _o("mix", "mix", "shape weights of the questions drafted from docstrings (a history "
       "question takes its change's shape)",
       default=DEFAULT_MIX, commands=("init",), metavar="focused=4,cross-file=3,identity=3",
       **_LOCAL),
    _o("from_history", "bool", "draft the questions from the repository's history: each "
       "commit's cleaned subject, graded by the modules it changed (--count of them)",
       default=False, commands=("init",), **_LOCAL),
    _o("since", "text", "with --from-history: mine only the commits after this ref "
       "(REF..HEAD)", commands=("init",), metavar="REF", **_LOCAL),
    _o("docstring_count", "int", "with --from-history: also draft this many questions from "
       "the code's docstrings into the same draft", default=0, commands=("init",),
       **_LOCAL),
    _o("review", "path", "do not draft: print, per question of this ground-truth file, the "
       "modules NeuralMind retrieves against their grades", commands=("init",), metavar="FILE",
       **_LOCAL),
    _o("no_review", "bool", "draft without building the index (no retrieval-based grades "
       "or lists)", default=False, commands=("init",), **_LOCAL),
    _o("source_format", "text", "neuralmind-eval: .neuralmind.eval.yaml; trec: TREC/BEIR qrels "
       "+ queries", choices=("neuralmind-eval", "trec"), positional=True, metavar="format",
       commands=("import",), **_LOCAL),
    _o("input", "path", "the .neuralmind.eval.yaml (default: PATH/.neuralmind.eval.yaml)",
       commands=("import",), **_LOCAL),
    _o("qrels", "path", "TREC or BEIR qrels (trec)", commands=("import",), **_LOCAL),
    _o("trec_queries", "path", "queries TSV or BEIR queries.jsonl (trec)", flag="--queries",
       commands=("import",), **_LOCAL),
    _o("clip_grades", "bool", "clip grades outside 0-3 into 0-3 instead of refusing them",
       default=False, commands=("import",), **_LOCAL),
    _o("output", "path", "where to write (default: PATH/retrieval_queries.json); never "
       "overwritten", commands=("init", "import"), metavar="FILE", **_LOCAL),
    _o("contexts", "path", "JSON object {query id: context text} to judge", required=True,
       commands=("judge",), **_LOCAL),
    _o("judge_output", "path", "write the JSON here (atomically) instead of stdout",
       flag="--output", commands=("judge",), metavar="FILE", **_LOCAL),
    _o("mode", "text", "evaluate builds the index and evaluates; comment only posts a saved "
       "`results` file to pull request `pr`, or the results artifact of workflow run "
       "`run-id` (the fork-safe workflow's second stage); merge joins the `parts` of a "
       "sharded evaluation, then gates and comments as evaluate does",
       default="evaluate", choices=("evaluate", "comment", "merge"), commands=("action",),
       flag=None, file_key=None),
    _o("github_token", "secret", "token for the PR comment; needs `pull-requests: write` (and "
       "`actions: read` with `run-id`). Read once: this input when it is not blank, else the "
       "`GITHUB_TOKEN` variable",
       commands=("action",), flag=None, file_key=None, action_default="${{ github.token }}"),
)
BY_NAME: dict[str, Option] = {o.name: o for o in OPTIONS}
BY_FILE_KEY: dict[str, Option] = {o.file_key.replace("-", "_"): o for o in OPTIONS
                                  if o.file_key}


# ----------------------------------------------------------------------------- settings


def _defaults() -> dict[str, Any]:
    return {o.name: o.default for o in OPTIONS}


def _default(name: str) -> Callable[[], Any]:
    """The default factory of option ``name``'s field: its default from the table, copied."""
    return lambda: deepcopy(BY_NAME[name].default)


class _SettingsBase:
    """What every :class:`Settings` can do beyond holding the values."""

    @property
    def values(self) -> dict[str, Any]:
        """Option name to value, for code that walks every option (results, shards)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    @property
    def floors(self) -> FloorPolicy:
        """The :class:`FloorPolicy` of ``aggregate_floors``, ``shape_floors``, ``zero_miss``."""
        return FloorPolicy(aggregate=getattr(self, "aggregate_floors"),  # noqa: B009
                           per_shape=getattr(self, "shape_floors"),  # noqa: B009
                           zero_miss=getattr(self, "zero_miss"))  # noqa: B009

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (option name to an already parsed value)."""
        unknown = set(changes) - {f.name for f in fields(self)}  # type: ignore[arg-type]
        if unknown:
            raise AttributeError(f"no option {sorted(unknown)}")
        return replace(self, **changes)  # type: ignore[type-var, return-value]


SETTINGS_BEGIN = "# --- the generated Settings (python -m evaluator.optiondocs) " + "---"
SETTINGS_END = "# --- end of the generated " + "Settings ---"
# --- the generated Settings (python -m evaluator.optiondocs) ---
@dataclass(frozen=True, kw_only=True)
class Settings(_SettingsBase):
    """Every option's value after all layers, typed and frozen (generated from
    the option table: ``python -m evaluator.optiondocs``)."""

    path: str | None = field(default_factory=_default("path"))
    example: bool | None = field(default_factory=_default("example"))
    queries: str = field(default_factory=_default("queries"))
    config: str | None = field(default_factory=_default("config"))
    output_dir: str | None = field(default_factory=_default("output_dir"))
    sections: Any = field(default_factory=_default("sections"))
    section: str | None = field(default_factory=_default("section"))
    shard: str | None = field(default_factory=_default("shard"))
    parts: tuple[str, ...] | None = field(default_factory=_default("parts"))
    k: tuple[int, ...] = field(default_factory=_default("k"))
    gain: Gain = field(default_factory=_default("gain"))
    relevance_threshold: int = field(default_factory=_default("relevance_threshold"))
    backend: str = field(default_factory=_default("backend"))
    graph_source: str = field(default_factory=_default("graph_source"))
    cache_dir: str | None = field(default_factory=_default("cache_dir"))
    strict: bool = field(default_factory=_default("strict"))
    include: tuple[str, ...] = field(default_factory=_default("include"))
    exclude: tuple[str, ...] | None = field(default_factory=_default("exclude"))
    embed: bool = field(default_factory=_default("embed"))
    judge_check: bool = field(default_factory=_default("judge_check"))
    systems: str = field(default_factory=_default("systems"))
    budget: str | None = field(default_factory=_default("budget"))
    depth: int | None = field(default_factory=_default("depth"))
    fail_on_floors: bool = field(default_factory=_default("fail_on_floors"))
    baseline: str | None = field(default_factory=_default("baseline"))
    comment: str = field(default_factory=_default("comment"))
    hide_previous: bool = field(default_factory=_default("hide_previous"))
    baseline_mismatch: str = field(default_factory=_default("baseline_mismatch"))
    history: str | None = field(default_factory=_default("history"))
    preview: bool = field(default_factory=_default("preview"))
    pr: int | None = field(default_factory=_default("pr"))
    comment_key: str = field(default_factory=_default("comment_key"))
    template: str | None = field(default_factory=_default("template"))
    comment_timeout: float = field(default_factory=_default("comment_timeout"))
    quiet: bool = field(default_factory=_default("quiet"))
    primary_metric: str = field(default_factory=_default("primary_metric"))
    alpha: float = field(default_factory=_default("alpha"))
    min_effect: float = field(default_factory=_default("min_effect"))
    aggregate_floors: tuple[Floor, ...] = field(default_factory=_default("aggregate_floors"))
    shape_floors: tuple[Floor, ...] = field(default_factory=_default("shape_floors"))
    zero_miss: bool = field(default_factory=_default("zero_miss"))
    max_drop: Mapping[str, float] = field(default_factory=_default("max_drop"))
    max_drop_significant_only: bool = field(default_factory=_default("max_drop_significant_only"))
    fail_on_new_failures: bool = field(default_factory=_default("fail_on_new_failures"))
    results: str | None = field(default_factory=_default("results"))
    run_id: int | None = field(default_factory=_default("run_id"))
    artifact_name: str = field(default_factory=_default("artifact_name"))
    format: str = field(default_factory=_default("format"))
    count: int = field(default_factory=_default("count"))
    mix: Mapping[str, float] = field(default_factory=_default("mix"))
    from_history: bool = field(default_factory=_default("from_history"))
    since: str | None = field(default_factory=_default("since"))
    docstring_count: int = field(default_factory=_default("docstring_count"))
    review: str | None = field(default_factory=_default("review"))
    no_review: bool = field(default_factory=_default("no_review"))
    source_format: str | None = field(default_factory=_default("source_format"))
    input: str | None = field(default_factory=_default("input"))
    qrels: str | None = field(default_factory=_default("qrels"))
    trec_queries: str | None = field(default_factory=_default("trec_queries"))
    clip_grades: bool = field(default_factory=_default("clip_grades"))
    output: str | None = field(default_factory=_default("output"))
    contexts: str | None = field(default_factory=_default("contexts"))
    judge_output: str | None = field(default_factory=_default("judge_output"))
    mode: str = field(default_factory=_default("mode"))
    github_token: str | None = field(default_factory=_default("github_token"), repr=False)
# --- end of the generated Settings ---


def _layer(values: dict[str, Any], given: Mapping[str, Any], origin: str, errors: Errors, *,
           by: Mapping[str, Option]) -> None:
    for raw, value in given.items():
        key = str(raw).strip().replace("-", "_")
        if key == "$schema":  # the editor's schema reference (evaluator/schemas/)
            continue
        option = by.get(key)
        where = (f"input {option.action_input}" if origin == ACTION_ORIGIN and option
                 else f"{origin}: {key.replace('_', '-')}")
        if option is None:
            errors.append(f"{where}: unknown option")
            continue
        values[option.name] = option.parse(value, where, errors)


def _check_metrics(settings: Settings, errors: Errors) -> None:
    known = set(metric_names(effective_k(settings.k)))
    policy = settings.floors
    for floor in (*policy.aggregate, *policy.per_shape):
        if floor.metric in known and unit(floor.metric) == "score" \
                and not 0.0 <= floor.value <= 1.0:
            errors.append(f"floor {floor.rule}: {floor.metric} lies between 0 and 1, so this "
                          "floor would always fail (or always hold)")
        elif floor.metric in known and floor.value < 0:
            errors.append(f"floor {floor.rule}: {floor.metric} is never negative")
    used = settings.floors.metrics() | {settings.primary_metric} | set(settings.max_drop)
    for metric in sorted(used):
        if metric not in known:
            errors.append(f"floor or metric {metric!r} is unknown; known metrics: "
                          f"{', '.join(sorted(known))}")


def build_settings(layers: Sequence[tuple[str, Mapping[str, Any] | None]], *,
                   file_layer: int | None = None) -> Settings:
    """Defaults, then each ``(origin, values)`` layer in turn; every problem at once.

    Values are keyed by option name; the layer at index ``file_layer`` is an options file
    (keys are file keys, kebab- or snake-case; it must be a mapping). ``None`` values in a
    command-line layer mean "not given"."""
    errors: Errors = []
    values = _defaults()
    for i, (origin, given) in enumerate(layers):
        if given is None:
            continue
        if i == file_layer:
            if not isinstance(given, Mapping):
                raise ConfigError(f"{origin}: must be a mapping of option to value")
            _layer(values, given, origin, errors, by=BY_FILE_KEY)
        else:
            present = {k: v for k, v in given.items() if v is not None}
            _layer(values, present, origin, errors, by=BY_NAME)
    settings = Settings(**values)
    _check_metrics(settings, errors)
    try:
        parse_systems(settings.systems)
    except ConfigError as err:
        errors.append(str(err))
    if errors:
        raise ConfigError("invalid options:\n  " + "\n  ".join(errors))
    return settings


def build_options(file_values: Mapping[str, Any] | None, flag_values: Mapping[str, Any], *,
                  file_name: str = "options file",
                  defaults: Mapping[str, Any] | None = None) -> Settings:
    """Built-in defaults, then ``defaults``, then the options file, then flags."""
    return build_settings([("defaults", defaults), (file_name, file_values),
                           ("command line", flag_values)], file_layer=1)


def parse_baseline(spec: str | None) -> tuple[str, str | None]:
    """``none`` | ``auto`` | ``ref:<git-ref>`` | ``file:<path>``; a bare path means ``file:``."""
    text = (spec or "none").strip()
    if text in ("", "none"):
        return "none", None
    if text == "auto":
        return "auto", None
    for mode in ("ref", "file"):
        if text.startswith(f"{mode}:"):
            value = text[len(mode) + 1:].strip()
            if not value:
                raise ConfigError(f"baseline {text!r}: give a value after '{mode}:'")
            return mode, value
    return "file", text
