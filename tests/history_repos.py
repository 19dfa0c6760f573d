"""Building the real git repositories the history-route tests (``init --from-history``,
issue 24) draft from: an empty repository, a package's first commit, a file's edit, a commit
of edits, the draft and its ``history:`` line. One place for the set-up every round's tests
share (they imported it from each other's test modules before)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

#: The subject of the first commit of every repository built here.
FIRST_COMMIT = "Initial import of the package"

#: One edit of a file: (path, the text it holds, the text that replaces it once).
Edit = tuple[str, str, str]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def write(repo: Path, path: str, text: str) -> None:
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(text, encoding="utf-8")


def commit(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


def new_repo(repo: Path) -> Path:
    """An empty git repository at ``repo`` (branch main) with a committer and no signing."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "commit.gpgsign", "false")
    return repo


def package_repo(tmp_path: Path, files: dict[str, str]) -> Path:
    """A repository at ``tmp_path/repo`` whose first commit adds ``files`` (path → text)."""
    repo = new_repo(tmp_path / "repo")
    for path, text in files.items():
        write(repo, path, text)
    commit(repo, FIRST_COMMIT)
    return repo


def edit(repo: Path, path: str, old: str, new: str) -> None:
    """Replace the first ``old`` in ``path`` (which must hold it) with ``new``."""
    text = (repo / path).read_text(encoding="utf-8")
    assert old in text, old
    write(repo, path, text.replace(old, new, 1))


def commit_edits(repo: Path, subject: str, *edits: Edit) -> str:
    """Make ``edits`` (in order) and commit them under ``subject``; the commit's sha."""
    for path, old, new in edits:
        edit(repo, path, old, new)
    return commit(repo, subject)


def draft(cli, repo: Path, tmp_path: Path, *args: str) -> tuple[dict, str]:
    """``init --from-history --no-review`` on ``repo``: the draft and what it printed."""
    out = tmp_path / f"draft{len(list(tmp_path.glob('draft*.json')))}.json"
    run = cli("init", str(repo), "--from-history", "--no-review", "--output", str(out), *args)
    assert run.code == 0, run.stderr
    return json.loads(out.read_text(encoding="utf-8")), run.stderr


def history_line(stderr: str) -> str:
    """The one ``history: read …`` line of a draft's output."""
    (line,) = [line for line in stderr.splitlines() if "history: read" in line]
    return line


def skipped(line: str, reason: str) -> int:
    """How many commits the ``history:`` line skipped for ``reason`` (0 when it names none):
    the count right before the reason, never a longer number ending in it (13 is no 3)."""
    found = re.search(rf"(?<![\d])(\d+) {re.escape(reason)}", line)
    return int(found.group(1)) if found else 0
