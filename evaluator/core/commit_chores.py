"""Module changes that are chores whatever their subject says: dependency pins,
compatibility swaps, ``__slots__`` declarations and sentinel swaps.

Issue 24's fourth fresh review rejected tenacity history-10 "Support Python 3.14" and yarl
history-16 "Use Cython 3.1 universally"; :func:`evaluator.core.commit_filters.judge` skips:

* a **dependency pin**: every added code line holds a requirement specifier
  (``'Cython >= 3.1.2'``, ``"urllib3<3"``), whatever else the change took out;
* a **compatibility swap**: the change swaps one compatibility check for another
  (``try: … except AttributeError:`` for ``if not hasattr(…):``, a ``sys.version_info``
  branch): every added code line is such a check or a line the change deleted elsewhere
  (moved), and the deleted lines held one too.

Issue 24's fifth fresh review rejected anyio history-11 "Added `__slots__` to several classes"
and history-01 "Use the PEP 661 sentinel type"; also skipped:

* a **``__slots__`` declaration**: every added code line is part of a ``__slots__ = …``
  statement, a deleted line moved (the class attribute ``_n: int = 0`` into ``__init__`` as
  ``self._n = 0``) or a bare ``def __init__(self):`` to hold them, and one declares slots;
* a **sentinel swap**: a name the deleted lines bound to a bare ``object()`` is bound to
  another sentinel (``undefined = sentinel("undefined")``), and every other added code line
  is an import or a compatibility check.

Pure: the caller gives each module's added code lines and deleted lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SKIP_PIN_OR_COMPAT = ("changes only a dependency pin or swaps a compatibility check "
                      "(sys.version_info, hasattr) in its modules")
SKIP_LAYOUT = "a chore: only declares __slots__ or swaps a sentinel object"

_PIN = re.compile(r"""["'][A-Za-z][\w.\-\[\],]*\s*(?:===|[<>=!~]=|[<>])\s*\d""")
_COMPAT = re.compile(r"\bhasattr\(|\bsys\.version_info\b|\bsys\.implementation\b|"
                     r"\bplatform\.python_implementation\(|^\s*try\s*:|"
                     r"^\s*except\s*\(?\s*(?:AttributeError|ImportError|ModuleNotFoundError|"
                     r"NameError)\b|^\s*else\s*:")
_CHECK = re.compile(r"\bhasattr\(|\bsys\.version_info\b|\bsys\.implementation\b|"
                    r"\bplatform\.python_implementation\(|"
                    r"^\s*except\s*\(?\s*(?:AttributeError|ImportError|ModuleNotFoundError|"
                    r"NameError)\b")


def _norm(line: str) -> str:
    return " ".join(line.split())


def pin_only(added: Sequence[str]) -> bool:
    """Every added code line holds a requirement specifier."""
    return bool(added) and all(_PIN.search(line) for line in added)


def compat_swap(added: Sequence[str], deleted: Sequence[str]) -> bool:
    """The added code lines are compatibility checks or moved deleted lines, one adds a
    check, and the deleted lines held one."""
    moved = {_norm(line) for line in deleted}
    return bool(added) and any(_CHECK.search(line) for line in added) and \
        any(_CHECK.search(line) for line in deleted) and \
        all(_COMPAT.search(line) or _norm(line) in moved for line in added)


_SLOTS = re.compile(r"^\s*__slots__\s*[:=]")
_OBJECT = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*object\(\s*\)\s*$")
_REBIND = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]+)?=\s*[\w.]+\(")
_IMPORT = re.compile(r"^\s*(?:import|from)\s")


def _depth(line: str) -> int:
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


_ANNOTATED = re.compile(r"^(\s*[\w.]+)\s*:[^=]+=")
#: An ``__init__`` taking no argument: where class attributes move to beside ``__slots__``.
_BARE_INIT = re.compile(r"^\s*def __init__\(\s*self\s*\)\s*(?:->\s*None\s*)?:")


def _unself(line: str) -> str:
    """A line as a moved attribute compares: without ``self.`` and its annotation."""
    return _norm(_ANNOTATED.sub(r"\1 =", re.sub(r"\bself\.", "", line)))


def slots_only(added: Sequence[str], deleted: Sequence[str]) -> bool:
    """Every added code line is part of a ``__slots__`` declaration (one at least) or a
    deleted line moved (``self.`` aside)."""
    moved = {_unself(line) for line in deleted}
    slots = False
    depth = 0
    for line in added:
        if depth > 0:  # a continuation line of the declaration
            depth += _depth(line)
        elif _SLOTS.match(line):
            slots = True
            depth = _depth(line)
        elif _unself(line) not in moved and not _BARE_INIT.match(line):
            return False
    return slots


def sentinel_swap(added: Sequence[str], deleted: Sequence[str]) -> bool:
    """A name the deleted lines bound to ``object()`` is bound to another call, and every
    other added code line is an import or a compatibility check."""
    objects = {m.group(1) for line in deleted if (m := _OBJECT.match(line))}
    swapped = False
    for line in added:
        rebind = _REBIND.match(line)
        if rebind is not None and rebind.group(1) in objects:
            swapped = True
        elif not (_IMPORT.match(line) or _COMPAT.search(line)):
            return False
    return swapped


def layout_change(changes: Sequence[tuple[Sequence[str], Sequence[str]]]) -> bool:
    """Each module's change declares ``__slots__`` or swaps a sentinel object, and nothing
    else (a module with no added code line only deletes)."""
    touched = [(added, deleted) for added, deleted in changes if added]
    return bool(touched) and all(slots_only(added, deleted) or sentinel_swap(added, deleted)
                                 for added, deleted in touched)


def chore_change(changes: Sequence[tuple[Sequence[str], Sequence[str]]]) -> bool:
    """Each module's change (its added code lines, its deleted lines) is a dependency pin
    or a compatibility swap (a module with no added code line only deletes)."""
    touched = [(added, deleted) for added, deleted in changes if added]
    return bool(touched) and all(pin_only(added) or compat_swap(added, deleted)
                                 for added, deleted in touched)
