"""Several retrieval systems on the same snapshot and ground truth, side by side.

``--systems`` names them, comma-separated, the first being the reference::

    neuralmind,bm25,neuralmind:graph=graphify,neuralmind:backend=in_memory

Every system is an entry of the registry (:data:`SYSTEMS`, :func:`register`): its name,
what it is, its options (``name:key=value``, several joined with ``:``; an option's first
value is its default), what it needs (:data:`NEEDS`) and where its factory is. The
``--systems`` parser, the option's help and the table of systems in docs/
(:func:`systems_table`) come from the registry, and the application builds each system from
its factory. Every system answers :meth:`System.ask` with an :class:`Answer`; the evaluator
judges every answer alike (:mod:`evaluator.judging`), so no system judges its own.

The first system is the evaluated one (an entry that may be evaluated, without options:
plain ``neuralmind``, configured by ``--backend`` and ``--graph-source``), whose results
carry the floors, the baseline comparison and the comment's headline; the others are
references beside it on the same snapshot and ground truth. The default is ``neuralmind``
alone.

The comparison table follows ranx's ``compare`` report: systems as rows, metrics as
columns, the best mean of each column marked, and each system after the first tested
against the first, query by query, with the paired randomization test of
:mod:`evaluator.core.stats`. With several systems and shapes the tests of one metric form a
family: their p-values are Holm–Bonferroni adjusted across every (system, shape) pair
(:func:`evaluator.core.stats.holm_adjusted`), and a cell is significant when its adjusted
``p < alpha`` and ``|delta| ≥ min_effect``. ``alpha``, ``min_effect`` and the test's seed
are always the run's (no default here), so no view can test with other settings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from evaluator.core.scoring import Aggregate, QueryResult, aggregate, by_shape
from evaluator.core.stats import EFFECT_SLACK, Comparison, compare, holm_adjusted
from evaluator.errors import ConfigError


@dataclass(frozen=True)
class Answer:
    """What a retrieval system returns for one question, before any judging.

    ``ranked_modules``: the modules (checkout-relative paths) best first; ``context``: the
    text it would hand a model; ``tokens``: that context's size in tokens (the system's own
    count or estimate); ``seconds``: how long the system took to answer (its latency);
    ``documents``: the retrieved passages the context drew on (for context precision);
    ``token_reduction``: the system's own context-versus-codebase ratio, when it has one."""

    ranked_modules: tuple[str, ...]
    context: str
    tokens: int
    seconds: float
    documents: tuple[str, ...] = ()
    token_reduction: float | None = None


class System(Protocol):
    """A retrieval system: a question in, an :class:`Answer` out (read-only)."""

    def ask(self, question: str) -> Answer: ...


# What an entry may need from the run:
# * ``model``: the run's embedding model (resolved for it unless its backend is in_memory;
#   an entry without a ``backend`` option always gets it); a reference system's factory
#   gets it as ``model`` (a :class:`evaluator.model.ModelSource`) with the run's cache
#   folder as ``cache_dir`` (:func:`evaluator.refsystems.provided`);
# * ``graph``: a NeuralMind index built on the system's own snapshot of the checkout (with
#   ``--graph-source`` and ``--backend`` unless its options set them), through the run's
#   index factory; a system without it is built from the checkout's files directly;
# * ``ground_truth``: the run's ground truth (its factory gets it as ``ground_truth``);
# * ``index``: the evaluated index's own build, searched while it is open after the head's
#   questions (its factory gets it as ``index``; nothing is built twice).
NEEDS: Mapping[str, str] = {
    "model": "the embedding model (a `backend` option: unless it is in_memory)",
    "graph": "a NeuralMind build on its own snapshot",
    "ground_truth": "the ground truth's grades",
    "index": "the evaluated index's build (searched, not built again)",
}


