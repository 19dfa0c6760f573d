"""Progress a person can trust (issue 25): through every long step of ``evaluate`` a line at
least every 10 s, on one clock that only moves forward from the first line to the last.

The steps are made slow on a fake clock (the fake build, snapshot and questions move it;
the heartbeat's wait is the fake's), so nothing here depends on wall-clock time."""

from __future__ import annotations

import io
import itertools
import re
import threading
import time
from dataclasses import replace

from evaluator import app, publish, side
from evaluator.deps import real_deps
from evaluator.progress import HEARTBEAT_S
from evaluator.settings import settings_for
from tests.integration.test_app_fake_index import FakeIndex

STAMP = re.compile(r"^\[\s*(\d+\.\d)s\] (.*)$")


class FakeClock:
    """A run clock that moves only when a fake step sleeps; after each move the heartbeat
    has checked it once (two of its pauses), like a real clock it would poll."""

    def __init__(self) -> None:
        self.now = 0.0
        self.polled = threading.Event()

    def elapsed(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.polled.set()
        time.sleep(0.0005)

    def sleep(self, seconds: float) -> None:
        for _ in range(round(seconds / 5)):
            self.now += 5.0
            for _ in range(2):
                self.polled.clear()
                assert self.polled.wait(10), "no heartbeat is running during this step"


class SlowIndex(FakeIndex):
    clock: FakeClock

    def build(self, *, user_config=None, cache_key=None):
        self.clock.sleep(60)
        return replace(super().build(), seconds=60.0)

    def ask(self, question):
        self.clock.sleep(5)
        return super().ask(question)


def test_every_long_step_has_a_heartbeat_on_one_forward_clock(sample_repo, tmp_path,
                                                              monkeypatch):
    clock = FakeClock()
    real_sync = side.sync_tree

    def slow_sync(*args, **kwargs):
        clock.sleep(30)
        return real_sync(*args, **kwargs)

    monkeypatch.setattr(side, "sync_tree", slow_sync)
    SlowIndex.clock = clock
    stderr = io.StringIO()
    deps = replace(real_deps({}, io.StringIO(), stderr), elapsed=clock.elapsed,
                   pause=clock.pause,
                   index_factory=lambda tree, **kw: SlowIndex(tree, **kw, perfect=True))
    settings = settings_for("evaluate", {"path": str(sample_repo), "baseline": "none",
                                         "cache_dir": str(tmp_path / "c"),
                                         "output_dir": str(tmp_path / "out"),
                                         "backend": "in_memory"})
    outcome = app.run_evaluate(settings, deps)
    publish.publish(outcome, deps, comment=False)

    stamped = [m.groups() for line in stderr.getvalue().splitlines()
               if (m := STAMP.match(line))]
    times = [float(t) for t, _ in stamped]
    assert times == sorted(times), "the clock went backwards (restarted?)"
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) <= HEARTBEAT_S, stamped
    # 30 s snapshot + 60 s build + 19 questions × 5 s, all on the run's one clock
    assert times[-1] == 185.0 and stamped[-1][1].startswith("wrote ")
    beats = [text for _, text in stamped if "still running" in text]
    for step in ("head: snapshot", "head: index build", "head: questions"):
        assert any(text.startswith(f"{step}: still running (") for text in beats), beats
