"""Can the job's next step read what a run wrote? Checked as another uid, for real.

In a Docker action the container runs as root and the later steps (``upload-artifact``,
``actions/cache``, ``cp results.json``) run as the runner user. Tests run as root, so a
forked child switched to ``nobody`` tries to open every output. The folders above the
outputs (pytest's 0700 temp folders) are not the tool's: the child opens each entry relative
to a descriptor of its folder, taken as root, so only the entry itself and the folder it
sits in are checked, exactly what the tool created.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path

import pytest

NOBODY = 65534
CAN_SWITCH_USER = hasattr(os, "geteuid") and os.geteuid() == 0



def _check_as(uid: int, rows: list[tuple[int, str, bool]]) -> list[list[object]]:
    """In a forked child switched to ``uid``: open (and read a byte of, or list) each
    ``(folder descriptor, name, is_dir)``; the failures as ``[index, reason]``."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: only system calls, then _exit (never back into pytest)
        code = 0
        try:
            os.close(read_end)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            bad: list[list[object]] = []
            for i, (fd, name, is_dir) in enumerate(rows):
                try:
                    handle = os.open(name, os.O_RDONLY | (os.O_DIRECTORY if is_dir else 0),
                                     dir_fd=fd)
                    os.listdir(handle) if is_dir else os.read(handle, 1)  # noqa: PTH208
                    os.close(handle)
                except OSError as err:
                    bad.append([i, err.strerror])
            os.write(write_end, json.dumps(bad).encode())
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reader:
        data = reader.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the readability check could not run"
    return json.loads(data)


def entries(roots: Iterable[Path]) -> list[Path]:
    """Every file and folder under ``roots`` (not following links), the roots excluded."""
    found: list[Path] = []
    for root in roots:
        if root.is_dir() and not root.is_symlink():
            found += [p for p in sorted(root.rglob("*")) if not p.is_symlink()
                      and (p.is_file() or p.is_dir())]
    return found


def _root_modes(roots: Iterable[Path]) -> list[str]:
    """A root folder must be listable and traversable by others (its parents are not ours)."""
    need = stat.S_IROTH | stat.S_IXOTH
    return [f"{root.name}: mode {stat.S_IMODE(root.stat().st_mode):o}" for root in roots
            if root.is_dir() and not root.is_symlink()
            and root.stat().st_mode & need != need]


def unreadable(roots: Iterable[Path], *, uid: int = NOBODY) -> list[str]:
    """The outputs under ``roots`` that ``uid`` cannot open and read (empty: all readable).

    Needs root to switch user; the caller skips otherwise (see :data:`CAN_SWITCH_USER`).
    """
    roots = list(roots)
    paths = entries(roots)
    bad = _root_modes(roots)
    if not paths:
        return bad
    folders: dict[Path, int] = {}
    try:
        for path in paths:
            if path.parent not in folders:
                folders[path.parent] = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        failed = _check_as(uid, [(folders[p.parent], p.name, p.is_dir()) for p in paths])
    finally:
        for fd in folders.values():
            os.close(fd)
    return bad + [f"{paths[int(str(i))]}: {why}" for i, why in failed]


def require_second_uid() -> None:
    if not CAN_SWITCH_USER:
        pytest.skip("reading as another uid needs root (tests run as root in CI)")
