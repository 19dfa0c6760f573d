"""Unit tests for evaluator.core.commit_chores.cosmetic_change: a module's code the same but
for an alias swap, help or message text, type-narrowing asserts or renamed names (issue 24
rounds 8 and 15)."""

from __future__ import annotations

import sys

import pytest

from evaluator.core.commit_chores import cosmetic_change, cosmetic_only

CLI = '''import click


@click.option("--proxy", help="Trust the proxy headers.")
def main(proxy):
    spec = find(proxy)
    return spec.loader
'''


@pytest.mark.parametrize(("before", "after"), [
    ("class E(IOError): pass", "class E(OSError): pass"),
    ("try:\n    f()\nexcept socket.error:\n    pass", "try:\n    f()\nexcept OSError:\n    pass"),
    (CLI, CLI.replace("Trust the proxy headers.", "Trust X-Forwarded-For and -Proto.")),
    (CLI, CLI.replace("    spec = find(proxy)\n",
                      "    spec = find(proxy)  # ty: ignore\n    assert spec is not None\n")),
    ("def f(a):\n    return a.x", "def f(b):\n    return b.x"),  # a parameter renamed
])
def test_cosmetic_changes(before, after) -> None:
    assert cosmetic_only(before, after)


@pytest.mark.parametrize(("before", "after"), [
    ("import json\nx = json.loads(a)", "import ujson\nx = ujson.loads(a)"),  # a library swap
    ("def f(a):\n    return list(a)", "def f(a):\n    return tuple(a)"),      # a builtin
    ("def f(a):\n    return a.x", "def f(b):\n    return b.y"),             # an attribute
    ("def f(a):\n    return a", "def f(a):\n    assert a > 0\n    return a"),  # a check
    ("x = f(1)", "x = f(2)"),
    (CLI, CLI.replace('help="Trust the proxy headers."', 'default=True')),
    ("def f(:", "def f(:"),  # does not parse
    # a parameter renamed with the keyword it is passed as: the library gets another option
    ("def fetch(url, timeout):\n    return get(url, timeout=timeout)",
     "def fetch(url, verify):\n    return get(url, verify=verify)"),
    # a global statement's name changed with a parameter: x = b now binds a local
    ("def f(a):\n    global x\n    x = a", "def f(b):\n    global y\n    x = b"),
    # too deep to walk: a sum of as many terms as the recursion limit allows frames
    ("WEIGHTS = " + "+".join(["1"] * sys.getrecursionlimit()),
     "WEIGHTS = " + "+".join(["2"] * sys.getrecursionlimit())),
])
def test_changes_that_are_not_cosmetic(before, after) -> None:
    assert not cosmetic_only(before, after)


def test_a_module_renamed_with_its_imports_following() -> None:
    before = "from pkg import _validators, _legacy_validators\nR = [_validators.ref, " \
             "_legacy_validators.old]\n"
    after = "from pkg import _keywords, _legacy_keywords\nR = [_keywords.ref, " \
            "_legacy_keywords.old]\n"
    renamed = [("pkg/_keywords.py", "def ref(): pass", "def ref(): pass"),
               ("pkg/_legacy_keywords.py", "def old(): pass", "def old(): pass")]
    assert cosmetic_change([("pkg/main.py", before, after), *renamed])
    # the same swap to modules the commit did not touch is a library swap: asked
    assert not cosmetic_change([("pkg/main.py", before, after)])


RAISE = '''def check(n):
    if n < 0:
        raise ValueError(f"Refusing {n}: see the docs for why")
    return {"encoding": "utf-8", "sep": "&"}
'''


@pytest.mark.parametrize(("after", "cosmetic"), [
    # round 15: a message reworded (the paired reviews rejected all four as chores)
    (RAISE.replace("Refusing {n}: see the docs for why",
                   "Refusing {n}; see 'Known limitations' in the docs"), True),
    # the words around a value moved (cli "(for X)" became "@ X"): the same value
    (RAISE.replace("Refusing {n}: see the docs for why", "No: {n} is refused, see why"), True),
    # a message given more to say is a change: a value added to it
    (RAISE.replace("Refusing {n}: see", "Refusing {n} (limit {LIMIT}): see"), False),
    # a literal that is a token, not words, is behaviour
    (RAISE.replace('"utf-8"', '"latin-1"'), False),
    (RAISE.replace('"&"', '";"'), False),
])
def test_round15_a_message_reworded_is_cosmetic(after: str, cosmetic: bool) -> None:
    assert cosmetic_only(RAISE, after) is cosmetic
