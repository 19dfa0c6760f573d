"""The history file on disk (``history: FILE``): bounded reading, atomic writing.

The format and its validation are :mod:`evaluator.core.history`; this adapter only moves
bytes. The file may come from a cache that any earlier workflow run could write, so it is
read only when it is a regular file (not a symlink, a FIFO or a device), at most
``MAX_BYTES + 1`` bytes are read, and the text must be UTF-8. Writing goes to a temporary
file in the same folder, then a rename: a reader never sees half a history.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evaluator import atomic
from evaluator.core import history
from evaluator.core.results import Results
from evaluator.errors import InputError


def load(path: Path) -> history.History:
    """The history in ``path``; an empty one when the file does not exist yet."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return history.History()
    except OSError as err:
        raise history.HistoryError(f"{path}: cannot read the history ({err.strerror})") from None
    if not stat.S_ISREG(info.st_mode):
        raise history.HistoryError(f"{path}: the history must be a regular file (not a link, "
                                   "a folder or a device)")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(history.MAX_BYTES + 1)
    except OSError as err:
        raise history.HistoryError(f"{path}: cannot read the history ({err.strerror})") from None
    if len(data) > history.MAX_BYTES:
        raise history.HistoryError(f"{path}: larger than {history.MAX_BYTES:,} bytes; delete "
                                   "the history file to start a new one")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise history.HistoryError(f"{path}: not UTF-8 text; delete the history file to start "
                                   "a new one") from None
    return history.parse(text, str(path))


def save(path: Path, doc: history.History) -> None:
    """Write ``doc`` to ``path`` atomically (:func:`evaluator.atomic.write_text`); a folder
    or file that cannot be written is one :class:`InputError` naming it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(f"{path}: cannot create its folder ({err.strerror or err})") from None
    atomic.write_text(path, history.dumps(doc))


def with_entry(path: Path, results: Results, *,
               keep: int = history.MAX_ENTRIES) -> tuple[history.History, bool]:
    """The history in ``path`` with ``results`` (its commit's headline metrics) added, not
    written yet, and whether that changed it (a working-tree run, no commit, does not)."""
    current = load(path)
    entry = history.entry_for(results)
    if entry is None:
        return current, False
    return history.append(current, entry, keep=keep), True


def record(path: Path, results: Results, *, keep: int = history.MAX_ENTRIES) -> history.History:
    """Add ``results`` to the history in ``path`` (:func:`with_entry`) and write it; the new
    history."""
    updated, changed = with_entry(path, results, keep=keep)
    if changed:
        save(path, updated)
    return updated
