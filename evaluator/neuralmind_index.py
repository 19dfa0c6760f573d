"""The NeuralMind adapter: build an index of a snapshot and ask it the ground-truth questions.

The only module that imports ``neuralmind`` and runs ``graphify``, and the only one that
sets the process environment: NeuralMind reads its settings from ``NEURALMIND_*``
variables, so every call into it runs inside :func:`model_env`, which removes the
process's own, sets the evaluation's pins (:data:`PINS`) and the model folder this index
was given (``NEURALMIND_ONNX_MODEL_DIR``), and restores them afterwards. Questions go
through ``NeuralMind.query(question, learn=False)``, read-only, so the evaluation never
trains the synapse layer it measures. The ranked module list is
``neuralmind.project_eval.rank_files`` — the files the returned context drew on, best
first, deduplicated — the library's own definition. The index only answers (an
:class:`~evaluator.core.systems.Answer`); the evaluator judges the context
(:mod:`evaluator.judging`), with NeuralMind's ``neuralmind.ragas`` judge
(:func:`n15_columns`, the ``*_n15`` columns) and the ONNX embedder (:func:`minilm_embedder`,
the model the index uses) that this adapter lends it.
"""

from __future__ import annotations

import ast
import contextlib
import functools
import importlib.util
import io
import json
import logging
import os
import shutil
import subprocess
import sys
import time
import unicodedata
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from evaluator import atomic, embedding_memo
from evaluator.core import yamlfile
from evaluator.core.systems import Answer
from evaluator.embedding_memo import EmbeddingMemo
from evaluator.errors import BuildError, InputError
from evaluator.model import ENV, HOW_TO_PROVIDE, ModelSource, model_fingerprint

BatchEmbed = Callable[[Sequence[str]], Sequence[Sequence[float]]]


# NeuralMind reads many ``NEURALMIND_*`` variables (synapse injection, boosts, budgets,
# rerankers, thread counts ...). None of the process's own reaches it: inside
# :func:`model_env` every one is removed and only these pins (and the model folder) are set,
# so a variable in a user's shell or a CI job never moves a number. Recorded in the results
# (``run.neuralmind_pins``) and compared with a baseline's.
VARIABLE_PREFIX = "NEURALMIND_"
PINS: dict[str, str] = {
    # Read-only questions with the build's seeded synapses: NeuralMind's default, what a
    # user of the index gets (``=0`` would switch the injection off).
    "NEURALMIND_SYNAPSE_INJECT": "1",
    # One onnxruntime thread: the summation order, and so the embeddings' last bits, do not
    # depend on the host's core count (a runner, a container with a CPU limit).
    "NEURALMIND_ORT_THREADS": "1",
}


# What NeuralMind (and the git and graphify it starts) must not see of the process
# environment: the token and other secrets, the Action's inputs, the runner's ACTIONS_*
# credentials, and GIT_* variables that redirect git's repository, config or commands.
HIDDEN_PREFIXES = ("GIT_", "INPUT_", "ACTIONS_")
HIDDEN_SUFFIXES = ("TOKEN", "API_KEY")


def hidden(name: str) -> bool:
    return name.startswith(HIDDEN_PREFIXES) or name.upper().endswith(HIDDEN_SUFFIXES)


#: The pins of the ``neuralmind:synapses=off`` variant: NeuralMind's own switch for its
#: synapse A/B (``neuralmind.project_eval.run_synapse_ab``): no synapse re-ranking or recall.
SYNAPSES_OFF: dict[str, str] = {"NEURALMIND_SYNAPSE_INJECT": "0"}


@contextlib.contextmanager
def model_env(folder: Path | None, pins: Mapping[str, str] | None = None) -> Iterator[None]:
    """NeuralMind's environment for the block: every ``NEURALMIND_*`` variable of the
    process removed, :data:`PINS` set (``pins`` over them, for a variant) and
    ``NEURALMIND_ONNX_MODEL_DIR`` = ``folder`` (unset when ``None``), and the :func:`hidden`
    variables out of the environment (NeuralMind runs git in the snapshot with whatever it
    finds there); all restored afterwards."""
    saved = {k: v for k, v in os.environ.items() if k.startswith(VARIABLE_PREFIX)}
    for name in saved:
        del os.environ[name]
    away = {name: os.environ.pop(name) for name in list(os.environ) if hidden(name)}
    os.environ.update(PINS)
    os.environ.update(pins or {})
    if folder is not None:
        os.environ[ENV] = str(folder)
    try:
        yield
    finally:
        for name in [k for k in os.environ if k.startswith(VARIABLE_PREFIX)]:
            del os.environ[name]
        os.environ.update(saved)
        os.environ.update(away)


