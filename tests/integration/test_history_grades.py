"""``init --from-history``, round 8 (issue 24's sixth review, the ``grades`` tag): grade 3
goes where the question's answer is, on commits of a real git repository built here,
modelled on a question that review edited (its repository and id in the comment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.core.commit_grades import copy_module, grade_weights
from tests.history_repos import commit, draft, package_repo
from tests.history_repos import edit as _edit

UTILS = '''"""Helpers of the validators."""


def find_evaluated_keys(validator, instance, schema):
    """Keys of ``instance`` that ``schema`` evaluated."""
    evaluated_keys = []
    for keyword in ("properties", "additionalProperties"):
        if keyword in schema:
            evaluated_keys.extend(validator.descend_keys(instance, schema[keyword]))
    return evaluated_keys
'''
LEGACY = '''"""Keywords of the older drafts."""


def items_draft3(validator, items, instance, schema):
    """Draft 3's items."""
    return validator.descend(instance, items)
'''
COMPAT = '''"""What older Pythons lack."""
import sys
'''
SERVER = '''"""The server."""


def serve(config):
    """Serve with ``config``."""
    return config
'''


@pytest.fixture
def grades_repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = package_repo(tmp_path, {"pkg/__init__.py": "", "pkg/_utils.py": UTILS,
                                   "pkg/_legacy_keywords.py": LEGACY,
                                   "pkg/_compat.py": COMPAT, "pkg/server.py": SERVER})
    shas: dict[str, str] = {}
    # jsonschema history-18: the fix is in _utils.py; _legacy_keywords.py gets the older
    # draft's copy of the whole function (more lines, most of them copies of _utils.py's)
    _edit(repo, "pkg/_utils.py", "    return evaluated_keys\n", '''\
    dynamic_target = schema.get("$dynamicRef")
    if dynamic_target is not None:
        resolved_target = validator.resolver.lookup(dynamic_target)
        nested_schema = resolved_target.contents
        evaluated_keys.extend(find_evaluated_keys(validator, instance, nested_schema))
        evaluated_keys.extend(validator.descend_dynamic(instance, nested_schema))
    return evaluated_keys
''')
    _edit(repo, "pkg/_legacy_keywords.py", "    return validator.descend(instance, items)\n",
          '''    return validator.descend(instance, items)


def find_evaluated_keys_draft2019(validator, instance, schema):
    """Draft 2019-09's evaluated keys."""
    evaluated_keys = []
    for keyword in ("properties", "additionalProperties"):
        if keyword in schema:
            evaluated_keys.extend(validator.descend_keys(instance, schema[keyword]))
    recursive_target = schema.get("$recursiveRef")
    if recursive_target is not None:
        resolved_target = validator.resolver.lookup_recursive(recursive_target)
        older_schema = resolved_target.contents
        evaluated_keys.extend(find_evaluated_keys_draft2019(validator, instance, older_schema))
    return evaluated_keys
''')
    shas["copy"] = commit(repo, "Consider properties evaluated when they sit behind dynamic refs")
    # uvicorn history-03, kept part (attrs history-07): a compat module's own new code is
    # no copy, so it is graded by its lines as any module
    _edit(repo, "pkg/_compat.py", "import sys\n", '''import sys

if sys.version_info >= (3, 12):
    run_loop = asyncio_runner.run
else:
    def run_loop(main_coroutine, loop_factory=None):
        runner_loop = loop_factory() if loop_factory else new_event_loop()
        return runner_loop.run_until_complete(main_coroutine)
