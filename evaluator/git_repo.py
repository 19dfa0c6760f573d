"""Commits: the base side of a comparison, changed files and history, through git.

Resolving and fetching a base commit, its merge base, exporting what a commit holds (through
a throw-away index, read-only for the repository), the files a pull request changes, and
the log and patches ``init --from-history`` reads. :class:`GitRepo` is the real
:class:`evaluator.deps.Git`: these functions and the checkout's file list, each run with the
environment :func:`evaluator.git_command.git_env` builds from ``Deps.env``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from evaluator.core.commits import MAX_CHANGE_MIB, parse_log
from evaluator.core.groundtruth import has_control
from evaluator.errors import GitError, GitOutputTooLarge
from evaluator.git_command import NO_ENV, head_commit, is_git_worktree, run_git
from evaluator.snapshot import checkout_files

SHALLOW_HINT = ("the clone has too little history: set `fetch-depth: 0` on actions/checkout "
                "(or fetch the base branch) so the base commit is available")


def is_shallow(repo: Path, *, env: Mapping[str, str] = NO_ENV) -> bool:
    proc = run_git(["rev-parse", "--is-shallow-repository"], repo, check=False, env=env)
    return proc.stdout.strip() == b"true"


def resolve_commit(repo: Path, ref: str, *, env: Mapping[str, str] = NO_ENV) -> str:
    """The full sha of ``ref``; a clear error for an unknown ref (with the shallow hint)."""
    if not is_git_worktree(repo, env=env):
        raise GitError(f"{repo} is not a git checkout, so there is no {ref!r} to compare with")
    if ref.startswith("-"):
        raise GitError(f"{ref!r} is not a git ref")
    proc = run_git(["rev-parse", "--verify", "-q", "--end-of-options", f"{ref}^{{commit}}"], repo,
                check=False, env=env)
    sha = proc.stdout.decode().strip()
    if proc.returncode != 0 or not sha:
        hint = (SHALLOW_HINT if is_shallow(repo, env=env)
                else "check the spelling, or fetch it first")
        raise GitError(f"unknown git ref {ref!r} in {repo}", hint=hint)
    return sha


_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def is_sha(text: str) -> bool:
    """A full commit sha (SHA-1 or SHA-256), lowercase hex: nothing git could read as an
    option."""
    return bool(_SHA.fullmatch(text))


def _require_sha(sha: str) -> str:
    if not is_sha(sha):
        raise GitError(f"{sha[:60]!r} is not a commit sha (40 or 64 hex digits)")
    return sha


def fetch_commit(repo: Path, sha: str, *, env: Mapping[str, str] = NO_ENV) -> bool:
    """Try to fetch one commit from ``origin`` (works when the checkout kept credentials)."""
    _require_sha(sha)
    proc = run_git(["fetch", "--quiet", "--no-tags", "--depth=1", "--end-of-options", "origin",
                 sha], repo, check=False, env=env)
    return proc.returncode == 0


def merge_base(repo: Path, a: str, b: str, *, env: Mapping[str, str] = NO_ENV) -> str:
    proc = run_git(["merge-base", "--end-of-options", _require_sha(a), _require_sha(b)], repo,
                check=False, env=env)
    sha = proc.stdout.decode().strip()
    if proc.returncode != 0 or not sha:
        hint = SHALLOW_HINT if is_shallow(repo, env=env) else None
        raise GitError(f"no merge base between {a[:12]} and {b[:12]}", hint=hint)
    return sha


def file_at(repo: Path, sha: str, rel: str, *, env: Mapping[str, str] = NO_ENV) -> bool:
    """Whether ``rel`` (relative to ``repo``, which may be a subfolder) exists in ``sha``."""
    # ``./``: relative to the folder git runs in, not to the top of the repository.
    return run_git(["cat-file", "-e", f"{_require_sha(sha)}:./{rel}"], repo,
                check=False, env=env).returncode == 0


def export_commit(repo: Path, sha: str, dest: Path, *, skipped: list[str] | None = None,
                  env: Mapping[str, str] = NO_ENV) -> tuple[str, ...]:
    """Write what a checkout of commit ``sha`` holds under ``repo`` (which may be a subfolder
    of the repository) into ``dest``; its files. Read-only for the repository.

    A checkout through a throw-away index (``read-tree`` + ``checkout-index``), not ``git
    archive``: an archive leaves out ``export-ignore`` files and rewrites ``export-subst``
    ones, so the base would not be what the commit holds. Line endings and filters are
    applied as in a checkout, like on the head side. ``skipped`` as in
    :func:`checkout_files`.
    """
    top = Path(run_git(["rev-parse", "--show-toplevel"], repo, env=env).stdout.decode().strip())
    prefix = run_git(["rev-parse", "--show-prefix"], repo, env=env).stdout.decode().strip()
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    if run_git(["cat-file", "-e", f"{sha}:{prefix}"], top, check=False, env=env).returncode != 0:
        return ()  # the folder did not exist yet at that commit
    with tempfile.TemporaryDirectory(prefix="retrieval-eval-index-") as scratch:
        index_env = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        # The tree of the subfolder, so its files land at the top of ``dest``.
        run_git(["read-tree", f"{sha}:{prefix}"], top, env=env, extra=index_env)
        run_git(["checkout-index", "--all", "--force", f"--prefix={dest}{os.sep}"], top, env=env,
             extra=index_env)
    return checkout_files(dest, use_git=False, skipped=skipped)


MAX_CHANGED_FILES = 20_000


def changed_files(repo: Path, base: str, head: str, *,
                  env: Mapping[str, str] = NO_ENV) -> tuple[str, ...]:
    """The files a pull request changes: ``git diff base...head`` (since their merge base),
    relative to ``repo`` (which may be a subfolder; files outside it are left out).

    Renames count as a deletion and an addition, so both paths are listed. Refs are passed
    after ``--end-of-options`` and paths are closed with ``--``, so no ref can act as an
    option. Names that are not valid UTF-8 or hold control characters are left out (they
    cannot be graded by a ground truth). At most :data:`MAX_CHANGED_FILES` names.
    """
    for ref in (base, head):
        if not ref or ref.startswith("-") or has_control(ref):
            raise GitError(f"{ref!r} is not a git ref")
    proc = run_git(["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff",
                 "--no-textconv", "--relative", "--end-of-options", f"{base}...{head}", "--"],
                repo, check=False, env=env)
    if proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        hint = SHALLOW_HINT if is_shallow(repo, env=env) else None
        raise GitError(f"cannot list the files changed between {base[:12]} and {head[:12]}: "
                       f"{detail[-1] if detail else 'exit ' + str(proc.returncode)}", hint=hint)
    names = []
    for raw in proc.stdout.split(b"\0"):
        if not raw:
            continue
        try:
            name = raw.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if has_control(name):
            continue
        names.append(PurePosixPath(name).as_posix())
        if len(names) >= MAX_CHANGED_FILES:
            break
    return tuple(dict.fromkeys(names))


def repo_prefix(root: Path, *, env: Mapping[str, str] = NO_ENV) -> str:
    """``root``'s path inside its repository (``"."`` at the top or outside git), for links
    to the files of a commit."""
    if not is_git_worktree(root, env=env):
        return "."
    proc = run_git(["rev-parse", "--show-prefix"], root, check=False, env=env)
    prefix = proc.stdout.decode(errors="replace").strip().strip("/")
    return prefix if proc.returncode == 0 and prefix and not has_control(prefix) else "."


def worktree_state(root: Path, queries: Path, *,
                   env: Mapping[str, str] = NO_ENV) -> tuple[bool, bool]:
    """``(the files under root differ from HEAD, the ground-truth file differs from HEAD or is
    not committed)``; ``(False, False)`` outside git."""
    if not is_git_worktree(root, env=env):
        return False, False
    tree = run_git(["status", "--porcelain", "--untracked-files=no", "--", "."], root,
                check=False, env=env)
    try:
        rel = str(queries.resolve().relative_to(root.resolve()))
    except ValueError:
        rel = None
    gt = run_git(["status", "--porcelain", "--", rel], root, check=False, env=env) if rel else None
    return (tree.returncode == 0 and bool(tree.stdout.strip()),
            gt is not None and gt.returncode == 0 and bool(gt.stdout.strip()))


#: The most commits ``init --from-history`` reads (newest first).
MAX_HISTORY_COMMITS = 5000
#: The log format: a NUL, the commit and its parents, a NUL, the subject, a NUL, the body
#: (git refuses a NUL in a message), then ``--numstat -z`` entries (see
#: :mod:`evaluator.core.commits`).
HISTORY_FORMAT = "--format=%x00%H %P%x00%s%x00%b"
#: The most bytes of ``git log`` read: 5,000 commits with their messages and changed files
#: take a few MB; a longer log (a message or file list of any length a pull request wrote)
#: is cut to the commits read whole.
MAX_LOG_BYTES = 64 * 1024 * 1024
#: The most bytes of a commit's patch, and of a module's text at a commit, read: no larger
#: module is indexed (:data:`evaluator.snapshot.MAX_FILE_BYTES`). More is "over the size
#: limit" (:class:`GitOutputTooLarge`): one line of any length, or a blob with no newline,
#: is never read whole.
MAX_PATCH_BYTES = MAX_CHANGE_MIB * 1024 * 1024


def commit_log(repo: Path, *, since: str | None = None, limit: int = MAX_HISTORY_COMMITS,
               env: Mapping[str, str] = NO_ENV) -> bytes:
    """The newest ``limit`` commits of ``HEAD`` (after ``since``: ``since..HEAD``), each with
    its parents, subject, body and changed files (added/deleted lines, renames detected; a
    merge's against its first parent), relative to ``repo``.
    Read by :func:`evaluator.core.commits.parse_log`."""
    revs = "HEAD"
    if since is not None:
        revs = f"{resolve_commit(repo, since, env=env)}..HEAD"
    args = ["log", "-z", "--no-color", "--no-ext-diff", "--no-textconv", "--relative",
            "--encoding=UTF-8", HISTORY_FORMAT, "--numstat", "-M", "--diff-merges=first-parent",
            f"--max-count={max(1, limit)}", "--end-of-options", revs, "--"]
    try:
        return run_git(args, repo, env=env, max_bytes=MAX_LOG_BYTES).stdout
    except GitOutputTooLarge as over:
        return whole_commits(over.read)


def whole_commits(log: bytes) -> bytes:
    """A ``git log`` cut at a byte cap, up to its last commit's header: the commits before it
    are whole (their changed files all read), the last one may not be. Its header is the
    last ``NUL sha`` in the text: no later field (its own subject, body or paths) can hold
    its own sha."""
    commits = parse_log(log)
    if not commits:
        return b""
    return log[:max(0, log.rfind(b"\0" + commits[-1].sha.encode()))]


def commit_patch(repo: Path, sha: str, paths: Sequence[str], *,
                 env: Mapping[str, str] = NO_ENV) -> bytes:
    """The ``-U0`` diff of commit ``sha`` against its first parent for ``paths`` (taken
    literally, relative to ``repo``): what :func:`evaluator.core.commit_facts.added_lines`
    reads. :class:`GitOutputTooLarge` past :data:`MAX_PATCH_BYTES`."""
    if not is_sha(sha):
        raise GitError(f"{sha!r} is not a commit sha")
    proc = run_git(["show", "--format=", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                 "--src-prefix=a/", "--dst-prefix=b/", "--relative", "-M",
                 "--diff-merges=first-parent", "--end-of-options", sha, "--",
                 *(f":(literal){p}" for p in paths)], repo, env=env, max_bytes=MAX_PATCH_BYTES)
    return proc.stdout


def file_blob(repo: Path, sha: str, rel: str, *, env: Mapping[str, str] = NO_ENV) -> \
        bytes | None:
    """The bytes of ``rel`` (relative to ``repo``) in commit ``sha``; None when it has none.
    :class:`GitOutputTooLarge` past :data:`MAX_PATCH_BYTES` (no larger module is indexed)."""
    proc = run_git(["cat-file", "blob", f"{_require_sha(sha)}:./{rel}"], repo, check=False,
                   env=env, max_bytes=MAX_PATCH_BYTES)
    return proc.stdout if proc.returncode == 0 else None


@dataclass(frozen=True)
class GitRepo:
    """The real :class:`evaluator.deps.Git`: this module's git functions, each run with the
    environment :func:`git_env` builds from ``env`` (``Deps.env``)."""

    env: Mapping[str, str]

    def head_commit(self, root: Path) -> str | None:
        return head_commit(root, env=self.env)

    def resolve_commit(self, repo: Path, ref: str) -> str:
        return resolve_commit(repo, ref, env=self.env)

    def fetch_commit(self, repo: Path, sha: str) -> bool:
        return fetch_commit(repo, sha, env=self.env)

    def merge_base(self, repo: Path, a: str, b: str) -> str:
        return merge_base(repo, a, b, env=self.env)

    def file_at(self, repo: Path, sha: str, rel: str) -> bool:
        return file_at(repo, sha, rel, env=self.env)

    def export_commit(self, repo: Path, sha: str, dest: Path, *,
                      skipped: list[str] | None = None) -> tuple[str, ...]:
        return export_commit(repo, sha, dest, skipped=skipped, env=self.env)

    def changed_files(self, repo: Path, base: str, head: str) -> tuple[str, ...]:
        return changed_files(repo, base, head, env=self.env)

    def repo_prefix(self, root: Path) -> str:
        return repo_prefix(root, env=self.env)

    def worktree_state(self, root: Path, queries: Path) -> tuple[bool, bool]:
        return worktree_state(root, queries, env=self.env)

    def checkout_files(self, root: Path, *, exclude: Sequence[Path] = (),
                       exclude_files: Iterable[Path | None] = (),
                       skipped: list[str] | None = None,
                       unindexable: list[str] | None = None,
                       untracked: list[str] | None = None) -> tuple[str, ...]:
        return checkout_files(root, exclude=exclude, exclude_files=exclude_files,
                              skipped=skipped, unindexable=unindexable, untracked=untracked,
                              env=self.env)

    def commit_log(self, repo: Path, *, since: str | None = None,
                   limit: int = MAX_HISTORY_COMMITS) -> bytes:
        return commit_log(repo, since=since, limit=limit, env=self.env)

    def commit_patch(self, repo: Path, sha: str, paths: Sequence[str]) -> bytes:
        return commit_patch(repo, sha, paths, env=self.env)

    def is_shallow(self, repo: Path) -> bool:
        return is_shallow(repo, env=self.env)

    def file_blob(self, repo: Path, sha: str, rel: str) -> bytes | None:
        return file_blob(repo, sha, rel, env=self.env)
