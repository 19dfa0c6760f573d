"""Progress on stderr: what is happening, counts and elapsed time (``--quiet`` silences it).

One clock per run: every :class:`Progress` of a command reads the run's clock
(:attr:`evaluator.deps.Deps.elapsed`, seconds since the command started, monotonic), so the
time shown only moves forward from the first line to the last. :func:`heartbeat` keeps a
long step from going silent: a line at least every ``every`` seconds until the step ends.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

from evaluator.runner import neutralize


def run_clock() -> Callable[[], float]:
    """Seconds since this call, on the monotonic clock (one per run)."""
    started = time.monotonic()
    return lambda: time.monotonic() - started


class Progress:
    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False,
                 clock: Callable[[], float] | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.quiet = quiet
        self.clock = clock if clock is not None else run_clock()
        self.last = self.clock()  # when the last line was printed

    def elapsed(self) -> float:
        return self.clock()

    def __call__(self, message: str) -> None:
        if not self.quiet:
            now = self.elapsed()
            self.last = now
            print(neutralize(f"[{now:6.1f}s] {message}"), file=self.stream, flush=True)

    def warn(self, message: str) -> None:
        """Warnings are shown even with ``--quiet``; always one ``warning:`` prefix (a
        message that already starts with one, such as a rendered ground-truth problem,
        does not get a second)."""
        text = message[len("warning:"):].lstrip() if message.lower().startswith(
            "warning:") else message
        self.last = self.elapsed()
        print(neutralize(f"warning: {text}"), file=self.stream, flush=True)


HEARTBEAT_S = 10.0


@contextlib.contextmanager
def heartbeat(progress: Progress, what: str, *, every: float = HEARTBEAT_S,
              pause: Callable[[float], object] | None = None) -> Iterator[None]:
    """While the block runs, print ``what: still running (Ns)`` whenever ``every`` seconds
    would otherwise pass without a line, so no gap between lines exceeds ``every``.

    ``pause(seconds)`` waits between checks (default: until the block ends, at most a
    twentieth of ``every``); tests pass one that drives a fake clock."""
    stop = threading.Event()
    started = progress.elapsed()
    step = every / 20

    def wait(seconds: float) -> object:
        return stop.wait(seconds)

    rest = pause or wait

    def beat() -> None:
        while not stop.is_set():
            rest(step)
            if stop.is_set():
                break
            now = progress.elapsed()
            if now - progress.last >= every - step:
                progress(f"{what}: still running ({now - started:.0f}s)")

    thread = threading.Thread(target=beat, name="heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
