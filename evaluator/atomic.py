"""Atomic file writes: a temp file in the same folder, flushed, then renamed over the target.

A full disk or a crash leaves the previous file intact (never a truncated one), and a failure
is one :class:`~evaluator.errors.InputError` naming the file. The file gets the mode a plain
``open()`` would give it (``0666 & ~umask``), not ``mkstemp``'s 0600: in a Docker action the
container runs as root and the job's later steps (``upload-artifact``, ``actions/cache``,
``cp``) run as the runner user, who must be able to read every output.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
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


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where Linux shows it (``/proc``);
    elsewhere set and restored at once under a lock."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode ``open(path, "w")`` gives a new file: ``0666 & ~umask``."""
    return 0o666 & ~current_umask()


def share_tree(folder: Path) -> None:
    """Give every file and folder under ``folder`` (links not followed) the read (and, for
    folders, search) permission a plain ``open()``/``mkdir()`` would have given it; for the
    state a library creates privately. Best effort: what cannot be changed is left."""
    mask = current_umask()
    for here, dirnames, filenames in os.walk(folder):
        for name, bits in [*((d, 0o555) for d in dirnames), *((f, 0o444) for f in filenames)]:
            entry = Path(here) / name
            wanted = bits & ~mask
            with contextlib.suppress(OSError):
                mode = entry.lstat().st_mode
                if not stat.S_ISLNK(mode) and stat.S_IMODE(mode) & wanted != wanted:
                    entry.chmod(stat.S_IMODE(mode) | wanted)


def _write(path: Path, data: bytes, publish: Callable[[Path, Path], object]) -> None:
    """``data`` into a flushed temp file beside ``path``, then ``publish(temp, path)``."""
    name = None
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        os.fchmod(fd, file_mode())  # mkstemp's 0600 would lock the next step's user out
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
