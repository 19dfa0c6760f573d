"""The ``embedding:chunks=code`` system's chunk vectors, kept in the cache directory between runs.

Keyed by content like the index (:func:`evaluator.evaluate.index_cache_key`): one file per
checkout path and model (``<cache>/embedding/<checkout>-<key>.npz``, the key a hash of the
checkout's path, the model's fingerprint and NeuralMind's version, whose embedder computes
the vectors), in which each vector is keyed by the SHA-256 of the text embedded. A run
embeds only the chunks whose text it has no vector for, and keeps the vectors of its own
chunks (the file never grows past one checkout's chunks). The file is replaced atomically; an
unreadable or foreign file is ignored and rewritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from evaluator import atomic
from evaluator.errors import InputError

Embed = Callable[[Sequence[str]], Sequence[Sequence[float]]]
Matrix = npt.NDArray[np.float32]


def store_path(cache_dir: Path, root: Path, *, model: str, library: str) -> Path:
    """The vector file of the checkout at ``root`` for one model and NeuralMind version."""
    where = os.fsencode(root.resolve()) + b"\0" + model.encode() + b"\0" + library.encode()
    key = hashlib.sha256(where).hexdigest()[:16]
    return cache_dir / "embedding" / f"{root.resolve().name or 'root'}-{key}.npz"


def _load(path: Path) -> dict[str, Matrix]:
    try:
        with np.load(path, allow_pickle=False) as data:
            keys, vectors = data["keys"], data["vectors"]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return {}
    if keys.ndim != 1 or vectors.ndim != 2 or len(keys) != len(vectors):
        return {}
    return {str(k): v for k, v in zip(keys, vectors.astype(np.float32), strict=True)}


def vectors_of(texts: Sequence[str], embed: Embed, path: Path) -> tuple[Matrix, int]:
    """One unit-length row per text (embedded, or read from ``path``), and how many were
    embedded now; ``path`` then holds exactly these texts' vectors."""
    keys = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
    known = _load(path)
    first = {k: i for i, k in reversed(list(enumerate(keys)))}  # each text's first index
    todo = [i for k, i in first.items() if k not in known]
    if todo:
        fresh = np.asarray(embed([texts[i] for i in todo]), dtype=np.float32)
        fresh /= np.maximum(np.linalg.norm(fresh, axis=1, keepdims=True), 1e-12)
        known |= {keys[i]: row for i, row in zip(todo, fresh, strict=True)}
    width = next(iter(known.values())).shape[0] if known else 0
    matrix = np.stack([known[k] for k in keys]) if keys else np.zeros((0, width), np.float32)
    if todo or len(known) != len(set(keys)):
        kept = list(dict.fromkeys(keys))
        buffer = io.BytesIO()
        np.savez(buffer, keys=np.array(kept), vectors=np.stack([known[k] for k in kept])
                 if kept else np.zeros((0, width), np.float32))
        # the cache is an optimisation: a read-only one costs time, not results
        with contextlib.suppress(OSError, InputError):
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic.write_bytes(path, buffer.getvalue())
    return matrix, len(todo)
