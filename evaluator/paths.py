"""One rule for every path a run reads or writes: it must stay inside its root.

Paths come from flags, the options file (which a pull request can change), the Action's
inputs and default names (``retrieval_queries.json`` may be a committed symlink). A PR must not
make the evaluator read ``/proc/self/environ`` or write outside the workspace, so each such
path is resolved with symlinks followed and must land inside ``root``; otherwise the run
stops with exit 2 naming the path and the setting it came from.

Inside the checkout, version-control state is out of reach too: ``actions/checkout`` keeps
the workflow's token in ``.git/config`` (``AUTHORIZATION: basic base64(x-access-token:…)``)
and git runs ``.git/hooks/*``, so no such path may name anything under ``.git``, ``.hg`` or
``.svn`` (in any letter case, as written or once symlinks are followed). The files and
folders the runner owns (``$RUNNER_TEMP``, the event file, ``$GITHUB_ENV`` and the other
command files, the tool cache: :func:`runner_owned`) are refused as well wherever they are.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path

from evaluator.errors import InputError

# Version-control folders: git's holds the checkout's credentials and hooks.
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
# The runner's own folders and files, named by these variables.
RUNNER_FOLDERS = ("RUNNER_TEMP", "RUNNER_TOOL_CACHE")
RUNNER_FILES = ("GITHUB_EVENT_PATH", "GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY",
                "GITHUB_PATH", "GITHUB_STATE")


def runner_owned(env: Mapping[str, str], root: Path) -> tuple[Path, ...]:
    """What the runner owns, resolved: its temp folder and tool cache, and each command or
    event file with the folder it lies in (the runner's ``_runner_file_commands``,
    ``/github/file_commands``, ``/github/workflow``). A folder that holds ``root`` is not
    one of them (``act`` runs a job with ``RUNNER_TEMP=/tmp`` and the checkout under
    ``/tmp``): the checkout is the project's, and its own rules apply inside it."""
    top = root.resolve()
    owned: list[Path] = []
    for name in (*RUNNER_FOLDERS, *RUNNER_FILES):
        value = (env.get(name) or "").strip()
        if not value or not Path(value).is_absolute():
            continue
        path = Path(value).resolve()
        folders = [path] if name in RUNNER_FOLDERS else [path.parent]
        owned += [path] if name in RUNNER_FILES else []
        owned += [f for f in folders if not _within(top, f)]
    return tuple(dict.fromkeys(owned))


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


# The bundled example's ground truth (``--example``: NeuralMind's sample project).
EXAMPLE_QUERIES = Path(__file__).resolve().parent / "data" / "sample_project.retrieval_queries.json"


def confine(path: str | os.PathLike[str], root: Path, *, setting: str,
            base: Path | None = None, reserved: Iterable[Path] = (),
            place: str = "the checkout") -> Path:
    """``path`` (relative to ``base``, default ``root``) resolved, symlinks followed; it must
    be ``root`` itself or inside it, not under a version-control folder (:data:`VCS_DIRS`)
    and not in ``reserved`` (:func:`runner_owned`)."""
    top = root.resolve()
    raw = Path(path)
    candidate = raw if raw.is_absolute() else (base or top) / raw
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise InputError(f"{setting}: cannot resolve {str(path)!r}: {err}") from None
    if not _within(resolved, top):
        raise InputError(f"{setting}: {str(path)!r} is outside {place}: it resolves outside "
                         f"{top} (to {resolved})",
                         hint="give a path inside the repository (symlinks are followed)")
    written = () if raw.is_absolute() else raw.parts
    vcs = [p for p in (*written, *resolved.relative_to(top).parts) if p.casefold() in VCS_DIRS]
    if vcs:
        raise InputError(f"{setting}: {str(path)!r} (resolved: {resolved}) is inside the "
                         f"version-control folder {vcs[0]!r}; nothing under .git, .hg or .svn "
                         "may be read or written (they hold the checkout's credentials and "
                         "hooks)",
                         hint="give a path to a file of the project itself")
    owned = [folder for folder in reserved if _within(resolved, folder)]
    if owned:
        raise InputError(f"{setting}: {str(path)!r} (resolved: {resolved}) is in the runner's "
                         f"own {owned[0]}; the "
                         "runner's temp folder, tool cache, event and command files may not "
                         "be read or written through a setting",
                         hint="give a path to a file of the project itself")
    return resolved


def writable_anywhere(path: Path, *, setting: str) -> Path:
    """A file this tool writes wherever the user points it (``init --output``): it may lie
    outside the checkout, but never under a version-control folder (:data:`VCS_DIRS`), as
    written or once symlinks are followed (``.git/MERGE_HEAD`` or ``.git/refs/heads/x``
    would leave the repository broken, ``.git/hooks/…`` would run), and it may not be a
    symlink, even a dangling one (its target would be written)."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise InputError(f"{setting}: cannot resolve {str(path)!r}: {err}") from None
    vcs = [p for p in (*path.parts, *resolved.parts) if p.casefold() in VCS_DIRS]
    if vcs:
        raise InputError(f"{setting}: {str(path)!r} (resolved: {resolved}) is inside the "
                         f"version-control folder {vcs[0]!r}; nothing under .git, .hg or .svn "
                         "is written",
                         hint="write the file outside the version-control folder")
    if path.is_symlink():
        raise InputError(f"{setting}: {str(path)!r} is a symbolic link; it is never written "
                         "through", hint="give the path of a new file")
    return path


def check_not_root(folder: str | os.PathLike[str], root: Path, *, setting: str) -> None:
    """A folder this tool writes (output, cache) may not be the indexed root nor hold it:
    the next run would index the reports and snapshots themselves."""
    top = root.resolve()
    try:
        target = Path(folder).resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise InputError(f"{setting}: cannot resolve {str(folder)!r}: {err}") from None
    if target == top or target in top.parents:
        raise InputError(f"{setting}: {str(folder)!r} is the checkout being evaluated or a "
                         "folder above it; the evaluator would index its own output",
                         hint="use a subfolder such as .retrieval-eval/ (never indexed) or a "
                              "folder outside the checkout")


def read_bounded(path: Path, max_bytes: int, *, what: str) -> bytes:
    """The bytes of ``path``, refused past ``max_bytes`` (read no further than that)."""
    with path.open("rb") as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise InputError(f"{what} {path} is over {max_bytes // (1024 * 1024)} MiB",
                         hint="no file of that kind is that large; check what the path names")
    return data


def regular_file(path: Path, *, what: str) -> Path:
    """``path`` must exist and be a regular file (after symlinks): a clear message for a
    directory, a FIFO or a device instead of a hang or "does not exist"."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        raise InputError(f"{what} {path} does not exist") from None
    except OSError as err:
        raise InputError(f"{what} {path}: {err.strerror or err}") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"{what} {path} is a directory, not a file")
    if not stat.S_ISREG(mode):
        raise InputError(f"{what} {path} is not a regular file (a FIFO, socket or device)")
    return path
