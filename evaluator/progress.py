"""Progress on stderr: what is happening, counts and elapsed time (``--quiet`` silences it)."""

from __future__ import annotations

import sys
import time
from typing import TextIO

from evaluator.runner import neutralize


class Progress:
    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.started = time.perf_counter()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def __call__(self, message: str) -> None:
        if not self.quiet:
            print(neutralize(f"[{self.elapsed():6.1f}s] {message}"), file=self.stream,
                  flush=True)

    def warn(self, message: str) -> None:
        """Warnings are shown even with ``--quiet``; always one ``warning:`` prefix (a
        message that already starts with one, such as a rendered ground-truth problem,
        does not get a second)."""
        text = message[len("warning:"):].lstrip() if message.lower().startswith(
            "warning:") else message
        print(neutralize(f"warning: {text}"), file=self.stream, flush=True)
