"""``init --from-history``, round 3 (issue 24's held-out review of attrs, werkzeug and
itsdangerous): each rule on a commit of a real git repository built here, modelled on a
question that review rejected or edited (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_filters import (
    SKIP_DOCS_SUBJECT,
    SKIP_IMPORTS_ONLY,
    SKIP_MOSTLY_SUPERSEDED,
    SKIP_NO_CODE,
)
from evaluator.core.commit_topics import SKIP_REPEAT, SKIP_TWO_TOPICS
from evaluator.core.commits import SKIP_GIVEAWAY, SKIP_PYTHON_DROP, SKIP_TYPING_EXAMPLES
from tests.history_repos import (
    commit,
    commit_edits,
    draft,
    history_line,
    package_repo,
    skipped,
    write,
)

FUNCS = '''"""Turning records into plain data."""


def asdict(record, recurse=True):
    """Return the record's fields as a dict."""
    return {name: getattr(record, name) for name in record.fields}


def redirect(location, code=302):
    """Create a redirect response to the location."""
    return {"location": location, "status": code}
'''
SECURITY = '''"""Path safety."""


def safe_join(directory, *parts):
    """Join parts below a directory, or return None."""
    return "/".join([directory, *parts])
'''
SIGNING = '''"""Signers."""

import typing as t

from pkg.keys import derive_key


class Signer:
    def sign(self, value):
        return derive_key(self.secret) + value

    def loads(self, data):
        return self.unsign(data)
'''
HASHING = '''"""Hashing."""


def make_hasher(name):
    """Make a hasher for the given algorithm
    name, as hashlib spells it."""
    return lookup_algorithm(name)
'''


@pytest.fixture
def round3_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/funcs.py": FUNCS,
        "pkg/security.py": SECURITY,
        "pkg/signing.py": SIGNING,
        "pkg/keys.py": "def derive_key(secret):\n    return secret\n",
        "pkg/hashing.py": HASHING,
        "pkg/etag.py": "def generate_etag(data):\n    return data.hex()\n",
        "pkg/validators.py": "def optional(validator):\n    return validator\n",
        "pkg/validators.pyi": "def optional(validator: object) -> object: ...\n",
        "typing-examples/baseline.py": "import pkg\n",
    })
    shas: dict[str, str] = {}
    # attrs history-03: a name under 3 characters, in backticks
    shas["ne"] = commit_edits(repo, "Add `ne` validator",
            ("pkg/funcs.py", "\n\ndef redirect",
             '''

def ne(value, other_value):
    """Fail unless the two values differ."""
    return compare_values(value, other_value, operator="!=")


def redirect'''))
    # werkzeug history-19: cleaning capitalises the identifier that starts the subject
    shas["safe_join"] = commit_edits(repo, "safe_join prevents device names in paths",
            ("pkg/security.py", '    return "/".join',
             '    if any(part_is_device_name(part) for part in parts):\n        return None\n'
             '    return "/".join'))
    # attrs history-14: a plain-word name its module's prose never uses as a word
    shas["asdict"] = commit_edits(repo, "Improve performance of asdict in the common case",
            ("pkg/funcs.py",
             "    return {name: getattr(record, name) for name in record.fields}",
             "    if not recurse:\n        return dict(zip(record.fields, "
             "record.values, strict=True))\n    return {name: getattr(record, name) for name "
             "in record.fields}"))
    # ... while a plain word that is a name the prose also uses is no give-away
    shas["redirect"] = commit_edits(repo, "Redirect defaults to see other",
            ("pkg/funcs.py", "def redirect(location, code=302):",
             "def redirect(location, code=303):"))
    # itsdangerous history-02/-09: overloads, casts, __all__ and "import x as x"
    shas["overloads"] = commit_edits(repo, "Give the signer generic signatures for each input kind",
            ("pkg/signing.py", "import typing as t\n\nfrom pkg.keys import derive_key\n",
             '''import typing as t

from pkg.keys import derive_key as derive_key

__all__ = ["Signer", "derive_key"]
_T = t.TypeVar("_T")
'''),
            ("pkg/signing.py", "    def loads(self, data):\n        return self.unsign(data)",
             '''    @t.overload
    def loads(self, data: str) -> str: ...

    @t.overload
    def loads(self, data: bytes) -> bytes: ...

    def loads(self, data):
        return t.cast("_T", self.unsign(data))'''))
    # werkzeug history-11: an import restyle and comments only
    shas["restyle"] = commit_edits(repo, "Restyle the signer module's import of its key helpers",
            ("pkg/signing.py", "from pkg.keys import derive_key as derive_key\n",
             "# Keys come from the key module.\nfrom pkg.keys import (\n    derive_key,\n)\n"))
    # attrs history-02: a Python-version drop with a zip(strict=...)-style modernisation
    shas["drop"] = commit_edits(repo, "Drop Python 3.9",
            ("pkg/etag.py", "    return data.hex()",
             "    pairs = list(zip(data, data[1:], strict=False))\n    return data.hex()"))
    # attrs history-11/-13: a stub (.pyi, outside the universe) and a typing example only
    write(repo, "pkg/validators.pyi", "def optional(validator: object | tuple[object, ...]) "
                                      "-> object: ...\n")
    write(repo, "typing-examples/baseline.py", "import pkg\n\nchecked = pkg.validators."
                                               "optional((int, str))\n")
    shas["stub"] = commit(repo, "Fix optional validator to accept tuples of validators")
    # werkzeug history-01/-15, attrs history-03: a reflowed docstring and fragments
    shas["reflow"] = commit_edits(repo, "Let the hasher check a requested digest size",
            ("pkg/hashing.py", '''def make_hasher(name):
    """Make a hasher for the given algorithm
    name, as hashlib spells it."""
    return lookup_algorithm(name)''',
             '''def make_hasher(name, digest_size=None):
    """Make a hasher for the given algorithm name, as hashlib
    spells it.

    The digest size is checked against the algorithm's own size.
    """
    if (digest_size is not None
            ) or digest_size is None:
        check_digest_size(name, digest_size)
    return lookup_algorithm(name)'''))
    # itsdangerous history-16: later removed except for generic lines (a guard, an import)
    shas["superseded"] = commit_edits(repo, "Add a SHA-512 fallback signer by default",
            ("pkg/keys.py", "def derive_key(secret):\n",
             '''import hashlib