def ignored_variables(env: Mapping[str, str]) -> tuple[str, ...]:
    """The ``NEURALMIND_*`` variables of ``env`` the evaluation does not pass to NeuralMind
    (all but the model folder, which the model resolver honours), by name only: a value may
    be a secret."""
    return tuple(sorted(k for k in env if k.startswith(VARIABLE_PREFIX) and k != ENV))


def onnxruntime_version() -> str | None:
    """The installed onnxruntime's version (it computes the embeddings), or ``None``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("onnxruntime")
    except PackageNotFoundError:
        return None


def cached_model_dir() -> Path | None:
    """The model folder in NeuralMind's or ChromaDB's cache, if it holds one."""
    try:
        from neuralmind.onnx_embedder import OnnxMiniLMEmbedder
    except ImportError:  # pragma: no cover - neuralmind is a hard dependency
        return None
    with model_env(None):
        found: Path | None = OnnxMiniLMEmbedder().local_model_dir()
    return found


def n15_columns(context: str, facts: Sequence[str]) -> tuple[float, float, float]:
    """NeuralMind's own judge (``neuralmind.ragas``, the N-15 runner's): faithfulness,
    fact recall and contradiction of ``context`` against ``facts``."""
    from neuralmind import ragas

    recall = float(ragas.fact_recall(context, list(facts)))
    contradiction = float(ragas.contradiction_score(context, list(facts)))
    return recall * (1.0 - contradiction), recall, contradiction


def minilm_embedder(model_dir: Path | None) -> BatchEmbed:
    """The MiniLM ONNX embedder NeuralMind's index uses, batched (texts in, vectors out)."""
    from neuralmind.onnx_embedder import OnnxMiniLMEmbedder

    model = OnnxMiniLMEmbedder(str(model_dir) if model_dir else None)

    def embed(texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        with model_env(model_dir):
            return [[float(x) for x in row] for row in model(list(texts))]

    return embed


def example_root() -> Path:
    """The ``sample_project`` fixture that ships inside the neuralmind package."""
    import neuralmind

    root = Path(neuralmind.__file__).resolve().parent / "demo_data" / "sample_project"
    if not root.is_dir():
        raise InputError(f"this neuralmind installation has no {root}")
    return root


def neuralmind_version() -> str:
    import neuralmind

    return str(getattr(neuralmind, "__version__", "unknown"))


@functools.cache
def _suffixes_in_source() -> frozenset[str] | None:
    """``neuralmind.graphgen._CODE_SUFFIXES`` read from the installed module's source, without
    importing neuralmind (its import takes about 0.6 s, and ``validate`` and ``init`` need
    only this set): the assignment must be ``frozenset(<literal>)`` or ``frozenset(NAME)``
    of a module-level literal; anything else is ``None`` and the caller imports the module
    (a test checks that both ways agree)."""
    try:
        spec = importlib.util.find_spec("neuralmind")
        folders = list(spec.submodule_search_locations or []) if spec else []
        tree = ast.parse((Path(folders[0]) / "graphgen.py").read_text(encoding="utf-8"))
    except (ImportError, ValueError, IndexError, OSError, SyntaxError):
        return None
    values: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            values[node.targets[0].id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) \
                and node.value is not None:
            values[node.target.id] = node.value
    call = values.get("_CODE_SUFFIXES")
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
            and call.func.id == "frozenset" and len(call.args) == 1 and not call.keywords):
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Name):
        arg = values.get(arg.id, arg)
    try:
        literal = ast.literal_eval(arg)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(literal, dict | set | frozenset | list | tuple) \
            or not all(isinstance(s, str) for s in literal):
        return None
    return frozenset(s.lower() for s in literal) or None