@dataclass(frozen=True)
class SystemEntry:
    """One system of the registry.

    ``factory`` is ``"module:attribute"``, imported by the application only when the system
    runs (the core imports no adapter). An entry with ``graph`` in ``needs`` is the
    evaluated index and its variants: its factory is an index factory ``(tree, *, backend,
    graph_source, model) -> Index``, the run's (:class:`evaluator.deps.Deps`), and its
    options ``graph`` and ``backend`` override ``--graph-source`` and ``--backend``. Any
    other factory is ``(root, files, **options) -> System``, built on the head checkout's
    files in the module universe (the candidates every system ranks and is scored on;
    whatever a ranking holds outside it is filtered out, alike for every system, and
    counted). ``options`` maps each option to its values, the
    first being the default. ``evaluated``: the entry may be the first, evaluated system
    (without options). ``depth``: how deep it ranks, ``None`` when it ranks every module of
    the universe it has (a factory that caps its ranking takes the run's ranking depth as
    ``depth``), else what bounds its ranking; a ranking of such a system may stop short of
    the run's depth (:mod:`evaluator.core.depth`). ``option_needs``: what the entry needs
    instead of ``needs`` when an option has a value (``{"chunks=code": {"model"}}``)."""

    name: str
    summary: str
    factory: str
    options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    needs: frozenset[str] = frozenset()
    evaluated: bool = False
    depth: str | None = None
    option_needs: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def needs_for(self, options: Mapping[str, str]) -> frozenset[str]:
        """What the system with ``options`` needs (:attr:`option_needs` over ``needs``)."""
        for key, value in options.items():
            if f"{key}={value}" in self.option_needs:
                return self.option_needs[f"{key}={value}"]
        return self.needs

    def __post_init__(self) -> None:
        settable = {f"{k}={v}" for k, values in self.options.items() for v in values}
        if set(self.option_needs) - settable or any(
                needs - set(NEEDS) or "graph" in needs for needs in self.option_needs.values()):
            raise ValueError(f"system {self.name}: option_needs names an unknown option value "
                             "or need (or graph)")
        unknown = sorted(self.needs - set(NEEDS))
        if unknown or ":" not in self.factory:
            raise ValueError(f"system {self.name}: unknown needs {unknown} or a factory that "
                             f"is not 'module:attribute' ({self.factory!r})")
        if ("graph" in self.needs) != self.evaluated:
            raise ValueError(f"system {self.name}: the evaluated index, and only it, is "
                             "built on a snapshot (needs graph)")

    def variants(self) -> tuple[str, ...]:
        """The spec of each non-default option value (``neuralmind:graph=graphify``)."""
        return tuple(f"{self.name}:{key}={value}" for key, values in self.options.items()
                     for value in values[1:])


SYSTEMS: dict[str, SystemEntry] = {}


def register(entry: SystemEntry) -> SystemEntry:
    """Add ``entry`` to the registry (a name is registered once)."""
    if entry.name in SYSTEMS:
        raise ValueError(f"system {entry.name!r} is registered twice")
    SYSTEMS[entry.name] = entry
    return entry


register(SystemEntry(
    "neuralmind", "the NeuralMind index under evaluation, or a variant of it built on its own "
    "snapshot with `graph` or `backend` set; `synapses=off` asks the same index with "
    "NeuralMind's synapse layer switched off (`NEURALMIND_SYNAPSE_INJECT=0`, NeuralMind's own "
    "on/off A/B switch: no synapse re-ranking or recall)",
    factory="evaluator.neuralmind_index:NeuralMindIndex",
    options={"graph": ("builtin", "graphify"), "backend": ("auto", "in_memory"),
             "synapses": ("on", "off")},
    needs=frozenset({"model", "graph"}), evaluated=True,
    depth="what its query returns (`query()` has no top-k)"))
register(SystemEntry(
    "bm25", "the module universe's files (those with a suffix NeuralMind indexes: code, "
    "Markdown, reST) ranked by Okapi BM25 over their text (`rank-bm25`, k1 = 1.5, b = 0.75, "
    "Lucene's idf) with the judge's code-aware tokenizer (identifiers split on case and "
    "underscores, stemmed, stop words dropped); its context is the whole text of its top 5 "
    "modules",
    factory="evaluator.bm25:BM25Index"))
# The reference systems of evaluator/refsystems/ (docs/reference-systems.md).
register(SystemEntry(
    "embedding", "plain vector RAG. `chunks=index`: NeuralMind's public benchmark's "
    "embedding-rag, `NeuralMind.search` over the run's own build (its nodes embed as "
    "qualified name, module and docstring; no synapses, no disclosure): the files of the hits "
    "in order, the context the source of the top 8 hits. `chunks=code`: the modules cut into "
    "code chunks (functions, methods, class heads, 40-line windows) embedded with the run's "
    "MiniLM model, ranked by cosine with the question; the modules by their best chunk, the "
    "context its top 8 chunks; chunk vectors cached by content",
    factory="evaluator.refsystems.embedding:embedding_system",
    options={"chunks": ("index", "code")}, needs=frozenset({"index"}),
    option_needs={"chunks=code": frozenset({"model"})},
    depth="`chunks=index`: the hits it asks the build for, doubled until `--depth` modules "
    "are ranked or the index has no more; `chunks=code`: every module"))
