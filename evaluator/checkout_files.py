"""The checkout an evaluation reads: its files (git's tracked files, never the tool's own
files, the cache or the outputs), the warnings about what is left out, the project's name and
the cache directory."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath

from evaluator.core.options import Settings
from evaluator.core.results import untracked_sentence
from evaluator.deps import Git
from evaluator.errors import InputError
from evaluator.progress import Progress


def default_cache_dir(env: Mapping[str, str]) -> Path:
    base = env.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "neuralmind-retrieval-eval"


def cache_dir_of(options: Settings, env: Mapping[str, str]) -> Path:
    return Path(options.cache_dir) if options.cache_dir else default_cache_dir(env)


_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def project_name(root: Path, env: Mapping[str, str], git: Git) -> str:
    """The repository's name, which NeuralMind's context calls the project (it is the name
    of the folder it indexes, so the snapshot folder is named so): the GitHub repository's
    name in a workflow, else the name of the repository's top folder (the same for a
    subfolder and in every snapshot), else the folder's own name; ``project`` when that
    is not a plain name."""
    repo = env.get("GITHUB_REPOSITORY", "").rpartition("/")[2]
    if not repo:
        prefix = git.repo_prefix(root)
        depth = 0 if prefix == "." else len(PurePosixPath(prefix).parts)
        top = root.resolve()
        repo = (top.parents[depth - 1] if depth else top).name
    return repo if _SAFE_NAME.fullmatch(repo) and repo.strip(".") else "project"


def _own_files(root: Path, qpath: Path, *, config: str | None) -> list[Path]:
    """The tool's own files that may lie in the checkout: the ground truth and the options
    file (the given one, and the default names)."""
    from evaluator.settings import CONFIG_NAMES

    own = [qpath, *(root / name for name in CONFIG_NAMES)]
    if config:
        own.append(Path(config))
    return own


def _own_folders(cache_dir: Path, *, output_dir: str | None) -> list[Path]:
    """The folders the evaluator writes to (the cache, the outputs: relative to the current
    directory, as the CLI writes them), to leave out when they are inside the checkout."""
    folders = [cache_dir.resolve()]
    if output_dir:
        folders.append(Path(output_dir).resolve())
    return folders


def ignored_sentence(names: Sequence[str]) -> str:
    """The note that names the ``NEURALMIND_*`` variables the evaluation does not apply."""
    return (f"{', '.join(names)} in the environment did not apply: the evaluation pins "
            "NeuralMind's settings so that runs compare")


def _list_checkout(root: Path, *, exclude: Sequence[Path], own: Sequence[Path],
                   select_files: Callable[[str], bool] | None, progress: Progress, git: Git
                   ) -> tuple[tuple[str, ...], tuple[str, ...], list[str]]:
    """The head's files, its untracked files (both within a section's ``select_files``) and
    the names skipped as not UTF-8; warns about what was left out."""
    skipped: list[str] = []
    unindexable: list[str] = []
    untracked: list[str] = []
    files = git.checkout_files(root, exclude=exclude, exclude_files=own, skipped=skipped,
                               unindexable=unindexable, untracked=untracked)
    files = tuple(f for f in files if select_files is None or select_files(f))
    left_out = tuple(f for f in untracked if select_files is None or select_files(f))
    _warn_skipped(progress, skipped)
    if left_out:
        progress.warn(untracked_sentence(left_out))
    _note_unindexable(progress, unindexable)
    if not files:
        raise InputError(f"{root} has no files to index (an empty repository?)"
                         if not left_out else
                         f"{root} has no tracked files to index: its {len(left_out)} "
                         "untracked file(s) are left out", hint="git add them to evaluate them")
    return files, left_out, skipped


def _warn_skipped(progress: Progress, skipped: Sequence[str], where: str = "") -> None:
    if not skipped:
        return
    shown = ", ".join(skipped[:5]) + (f" and {len(skipped) - 5} more" if len(skipped) > 5
                                      else "")
    progress.warn(f"{len(skipped)} file(s) with names that are not valid UTF-8 or hold "
                  f"control characters or a backslash are not indexed{where}: {shown}")


def _shown(names: Sequence[str]) -> str:
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


#: Files that are plainly not code: skipped without a warning when NeuralMind cannot index
#: them (an image under docs/ is never a module).
MEDIA_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".ico", ".webp", ".bmp",
                            ".pdf", ".mp4", ".webm", ".mov", ".woff", ".woff2", ".ttf",
                            ".otf", ".eot"})


def _note_unindexable(progress: Progress, unindexable: Sequence[str]) -> None:
    """Files NeuralMind does not index (binary, or over the size limit): a warning naming
    them, except images, media and fonts, which get a plain progress line."""
    # Each entry is "path (why)".
    media = [f for f in unindexable
             if PurePosixPath(f.rsplit(" (", 1)[0]).suffix.lower() in MEDIA_SUFFIXES]
    other = [f for f in unindexable if f not in set(media)]
    if other:
        progress.warn(f"{len(other)} file(s) left out because NeuralMind does not index "
                      f"them (binary, or over the size limit): {_shown(other)}")
    if media:
        progress(f"checkout: {len(media)} image, media or font file(s) not indexed: "
                 f"{_shown(media)}")


def _on_wait(progress: Progress, snapshot: Path) -> Callable[[], None]:
    return lambda: progress(f"waiting for another run to finish with the snapshot {snapshot}")


def ensure_writable(cache_dir: Path) -> Path:
    """The cache directory, created and checked for writing; a clear error otherwise."""
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cache_dir, prefix=".probe-"):
            pass
    except OSError as err:
        raise InputError(f"the cache directory {cache_dir} is not writable "
                         f"({err.strerror or err})",
                         hint="pass --cache-dir with a writable folder") from None
    return cache_dir

