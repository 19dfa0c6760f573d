"""One rule for every path a run reads or writes: it must stay inside its root.

Paths come from flags, the options file (which a pull request can change), the Action's
inputs and default names (``retrieval_queries.json`` may be a committed symlink). A PR must not
make the evaluator read ``/proc/self/environ`` or write outside the workspace, so each such
path is resolved with symlinks followed and must land inside ``root``; otherwise the run
stops with exit 2 naming the path and the setting it came from.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from evaluator.errors import InputError

# The bundled example's ground truth (``--example``: NeuralMind's sample project).
EXAMPLE_QUERIES = Path(__file__).resolve().parent / "data" / "sample_project.retrieval_queries.json"


def confine(path: str | os.PathLike[str], root: Path, *, setting: str,
            base: Path | None = None) -> Path:
    """``path`` (relative to ``base``, default ``root``) resolved, symlinks followed; it must
    be ``root`` itself or inside it."""
    top = root.resolve()
    raw = Path(path)
    candidate = raw if raw.is_absolute() else (base or top) / raw
    try:
        resolved = candidate.resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise InputError(f"{setting}: cannot resolve {str(path)!r}: {err}") from None
    if resolved != top and top not in resolved.parents:
        raise InputError(f"{setting}: {str(path)!r} resolves outside {top} "
                         f"(to {resolved}); paths must stay inside the checkout",
                         hint="give a path inside the repository (symlinks are followed)")
    return resolved


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