register(SystemEntry(
    "grep", "keyword search as ripgrep-style tools do (pure Python): the question's words "
    "(3+ letters, no function words) counted as whole words, ignoring case; the modules by "
    "their total count, the context the whole text of the top 5",
    factory="evaluator.refsystems.grep:GrepIndex"))
register(SystemEntry(
    "full-file", "paste the files: bm25's ranking, the context the whole text of its top "
    "`top` modules (`all`: every module)", factory="evaluator.refsystems.fullfile:FullFile",
    options={"top": ("10", "5", "20", "all")}))
register(SystemEntry(
    "oracle", "the ceiling: the question's graded modules by grade, the context the source "
    "of its top-graded (grade-3) modules", factory="evaluator.refsystems.oracle:Oracle",
    needs=frozenset({"ground_truth"})))
DEFAULT_SYSTEMS = "neuralmind"


def systems_help() -> str:
    """The ``--systems`` option's help: every registered system and variant."""
    names = [*SYSTEMS, *(v for e in SYSTEMS.values() for v in e.variants())]
    return ("retrieval systems to evaluate side by side, the first being the reference: "
            f"{', '.join(names)} (comma separated)")


def systems_table() -> str:
    """The table of systems (Markdown) in docs/systems.md and docs/architecture.md, from
    the registry."""
    rows = ["| system | options (default first) | needs | ranks | what it is |",
            "|---|---|---|---|---|"]
    bar = "\\|"  # a literal | inside a table cell
    for e in SYSTEMS.values():
        options = "; ".join(f"`{k}` = {bar.join(v)}" for k, v in e.options.items())
        needs = "; ".join([*(NEEDS[n] for n in sorted(e.needs)), *(
            f"`{o}`: " + ", ".join(NEEDS[n] for n in sorted(v))
            for o, v in e.option_needs.items())])
        ranks = (e.depth or "every module it matches, `--depth` deep or more").replace("|", bar)
        rows.append(f"| `{e.name}` | {options or 'none'} | {needs or 'the checkout only'} | "
                    f"{ranks} | {e.summary.replace('|', bar)} |")
    return "\n".join(rows)


@dataclass(frozen=True)
class SystemSpec:
    """One system to evaluate: its kind and options; ``label`` names it in results."""

    name: str
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return ":".join([self.name, *(f"{k}={v}" for k, v in sorted(self.options.items()))])


def parse_systems(text: str) -> tuple[SystemSpec, ...]:
    """The systems of a ``--systems`` value; :class:`ConfigError` naming what to fix."""
    specs: list[SystemSpec] = []
    items = [item.strip() for item in text.split(",")]
    if not text.strip() or any(not item for item in items):
        raise ConfigError(f"--systems {text!r}: give a comma-separated list of systems, "
                          f"e.g. neuralmind,bm25")
    for item in items:
        name, *parts = item.split(":")
        name = name.strip()
        if name not in SYSTEMS:
            raise ConfigError(f"--systems: unknown system {name!r}; known: "
                              f"{', '.join(SYSTEMS)}")
        allowed = SYSTEMS[name].options
        options: dict[str, str] = {}
        for part in parts:
            key, sep, value = part.partition("=")
            key, value = key.strip(), value.strip()
            if not sep or key not in allowed:
                known = ", ".join(f"{k}=…" for k in allowed) or "none"
                raise ConfigError(f"--systems: {item!r}: unknown option {part!r} for {name} "
                                  f"(options: {known})")
            if value not in allowed[key]:
                raise ConfigError(f"--systems: {item!r}: {key} must be one of "
                                  f"{', '.join(allowed[key])}, not {value!r}")
            if key in options:
                raise ConfigError(f"--systems: {item!r} sets {key} twice")
            options[key] = value
        spec = SystemSpec(name, options)
        if not specs and (spec.options or not SYSTEMS[name].evaluated):
            evaluated = " or ".join(e.name for e in SYSTEMS.values() if e.evaluated)
            raise ConfigError(f"--systems: the first system is the evaluated one and must be "
                              f"{evaluated} (configured by --backend and --graph-source), not "
                              f"{spec.label!r}; list the references after it")
        if any(s.label == spec.label for s in specs):
            raise ConfigError(f"--systems names {spec.label!r} twice")
        specs.append(spec)
    return tuple(specs)


