"""What a fact quotes as code must be in the stretch as code, in the fact's order (the
faithfulness judge, :mod:`evaluator.core.judge`, judge 5): every call with arguments the fact
quotes, verbatim as code tokens (:func:`calls_met`), and every two names of the fact in a
row named in that order (:func:`names_in_order`) — which of two names does what."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise

from evaluator.core.judgeread import ContextLine, code_tokens


def names_in_order(fact: str, names: Sequence[str], lines: Sequence[ContextLine]) -> bool:
    """Which of two names does what: for every two names of the fact in a row, ``a`` then
    ``b``, the stretch names ``a`` no later than its last ``b`` (a name of a ``def`` or
    ``class`` enclosing the stretch comes before all of it). So "SignatureExpired raises
    TimestampSigner" is not read from ``class TimestampSigner`` … ``raise
    SignatureExpired``; and where a line holds both, one such line names ``a`` first
    (``INSERT INTO refunds (charge_id, refund_id`` is not "(refund_id, charge_id").
    A name found nowhere in the lines (met through its class) does not constrain, nor does
    a name of a condition ("returns Markup('') *when* s is None", which code writes
    ``if s is None: return Markup('')``): names are ordered within one clause of the fact,
    a condition word (when, if, unless, …) starting a new one."""
    if len(names) < 2:
        return True
    clauses = _clauses(fact, names)
    spans = [_positions(name, lines) for name in names]
    return all(_before(a, b) for (a, ca), (b, cb) in pairwise(zip(spans, clauses, strict=True))
               if ca == cb)


_CONDITION = re.compile(r"\b(?:when|whenever|if|unless|until|while|where|once|after|before)\b",
                        re.IGNORECASE)


def _clauses(fact: str, names: Sequence[str]) -> list[int]:
    """Per name, how many condition words of the fact come before its first mention."""
    out = []
    for name in names:
        at = fact.find(name)
        out.append(len(_CONDITION.findall(fact[:at])) if at >= 0 else -1)
    return out


def _before(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> bool:
    if not a or not b:
        return True
    shared = {i for i, _ in a} & {i for i, _ in b} - {-1}
    if shared:
        return any(min(p for j, p in a if j == i) <= max(p for j, p in b if j == i)
                   for i in shared)
    return min(a) <= max(b)


_STRING = re.compile(r"'\w+'|\"\w+\"")


def _positions(name: str, lines: Sequence[ContextLine]) -> list[tuple[int, int]]:
    """Where a stretch names ``name`` as code or prose (not as a quoted word: 'None'):
    ``(line, column)``, and ``(-1, -1)`` for an enclosing ``def``/``class``."""
    pattern = re.compile(rf"(?<!\w)(?<!\w\.){re.escape(name)}(?!\w)")
    last = re.compile(rf"(?<!\w){re.escape(name.rpartition('.')[2])}(?!\w)")
    texts = [_STRING.sub(lambda m: " " * len(m.group(0)), line.text) for line in lines]
    out = [(-1, -1)] if any(name in line.scope_names for line in lines) else []
    for i, text in enumerate(texts):
        out += [(i, m.start()) for m in pattern.finditer(text)]
    if not out and "." in name:
        out = [(i, m.start()) for i, text in enumerate(texts) for m in last.finditer(text)]
    return out


def calls_met(calls: Sequence[str], flat: str) -> bool:
    """Whether a stretch holds every call with arguments of the fact verbatim, as code
    tokens: the arguments in the fact's order (``decode_token(access_token)`` is not
    ``access_token(decode_token)``). A module prefix may be left out where the stretch
    imports the function from it (``html.unescape(x)``: ``from html import unescape`` and
    ``unescape(x)``)."""
    if not calls:
        return True
    held = code_tokens(flat)
    return all(f" {call} " in held or _imported_call(call, held) for call in calls)


def _imported_call(call: str, held: str) -> bool:
    head, _, rest = call.partition(" ( ")
    module, dot, function = head.rpartition(" . ")
    if not dot or not module.replace(" . ", "").isidentifier() or not module[:1].islower():
        return False
    return (f" from {module} import {function} " in held
            and f" {function} ( {rest} " in held)
