"""Every string that enters must be valid Unicode: a check for parsed JSON/YAML documents.

UTF-8 text decoded by Python never holds a lone surrogate, but a JSON ``"\\ud800"`` escape
(or YAML's) puts one into a ``str``; nothing notices until the string is written
(``report.md`` could not be encoded and was lost) or posted. Each reader of untrusted
documents calls :func:`first_bad_string` right after parsing and refuses the file naming
the field.
"""

from __future__ import annotations

import re
from typing import Any

MESSAGE = "is not valid Unicode text (it holds a lone surrogate such as the escape \\ud800)"


def valid(text: str) -> bool:
    """``text`` encodes to UTF-8 (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(text: str) -> str:
    """``text`` safe to print in a message or a CI log: a lone surrogate or a control
    character as its escape (``\\ud800``, ``\\n``)."""
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


#: Invisible characters that reorder or hide the text around them: every format character
#: (Unicode category Cf: bidirectional marks, embeddings, overrides and isolates, "Trojan
#: Source", CVE-2021-42574; zero-width spaces, word joiners, invisible operators, the soft
#: hyphen, the byte-order mark, interlinear annotations, tag characters) but the zero-width
#: joiner and non-joiner (which some scripts and emoji need), and the fillers that show as
#: nothing (the combining grapheme joiner, the Hangul fillers). A test holds the list to
#: the Unicode database.
HIDDEN = re.compile(
    "[\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160"
    "\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff"
    "\uffa0\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")


def visible(text: str) -> str:
    """``text`` with each :data:`HIDDEN` character written as its code point (``<U+202E>``),
    so that what a reader sees is what the text holds."""
    return HIDDEN.sub(lambda m: f"<U+{ord(m.group(0)):04X}>", text)


def first_bad_string(data: Any) -> str | None:
    """Where the first string found in ``data`` (parsed JSON or YAML; keys and values) that
    is not valid Unicode sits, as a field path like ``queries[0].id`` (a bad key
    is named ``queries[0].relevance_grades key 'a\\ud800.py'``); ``None`` when all are valid.
    Iterative: a deeply nested document cannot exhaust the stack."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, str):
            if not valid(node):
                return where or "the document"
        elif isinstance(node, dict):
            items = []
            for key, value in node.items():
                name = str(key)
                if not valid(name):
                    return f"{where or 'top level'} key '{shown(name)}'"
                items.append((f"{where}.{shown(name)}" if where else shown(name), value))
            stack += reversed(items)
        elif isinstance(node, list | tuple):
            stack += reversed([(f"{where}[{i}]", item) for i, item in enumerate(node)])
    return None
