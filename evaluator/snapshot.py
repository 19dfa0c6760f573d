"""The checkout snapshot: which files are evaluated, and their copy under the cache.

The evaluator never writes into the user's checkout. It copies the checkout's files into a
snapshot folder under the cache directory and indexes that. What is evaluated is defined
here once, for the head and the base alike:

* in a git work tree, git's tracked files (``git ls-files --cached``) with their
  working-tree content; untracked files, even when git does not ignore them, are left out
  and listed (``untracked``), so a file only a local checkout has never moves a number (a
  base commit's export holds tracked files only, by definition);
* outside git, every file under the folder;
* in both, never the tool's own files: its output folders (marked with
  :data:`OUTPUT_MARKER`, or recognised by what the tool writes into them: ``results.json``
  with ``report.md``, the TREC files, the parts of a sharded run), its cache, the
  ground-truth and options files (``exclude_files``), nor tool state (``IGNORED_DIRS``).

A snapshot is synchronised in place, so an unchanged file keeps its mtime and
NeuralMind's incremental build re-embeds only what changed. Snapshot files are always
writable copies (content and mtime only, never the checkout's permissions).

What is left out of a snapshot: tool state (``IGNORED_DIRS`` ...), symlinks, folders the
caller excludes (the cache and output directories when they lie inside the checkout, so a
snapshot never copies itself and a report never becomes an indexed module), and files whose
names are not valid UTF-8 (NeuralMind and the results cannot hold them; they are reported).

Concurrency: runs may share one cache directory. Whoever uses a snapshot folder (sync,
build, questions) or assembles the model holds an exclusive lock (the ``filelock``
library: ``flock`` on POSIX, ``msvcrt`` locking on Windows) on a file under
``<cache>/locks/``; a second run waits for the first to finish with that snapshot. The lock
goes away with the process, so a killed run never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import filelock

from evaluator import atomic
from evaluator.core.groundtruth import has_control, unnameable
from evaluator.errors import InputError
from evaluator.git_command import NO_ENV, git_names, is_git_worktree

# Tool state that is never part of what is indexed (and is managed inside the snapshot).
IGNORED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".neuralmind", "graphify-out", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", ".tox", ".nox", ".venv", "venv", "node_modules",
    ".retrieval-eval",
})
IGNORED_SUFFIXES = (".pyc", ".pyo")
IGNORED_FILES = frozenset({"neuralmind-backend.yaml", "neuralmind-backend.yml",
                           "neuralmind-backend.json"})
MANAGED = frozenset({".neuralmind", "graphify-out", ".neuralmind.yaml"})


def _ignored(rel: PurePosixPath) -> bool:
    return (any(part in IGNORED_DIRS for part in rel.parts[:-1])
            or rel.name in IGNORED_FILES or rel.name.endswith(IGNORED_SUFFIXES))


# Written into every output folder the tool writes (evaluator.publish.mark_output_folder).
OUTPUT_MARKER = ".retrieval-eval-output"
OUTPUT_MARKER_TEXT = ("This folder holds outputs of neuralmind-retrieval-eval; the evaluator "
                      "never indexes it.\n")
# What an output folder from before the marker holds: one of these sets of files, and only
# files the tool writes there.
_OUTPUT_SIGNATURES = (frozenset({"results.json", "report.md"}),
                      frozenset({"qrels.trec", "run.trec"}))
_OUTPUT_FILES = frozenset({"results.json", "report.md", "qrels.trec", "run.trec",
                           "run.base.trec", "baseline-results.json"})
_PART_FILE = re.compile(r"(?:baseline-)?results\.part-\d+-of-\d+\.json")


def mark_output_folder(folder: Path) -> None:
    """Write :data:`OUTPUT_MARKER` into an output folder (once), so no later run indexes it
    wherever it lies."""
    marker = folder / OUTPUT_MARKER
    if not marker.is_file():
        atomic.write_text(marker, OUTPUT_MARKER_TEXT)


def is_output_folder(names: Iterable[str]) -> bool:
    """Whether a folder holding the files ``names`` is one the tool wrote its outputs to: it
    has the marker, or it is an output folder from before the marker existed: it holds
    ``results.json`` with ``report.md``, or the TREC files, or parts, and nothing else."""
    present = set(names)
    if OUTPUT_MARKER in present:
        return True
    tool_files = {n for n in present if n in _OUTPUT_FILES or _PART_FILE.fullmatch(n)}
    return tool_files == present and (any(sig <= present for sig in _OUTPUT_SIGNATURES)
                                      or any(_PART_FILE.fullmatch(n) for n in present))


def _output_folders(root: Path, names: Iterable[str]) -> tuple[tuple[str, ...], ...]:
    """The folders strictly inside ``root`` that hold ``names`` and are output folders (read
    from the disk, so files git does not list count too), as path parts."""
    found = []
    for parent in sorted({PurePosixPath(n).parent for n in names}):
        if not parent.parts:
            continue  # the root itself is never excluded wholesale
        try:
            # Its files only, as the walk outside git sees them (the same rule on both sides).
            present = [p.name for p in (root / parent).iterdir() if p.is_file()]
        except OSError:
            continue
        if is_output_folder(present):
            found.append(parent.parts)
    return tuple(found)


def own_file_names(root: Path, paths: Iterable[Path | None]) -> frozenset[str]:
    """``paths`` (the ground-truth and options files) that lie under ``root``, as POSIX
    paths relative to it: the same names are left out of the head and the base."""
    top = root.resolve()
    names = set()
    for path in paths:
        if path is None:
            continue
        try:
            names.add(Path(path).resolve().relative_to(top).as_posix())
        except (ValueError, OSError, RuntimeError):  # outside, or a symlink loop (not read)
            continue
    return frozenset(names)


def _excluded_prefixes(root: Path, exclude: Iterable[Path]) -> tuple[tuple[str, ...], ...]:
    """The folders of ``exclude`` strictly inside ``root``, as path parts relative to it."""
    top = root.resolve()
    prefixes = []
    for folder in exclude:
        try:
            rel = Path(folder).resolve().relative_to(top)
        except ValueError:
            continue  # not under root
        if rel.parts:  # root itself is never excluded wholesale
            prefixes.append(rel.parts)
    return tuple(prefixes)


def _under(parts: Sequence[str], prefixes: Iterable[tuple[str, ...]]) -> bool:
    return any(tuple(parts[:len(p)]) == p for p in prefixes)


def without_folders(root: Path, files: Iterable[str], exclude: Sequence[Path]) -> tuple[str, ...]:
    """``files`` (relative to ``root``) minus those inside the ``exclude`` folders."""
    prefixes = _excluded_prefixes(root, exclude)
    return tuple(f for f in files if not _under(PurePosixPath(f).parts, prefixes))


def printable_name(name: str) -> str:
    """A file name that may hold surrogate escapes (bytes that are not UTF-8), printable."""
    return repr(name.encode("utf-8", "surrogateescape"))


def _valid_utf8(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


MAX_FILE_BYTES = 2 * 1024 * 1024  # larger files are never indexed (nor copied, nor hashed)
_SNIFF_BYTES = 8192


def _unindexable(path: Path, size: int) -> str | None:
    """Why NeuralMind would not index this file (too large, binary), or None."""
    if size > MAX_FILE_BYTES:
        return f"over {MAX_FILE_BYTES // (1024 * 1024)} MiB"
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return "unreadable"
    return "binary" if b"\0" in head else None


def checkout_files(root: Path, *, use_git: bool = True, exclude: Sequence[Path] = (),
                   exclude_files: Iterable[Path | None] = (),
                   skipped: list[str] | None = None,
                   unindexable: list[str] | None = None,
                   untracked: list[str] | None = None,
                   env: Mapping[str, str] = NO_ENV) -> tuple[str, ...]:
    """The files to evaluate, POSIX paths relative to ``root``, sorted (the rule is in the
    module docstring). Symlinks are skipped.

    ``exclude``: absolute folders to leave out when they are under ``root`` (the cache and
    output directories); ``exclude_files``: files to leave out (the ground truth, the options
    file). Output folders are recognised and left out wherever they are. Names that are not
    valid UTF-8 or hold control characters (a tab, a newline: they could forge lines in a
    log) are left out; ``skipped`` (when given) receives a printable form of each
    (:func:`printable_name`). ``untracked`` (when given, in a git work tree) receives the
    untracked, non-ignored files that were left out by that rule alone.
    """
    if not root.is_dir():
        raise InputError(f"{root} is not a directory; give the checkout to evaluate as PATH")
    prefixes = _excluded_prefixes(root, exclude)
    own = own_file_names(root, exclude_files)
    others: list[str] = []
    if use_git and is_git_worktree(root, env=env):
        names = git_names(root, "--cached", env=env)
        others = git_names(root, "--others", "--exclude-standard", env=env)
    else:
        names = []
        for dirpath, dirnames, filenames in os.walk(root):
            rel_dir = Path(dirpath).relative_to(root)
            if rel_dir.parts and is_output_folder(filenames):
                dirnames[:] = []
                continue
            dirnames[:] = [d for d in dirnames if d not in IGNORED_DIRS
                           and not _under((*rel_dir.parts, d), prefixes)]
            names += [(rel_dir / f).as_posix() for f in filenames]
    prefixes += _output_folders(root, [*names, *others])
    keep = []
    bad = []
    for name in names:
        rel = PurePosixPath(name)
        if _under(rel.parts, prefixes) or _ignored(rel) or rel.as_posix() in own:
            continue
        path = root / name
        if path.is_symlink() or not path.is_file():
            continue
        if not _valid_utf8(name) or unnameable(name):
            bad.append(name)
            continue
        why = _unindexable(path, path.stat().st_size)
        if why is not None:
            if unindexable is not None:
                unindexable.append(f"{name} ({why})")
            continue
        keep.append(rel.as_posix())
    if skipped is not None:
        skipped.extend(printable_name(n) for n in sorted(set(bad)))
    if untracked is not None:
        untracked.extend(_left_untracked(root, others, prefixes, own))
    return tuple(sorted(set(keep)))


def _left_untracked(root: Path, others: Iterable[str], prefixes: Iterable[tuple[str, ...]],
                    own: frozenset[str]) -> list[str]:
    """The untracked files left out by the tracked-files rule alone (not the tool's own, not
    tool state, not links), printable and sorted."""
    return sorted(printable_name(n) if not _valid_utf8(n) or has_control(n) else n
                  for n in set(others)
                  if not (_under(PurePosixPath(n).parts, prefixes) or _ignored(PurePosixPath(n))
                          or n in own or (root / n).is_symlink()))


@dataclass(frozen=True)
class SyncStats:
    copied: int
    unchanged: int
    removed: int


def snapshot_dir(cache_dir: Path, root: Path, *, flavour: str) -> Path:
    """The snapshot folder for a checkout, one per (checkout path, index flavour)."""
    key = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:16]
    return cache_dir / "snapshots" / f"{root.resolve().name or 'root'}-{key}-{flavour}"


def _make_room(dest: Path, dst: Path) -> None:
    """Clear the way for the file ``dst`` inside ``dest``: a file where a folder of its path
    must be (an earlier snapshot had ``a`` as a file, now ``a/b`` is wanted), a folder where
    the file must be, or a (possibly read-only) older copy."""
    for parent in reversed(dst.relative_to(dest).parents[:-1]):
        folder = dest / parent
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            folder.unlink()
    if dst.is_dir() and not dst.is_symlink():
        shutil.rmtree(dst)
    else:
        dst.unlink(missing_ok=True)
    dst.parent.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def exclusive_lock(lock_file: Path, *,
                   on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold an exclusive lock on ``lock_file`` (created if needed) for the ``with`` block;
    ``on_wait`` is called once when another holder makes this one wait."""
    lock = filelock.FileLock(str(lock_file), mode=0o666)
    try:
        lock_file.parent.mkdir(parents=True, exist_ok=True)
        try:
            lock.acquire(timeout=0)
        except filelock.Timeout:
            if on_wait is not None:
                on_wait()
            lock.acquire()
    except OSError as err:
        raise InputError(f"cannot create the lock file {lock_file}: {err.strerror or err}",
                         hint="pass --cache-dir with a writable folder") from None
    try:
        yield
    finally:
        lock.release()


