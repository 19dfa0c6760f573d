"""What git prints about a commit is text a pull request controls: the history route
(``init --from-history``) reads each git output to a byte cap, never whole.

A commit may add one line of any length, or a blob with no newline: it is within the
400-changed-lines limit, and ``git show`` / ``git cat-file`` printed all of it into memory.
Past :data:`evaluator.git_repo.MAX_PATCH_BYTES` the change is "over the size limit" (the
route's counted reason); a log longer than :data:`evaluator.git_repo.MAX_LOG_BYTES` is cut
to the commits read whole. Each case is a real git repository built here.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from evaluator import git_command, git_repo
from evaluator.core.commits import SKIP_SIZE, parse_log
from evaluator.errors import GitError, GitOutputTooLarge
from evaluator.git_command import git_names, run_git
from evaluator.git_repo import MAX_PATCH_BYTES, commit_log, whole_commits
from tests.history_repos import commit, draft, git, new_repo, write

CORE = '''"""The session."""


class Session:
    """Keeps settings across requests."""

    def send(self, request):
        return request
'''
OVER = MAX_PATCH_BYTES + 1024 * 1024  # past the cap, well under what a test may write


@pytest.fixture
def read_sizes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The bytes each git call of :mod:`evaluator.git_repo` returned (or read before it was
    stopped at the cap), by git command."""
    sizes: list[tuple[str, int]] = []
    real = git_repo.run_git

    def recorded(args, *rest, **kwargs):
        try:
            proc = real(args, *rest, **kwargs)
        except GitOutputTooLarge as over:
            sizes.append((args[0], len(over.read)))
            raise
        sizes.append((args[0], len(proc.stdout)))
        return proc

    monkeypatch.setattr(git_repo, "run_git", recorded)
    return sizes


def _base(tmp_path: Path) -> Path:
    repo = new_repo(tmp_path / "repo")
    write(repo, "pkg/__init__.py", "")
    write(repo, "pkg/core.py", CORE)
    commit(repo, "Initial import of the package")
    return repo


def _later_good_commit(repo: Path) -> str:
    """A newer commit that makes a question, so the draft is not empty."""
    write(repo, "pkg/core.py", CORE + '''
    def retry_budget(self, attempts):
        """How many retries are left for this session."""
        remaining_attempts = max(0, self.max_retries - attempts)
        return remaining_attempts
''')
    return commit(repo, "Add a retry budget to the session")


def _assert_over_the_size_limit(cli, repo: Path, tmp_path: Path, shas: tuple[str, str],
                                sizes: list[tuple[str, int]]) -> None:
    """The commit that adds the large text and the one that takes it out again (its patch
    and its parent's module are as large) are both over the size limit; the later good
    commit is asked."""
    doc, stderr = draft(cli, repo, tmp_path, "--count", "5")
    asked = {q["source"]["commit"] for q in doc["queries"]}
    assert not asked & set(shas)
    assert len(asked) == 1
    assert f"skipped: 2 {SKIP_SIZE}, 1 the repository's first commit" in stderr, stderr
    shown = [n for command, n in sizes if command in ("show", "cat-file")]
    assert shown
    assert max(shown) <= MAX_PATCH_BYTES


def test_a_commit_adding_one_line_past_the_cap_is_over_the_size_limit(
        cli, tmp_path: Path, read_sizes) -> None:
    repo = _base(tmp_path)
    # one line (within the 400-changed-lines limit) of 3 MiB; removed again later, so the
    # module of today is indexed and the commit reaches the patch reading
    write(repo, "pkg/core.py", CORE + f'\nTABLE = "{"x" * OVER}"\n')
    long_line = commit(repo, "Add a lookup table for the session")
    write(repo, "pkg/core.py", CORE)
    removed = commit(repo, "Remove the lookup table from the session module")
    _later_good_commit(repo)
    _assert_over_the_size_limit(cli, repo, tmp_path, (long_line, removed), read_sizes)