''')
    _edit(repo, "pkg/server.py", "    return config\n",
          "    return run_loop(config.serve_forever(), config.loop_factory)\n")
    shas["backport"] = commit(repo, "Let the server run on an event loop of its caller's choice")
    return repo, shas


def _grades(grades_repo, cli, tmp_path) -> dict[str, dict[str, int]]:
    repo, shas = grades_repo
    doc, _ = draft(cli, repo, tmp_path, "--count", "10")
    by_sha = {q["source"]["commit"]: q for q in doc["queries"]}
    return {name: {m: g for m, g in by_sha[sha]["relevance_grades"].items() if g}
            for name, sha in shas.items()}


def test_a_legacy_copy_counts_once_in_the_module_it_copies(grades_repo, cli, tmp_path):
    grades = _grades(grades_repo, cli, tmp_path)
    assert grades["copy"] == {"pkg/_utils.py": 3, "pkg/_legacy_keywords.py": 2}


def test_a_compat_module_of_new_code_is_graded_by_its_lines(grades_repo, cli, tmp_path):
    grades = _grades(grades_repo, cli, tmp_path)
    assert grades["backport"] == {"pkg/_compat.py": 3, "pkg/server.py": 2}


def test_grade_weights_count_only_a_copy_modules_own_lines() -> None:
    assert copy_module("pkg/_legacy_keywords.py") and copy_module("src/attr/_compat.py")
    assert copy_module("pkg/backports/runner.py") and not copy_module("pkg/compatible.py")
    surviving = {"pkg/_legacy.py": 5, "pkg/core.py": 2}
    distinct = {"pkg/_legacy.py": ["x = copied(a, b)", "y = own_code(a, b)"],
                "pkg/core.py": ["x = copied(a, b)"]}
    today = {"pkg/_legacy.py": "x = copied(a, b)\ny = own_code(a, b)\n",
             "pkg/core.py": "def f():\n    x  =  copied(a, b)\n"}
    assert grade_weights(surviving, distinct, today) == {"pkg/_legacy.py": 1, "pkg/core.py": 2}
    # no copy: unchanged; a copy of nothing a graded module holds: unchanged
    assert grade_weights(surviving, distinct, {**today, "pkg/core.py": "pass\n"}) == surviving
    assert grade_weights({"pkg/_legacy.py": 5}, distinct, today) == {"pkg/_legacy.py": 5}


ALPHA = '''"""Buffers."""


def fill_buffer(chunks):
    """Join the chunks."""
    return b"".join(chunks)
'''
BETA = '''"""Transfers."""


def send_chunk(connection, payload):
    """Send one payload."""
    return connection.write(payload)
'''


def test_facts_sharing_the_questions_words_come_first_across_grade_3_modules(
        tmp_path, cli):
    # werkzeug history-01, httpx history-10: two modules graded 3, the answer in the
    # second; its lines sharing the question's words come before the first's other lines
    repo = package_repo(tmp_path, {"pkg/__init__.py": "", "pkg/alpha.py": ALPHA,
                                   "pkg/beta.py": BETA})
    _edit(repo, "pkg/alpha.py", '    return b"".join(chunks)\n', '''\
    joined_size = sum(len(piece) for piece in chunks)
    header_bytes = joined_size.to_bytes(8, byteorder="big")
    padding_bytes = bytes(calculate_padding(joined_size))
    return header_bytes + b"".join(chunks) + padding_bytes
''')
    _edit(repo, "pkg/beta.py", "    return connection.write(payload)\n", '''\
    while attempts_left := connection.timeout_retries(payload):
        connection.reopen_after_timeout(attempts_left)
        connection.log_retry(payload, attempts_left)
    connection.reset_timeout_clock(payload)
    return connection.write(payload)
''')
    sha = commit(repo, "Reopen the connection after a timeout and retry")
    doc, _ = draft(cli, repo, tmp_path, "--count", "5")
    query = next(q for q in doc["queries"] if q["source"]["commit"] == sha)
    assert {m: g for m, g in query["relevance_grades"].items() if g} == \
        {"pkg/alpha.py": 3, "pkg/beta.py": 3}
    assert [f["fact"] for f in query["gold_facts"]][:2] == [
        "connection.reopen_after_timeout(attempts_left)",
        "while attempts_left := connection.timeout_retries(payload):"]
