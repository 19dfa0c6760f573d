"""The modules a reference system reads: the checkout's files NeuralMind indexes, by the
rule of :func:`evaluator.bm25.read_modules` (suffix, size, UTF-8, NFC paths).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluator import bm25


@dataclass(frozen=True)
class Module:
    """One module: its checkout-relative path and its text."""

    path: str
    text: str


def read_modules(root: Path, files: Sequence[str]) -> tuple[Module, ...]:
    """The modules among ``files`` under ``root``, by path."""
    return tuple(Module(path, text) for path, text in bm25.read_modules(root, files))


def estimate_tokens(text: str) -> int:
    """A context's size in tokens: characters / 4, :mod:`evaluator.bm25`'s estimate."""
    return len(text) // 4
