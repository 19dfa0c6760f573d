"""Issue 9 findings that are checked below the CLI: atomic writes on a full disk, the model
folder a user supplies, streaming hashes, and git option injection."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from evaluator import atomic
from evaluator.errors import GitError, InputError
from evaluator.git_repo import fetch_commit, merge_base, resolve_commit
from evaluator.model import ModelSource, model_fingerprint
from tests.conftest import make_repo


def test_a_full_disk_keeps_the_previous_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "results.json"
    target.write_text('{"good": true}\n')

    def full(_fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(InputError, match=r"results\.json.*No space left"):
        atomic.write_text(target, '{"new": "' + "x" * 10_000 + '"}')
    assert target.read_text() == '{"good": true}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]  # no temp file left


def test_a_lone_surrogate_is_refused_not_half_written(tmp_path: Path) -> None:
    target = tmp_path / "qrels.trec"
    with pytest.raises(InputError, match=r"qrels\.trec"):
        atomic.write_text(target, "q\ud800 0 a.py 1\n")
    assert not target.exists()


def test_a_user_model_folder_is_never_written(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "model.onnx").write_bytes(b"onnx" * 1000)
    before = sorted(p.name for p in folder.iterdir())
    for origin in ("env", "neuralmind-cache"):
        assert len(model_fingerprint(ModelSource(folder, origin))) == 16
    assert sorted(p.name for p in folder.iterdir()) == before


@pytest.mark.parametrize("evil", ["--upload-pack=touch pwned", "-c", "HEAD; rm -rf /"])
def test_git_never_receives_an_option_from_input(tmp_path: Path, evil: str) -> None:
    repo = make_repo(tmp_path / "r")
    with pytest.raises(GitError):
        fetch_commit(repo, evil)
    head = resolve_commit(repo, "HEAD")
    with pytest.raises(GitError):
        merge_base(repo, head, evil)
    with pytest.raises(GitError):
        resolve_commit(repo, evil)
    assert not (repo / "pwned").exists() and not Path("pwned").exists()
