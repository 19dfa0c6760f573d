"""The PR's changed files from a real git repository (base...head), hostile refs refused."""

from __future__ import annotations

import pytest

from evaluator.errors import GitError
from evaluator.git_repo import changed_files
from tests.conftest import git


@pytest.fixture
def repo(tmp_path):
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "t@example.com")
    git(path, "config", "user.name", "t")
    for name in ("a.py", "b.py", "sub/c.py", "sub/d.py", "old.py"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(f"# {name}\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "base")
    git(path, "checkout", "-qb", "feature")
    (path / "a.py").write_text("# changed\n")
    (path / "sub/c.py").write_text("# changed\n")
    git(path, "mv", "old.py", "new.py")
    (path / "sub/e.py").write_text("# new\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "head")
    git(path, "checkout", "-q", "main")
    (path / "b.py").write_text("# changed on main after the branch point\n")
    git(path, "commit", "-qam", "main moves on")
    return path


def test_three_dot_diff_lists_only_the_branchs_changes(repo):
    files = changed_files(repo, "main", "feature")
    assert sorted(files) == ["a.py", "new.py", "old.py", "sub/c.py", "sub/e.py"]


def test_subfolder_paths_are_relative_to_it(repo):
    assert sorted(changed_files(repo / "sub", "main", "feature")) == ["c.py", "e.py"]


@pytest.mark.parametrize("ref", ["--output=/tmp/x", "-p", "", "main\n"])
def test_option_like_or_odd_refs_are_refused(repo, ref):
    with pytest.raises(GitError):
        changed_files(repo, ref, "feature")


def test_unknown_ref_is_a_clear_error(repo):
    with pytest.raises(GitError, match="cannot list the files changed"):
        changed_files(repo, "nope", "feature")


def test_repo_prefix(repo, tmp_path):
    from evaluator.git_repo import repo_prefix

    assert repo_prefix(repo) == "."
    assert repo_prefix(repo / "sub") == "sub"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert repo_prefix(outside) == "."
