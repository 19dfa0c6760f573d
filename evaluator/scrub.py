"""The forms a token takes when an API echoes it: every one is scrubbed from messages.

:func:`secret_forms` gives the patterns :class:`evaluator.http_transport.GitHubTransport`
replaces with ``***`` in every message built from an answer (a URL, GitHub's ``message``,
an exception's text), so the token reaches no output in any encoding.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote


def _base64_cores(data: bytes) -> set[str]:
    """The base64 text (standard and URL-safe) that encodes ``data`` wherever it sits in a
    longer value (``basic base64(user:TOKEN)`` with any user): for each of the three byte
    alignments, only the characters that depend on ``data`` alone."""
    cores = set()
    for shift in range(3):
        end = (8 * (shift + len(data))) // 6
        start = -(-8 * shift // 6)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            cores.add(encode(b"\0" * shift + data).decode()[start:end])
    return cores


def secret_forms(token: str) -> tuple[re.Pattern[str], ...]:
    """The token in every encoding an API could reasonably echo: as is in any letter case,
    base64 (standard and URL-safe, whole or at any offset inside a longer base64 value such
    as ``basic base64(x-access-token:TOKEN)``), hex and percent-encoding."""
    raw = token.encode()
    forms = {token, raw.hex(), quote(token, safe="")}
    for data in (raw, b"x-access-token:" + raw, b"Bearer " + raw, b":" + raw):
        for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data)):
            text = encoded.decode()
            forms.update({text, text.rstrip("=")})
    forms.update(_base64_cores(raw))
    return tuple(re.compile(re.escape(f), re.IGNORECASE) for f in sorted(forms, key=len,
                                                                          reverse=True) if f)
