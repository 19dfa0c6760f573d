"""A history question's grades: which of the modules a commit changed are graded 3 (they
define the change) and which 2 (also changed), by its changed lines (:func:`top_files`) or,
once its diff is read, its surviving added code lines (:func:`regraded`), a legacy/compat
copy counted once (:func:`grade_weights`); typing examples are never graded 3
(:func:`typing_example`); a src layout's modules outside ``src/`` are tooling
(:func:`src_layout`, :func:`in_src`).

Moved from :mod:`evaluator.core.commits` (issue 24 round 8); pure, as it is.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar, Protocol, TypeVar

from evaluator.core.commit_chores import collapse_space


class _Graded(Protocol):
    """A drafted question (:class:`evaluator.core.commits.HistoryCandidate`, a frozen
    dataclass) with its grades by module."""

    __dataclass_fields__: ClassVar[dict[str, Any]]

    @property
    def grades(self) -> Mapping[str, int]: ...


_Found = TypeVar("_Found", bound=_Graded)


_TYPING_EXAMPLE = re.compile(r"(?:^|/)typ(?:e|es|ing)[-_](?:tests?|examples?|checks?)/")


def typing_example(path: str) -> bool:
    """A file of examples a type checker reads (``typing-examples/``, ``typing_tests/``):
    test data, never the answer to a question (never graded 3)."""
    return _TYPING_EXAMPLE.search(path) is not None


def src_layout(modules: Collection[str]) -> bool:
    """Today's ``modules`` are a **src layout**: a package under a top-level ``src/``
    (a module ``src/<pkg>/…``) holds most of them. Its modules outside ``src/`` are the
    project's tooling (a test suite's HTTP server, release tasks, a demo script), never the
    library a question asks about (issue 24 round 9: urllib3 history-20 changed only
    ``dummyserver/``, build history-01/-02 only ``tasks/release.py``, pluggy's
    "Rewired downstream test drivers" only ``downstream/``, all rejected)."""
    packaged = sum(1 for m in modules if in_src(m) and m.count("/") >= 2)
    return packaged > 0 and 2 * sum(1 for m in modules if in_src(m)) > len(modules)


def in_src(path: str) -> bool:
    """``path`` lies under the top-level ``src/`` folder (a src layout's library)."""
    return path.startswith("src/")


def top_files(lines: Mapping[str, int]) -> set[str]:
    """The fewest files, most changed lines first, that hold more than half of the changed
    lines, and every file with as many lines as the last of them: grade 3 (never a typing
    example while another file is there). A tie is graded alike, never broken by path
    (issue 24 round 11: urllib3 history-13's poolmanager.py, as many surviving lines as
    connection.py, was graded 2 for sorting after it; the seventh review graded both 3)."""
    if any(not typing_example(p) for p in lines):
        lines = {p: n for p, n in lines.items() if not typing_example(p)}
    ordered = sorted(lines, key=lambda p: (-lines[p], p))
    total = sum(lines.values())
    out: set[str] = set()
    held = 0
    for path in ordered:
        out.add(path)
        held += lines[path]
        if held * 2 > total:
            break
    return out | {p for p in ordered if lines[p] == lines[path]}


def regraded(found: _Found, surviving: Mapping[str, int],
             ungraded: Collection[str] = ()) -> _Found:
    """``found`` graded by its surviving added code lines (:mod:`.commit_filters`, counted
    by :func:`grade_weights`): 3 for the fewest modules holding more than half of them and
    any module tied with the last (:func:`top_files`), 2 for the rest; unchanged when none
    survive. The ``ungraded`` modules (a version string only) are left out."""
    if ungraded:
        found = replace(found, grades={m: g for m, g in found.grades.items()
                                       if m not in ungraded})
    kept = {m: n for m, n in surviving.items() if n and m in found.grades}
    if not kept:
        return found
    best = top_files(kept)
    grades = {path: 3 if path in best else 2 for path in found.grades}
    return replace(found, grades=grades)


#: A module that holds a copy of code kept for old versions: a path word ``compat``,
#: ``legacy`` or ``backport(s)`` (``_compat.py``, ``_legacy_keywords.py``, ``backports/``).
_COPY_MODULE = re.compile(r"(?:^|[/_])(?:compat|legacy|backports?)(?:[/_.]|$)", re.IGNORECASE)


def copy_module(path: str) -> bool:
    """A legacy/compat module (see :data:`_COPY_MODULE`): where a change copies code."""
    return _COPY_MODULE.search(path) is not None


def grade_weights(surviving: Mapping[str, int], distinct: Mapping[str, Sequence[str]],
                  today: Mapping[str, str | None]) -> dict[str, int]:
    """The surviving added code lines a module counts for its grade: a copy counts once, in
    the module that is not the copy. A legacy/compat module (:func:`copy_module`) whose
    ``distinct`` lines (not generic: see :func:`.commit_filters.generic`) include lines
    found in ``today``'s text of another such module that is no copy counts only its
    distinct lines that are not copies (a change that copies a function into
    ``_legacy_keywords.py`` is answered where the function is). Every other module counts
    its ``surviving`` lines; unchanged when nothing would be left."""
    out = dict(surviving)
    for module, lines in distinct.items():
        if not copy_module(module) or not surviving.get(module):
            continue
        elsewhere = {collapse_space(line) for other, text in today.items()
                     if other != module and other in surviving and not copy_module(other)
                     for line in (text or "").splitlines()}
        own = [line for line in lines if collapse_space(line) not in elsewhere]
        if len(own) < len(lines):
            out[module] = len(own)
    return out if any(out.values()) else dict(surviving)
