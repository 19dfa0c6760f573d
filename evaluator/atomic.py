"""Atomic file writes: a temp file in the same folder, flushed, then renamed over the target.

A full disk or a crash leaves the previous file intact (never a truncated one), and a failure
is one :class:`~evaluator.errors.InputError` naming the file.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from evaluator.errors import InputError


def write_text(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` (UTF-8) atomically."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(f"cannot write {path}: the text holds characters that are not "
                         f"valid Unicode ({err.reason})") from None
    write_bytes(path, data)


def write_bytes(path: Path, data: bytes) -> None:
    if path.is_dir():
        raise InputError(f"cannot write {path}: it is a directory",
                         hint="remove it or choose another output folder")
    _write(path, data, Path.replace)


def write_new(path: Path, text: str, *, hint: str | None = None) -> None:
    """Create ``path`` with ``text`` (UTF-8), never over an existing file: the complete
    file appears at once (a hard link of the flushed temp file), or not at all."""
    def link(temp: Path, target: Path) -> None:
        try:
            os.link(temp, target)
        except FileExistsError:
            raise InputError(f"{target} already exists; it is never overwritten",
                             hint=hint) from None
        temp.unlink()
    _write(path, text.encode("utf-8", errors="surrogateescape"), link)


def _write(path: Path, data: bytes, publish: Callable[[Path, Path], object]) -> None:
    """``data`` into a flushed temp file beside ``path``, then ``publish(temp, path)``."""
    name = None
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        publish(Path(name), path)
        name = None
    except OSError as err:
        raise InputError(f"cannot write {path}: {err.strerror or err}",
                         hint="check that the output folder is writable and has room") from None
    finally:
        if name is not None:
            with contextlib.suppress(OSError):
                Path(name).unlink()