def code_suffixes() -> frozenset[str]:
    """The file suffixes NeuralMind parses as code (the default module universe's sources)."""
    from evaluator.core.universe import SOURCE_SUFFIXES

    found = _suffixes_in_source()
    if found is not None:
        return found
    try:
        from neuralmind import graphgen

        return frozenset(str(s).lower() for s in graphgen._CODE_SUFFIXES) or SOURCE_SUFFIXES
    except (ImportError, AttributeError):
        return SOURCE_SUFFIXES


@dataclass(frozen=True)
class IndexHit:
    """One hit of :meth:`NeuralMindIndex.search`: its node's file (checkout-relative, ``""``
    when the node has none), the text NeuralMind embedded for it, and the line the node
    starts on (``None`` when the graph does not say)."""

    module: str
    document: str
    line: int | None


@dataclass(frozen=True)
class BuildInfo:
    backend: str
    graph_source: str
    nodes: int
    nodes_embedded: int
    nodes_reused: int
    graph_kind: str
    seconds: float
    cached: bool = False
    fallback: str | None = None


@contextlib.contextmanager
def _quiet_library() -> Iterator[io.StringIO]:
    """NeuralMind prints notices and warnings; keep them off the user's terminal."""
    buffer = io.StringIO()
    with warnings.catch_warnings(), contextlib.redirect_stdout(buffer):
        warnings.simplefilter("ignore")
        previous = logging.root.manager.disable
        logging.disable(logging.WARNING)
        try:
            yield buffer
        finally:
            logging.disable(previous)


def _write_project_config(tree: Path, user_config: Path | None, graph_source: str) -> None:
    """``.neuralmind.yaml`` in the snapshot: the user's settings with our graph source."""
    settings: dict[str, Any] = {}
    if user_config is not None and user_config.is_file():
        try:
            loaded = yamlfile.load(user_config.read_text(encoding="utf-8"))
        except OSError as err:
            raise BuildError(f"cannot read {user_config}: {err.strerror or err}") from None
        except yaml.YAMLError as err:  # its line, never a snippet of the file
            mark = getattr(err, "problem_mark", None)
            where = f" line {mark.line + 1}" if mark is not None else ""
            raise BuildError(f"{user_config}{where} {yamlfile.what_is_wrong(err)}") from None
        except UnicodeDecodeError:
            raise InputError(f"{user_config} is not UTF-8 text",
                             hint="save .neuralmind.yaml as UTF-8") from None
        except RecursionError:
            raise InputError(f"{user_config} is nested too deeply") from None
        if isinstance(loaded, dict):
            settings.update(loaded)
    settings["graph_source"] = graph_source
    # The snapshot is not a git work tree; the file list already honours .gitignore.
    settings["respect_gitignore"] = False
    (tree / ".neuralmind.yaml").write_text(yamlfile.dump(settings), encoding="utf-8")


def _graphify_command() -> list[str]:
    beside = Path(sys.executable).with_name("graphify")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("graphify")
    if found:
        return [found]
    raise BuildError("graph source 'graphify' needs the graphify command (package graphifyy)",
                     hint="pip install graphifyy, or use --graph-source builtin")


def run_graphify(tree: Path) -> None:
    """``graphify update .`` in the snapshot (writes ``graphify-out/`` there, never elsewhere)."""
    env = {k: v for k, v in os.environ.items() if not hidden(k)}
    try:
        proc = subprocess.run([*_graphify_command(), "update", "."], cwd=tree, env=env,
                              capture_output=True, text=True, timeout=1800, check=False)
    except subprocess.TimeoutExpired:
        raise BuildError("graphify update took longer than 30 minutes") from None
    if proc.returncode != 0 or not (tree / "graphify-out" / "graph.json").is_file():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        detail = " / ".join(tail) or f"exit {proc.returncode}"
        raise BuildError(f"graphify update failed: {detail}")


