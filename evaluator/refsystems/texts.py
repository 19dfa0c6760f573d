"""The modules a reference system reads: the checkout's files NeuralMind indexes.

The rule is :class:`evaluator.bm25.BM25Index`'s: a file with a suffix NeuralMind maps to a
language (:data:`evaluator.bm25.SUFFIXES`), at most :data:`evaluator.bm25.MAX_FILE_BYTES`,
read as UTF-8 (undecodable bytes replaced), its path NFC-normalized like the ground truth's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluator.bm25 import MAX_FILE_BYTES, SUFFIXES


@dataclass(frozen=True)
class Module:
    """One module: its checkout-relative path and its text."""

    path: str
    text: str


def read_modules(root: Path, files: Sequence[str]) -> tuple[Module, ...]:
    """The modules among ``files`` under ``root``, by path."""
    out = []
    for name in sorted(files):
        if not name.endswith(SUFFIXES):
            continue
        path = root / name
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        out.append(Module(unicodedata.normalize("NFC", name), text))
    return tuple(out)


def estimate_tokens(text: str) -> int:
    """A context's size in tokens: characters / 4, :mod:`evaluator.bm25`'s estimate."""
    return len(text) // 4