@dataclass(frozen=True)
class SystemScores:
    """One system's per-query metrics (query id → metric → value) and each query's shape."""

    label: str
    per_query: Mapping[str, Mapping[str, float | None]]
    shapes: Mapping[str, str]


@dataclass(frozen=True)
class Cell:
    """One system's mean of one metric; ``best`` marks the best mean of the column (ties
    all marked); ``comparison`` is the paired test against the first system, ``p_adjusted``
    its Holm-adjusted p-value within the metric's family and ``significant`` the verdict on
    it (adjusted ``p < alpha`` and ``|delta| ≥ min_effect``)."""

    mean: float | None
    best: bool = False
    comparison: Comparison | None = None
    lower_is_better: bool = False
    p_adjusted: float | None = None
    significant: bool = False

    @property
    def better(self) -> bool | None:
        """Significantly better (True) or worse (False) than the first system; else None."""
        c = self.comparison
        if c is None or not self.significant:
            return None
        return (c.delta < 0) if self.lower_is_better else (c.delta > 0)

    @property
    def marker(self) -> str:
        """``▲``/``▼`` when significantly better/worse than the first system, else ``""``."""
        return {True: "▲", False: "▼", None: ""}[self.better]


@dataclass(frozen=True)
class SystemTable:
    """Systems as rows, metrics as columns, over all queries or one shape."""

    metrics: tuple[str, ...]
    labels: tuple[str, ...]
    cells: tuple[tuple[Cell, ...], ...]
    shape: str | None
    n: int


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def system_table(systems: Sequence[SystemScores], metrics: Sequence[str], *,
                 shape: str | None = None, lower_is_better: frozenset[str] = frozenset(),
                 alpha: float, min_effect: float, seed: int) -> SystemTable:
    """The comparison table (definition in the module docstring); queries of ``shape`` only
    when given. Means skip ``None``; a column with no value has no best. The p-values are
    not yet adjusted: :func:`system_tables` adjusts them across the tables of one report."""
    if not systems:
        raise ValueError("no system to compare")

    def ids(s: SystemScores) -> list[str]:
        return [q for q in s.per_query if shape is None or s.shapes.get(q) == shape]

    def column(s: SystemScores, metric: str) -> dict[str, float | None]:
        return {q: s.per_query[q].get(metric) for q in ids(s)}

    rows: list[list[Cell]] = []
    first = systems[0]
    for index, system in enumerate(systems):
        row = []
        for metric in metrics:
            values = [v for v in column(system, metric).values() if v is not None]
            comparison = None
            if index > 0:
                comparison = compare(metric, column(first, metric), column(system, metric),
                                     alpha=alpha, min_effect=min_effect, seed=seed)
            row.append(Cell(_mean(values), comparison=comparison,
                            lower_is_better=metric in lower_is_better,
                            p_adjusted=comparison.p_value if comparison else None,
                            significant=comparison.significant if comparison else False))
        rows.append(row)
    for j, metric in enumerate(metrics):
        means = [m for r in rows if (m := r[j].mean) is not None]
        if not means:
            continue
        best = min(means) if metric in lower_is_better else max(means)
        for r in rows:
            mean = r[j].mean
            if mean is not None and abs(mean - best) <= 1e-12:
                r[j] = replace(r[j], best=True)
    return SystemTable(tuple(metrics), tuple(s.label for s in systems),
                       tuple(tuple(r) for r in rows), shape, len(ids(first)))