def test_a_commit_adding_a_blob_with_no_newline_is_over_the_size_limit(
        cli, tmp_path: Path, read_sizes) -> None:
    repo = _base(tmp_path)
    # binary-ish: git's patch says only "Binary files differ", the module's text at the
    # commit (``git cat-file``) is what would be read whole
    (repo / "pkg" / "table.py").write_bytes(b"TABLE = b'\0" + b"\xff\0" * (OVER // 2) + b"'")
    blob = commit(repo, "Add a binary lookup table module for sessions")
    write(repo, "pkg/table.py", "TABLE = {}\n")
    replaced = commit(repo, "Replace the binary lookup table with a plain mapping")
    _later_good_commit(repo)
    _assert_over_the_size_limit(cli, repo, tmp_path, (blob, replaced), read_sizes)


def test_run_git_stops_at_the_cap_and_keeps_what_it_read(tmp_path: Path) -> None:
    repo = _base(tmp_path)
    whole = run_git(["cat-file", "blob", "HEAD:pkg/core.py"], repo, env={}).stdout
    assert whole == CORE.encode()
    exact = run_git(["cat-file", "blob", "HEAD:pkg/core.py"], repo, env={},
                    max_bytes=len(whole)).stdout
    assert exact == whole
    with pytest.raises(GitOutputTooLarge, match="printed more than 10 bytes") as over:
        run_git(["cat-file", "blob", "HEAD:pkg/core.py"], repo, env={}, max_bytes=10)
    assert over.value.read == whole[:10]
    assert isinstance(over.value, GitError)  # the one error hierarchy: a clear message


def test_run_git_keeps_the_end_of_git_errors_and_says_what_failed(tmp_path: Path) -> None:
    repo = _base(tmp_path)
    with pytest.raises(GitError, match=r"git cat-file blob HEAD:nothing.py failed in .*: "
                                       r"fatal: path 'nothing.py' does not exist"):
        run_git(["cat-file", "blob", "HEAD:nothing.py"], repo, env={})
    proc = run_git(["cat-file", "blob", "HEAD:nothing.py"], repo, env={}, check=False)
    assert proc.returncode != 0
    assert b"does not exist" in proc.stderr
    assert proc.stdout == b""


def test_run_git_stops_git_after_its_timeout(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A process git started (here an alias's shell and its background child, as ssh for a
    fetch) is stopped with git: before, run_git waited for it to close the pipes, so a child
    sleeping 60 s held the call 60 s against a 0.2 s timeout."""
    repo = _base(tmp_path)
    monkeypatch.setattr(git_command, "GIT_TIMEOUT_SECONDS", 0.2)
    start = time.monotonic()
    with pytest.raises(GitError, match=r"took longer than 0\.2 s"):
        run_git(["-c", "alias.wait=!sleep 60 & exec sleep 60", "wait"], repo,
                env={"PATH": os.environ["PATH"]})
    assert time.monotonic() - start < 30  # far below the children's 60 s


def test_a_log_past_its_cap_is_cut_to_the_commits_read_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = _base(tmp_path)
    for n in range(8):
        write(repo, f"pkg/mod{n}.py", f"VALUE_{n} = {n}\n" * (n + 1))
        commit(repo, f"Add module number {n} to the package\n\n{'body ' * 50 * n}")
    full_log = commit_log(repo)
    full = parse_log(full_log)
    assert len(full) == 9
    monkeypatch.setattr(git_repo, "MAX_LOG_BYTES", len(full_log) // 2)
    cut = parse_log(commit_log(repo))
    assert 0 < len(cut) < len(full)
    assert cut == full[:len(cut)]  # the newest commits, each with every changed file
    # cut inside a header or the first commit: nothing half read is kept
    for size in range(0, len(full_log), 97):
        kept = parse_log(whole_commits(full_log[:size]))
        assert kept == full[:len(kept)]
    assert git(repo, "status", "--porcelain") == ""


def test_every_git_output_is_read_to_a_cap(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a smaller cap of its own, a git call's output (the checkout's file list, a
    diff's names) is read to :data:`evaluator.git_command.MAX_GIT_OUTPUT_BYTES`."""
    repo = _base(tmp_path)
    assert git_names(repo, env={}) == ["pkg/__init__.py", "pkg/core.py"]
    monkeypatch.setattr(git_command, "MAX_GIT_OUTPUT_BYTES", 20)
    with pytest.raises(GitOutputTooLarge, match="ls-files -z printed more than 20 bytes"):
        git_names(repo, env={})


def test_a_module_too_deep_to_walk_is_judged_without_a_crash(cli, tmp_path: Path) -> None:
    """A commit adding ``WEIGHTS = 1+1+…+1`` (1,000 terms, 4 kB) parses, but walking its
    tree recursively overflows the stack: ``init --from-history`` stopped with an internal
    error (RecursionError) and drafted nothing (found by the final review). Such a module is
    read as one that does not parse; the other commits are drafted."""
    from tests.history_repos import commit_edits, draft, package_repo

    repo = package_repo(tmp_path, {"pkg/__init__.py": "", "pkg/core.py": CORE,
                                   "pkg/weights.py": "WEIGHTS = 0\n"})
    commit_edits(repo, "Weigh every request the same in the scheduler",
                 ("pkg/weights.py", "WEIGHTS = 0\n",
                  "WEIGHTS = " + "+".join(["1"] * sys.getrecursionlimit()) + "\n"))
    commit_edits(repo, "Retry a refused connection once before giving up",
                 ("pkg/core.py", "        return request\n",
                  "        return request or self.retry(request)\n"))
    doc, stderr = draft(cli, repo, tmp_path, "--count", "2")
    assert "internal error" not in stderr
    assert "Retry a refused connection once before giving up" in {
        q["question"] for q in doc["queries"]}
