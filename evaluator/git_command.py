"""Running ``git``: the only module that starts a git process.

Every call goes through :func:`run_git`, with the environment :func:`git_env` builds from
``Deps.env`` (never the whole process environment: no token, no Action input, no ``GIT_*``
variable that redirects git) and ``safe.directory`` set to exactly the repository when its
owner differs (the Action's container runs as root), never ``*``. The checkout snapshot
(:mod:`evaluator.snapshot`) and the commit plumbing (:mod:`evaluator.git_repo`) build on it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from evaluator.errors import GitError

# What git may see of the process environment (issue 19): the program search path, the home
# folder (the user's own git config), the locale, a temp folder, proxies and CA files for a
# baseline fetch, the SSH agent. Never the token, the Action's INPUT_*, ACTIONS_* or a GIT_*
# variable that redirects git's repository, config or commands.
GIT_ENV_KEEP = ("PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "TZ", "SSH_AUTH_SOCK",
                "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
                "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy")
NO_ENV: Mapping[str, str] = {}


def git_env(env: Mapping[str, str]) -> dict[str, str]:
    """The environment git subprocesses get, built from ``env`` (``Deps.env``): the names in
    :data:`GIT_ENV_KEEP` and ``LC_*``, plus ``GIT_TERMINAL_PROMPT=0`` (a fetch never waits
    for a password)."""
    kept = {k: v for k, v in env.items() if k in GIT_ENV_KEEP or k.startswith("LC_")}
    return {**kept, "GIT_TERMINAL_PROMPT": "0"}


def _repository_top(cwd: Path) -> Path | None:
    """The folder holding ``.git`` at or above ``cwd``, found without running git."""
    here = cwd.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return None


def _safe_directory(cwd: Path) -> list[str]:
    """``-c safe.directory=<that repository>`` when its top folder belongs to another user
    (the Action's container runs as root, the checkout belongs to the runner's user): exactly
    that path, never ``*``. Nothing when we own it or it is no repository."""
    top = _repository_top(cwd)
    getuid = getattr(os, "getuid", None)
    if top is None or getuid is None:
        return []
    try:
        owner = top.stat().st_uid
    except OSError:
        return []
    return [] if owner == getuid() else ["-c", f"safe.directory={top}"]


def run_git(args: Sequence[str], cwd: Path, *, env: Mapping[str, str], check: bool = True,
         extra: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git in ``cwd`` with the environment :func:`git_env` built from ``env`` (plus
    ``extra``, e.g. ``GIT_INDEX_FILE``)."""
    try:
        proc = subprocess.run(["git", *_safe_directory(cwd), "-C", str(cwd), *args],
                              capture_output=True, check=False, timeout=120,
                              env={**git_env(env), **(extra or {})})
    except FileNotFoundError:
        raise GitError("git is not installed; it is needed to read the checkout") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {' '.join(args)} took longer than 120 s in {cwd}") from None
    if check and proc.returncode != 0:
        detail = proc.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed in {cwd}: "
                       f"{detail[-1] if detail else 'exit ' + str(proc.returncode)}")
    return proc


def is_git_worktree(root: Path, *, env: Mapping[str, str] = NO_ENV) -> bool:
    """True when ``root`` is in a git work tree and not inside a folder git ignores."""
    proc = run_git(["rev-parse", "--is-inside-work-tree"], root, check=False, env=env)
    if proc.returncode != 0 or proc.stdout.strip() != b"true":
        return False
    return run_git(["check-ignore", "-q", "."], root, check=False, env=env).returncode != 0


def head_commit(root: Path, *, env: Mapping[str, str] = NO_ENV) -> str | None:
    """The commit checked out at ``root``, or ``None`` outside git / in an empty repository."""
    if not is_git_worktree(root, env=env):
        return None
    proc = run_git(["rev-parse", "--verify", "-q", "HEAD"], root, check=False, env=env)
    return proc.stdout.decode().strip() or None if proc.returncode == 0 else None


def git_names(root: Path, *args: str, env: Mapping[str, str]) -> list[str]:
    """``git ls-files -z ARGS`` under ``root``: names (undecodable bytes kept as escapes)."""
    out = run_git(["ls-files", "-z", *args], root, env=env).stdout
    return [n for n in out.decode("utf-8", "surrogateescape").split("\0") if n]