def system_tables(systems: Sequence[SystemScores], metrics: Sequence[str],
                  shapes: Sequence[str], *, lower_is_better: frozenset[str], alpha: float,
                  min_effect: float, seed: int) -> tuple[SystemTable, ...]:
    """The overall table, then one per shape, with every metric's tests Holm-adjusted
    across the (system, table) pairs that have a comparison (the family of one metric)."""
    tables = [system_table(systems, metrics, shape=shape, lower_is_better=lower_is_better,
                           alpha=alpha, min_effect=min_effect, seed=seed)
              for shape in (None, *shapes)]
    cells = [[list(row) for row in t.cells] for t in tables]
    for j in range(len(metrics)):
        family = [(t, i) for t in range(len(tables)) for i in range(1, len(systems))
                  if (c := cells[t][i][j].comparison) is not None and c.n > 0]
        adjusted = holm_adjusted([_p(cells[t][i][j]) for t, i in family])
        for (t, i), p in zip(family, adjusted, strict=True):
            c = cells[t][i][j].comparison
            assert c is not None
            cells[t][i][j] = replace(cells[t][i][j], p_adjusted=p, significant=(
                p < alpha and abs(c.delta) >= min_effect - EFFECT_SLACK))
    return tuple(replace(t, cells=tuple(tuple(row) for row in c))
                 for t, c in zip(tables, cells, strict=True))


#: Contexts more than this many times apart in size are not compared like for like.
UNLIKE_RATIO = 2.0


def unlike_sizes(table: SystemTable, column: str = "context_tokens") -> tuple[bool, ...]:
    """For each row: whether its mean context is more than :data:`UNLIKE_RATIO` times the
    first system's, or less than its share (then a quality comparison between the two is
    not like for like); ``False`` for the first row and where a size is missing."""
    if column not in table.metrics:
        return tuple(False for _ in table.labels)
    j = table.metrics.index(column)
    first = table.cells[0][j].mean

    def apart(mean: float | None) -> bool:
        if first is None or mean is None or first <= 0 or mean <= 0:
            return False
        return max(mean / first, first / mean) > UNLIKE_RATIO

    return tuple(i > 0 and apart(row[j].mean) for i, row in enumerate(table.cells))


def _p(cell: Cell) -> float:
    assert cell.comparison is not None
    return cell.comparison.p_value


@dataclass(frozen=True)
class SystemQuery:
    """One query's result for a system: its ranking and every metric."""

    id: str
    shape: str
    ranked_modules: tuple[str, ...]
    metrics: Mapping[str, float | None]
    # its ranked entries outside the module universe, per reason (filtered out)
    filtered_out: Mapping[str, int] = field(default_factory=dict)
    # its ranking stopped short of the run's depth (:mod:`evaluator.core.depth`)
    short_of_depth: bool = False


@dataclass(frozen=True)
class FrontierPoint:
    """One point of a system's quality-versus-tokens frontier (``--budget``): its contexts
    cut to ``scale`` × the run's budget, their mean ``tokens`` and mean ``quality`` (the
    judge's faithfulness over the questions with gold facts; ``None`` without any)."""

    scale: float
    tokens: float
    quality: float | None


@dataclass(frozen=True)
class SystemRun:
    """One system's block of the results: its label, means and per-query metrics, and its
    frontier (with ``--budget``)."""

    label: str
    overall: Aggregate
    shapes: Mapping[str, Aggregate]
    queries: tuple[SystemQuery, ...]
    frontier: tuple[FrontierPoint, ...] = ()

    def scores(self) -> SystemScores:
        return SystemScores(self.label, {q.id: q.metrics for q in self.queries},
                            {q.id: q.shape for q in self.queries})


def short_rankings(run: SystemRun, k: int) -> str | None:
    """The note for a system whose ranking held fewer than ``k`` modules of the universe on
    some questions (``bm25 returned fewer than 5 modules on 3 of 10 questions (12 filtered
    out: 8 tests, 4 docs)``), or ``None``."""
    from evaluator.core.universe import filtered_sentence

    short = [q for q in run.queries if len(q.ranked_modules) < k]
    if not short:
        return None
    filtered: dict[str, int] = {}
    for q in short:
        for reason, n in q.filtered_out.items():
            filtered[reason] = filtered.get(reason, 0) + n
    why = filtered_sentence(dict(sorted(filtered.items(), key=lambda kv: (-kv[1], kv[0]))))
    return (f"{run.label} returned fewer than {k} modules on {len(short)} of "
            f"{len(run.queries)} questions" + (f" ({why})" if why else ""))


def system_run(label: str, rows: Sequence[QueryResult], shapes: Sequence[str]) -> SystemRun:
    """A system's block from its scored rows."""
    return SystemRun(label, aggregate(rows), by_shape(rows, shapes),
                     tuple(SystemQuery(r.id, r.shape, r.ranked_modules, dict(r.metrics),
                                   dict(r.filtered_out), r.short_of_depth) for r in rows))