def snapshot_lock(cache_dir: Path, snapshot: Path, *,
                  on_wait: Callable[[], None] | None = None
                  ) -> contextlib.AbstractContextManager[None]:
    """The lock that guards the snapshot folder ``snapshot`` (see :func:`snapshot_dir`)."""
    return exclusive_lock(cache_dir / "locks" / f"snapshot-{snapshot.name}.lock",
                          on_wait=on_wait)


def sync_tree(root: Path, files: Sequence[str], dest: Path) -> SyncStats:
    """Make ``dest`` hold exactly ``files`` from ``root`` (besides the tool state it manages).

    Unchanged files (same size and mtime) are left alone so their mtimes stay and the
    incremental build skips them; only reads happen in ``root``. Copies take the content
    and the times, not the permissions: a read-only checkout still gives a snapshot that
    the next sync can update (an older copy is replaced, not written through).
    """
    dest.mkdir(parents=True, exist_ok=True)
    wanted = set(files)
    copied = unchanged = removed = 0
    for rel in files:
        src, dst = root / rel, dest / rel
        st = src.stat()
        try:
            dt = dst.stat()
            if stat.S_ISREG(dt.st_mode) and dt.st_size == st.st_size \
                    and dt.st_mtime_ns == st.st_mtime_ns:
                unchanged += 1
                continue
        except (FileNotFoundError, NotADirectoryError):
            pass
        _make_room(dest, dst)
        shutil.copyfile(src, dst)
        os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        copied += 1
    for dirpath, dirnames, filenames in os.walk(dest, topdown=True):
        rel_dir = Path(dirpath).relative_to(dest)
        if rel_dir == Path():
            dirnames[:] = [d for d in dirnames if d not in MANAGED]
        for name in filenames:
            rel = (rel_dir / name).as_posix()
            if rel not in wanted and rel not in MANAGED:
                (Path(dirpath) / name).unlink()
                removed += 1
    for dirpath, _dirnames, _filenames in sorted(os.walk(dest), key=lambda t: -len(t[0])):
        path = Path(dirpath)
        if path != dest and not any(path.iterdir()) and path.relative_to(dest).parts[0] \
                not in MANAGED:
            path.rmdir()
    return SyncStats(copied, unchanged, removed)


def tree_digest(root: Path, files: Sequence[str]) -> str:
    """A content hash of the files (paths and bytes): the index cache key's tree part."""
    digest = hashlib.sha256()
    for rel in files:
        digest.update(os.fsencode(rel) + b"\0")
        inner = hashlib.sha256()
        with (root / rel).open("rb") as handle:  # streamed: never a whole file in memory
            while block := handle.read(1 << 20):
                inner.update(block)
        digest.update(inner.digest())
    return digest.hexdigest()


def read_source(root: Path, module: str) -> str | None:
    """The text of ``module`` under ``root`` (``None`` when it cannot be read as UTF-8
    text of at most the indexed size, is a link, or lies outside ``root``: ``module`` may
    come from a pull request's ground truth, and a folder on its way may be a link)."""
    path = root / module
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        base = root.resolve()
        if base not in path.resolve().parents:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
