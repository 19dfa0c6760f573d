"""Wording a commit subject carries that is no part of the question it asks: gitmoji,
emptied references, retry markers.

Found by issue 24's fourth fresh review (structlog, tenacity, yarl);
:func:`evaluator.core.commits.clean_subject` drops:

* **gitmoji and emoji** leading the subject: ``:bug: Raises …``, ``📦 Make …`` (a code is
  ``:name:`` not followed by a backtick, so a reST role such as ``:class:`Foo``` stays);
* **emptied references**: what is left in brackets once the reference itself went,
  ``(issue )``, ``(#)``, ``(see )``, ``(PR )``, and a leading issue label with its verb,
  ``Fix issue #288: …``, ``Issue 901: …``, ``For Issue #2286: …`` (the rest is the question);
* (read, not dropped) a **component tag** leading the subject, ``Dev: refactor …``: the
  chore rules read the subject after it too (:func:`untagged`);
* **retry markers** ending the subject: ``…, take 2``, ``… (take 2)``. Not "again":
  "Allow salt=None again" restores a behaviour, and a review kept it as asked
  (itsdangerous history-08).

Pure: text in, text out.
"""

from __future__ import annotations

import re
import unicodedata

_GITMOJI = re.compile(r"^\s*:[a-z0-9_+-]{1,40}:(?!`)\s*")
_JOINERS = frozenset({"\u200d", "\ufe0e", "\ufe0f", "\u20e3"})
#: Brackets a reference was removed from: empty but for a word that introduced it.
_EMPTIED = re.compile(r"\(\s*(?:(?:issues?|see|pr|pull(?:\s+request)?|gh|refs?|fix(?:es)?|"
                      r"closes?|#)\s*[,;:]?\s*)+\)", re.IGNORECASE)
_RETRY = re.compile(r"(?:\s*[,;:–—-]\s*take\s+\d+|\s*\(\s*take\s+\d+\s*\))[\s.]*$",
                    re.IGNORECASE)


def _pictograph(char: str) -> bool:
    """An emoji or pictograph (a symbol of category ``So``, a regional indicator), or what
    joins or varies them."""
    return char in _JOINERS or unicodedata.category(char) == "So" or \
        0x1F1E6 <= ord(char) <= 0x1F1FF


def drop_emoji(text: str) -> str:
    """``text`` without its leading gitmoji codes and emoji (any number of them)."""
    while True:
        before = text
        text = _GITMOJI.sub("", text)
        stripped = text.lstrip()
        while stripped and _pictograph(stripped[0]):
            stripped = stripped[1:].lstrip()
        text = stripped
        if text == before:
            return text


def drop_emptied(text: str) -> str:
    """``text`` without brackets that held only a reference's introduction."""
    return _EMPTIED.sub("", text)


_ISSUE_PREFIX = re.compile(r"^(?:(?:for|fix(?:e[sd]|ing)?|close[sd]?|resolve[sd]?)\s+)?"
                           r"(?:issues?|pr|pull request|gh)[\s-]*#?\d+\s*[:,–—-]\s*(?=\S)",
                           re.IGNORECASE)


def drop_issue_prefix(text: str) -> str:
    """``text`` without a leading issue label: ``Fix issue #288 : X`` → ``X``."""
    return _ISSUE_PREFIX.sub("", text, count=1)


def drop_retry(text: str) -> str:
    """``text`` without a trailing retry marker (``, take 2``, ``(take 2)``)."""
    return _RETRY.sub("", text)


_TAG = re.compile(r"^[A-Za-z][\w.-]{0,30}:\s+(?=\S)")


def untagged(text: str) -> str:
    """``text`` after a one-word component tag (``Dev: refactor …`` → ``refactor …``)."""
    return _TAG.sub("", text, count=1)
