"""Running ``git``: the only module that starts a git process.

Every call goes through :func:`run_git`, with the environment :func:`git_env` builds from
``Deps.env`` (never the whole process environment: no token, no Action input, no ``GIT_*``
variable that redirects git) and ``safe.directory`` set to exactly the repository when its
owner differs (the Action's container runs as root), never ``*``. The checkout snapshot
(:mod:`evaluator.snapshot`) and the commit plumbing (:mod:`evaluator.git_repo`) build on it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from evaluator.errors import GitError, GitOutputTooLarge

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


#: The most bytes any git call's output is read to (a checkout's file list, a history's log
#: are far smaller); callers that read what a commit holds pass a smaller ``max_bytes``.
MAX_GIT_OUTPUT_BYTES = 256 * 1024 * 1024
#: The end of git's error output that is kept (its last line is the message shown).
STDERR_TAIL_BYTES = 64 * 1024
GIT_TIMEOUT_SECONDS = 120
_CHUNK = 64 * 1024


def _read_capped(stream: IO[bytes], cap: int) -> tuple[bytes, bool]:
    """``stream`` read in chunks to at most ``cap`` bytes; whether there was more."""
    chunks: list[bytes] = []
    size = 0
    while chunk := stream.read(min(_CHUNK, cap + 1 - size)):
        chunks.append(chunk)
        size += len(chunk)
        if size > cap:
            return b"".join(chunks)[:cap], True
    return b"".join(chunks), False


def _drain_tail(stream: IO[bytes], tail: list[bytes]) -> None:
    """Read ``stream`` to its end (git never blocks on a full pipe), keeping its last
    :data:`STDERR_TAIL_BYTES` in ``tail[0]``."""
    while chunk := stream.read(_CHUNK):
        tail[0] = (tail[0] + chunk)[-STDERR_TAIL_BYTES:]


def _stop_all(proc: subprocess.Popen[bytes]) -> None:
    """Kill git and every process it started (its own session: an alias's shell, ssh for a
    fetch), which would otherwise hold the output pipes open past git's end."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # all gone already
        os.killpg(proc.pid, signal.SIGKILL)


def run_git(args: Sequence[str], cwd: Path, *, env: Mapping[str, str], check: bool = True,
            extra: Mapping[str, str] | None = None,
            max_bytes: int | None = None) -> subprocess.CompletedProcess[bytes]:
    """Run git in ``cwd`` with the environment :func:`git_env` built from ``env`` (plus
    ``extra``, e.g. ``GIT_INDEX_FILE``). Its output is streamed and read to at most
    ``max_bytes`` (:data:`MAX_GIT_OUTPUT_BYTES` unless given): past that git is stopped and
    :class:`GitOutputTooLarge` raised (whatever ``check`` says); its error output is
    drained, keeping the end."""
    try:
        proc = subprocess.Popen(["git", *_safe_directory(cwd), "-C", str(cwd), *args],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env={**git_env(env), **(extra or {})},
                                start_new_session=True)
    except FileNotFoundError:
        raise GitError("git is not installed; it is needed to read the checkout") from None
    assert proc.stdout is not None  # both are pipes (for mypy)
    assert proc.stderr is not None
    timed_out = threading.Event()

    def stop() -> None:
        timed_out.set()
        _stop_all(proc)

    timer = threading.Timer(GIT_TIMEOUT_SECONDS, stop)
    tail = [b""]
    drain = threading.Thread(target=_drain_tail, args=(proc.stderr, tail), daemon=True)
    timer.start()
    drain.start()
    over = True  # until the output was read to its end
    cap = MAX_GIT_OUTPUT_BYTES if max_bytes is None else max_bytes
    try:
        out, over = _read_capped(proc.stdout, cap)
    finally:
        if over:
            _stop_all(proc)  # stopped at the cap (or interrupted): git never runs on
        returncode = proc.wait()
        drain.join()
        timer.cancel()
        proc.stdout.close()
        proc.stderr.close()
    if over:
        raise GitOutputTooLarge(f"git {' '.join(args)} printed more than {cap:,} bytes "
                                f"in {cwd}; it was stopped there", read=out)
    if timed_out.is_set() and returncode < 0:  # killed by the timer, not done just before
        raise GitError(f"git {' '.join(args)} took longer than {GIT_TIMEOUT_SECONDS} s "
                       f"in {cwd}")
    if check and returncode != 0:
        detail = tail[0].decode(errors="replace").strip().splitlines()
        raise GitError(f"git {' '.join(args)} failed in {cwd}: "
                       f"{detail[-1] if detail else 'exit ' + str(returncode)}")
    return subprocess.CompletedProcess(proc.args, returncode, out, tail[0])


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
