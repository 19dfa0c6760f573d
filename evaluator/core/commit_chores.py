"""Module changes that are chores whatever their subject says: dependency pins and
compatibility swaps.

Issue 24's fourth fresh review rejected tenacity history-10 "Support Python 3.14" and yarl
history-16 "Use Cython 3.1 universally"; :func:`evaluator.core.commit_filters.judge` skips:

* a **dependency pin**: every added code line holds a requirement specifier
  (``'Cython >= 3.1.2'``, ``"urllib3<3"``), whatever else the change took out;
* a **compatibility swap**: the change swaps one compatibility check for another
  (``try: … except AttributeError:`` for ``if not hasattr(…):``, a ``sys.version_info``
  branch): every added code line is such a check or a line the change deleted elsewhere
  (moved), and the deleted lines held one too.

Pure: the caller gives each module's added code lines and deleted lines.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

SKIP_PIN_OR_COMPAT = ("changes only a dependency pin or swaps a compatibility check "
                      "(sys.version_info, hasattr) in its modules")

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


def chore_change(changes: Sequence[tuple[Sequence[str], Sequence[str]]]) -> bool:
    """Each module's change (its added code lines, its deleted lines) is a dependency pin
    or a compatibility swap (a module with no added code line only deletes)."""
    touched = [(added, deleted) for added, deleted in changes if added]
    return bool(touched) and all(pin_only(added) or compat_swap(added, deleted)
                                 for added, deleted in touched)
