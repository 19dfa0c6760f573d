"""The headline history of the default branch: one small JSON document, read defensively.

Format (``history: FILE`` in the options; the workflow keeps the file between runs with
``actions/cache`` or an artifact)::

    {"schema": "retrieval-eval-history", "version": 1,
     "entries": [{"commit": "0123abc…", "date": "2026-01-01T00:00:00+00:00", "n": 18,
                  "judge": "evaluator-judge 4 (terms+minilm)",
                  "metrics": {"ndcg@5": 0.786, "recall@5": 0.81, ...}}, ...]}

``judge`` (optional; files written before it have none) names the faithfulness judge of the
entry: a trend of a metric the judge scores (:data:`JUDGED`) only joins entries scored by the
same judge, so a change of judge never shows as a change of quality. ``host_class``
(optional, likewise) is the host class of the entry's run (:mod:`evaluator.host`): a trend
that joins entries from another host class than the current run's gets a note
(:func:`host_classes_note`), since embeddings can differ in their last bits there.

Entries are oldest first; :func:`append` keeps the newest :data:`MAX_ENTRIES`. The file may
come from a cache any earlier workflow run could write, so :func:`parse` treats it as
hostile: at most :data:`MAX_BYTES` (checked by the reader), :data:`MAX_ENTRIES` entries,
commits are 7–40 hex digits, dates are ISO-8601 timestamps, metric names are the
registry's ``tracked`` measures (:func:`evaluator.core.measures.tracked`) and values are
finite numbers in ``[0, 1_000_000]``. Anything else is an error naming the entry, never a
crash and never text that reaches the comment unchecked.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from evaluator.core import measures, textcheck
from evaluator.core.results import Results
from evaluator.errors import InputError

SCHEMA = "retrieval-eval-history"
VERSION = 1
MAX_BYTES = 1024 * 1024
MAX_ENTRIES = 200
JUDGED = frozenset(measures.judge_columns())  # the registry's judge columns
_JUDGE = re.compile(r"[\w .()+:/-]{1,80}")
_HOST = re.compile(r"[\w .(),+-]{1,120}")
_COMMIT = re.compile(r"[0-9a-f]{7,40}")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?"
                   r"(?:Z|[+-]\d{2}:\d{2})?)?")
_MAX_VALUE = 1_000_000.0


@dataclass(frozen=True)
class Entry:
    commit: str
    date: str
    n: int
    metrics: Mapping[str, float]
    judge: str | None = None
    host_class: str | None = None


@dataclass(frozen=True)
class History:
    entries: tuple[Entry, ...] = ()

    def last(self, count: int) -> tuple[Entry, ...]:
        return self.entries[-count:] if count > 0 else ()


class HistoryError(InputError):
    """The history file is not one this tool wrote (or was tampered with)."""


def _fail(source: str, where: str, what: str) -> HistoryError:
    return HistoryError(f"{source}: {where}: {what}; delete the history file to start a new "
                        "one")


def _entry(raw: Any, where: str, source: str) -> Entry:
    if not isinstance(raw, Mapping):
        raise _fail(source, where, "expected an object")
    commit, date, n, metrics = (raw.get("commit"), raw.get("date"), raw.get("n"),
                                raw.get("metrics"))
    if not isinstance(commit, str) or not _COMMIT.fullmatch(commit):
        raise _fail(source, f"{where}.commit", "expected 7 to 40 lowercase hex digits")
    if not isinstance(date, str) or not _DATE.fullmatch(date):
        raise _fail(source, f"{where}.date", "expected an ISO-8601 date")
    if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= 1_000_000:
        raise _fail(source, f"{where}.n", "expected a question count")
    if not isinstance(metrics, Mapping):
        raise _fail(source, f"{where}.metrics", "expected an object")
    values: dict[str, float] = {}
    for name, value in metrics.items():
        if name not in measures.tracked():
            raise _fail(source, f"{where}.metrics", f"unknown metric {str(name)[:40]!r}")
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value) or not 0.0 <= value <= _MAX_VALUE):
            raise _fail(source, f"{where}.metrics.{name}", "expected a finite number ≥ 0")
        values[name] = float(value)
    judge = raw.get("judge")
    if judge is not None and (not isinstance(judge, str) or not _JUDGE.fullmatch(judge)):
        raise _fail(source, f"{where}.judge", "expected a judge name")
    host = raw.get("host_class")
    if host is not None and (not isinstance(host, str) or not _HOST.fullmatch(host)):
        raise _fail(source, f"{where}.host_class", "expected a host class")
    return Entry(commit, date, n, values, judge, host)


def parse(text: str, source: str) -> History:
    """Read a history document (see the module docstring); raises :class:`HistoryError`."""
    if len(text.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        raise _fail(source, "file", f"larger than {MAX_BYTES:,} bytes")
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as err:
        raise _fail(source, "file", f"not JSON ({str(err)[:80]})") from None
    bad = textcheck.first_bad_string(doc)
    if bad is not None:
        raise _fail(source, bad, textcheck.MESSAGE)
    if not isinstance(doc, Mapping) or doc.get("schema") != SCHEMA:
        raise _fail(source, "schema", f"expected {SCHEMA!r}")
    if doc.get("version") != VERSION or isinstance(doc.get("version"), bool):
        raise _fail(source, "version", f"this retrieval-eval reads version {VERSION}")
    raw = doc.get("entries")
    if not isinstance(raw, list):
        raise _fail(source, "entries", "expected a list")
    if len(raw) > MAX_ENTRIES:
        raise _fail(source, "entries", f"more than {MAX_ENTRIES} entries")
    return History(tuple(_entry(e, f"entries[{i}]", source) for i, e in enumerate(raw)))


def dumps(history: History) -> str:
    doc = {"schema": SCHEMA, "version": VERSION,
           "entries": [{"commit": e.commit, "date": e.date, "n": e.n,
                        "metrics": dict(e.metrics)}
                       | ({"judge": e.judge} if e.judge is not None else {})
                       | ({"host_class": e.host_class} if e.host_class is not None else {})
                       for e in history.entries]}
    return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def entry_for(results: Results) -> Entry | None:
    """The history entry of one evaluation; ``None`` without a commit (a working tree)."""
    commit = (results.run.commit or "").lower()
    if not _COMMIT.fullmatch(commit):
        return None
    date = results.run.started_at if _DATE.fullmatch(results.run.started_at or "") else ""
    metrics = {m: float(v) for m in measures.tracked()
               if (v := results.overall.metrics.get(m)) is not None and math.isfinite(v)
               and 0.0 <= v <= _MAX_VALUE}
    judge = results.run.judge if _JUDGE.fullmatch(results.run.judge or "") else None
    host = results.run.host_class if _HOST.fullmatch(results.run.host_class or "") else None
    return Entry(commit, date or "1970-01-01", len(results.queries), metrics, judge, host)


def append(history: History, entry: Entry, *, keep: int = MAX_ENTRIES) -> History:
    """``history`` plus ``entry`` (replacing an entry of the same commit), newest ``keep``."""
    kept = [e for e in history.entries if e.commit != entry.commit]
    kept.append(entry)
    return History(tuple(kept[-max(1, min(keep, MAX_ENTRIES)):]))


def trend(history: History, metric: str, count: int, *,
          judge: str | None = None) -> tuple[tuple[str, float], ...]:
    """``(short commit, value)`` for the last ``count`` entries that recorded ``metric``;
    for a metric the judge scores (:data:`JUDGED`), only the entries scored by ``judge``."""
    points = [(e.commit[:7], e.metrics[metric]) for e in history.entries if metric in e.metrics
              and (metric not in JUDGED or e.judge == judge)]
    return tuple(points[-count:]) if count > 0 else ()


def host_classes_note(history: History, points: Sequence[tuple[str, float]],
                      host_class: str | None) -> str | None:
    """A note when the trend's ``points`` join entries from another host class than
    ``host_class`` (this run's), or entries that recorded none; ``None`` otherwise."""
    shown = {commit for commit, _ in points}
    other = sorted({e.commit[:7] for e in history.entries if e.commit[:7] in shown
                    and e.host_class != host_class})
    if not other:
        return None
    return (f"{len(other)} of these commits were measured on another host class than this "
            f"run ({host_class or 'not recorded'}), or recorded none: "
            f"{', '.join(other[:10])}; their values can differ in about the fourth decimal.")


def values(points: Sequence[tuple[str, float]]) -> tuple[float, ...]:
    return tuple(v for _, v in points)