def default_fallbacks(fallback_signers=None):
    if fallback_signers is None:
        fallback_signers = [make_sha512_signer(hashlib.sha512)]
    fallback_signers.extend(configured_legacy_signers())
    return fallback_signers


def derive_key(secret):
'''))
    commit_edits(repo, "Stop adding fallback signers unless asked for",
            ("pkg/keys.py", '''        fallback_signers = [make_sha512_signer(hashlib.sha512)]
    fallback_signers.extend(configured_legacy_signers())
''',
             "        fallback_signers = []\n"))
    # itsdangerous history-02/-03: the same question twice
    shas["repeat"] = commit_edits(repo, "Improve weak entity tag generation",
            ("pkg/etag.py", "    return data.hex()",
             "    weak_marker = weak_prefix_for(data)\n    return weak_marker + data.hex()"))
    shas["repeated"] = commit_edits(repo, "Improve weak entity tag generation further",
            ("pkg/etag.py", "    return weak_marker + data.hex()",
             "    strong_digest = digest_of_payload(data)\n    return weak_marker + strong_digest"))
    # itsdangerous history-18, werkzeug history-05: two changes over unrelated modules
    shas["mixed"] = commit_edits(repo, "Chain the validators and switch the entity tag to base64",
            ("pkg/etag.py", "    return weak_marker + strong_digest",
             "    return weak_marker + encode_base64_text(strong_digest)"),
            ("pkg/validators.py", "    return validator",
             "    chained_validators = chain_validators_for(validator)\n"
             "    return chained_validators"))
    # itsdangerous history-10: a documentation subject over a small code change
    shas["docs"] = commit_edits(repo, "Create a new doc for the hashing concepts",
            ("pkg/hashing.py", "    return lookup_algorithm(name)",
             "    hasher_algorithm = lookup_algorithm(name)\n    return hasher_algorithm"))
    # itsdangerous history-09/-15: a re-export, imports only
    shas["reexport"] = commit_edits(repo, "Add compat import for the key derivation helper",
            ("pkg/funcs.py", '"""Turning records into plain data."""\n',
             '"""Turning records into plain data."""\n\nfrom pkg.keys import derive_key\n'))
    return repo, shas


def test_the_held_out_reviews_rejects_are_skipped_with_a_counted_reason(round3_repo, cli,
                                                                        tmp_path):
    repo, shas = round3_repo
    doc, stderr = draft(cli, repo, tmp_path, "--count", "20")
    asked = {q["source"]["commit"]: q for q in doc["queries"]}
    for name in ("ne", "safe_join", "asdict", "overloads", "restyle", "drop", "stub",
                 "superseded", "repeat", "mixed", "docs", "reexport"):
        assert shas[name] not in asked, name
    line = history_line(stderr)
    assert skipped(line, SKIP_GIVEAWAY) == 3
    assert skipped(line, SKIP_NO_CODE) == 2
    for reason in (SKIP_PYTHON_DROP, SKIP_TYPING_EXAMPLES, SKIP_MOSTLY_SUPERSEDED,
                   SKIP_REPEAT, SKIP_TWO_TOPICS, SKIP_DOCS_SUBJECT, SKIP_IMPORTS_ONLY):
        assert skipped(line, reason) == 1, reason
    # the control cases: a plain domain word the prose uses, and the newer of two repeats
    assert shas["redirect"] in asked and shas["repeated"] in asked


def test_reflowed_lines_and_fragments_are_not_facts(round3_repo, cli, tmp_path):
    repo, shas = round3_repo
    doc, _stderr = draft(cli, repo, tmp_path, "--count", "20")
    (query,) = [q for q in doc["queries"] if q["source"]["commit"] == shas["reflow"]]
    facts = [f["fact"] for f in query["gold_facts"]]
    # the sentence the commit wrote is prose: beside two lines of code it is no fact
    # (round 17), and nothing takes its place
    assert facts == ["def make_hasher(name, digest_size=None):",
                     "check_digest_size(name, digest_size)"]
    assert not any("hashlib" in f or "spells it" in f for f in facts)  # reflowed
    assert not any(f.startswith(")") for f in facts)                    # a fragment