class NeuralMindIndex:
    """One NeuralMind index over a snapshot folder."""

    def __init__(self, tree: Path, *, backend: str, graph_source: str,
                 model: ModelSource, synapses: str = "on") -> None:
        if synapses not in ("on", "off"):
            raise ValueError(f"synapses must be on or off, not {synapses!r}")
        self.tree = tree
        self.backend = backend
        self.graph_source = graph_source
        self.model = model
        # The synapse layer is switched at question time: the same build serves both.
        self._pins = SYNAPSES_OFF if synapses == "off" else {}
        self._mind: Any = None
        self._lines: dict[str, str] = {}
        self._lines_of: Any = None  # the build ``_lines`` was read from
        self._memo: EmbeddingMemo | None = None
        self._memo_resolved = False

    @property
    def _stamp(self) -> Path:
        return self.tree / ".neuralmind" / "retrieval-eval-index.json"

    def _new_mind(self, notices: io.StringIO) -> Any:
        from neuralmind.core import NeuralMind

        mind = NeuralMind(str(self.tree),
                          backend_type="in_memory" if self.backend == "in_memory" else None,
                          enable_synapses=True)
        mind.notice_stream = notices
        return mind

    @contextlib.contextmanager
    def _library(self) -> Iterator[io.StringIO]:
        """Quiet NeuralMind, with this index's model folder in its environment variable and
        the run's vector memo as its embedder (:meth:`_embedding_memo`)."""
        with model_env(self.model.path, self._pins), _quiet_library() as printed:
            if not self._memo_resolved:  # once per index: every question enters here
                self._memo, self._memo_resolved = self._embedding_memo(), True
            if self._memo is None:
                yield printed
                return
            from neuralmind.turbovec_backend import embed_fn_override

            with embed_fn_override(self._memo):
                yield printed

    def _embedding_memo(self) -> EmbeddingMemo | None:
        """The run's memo of this index's model (:mod:`evaluator.embedding_memo`), which the
        turbovec backend embeds through (``embed_fn_override``; no other backend reads it),
        or ``None``, leaving NeuralMind's own embedder: outside a run, for the ``in_memory``
        backend (no model), for a model NeuralMind would download (no folder to key it by),
        and where onnxruntime sessions cannot be reused (Python 3.14: NeuralMind then embeds
        a large build in subprocesses, which only its own embedder does). Called inside
        :func:`model_env`."""
        memos = embedding_memo.current()
        folder = self.model.path
        if memos is None or self.backend == "in_memory" or folder is None:
            return None
        try:  # a NeuralMind without these names keeps its own embedder
            from neuralmind.onnx_embedder import OnnxMiniLMEmbedder, _session_reuse_safe
            from neuralmind.turbovec_backend import embed_fn_override  # noqa: F401
        except ImportError:
            return None
        if not _session_reuse_safe():
            return None
        return memos.for_model(f"{model_fingerprint(self.model)} {folder}",
                               lambda: OnnxMiniLMEmbedder(str(folder)))

    def _counted_build(self, mind: Any) -> dict[str, Any]:
        """``mind.build()``'s stats, with ``memo_reused``: the rows the memo served."""
        before = embedding_memo.counters(self._memo)
        stats: dict[str, Any] = mind.build()
        return {**stats, "memo_reused": embedding_memo.reused_since(self._memo, before)}

    def build(self, *, user_config: Path | None = None,
              cache_key: str | None = None) -> BuildInfo:
        """Build, or reuse, the index; :class:`BuildError` on failure.

        * ``cache_key`` (a hash of the indexed files, NeuralMind version, backend, graph
          source and model): when the index on disk was built for the same key, it is loaded
          instead of rebuilt. The ``in_memory`` backend keeps nothing on disk, so it always
          builds.
        * Otherwise the index is built from scratch: nothing of an earlier build carries
          over, so the result never depends on what was indexed before. Only vectors that
          are provably the same do: a node text this run has already embedded with this
          model (the base's, for the head) is served by the run's memo
          (:meth:`_embedding_memo`) and counted in ``nodes_reused``, not ``nodes_embedded``.
        """
        started = time.perf_counter()
        persistent = self.backend != "in_memory"
        if persistent and cache_key:
            cached = self._load_cached(cache_key, started)
            if cached is not None:
                return cached
        self._stamp.unlink(missing_ok=True)
        # Nothing carries over from an earlier build (another commit, another branch, the
        # other side of a baseline run). NeuralMind's incremental update re-embeds only the
        # nodes whose text changed and keeps the stored cluster ids of the others, so the
        # context's cluster sections (and its tokens) depended on what was indexed before:
        # on itsdangerous, a cache first built at an older commit moved context tokens by
        # 10 on every question. The graph was already rebuilt from scratch for the same
        # reason (node order, community ids).
        shutil.rmtree(self.tree / ".neuralmind", ignore_errors=True)
        shutil.rmtree(self.tree / "graphify-out", ignore_errors=True)  # graphify's, likewise
        _write_project_config(self.tree, user_config, self.graph_source)
        if self.graph_source == "graphify":
            run_graphify(self.tree)
        mind, stats, fallback = self._run_build(user_config, persistent)
        nodes = int(stats.get("nodes_total", 0) or 0)
        if nodes == 0:
            raise BuildError("NeuralMind found nothing to index in the checkout",
                             hint="check that PATH holds source files NeuralMind supports")
        self._mind = mind
        graph = stats.get("graph") or {}
        backend = str(stats.get("backend", self.backend))
        if persistent and cache_key:
            atomic.write_text(self._stamp, json.dumps({
                "key": cache_key, "nodes": nodes, "backend": backend,
                "graph_kind": graph.get("kind", "unknown")}))
        # The memo's rows were not embedded again: they count as reused, beside the nodes
        # NeuralMind skipped (none in a from-scratch build). A build embeds node texts only
        # (a test counts them); the bound keeps the split sound if a version embeds more.
        embedded = int(stats.get("nodes_added", 0) or 0) + int(stats.get("nodes_updated", 0) or 0)
        memo_reused = min(int(stats.get("memo_reused", 0)), embedded)
        return BuildInfo(
            backend=backend, graph_source=self.graph_source, nodes=nodes,
            nodes_embedded=embedded - memo_reused,
            nodes_reused=int(stats.get("nodes_skipped", 0) or 0) + memo_reused,
            graph_kind=str(graph.get("kind", "unknown")),
            seconds=time.perf_counter() - started, fallback=fallback)

    def _load_cached(self, cache_key: str, started: float) -> BuildInfo | None:
        """The index on disk when its stamp carries ``cache_key``; else ``None``."""
        if not self._stamp.is_file():
            return None
        try:
            stamp = json.loads(self._stamp.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(stamp, dict) or stamp.get("key") != cache_key:
            return None
        with self._library():
            try:
                self._mind = self._new_mind(io.StringIO())
            except Exception as err:
                raise self._build_error(err) from None
        return BuildInfo(
            backend=str(stamp.get("backend", self.backend)),
            graph_source=self.graph_source, nodes=int(stamp.get("nodes", 0)),
            nodes_embedded=0, nodes_reused=int(stamp.get("nodes", 0)),
            graph_kind=str(stamp.get("graph_kind", "unknown")),
            seconds=time.perf_counter() - started, cached=True)

    def _run_build(self, user_config: Path | None, persistent: bool
                   ) -> tuple[Any, dict[str, Any], str | None]:
        """NeuralMind's build; an incremental one that fails is redone from scratch once.

        Returns the NeuralMind object, its build stats and the fallback note (if any)."""
        notices = io.StringIO()  # NeuralMind's notices: kept off the terminal
        fallback = None
        with self._library():
            try:
                mind = self._new_mind(notices)
                stats = self._counted_build(mind)
                if not stats.get("success", False) and (self.tree / ".neuralmind").exists():
                    raise RuntimeError(stats.get("error") or "incremental build failed")
            except Exception as err:  # the library raises many kinds; all are a failed build
                if not persistent:
                    raise self._build_error(err) from None
                fallback = (f"the incremental NeuralMind build failed ({type(err).__name__}: "
                            f"{err}); rebuilt the index from scratch")
                shutil.rmtree(self.tree / ".neuralmind", ignore_errors=True)
                _write_project_config(self.tree, user_config, self.graph_source)
                try:
                    mind = self._new_mind(notices)
                    stats = self._counted_build(mind)
                except Exception as err2:
                    raise self._build_error(err2) from None
        if not stats.get("success", False):
            raise BuildError(f"NeuralMind could not index the checkout: "
                             f"{stats.get('error') or 'unknown error'}")
        return mind, stats, fallback

    def _build_error(self, err: Exception) -> BuildError:
        text = f"{type(err).__name__}: {err}"
        lowered = text.lower()
        if self.model.path is None and any(
            word in lowered for word in ("urlopen", "url", "download", "resolve", "network",
                                         "name or service", "connection")
        ):
            return BuildError(f"the embedding model all-MiniLM-L6-v2 is missing and could not "
                              f"be downloaded ({text})", hint=HOW_TO_PROVIDE)
        if isinstance(err, OSError) and getattr(err, "filename", None):
            return BuildError(f"cannot write the index: {err.strerror} ({err.filename})",
                              hint="choose a writable --cache-dir")
        return BuildError(f"NeuralMind failed to build the index: {text}")

    def ask(self, question: str) -> Answer:
        """Run one question read-only (:class:`~evaluator.core.systems.Answer`; ``seconds``
        is what NeuralMind took). The ranked modules are
        ``neuralmind.project_eval.rank_files`` of its hits; the documents are its hits'
        texts; ``tokens`` is its context budget's total."""
        if self._mind is None:
            raise RuntimeError("build() first")
        from neuralmind import project_eval

        started = time.perf_counter()
        with self._library():
            try:
                result = self._mind.query(question, learn=False)
                ranked = project_eval.rank_files(result.top_search_hits, self._mind)
            except Exception as err:
                raise BuildError(f"NeuralMind failed to answer {question!r}: "
                                 f"{type(err).__name__}: {err}") from None
        library_seconds = time.perf_counter() - started
        budget = getattr(result, "budget", None)
        reduction = getattr(result, "reduction_ratio", None)
        return Answer(
            # NFC, like the ground truth's paths (a checkout made on macOS may hold NFD names).
            ranked_modules=tuple(unicodedata.normalize("NFC", m) for m in ranked),
            context=str(getattr(result, "context", "") or ""),
            tokens=int(getattr(budget, "total", 0) or 0),
            seconds=library_seconds,
            documents=tuple(str(h.get("document", "")) for h in (result.top_search_hits or [])),
            token_reduction=float(reduction) if reduction else None,
        )

    def search(self, question: str, n: int) -> tuple[IndexHit, ...]:
        """NeuralMind's plain vector search of this build (``NeuralMind.search``: the top
        ``n`` index nodes by similarity, no synapses, no disclosure), read-only; each hit's
        file (NFC), embedded text and the line its node starts on (from the graph)."""
        if self._mind is None:
            raise RuntimeError("build() first")
        from neuralmind.freshness import normalize_source_path  # as rank_files reads them

        with self._library():
            try:
                hits = self._mind.search(question, n=n, learn=False)
                lines = self._node_lines()
            except Exception as err:
                raise BuildError(f"NeuralMind failed to search for {question!r}: "
                                 f"{type(err).__name__}: {err}") from None
        out = []
        for hit in hits or ():
            meta = hit.get("metadata") or {}
            where = lines.get(str(meta.get("node_id") or hit.get("id") or ""), "")
            out.append(IndexHit(
                module=unicodedata.normalize("NFC", normalize_source_path(
                    str(meta.get("source_file") or ""), Path("/"))),
                document=str(hit.get("document") or ""),
                line=int(where[1:]) if where[:1] == "L" and where[1:].isdigit() else None))
        return tuple(out)

    def _node_lines(self) -> dict[str, str]:
        """Each node's ``source_location`` (``L<line>``) by id, read once per build."""
        if self._lines_of is not self._mind:
            self._lines = {str(node.get("id", "")): str(node.get("source_location", "") or "")
                           for node in getattr(self._mind.embedder, "nodes", None) or ()}
            self._lines_of = self._mind
        return self._lines

    def close(self) -> None:
        if self._mind is not None:
            with contextlib.suppress(Exception):
                self._mind.close()
            self._mind = None
        # NeuralMind creates some of its state 0600 (its audit lock); the cache folder is
        # saved by ``actions/cache`` as the runner user, after a container ran as root.
        atomic.share_tree(self.tree / ".neuralmind")
