"""The run's memo of embedding vectors: a text embedded once per run, whichever build asks.

A base+head run (``--baseline``) builds NeuralMind's index of the base and then, from
scratch (issue 20: nothing of an earlier build carries over), the index of the head. The
two trees share nearly every node text, and embedding them is most of a build's time. The
memo serves the head build's vectors of the texts the base build already embedded, so only
the texts the pull request changed go through the model again.

What makes a served vector provably the same as a freshly computed one:

* the key is the SHA-256 of the exact text (UTF-8), inside one memo per model key (the
  model folder and the fingerprint of its ``model.onnx``): two models never share a row;
* the rows are the model's own output (NeuralMind's embedder of the same folder, on the
  process's one ONNX session of it), kept as returned (float32); MiniLM pools with the
  attention mask, so a text's row does not depend on the batch it was embedded in
  (NeuralMind's ``onnx_embedder.embed`` relies on this when it sorts texts by length; a
  test checks it bit for bit);
* the memo lives for one run (:func:`run_scope`, around each call of
  :func:`evaluator.evaluate.evaluate`: the base, the head and the ``--systems`` NeuralMind
  variants) and is never written anywhere: the next run, or a head-only run, starts empty
  and embeds everything.

Bounded: at most :data:`MAX_ENTRIES` rows per model (about 1.6 KB each for MiniLM's 384
floats, so at most about 80 MB). Past the cap, new rows are embedded and returned but not
kept: the rows already held (the base's, which the head asks for again) keep being served,
where a least-recently-used policy would evict each of them just before the head asks.

Which embedder it wraps, and where it is installed, is the NeuralMind adapter's business
(:mod:`evaluator.neuralmind_index`); this module imports no embedding library.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    import numpy as np

MAX_ENTRIES = 50_000


class MatrixEmbedder(Protocol):
    """What the memo wraps: ``embed(texts)`` → an ``(n, dim)`` float32 array."""

    dim: int

    def embed(self, texts: list[str]) -> np.ndarray: ...


def text_key(text: str) -> bytes:
    """The memo's key of a text: the SHA-256 of its exact UTF-8 bytes (a lone surrogate,
    which no file decodes to but a string can hold, is kept as it is)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class EmbeddingMemo:
    """One model's vectors for the run: ``embed`` serves the rows it holds and embeds the
    missing texts with the wrapped embedder in one call (each distinct text once), in the
    order asked. ``requested`` and ``computed`` count rows asked for and rows the wrapped
    embedder produced (a build's difference is its reused rows)."""

    def __init__(self, inner: MatrixEmbedder, *, model_key: str,
                 max_entries: int = MAX_ENTRIES) -> None:
        self.inner = inner
        self.model_key = model_key
        self.max_entries = max_entries
        self.dim = int(inner.dim)
        self._rows: dict[bytes, np.ndarray] = {}
        self.requested = 0
        self.computed = 0

    def __len__(self) -> int:
        return len(self._rows)

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        keys = [text_key(t) for t in texts]
        fresh: dict[bytes, np.ndarray] = {}
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in self._rows}
        if missing:
            matrix = np.asarray(self.inner.embed(list(missing.values())), dtype=np.float32)
            if matrix.shape != (len(missing), self.dim):
                raise ValueError(f"the embedder returned shape {matrix.shape} for "
                                 f"{len(missing)} texts of dimension {self.dim}")
            for key, row in zip(missing, matrix, strict=True):
                fresh[key] = row.copy()
                if len(self._rows) < self.max_entries:
                    self._rows[key] = fresh[key]
            self.computed += len(missing)
        self.requested += len(texts)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = fresh[key] if key in fresh else self._rows[key]
        return out

    def __call__(self, texts: list[str]) -> list[list[float]]:
        rows: list[list[float]] = self.embed(list(texts)).tolist()
        return rows


class RunMemos:
    """The run's memos, one per model key."""

    def __init__(self, *, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._memos: dict[str, EmbeddingMemo] = {}

    def for_model(self, model_key: str,
                  make_inner: Callable[[], MatrixEmbedder]) -> EmbeddingMemo:
        """The memo of ``model_key`` (created with ``make_inner()`` on first use)."""
        memo = self._memos.get(model_key)
        if memo is None:
            memo = self._memos[model_key] = EmbeddingMemo(
                make_inner(), model_key=model_key, max_entries=self.max_entries)
        return memo


_CURRENT: ContextVar[RunMemos | None] = ContextVar("embedding_memos", default=None)


def current() -> RunMemos | None:
    """The memos of the run in progress, or ``None`` outside a run (no memo: every
    text is embedded)."""
    return _CURRENT.get()


@contextlib.contextmanager
def run_scope() -> Iterator[RunMemos]:
    """The block is one run: fresh memos, dropped at its end; inside a run already, that
    run's memos stay in use. (Each section of a run with sections is evaluated, base and
    head, as a run of its own: its folder shares no files with the others.)"""
    memos = _CURRENT.get()
    if memos is not None:
        yield memos
        return
    memos = RunMemos()
    token = _CURRENT.set(memos)
    try:
        yield memos
    finally:
        _CURRENT.reset(token)


P = ParamSpec("P")
R = TypeVar("R")


def per_run(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` with each call inside :func:`run_scope`."""
    @functools.wraps(function)
    def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
        with run_scope():
            return function(*args, **kwargs)
    return wrapped


def reused_since(memo: EmbeddingMemo | None, before: tuple[int, int]) -> int:
    """Rows ``memo`` served without embedding since ``before`` (:func:`counters`)."""
    if memo is None:
        return 0
    return (memo.requested - before[0]) - (memo.computed - before[1])


def counters(memo: EmbeddingMemo | None) -> tuple[int, int]:
    """``(requested, computed)`` of ``memo`` now (zeros without one)."""
    return (memo.requested, memo.computed) if memo is not None else (0, 0)
