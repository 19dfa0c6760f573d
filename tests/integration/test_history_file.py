"""The history file on disk: created, appended, bounded, never followed through a link."""

from __future__ import annotations

import os

import pytest

from evaluator import history_file
from evaluator.core import history
from evaluator.core.history import HistoryError
from tests.factories import make_results


def test_record_creates_then_appends(tmp_path):
    path = tmp_path / "cache" / "history.json"
    first = history_file.record(path, make_results(seed=1, commit="a" * 40))
    second = history_file.record(path, make_results(seed=2, commit="b" * 40))
    assert [e.commit for e in first.entries] == ["a" * 40]
    assert [e.commit for e in second.entries] == ["a" * 40, "b" * 40]
    assert history_file.load(path) == second
    assert [p.name for p in path.parent.iterdir()] == ["history.json"]  # no temp file left


def test_working_tree_runs_are_not_recorded(tmp_path):
    path = tmp_path / "history.json"
    assert history_file.record(path, make_results(commit="")) == history.History()
    assert not path.exists()


def test_missing_file_is_an_empty_history(tmp_path):
    assert history_file.load(tmp_path / "none.json") == history.History()


def test_symlink_fifo_and_folder_are_refused(tmp_path):
    target = tmp_path / "secret"
    target.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (link, fifo, tmp_path):
        with pytest.raises(HistoryError, match="regular file"):
            history_file.load(path)


def test_oversize_and_binary_are_refused(tmp_path):
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (history.MAX_BYTES + 10))
    with pytest.raises(HistoryError, match="larger than"):
        history_file.load(big)
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe{}")
    with pytest.raises(HistoryError, match="UTF-8"):
        history_file.load(binary)
