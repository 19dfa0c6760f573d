"""Unit tests for evaluator.core.commit_filters: the rules issue 24's cold review of the
history route's questions points to (each case is the shape of a reviewed question)."""

from __future__ import annotations

import pytest

from evaluator.core.commit_filters import (
    SKIP_NO_CODE,
    SKIP_REMOVAL,
    SKIP_SUPERSEDED,
    SKIP_TESTS_SUBJECT,
    ModuleDiff,
    behaviour,
    docstring_lines,
    is_version_marker,
    judge,
    patch_sides,
    subject_reason,
    tokens,
)

BEFORE = '''"""Sessions."""
from typing import Any


class Session(MutableMapping):  # type: ignore[type-arg]
    """Keeps settings."""

    def send(self, request, timeout=None):
        # send it
        out = []  # type: list[str]
        return request
'''


@pytest.mark.parametrize("after", [
    # docstring wording (click history-13, flask history-10)
    BEFORE.replace("Keeps settings.", "Keeps the settings across requests."),
    # comments only (flask history-07: one "# type: ignore")
    BEFORE.replace("# send it", "# send the request"),
    # annotations, a typing import, a type comment turned annotation (click history-16,
    # requests history-02)
    BEFORE.replace("from typing import Any", "from typing import Any, Optional")
          .replace("request, timeout=None):", "request: Any, timeout: Optional[float] = None)"
                   " -> Any:")
          .replace("out = []  # type: list[str]", "out: list[str] = []"),
    # generic bases (flask history-20), Union spelled as | (flask history-13)
    BEFORE.replace("Session(MutableMapping):  # type: ignore[type-arg]",
                   "Session(MutableMapping[str, Any]):"),
    BEFORE.replace("from typing import Any",
                   "from typing import Any\nif TYPE_CHECKING:\n    import chardet"),
])
def test_behaviour_ignores_docstrings_comments_and_type_hints(after) -> None:
    assert behaviour(BEFORE) == behaviour(after)


@pytest.mark.parametrize("after", [
    BEFORE.replace("return request", "return request.copy()"),
    BEFORE.replace("timeout=None", "timeout=30"),
    BEFORE.replace("out = []", "out = [request]"),
])
def test_behaviour_sees_code_changes(after) -> None:
    assert behaviour(BEFORE) != behaviour(after)


def test_unions_and_optionals_read_as_the_same_type() -> None:
    assert behaviour("X = t.Union[int, str]\nY = Optional[int]\n") == \
        behaviour("X = int | str\nY = int | None\n")
    assert behaviour("def f(:\n") is None


def test_patch_sides_number_the_added_lines() -> None:
    patch = (b"diff --git a/pkg/a.py b/pkg/b.py\nindex 1..2 100644\n--- a/pkg/a.py\n"
             b"+++ b/pkg/b.py\n@@ -3,2 +3 @@ def f():\n-    x = 1\n-    y = 2\n+    z = 3\n"
             b"@@ -10,0 +10,2 @@\n+    w = 4\n+    \xff = 5\n"
             b"diff --git a/gone.py b/gone.py\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n"
             b"-GONE = 1\n")
    sides = patch_sides(patch)
    assert sides["pkg/b.py"].added == ((3, "    z = 3"), (10, "    w = 4"),
                                       (11, "    \ufffd = 5"))
    assert sides["pkg/b.py"].deleted == ("    x = 1", "    y = 2")
    assert sides["gone.py"].deleted == ("GONE = 1",) and sides["gone.py"].added == ()


def test_tokens_split_identifiers_and_keep_literals() -> None:
    assert tokens('urllib3_version_list = v.split(".")[:3]') == \
        ["urllib", "3", "version", "list", "v", "split", '"."', "3"]
    assert tokens("mode='w'") == ["mode", '"w"']


def test_docstring_lines() -> None:
    import ast
    assert docstring_lines(ast.parse(BEFORE)) == {1, 6}


def _diff(before: str | None, after: str, today: str, added: list[tuple[int, str]],
          deleted: tuple[str, ...] = ()) -> ModuleDiff:
    return ModuleDiff(module="pkg/m.py", added=tuple(added), deleted=deleted,
                      before=before, after=after, today=today)


def test_a_value_changed_since_is_superseded_a_rename_is_not() -> None:
    before = "def check(v):\n    assert v < (6, 0)\n"
    after = "def check(v):\n    assert v < (7, 0)\n"
    today = "def check(version):\n    assert version < (8, 0)\n"
    change = _diff(before, after, today, [(2, "    assert v < (7, 0)")],
                   ("    assert v < (6, 0)",))
    assert judge([change]).reason == SKIP_SUPERSEDED
    renamed = "def check(v):\n    parts_list = v.split('.')[:3]\n"
    change = _diff("def check(v):\n    parts = v.split('.')\n",
                   "def check(v):\n    parts = v.split('.')[:3]\n", renamed,
                   [(2, "    parts = v.split('.')[:3]")], ("    parts = v.split('.')",))
    judged = judge([change])
    assert judged.reason is None and judged.surviving == {"pkg/m.py": 1}


def test_round15_a_change_whose_only_survivor_names_nothing_is_superseded() -> None:
    # pytest-asyncio history-10 (the seventeenth review): `except SkipTest:` and its
    # `return` were added; only `return` is "still there", as in any module
    before = "def collect(c):\n    try:\n        c.obj\n    finally:\n        pass\n"
    after = ("def collect(c):\n    try:\n        c.obj\n    except SkipTest:\n"
             "        return\n    finally:\n        pass\n")
    today = "def run(items):\n    for item in items:\n        if item:\n            return\n"
    added = [(4, "    except SkipTest:"), (5, "        return")]
    assert judge([_diff(before, after, today, added)]).reason == SKIP_SUPERSEDED
    # black history-17, kept: `return False` for a `raise` is the fix, and says a value
    assert judge([_diff(before, after.replace("return", "return False"),
                        today.replace("return", "return False"),
                        [added[0], (5, "        return False")])]).reason is None
    kept = today.replace("if item:", "if item:\n            raise SkipTest")
    assert judge([_diff(before, after, kept + "    except SkipTest:\n        return\n",
                        added)]).reason is None


def test_round4_a_line_with_one_name_renamed_is_moved_not_a_fact() -> None:
    before = ("def send(request):\n    result = transport.handle(request, timeout=5)\n"
              "    return result\n")
    after = ("def send(request):\n    response = transport.handle(request, timeout=5)\n"
             "    response.close_on_error(timeout_budget=5)\n    return response\n")
    change = _diff(before, after, after,
                   [(2, "response = transport.handle(request, timeout=5)"),
                    (3, "response.close_on_error(timeout_budget=5)"),
                    (4, "return response")],
                   ("result = transport.handle(request, timeout=5)", "return result"))
    judged = judge([change])
    assert judged.reason is None
    assert judged.fact_lines["pkg/m.py"] == ("response.close_on_error(timeout_budget=5)",)


def test_removals() -> None:
    before = "from x import (\n    extract,\n    read,\n)\n\n\ndef f(b):\n    return extract(b)\n"
    after = "from x import (\n    read,\n)\n\n\ndef f(b):\n    return b\n"
    change = _diff(before, after, after, [(7, "    return b")],
                   ("    extract,", "    return extract(b)"))
    assert judge([change]).reason == SKIP_REMOVAL
    # a slice changed in place (requests history-11) adds as many lines as it deletes
    before = "def f(h):\n    # skip the first\n    return h[1:]\n"
    after = "def f(h):\n    return h[:]\n"
    change = _diff(before, after, after, [(2, "    return h[:]")],
                   ("    # skip the first", "    return h[1:]"))
    assert judge([change]).reason is None


def test_chore_facts_and_version_markers() -> None:
    before = 'def f():\n    """Old words."""\n    return 1\n'
    after = 'def f():\n    """New words.\n\n    .. versionadded:: 2.0\n    """\n    return 1\n'
    change = _diff(before, after, after, [(2, '    """New words.'), (3, ""),
                                          (4, "    .. versionadded:: 2.0"), (5, '    """')],
                   ('    """Old words."""',))
    assert judge([change]).reason == SKIP_NO_CODE
    assert is_version_marker("   .. versionchanged:: 3.2") and \
        not is_version_marker("version = 2")
    moved = "    MOVED_CONSTANT_VALUE = compute_the_value()"
    after = f"def f():\n{moved}\n    return fresh_value_here()\n\n.. versionadded:: 2.0\n"
    change = _diff("def f():\n    return 1\n", after, after,
                   [(2, moved), (3, "    return fresh_value_here()"),
                    (5, ".. versionadded:: 2.0")], ("    return 1", moved))
    judged = judge([change])
    assert judged.reason is None
    assert judged.fact_lines == {"pkg/m.py": ("    return fresh_value_here()",)}


@pytest.mark.parametrize(("raw", "reason"), [
    ("Add more tests to prevent regression of CVE 2024 47081", SKIP_TESTS_SUBJECT),
    ("Add tests to deprecations. Better deprecate streams", SKIP_TESTS_SUBJECT),
    ("test(core): cover the pager", SKIP_TESTS_SUBJECT),
    ("Push preserved contexts in correct order", None),
    ("Fix the test client's cookie handling", None),
    ("Testing mode keeps exceptions", None),
])
def test_subject_reasons(raw, reason) -> None:
    from evaluator.core.commits import clean_subject
    assert subject_reason(raw, clean_subject(raw)) == reason


@pytest.mark.parametrize("raw", ["Fix tests on Windows", "Tests for the pager",
                                 "Add a test for the netrc lookup", "Update test suite"])
def test_more_subjects_about_tests(raw) -> None:
    assert subject_reason(raw, raw) == SKIP_TESTS_SUBJECT


def test_test_client_subject_is_a_question() -> None:
    assert subject_reason("Test client keeps cookies", "Test client keeps cookies") is None


@pytest.mark.parametrize(("raw", "reason"), [
    # click history-09: two topics in one subject
    ("Mark clearly functions private status. Deprecated Python 2 utilities", "mixed"),
    ("Fix `echo()` on Windows. Closes the stream too", "mixed"),
    ("Support Python 3.12 in the loader", None),
    ("Use os.path.join for the config file", None),
])
def test_two_sentences_are_two_topics(raw, reason) -> None:
    from evaluator.core.commit_filters import SKIP_MIXED
    assert subject_reason(raw, raw) == (SKIP_MIXED if reason else None)


def test_round3_typing_only_statements_and_import_restyles_are_no_behaviour_change():
    from evaluator.core.commit_filters import behaviour

    before = "import typing as t\nfrom a import b\n\n\nclass S:\n    def loads(self, d):\n" \
             "        return self.u(d)\n"
    after = "import typing as t\nfrom a import (\n    b as b,\n)\n\n__all__ = ['S']\n" \
            "T = t.TypeVar('T')\n\n\nclass S:\n    @t.overload\n    def loads(self, d: str)" \
            " -> str: ...\n\n    def loads(self, d):\n        return t.cast('T', self.u(d))\n"
    assert behaviour(before) == behaviour(after)
    assert behaviour(before) != behaviour(before.replace("self.u(d)", "self.v(d)"))
    assert behaviour(before) != behaviour(before.replace("from a import b", "from c import b"))


def test_round3_generic_lines_and_fragments():
    from evaluator.core.commit_facts import fragment
    from evaluator.core.commit_filters import generic

    for line in ("import hashlib", "if fallback is None:", "except SignatureExpired:",
                 "return value", "else:", ")"):
        assert generic(line), line
    assert not generic("fallback = [make_signer(hashlib.sha512)]")
    for line in (") or http_content_length is None:", "}, {", "and not self.closed:"):
        assert fragment(line), line
    assert not fragment("check_digest_size(name, digest_size)")
    # jinja history-15 (round 4): the lines that state the fix are calls writing code
    assert not fragment('self.writeline("finally: await agen.aclose()")')
    assert not fragment("f\"finally: {self.choose_async('await gen.aclose()', "
                        "'gen.close()')}\"")
    assert not fragment("The digest size is checked against the algorithm's own size.")


@pytest.mark.parametrize("line", [
    # the tenth review (virtualenv history-11, -20; gunicorn history-16)
    "LOGGER.warning(", "_INSECURE_FALLBACK_ENV,", "@classmethod", "self.cfg.proxy_allow_ips,",
    "result = first_part + \\",
    "LOGGER.warning(  # keep the message short",
])
def test_round13_a_line_the_next_one_completes_is_a_fragment(line: str) -> None:
    from evaluator.core.commit_facts import fragment
    assert fragment(line)


@pytest.mark.parametrize("line", [
    "verify=load_verify_setting(),", "@pytest.fixture(scope='session')",
    "def download_wheel(distribution, version_spec, for_py_version):",
    "timeout=self.timeout if self.timeout is not None else DEFAULT_TIMEOUT,",
    "self.jobs = min(len(self.filenames), self.jobs)",
    'raise ChunkMissingTerminator(b"") from None',
    # they name what they define or raise: reviewers kept such facts
    "async def do_unique(", "raise ValueError(",
    "self.selected_explicitly = _explicitly_chosen(",
])
def test_round13_a_complete_statement_or_argument_is_no_fragment(line: str) -> None:
    from evaluator.core.commit_facts import fragment
    assert not fragment(line)


def test_round7_slots_declarations_and_sentinel_swaps() -> None:
    """anyio history-11 and -01 (the fifth fresh review's chores), as diff lines."""
    from evaluator.core.commit_chores import sentinel_swap, slots_only
    moved = ["    _is_set: bool = False", "    _event: Event | None = None"]
    assert slots_only(['    __slots__ = "_event", "_is_set"', "    def __init__(self) -> None:",
                       "        self._is_set = False",
                       "        self._event: Event | None = None"], moved)
    assert slots_only(["    __slots__ = (", '        "_a",', "    )"], [])
    # a slot that comes with new behaviour, an __init__ taking arguments
    assert not slots_only(['    __slots__ = ("_hash",)', "        self._hash = hash(text)"], [])
    assert not slots_only(["    def __init__(self, size):", "        self._is_set = False"],
                          moved)
    assert not slots_only(["        self._is_set = False"], moved)  # no slot declared
    swap = ["if sys.version_info < (3, 15):", "    from typing_extensions import sentinel",
            'undefined = sentinel("undefined")']
    assert sentinel_swap(swap, ["undefined = object()"])
    assert not sentinel_swap(swap, ["undefined = None"])
    assert not sentinel_swap([*swap, "    return undefined if value is None else value"],
                             ["undefined = object()"])


def test_renamed_forms_are_bounded_to_lines_a_fact_can_be() -> None:
    """A line longer than any fact is never compared by its renamed forms (their keys
    grow with the square of its tokens, and a pull request may write any line)."""
    from evaluator.core.commit_facts import MAX_FACT_CHARS
    from evaluator.core.commit_filters import MAX_RENAMED_TOKENS, _one_name_out

    assert MAX_RENAMED_TOKENS == MAX_FACT_CHARS
    assert _one_name_out(" ".join(f"n{i}" for i in range(MAX_RENAMED_TOKENS + 1))) == set()
    assert len(_one_name_out("result = f(x)")) == 3


# ----------------------------------------------------------------------------- round 9


def test_round9_an_argument_split_onto_its_own_line_is_moved_not_a_fact() -> None:
    # responses history-04: a call re-wrapped one argument a line, the same trailing
    # comment on each; only the new argument is the commit's
    deleted = ("            method=response.request.method, "
               "status_code=response.status_code  # type: ignore[misc]",)
    added = ["            method=response.request.method,  # type: ignore[misc]",
             "            status_code=response.status_code,  # type: ignore[misc]",
             '            has_retry_after="Retry-After" in response.headers,  '
             "# type: ignore[misc]"]
    after = "retry = retries.is_retry(\n" + "\n".join(added) + "\n)\n"
    change = _diff("retry = retries.is_retry(\n" + deleted[0] + "\n)\n", after, after,
                   [(n, line) for n, line in enumerate(added, start=2)], deleted)
    judged = judge([change])
    assert judged.reason is None
    assert judged.fact_lines["pkg/m.py"] == (added[2],)


def test_round9_an_argument_split_out_of_a_call_in_another_file_is_moved() -> None:
    # the call left pkg/old.py and came back in pkg/new.py one argument a line, its
    # comment repeated on each: moved, while a new argument with the same comment is new
    gone = "    configure(timeout=budget_seconds, retries=retry_limit)  # noqa: E501"
    old = ModuleDiff(module="pkg/old.py", added=((1, "    pass"),), deleted=(gone,),
                     before=f"def f():\n{gone}\n", after="def f():\n    pass\n",
                     today="def f():\n    pass\n")
    added = ["    configure(", "        timeout=budget_seconds,  # noqa: E501",
             "        verify=load_verify_setting(),  # noqa: E501", "    )"]
    after = "def g():\n" + "\n".join(added) + "\n"
    new = ModuleDiff(module="pkg/new.py", added=tuple(enumerate(added, start=2)), deleted=(),
                     before="", after=after, today=after)
    judged = judge([old, new])
    assert judged.reason is None
    assert judged.fact_lines["pkg/new.py"] == (added[2],)  # "configure(", ")" moved too


def test_round9_a_new_line_holding_a_removed_line_is_still_a_fact() -> None:
    # the added line must occur in the removed text, not the reverse: a removed short line
    # inside a new one, and a new line whose code is new but whose comment was removed
    before = "def close(self):\n    self.release()  # the pool\n    return None\n"
    added = ["    self.release() if self.auto_release_enabled else self.keep_alive()",
             "    return None if self.pending_request is None else self.pending_request.cancel()"
             "  # the pool"]
    after = "def close(self):\n" + "\n".join(added) + "\n"
    change = _diff(before, after, after, [(2, added[0]), (3, added[1])],
                   ("    self.release()  # the pool", "    return None"))
    judged = judge([change])
    assert judged.reason is None
    assert judged.fact_lines["pkg/m.py"] == tuple(added)


def test_round9_code_tokens_split_off_the_comment_not_a_hash_in_a_string() -> None:
    from evaluator.core.commit_filters import code_tokens
    assert code_tokens('colour = parse("#ff0000")  # red') == \
        (["colour", "=", "parse", "(", '"#ff0000"', ")"], "# red")
    assert code_tokens("key = 'a#b'") == (["key", "=", "'a#b'"], "")
    assert code_tokens("#  only   a comment") == ([], "# only a comment")
    # the code of a new line is new even when its string holds removed words after a "#"
    before = "def f():\n    return shade(colour)\n"
    added = '    return shade(colour, fallback="#000 return shade colour")'
    change = _diff(before, f"def f():\n{added}\n", f"def f():\n{added}\n", [(2, added)],
                   ("    return shade(colour)",))
    assert judge([change]).fact_lines["pkg/m.py"] == (added,)


def test_round9_a_line_given_its_own_comment_is_the_commits() -> None:
    # jsonschema history-14 (kept): a sort key explained element by element; the comments
    # are the commit's, so the lines are its own (and 'csp_property("report-uri")',
    # werkzeug history-17, drops an argument: new code)
    deleted = ("        return (", "            -len(error.path),",
               "            validator not in weak,", "        )",
               '    report_uri: str | None = csp_property("report-uri", deprecated="3.3")')
    added = ["        return (  # prefer errors which are ...",
             "            -len(error.path),  # 'deeper' and thereby more specific",
             "            error.path,  # earlier (for sibling errors)",
             "            validator not in weak,  # for a non-low-priority keyword",
             "        )  # otherwise we'll treat them the same",
             '    report_uri: str | None = csp_property("report-uri")  # still supported']
    after = "\n".join(added) + "\n"
    change = _diff("\n".join(deleted) + "\n", after, after,
                   [(n, line) for n, line in enumerate(added, start=1)], deleted)
    judged = judge([change])
    assert judged.reason is None
    assert judged.fact_lines["pkg/m.py"] == tuple(added)


def test_round9_patch_header_look_alikes_are_content() -> None:
    # a deleted line "-- a/b" prints as "--- a/b", an added "++ b/c" as "+++ b/c": inside a
    # hunk they are the file's lines, not the next file's headers
    patch = (b"diff --git a/pkg/m.py b/pkg/m.py\nindex 1..2 100644\n--- a/pkg/m.py\n"
             b"+++ b/pkg/m.py\n@@ -3,2 +3,2 @@ SQL = '''\n--- a/b comment\n-SELECT 1\n"
             b"+++ b/c\n+SELECT 2\n"
             b"diff --git a/pkg/n.py b/pkg/n.py\n--- a/pkg/n.py\n+++ b/pkg/n.py\n"
             b"@@ -1 +1 @@\n-N = 1\n+N = 2\n")
    sides = patch_sides(patch)
    assert set(sides) == {"pkg/m.py", "pkg/n.py"}
    assert sides["pkg/m.py"].deleted == ("-- a/b comment", "SELECT 1")
    assert sides["pkg/m.py"].added == ((3, "++ b/c"), (4, "SELECT 2"))
    assert sides["pkg/n.py"].deleted == ("N = 1",) and sides["pkg/n.py"].added == ((1, "N = 2"),)


def test_round9_a_statement_joined_from_two_deleted_lines_is_moved() -> None:
    deleted = ("    result = transport.handle(request,  # type: ignore[arg-type]",
               "                              timeout=5)")
    added = ["    result = transport.handle(request, timeout=5)  # type: ignore[arg-type]",
             "    result.raise_for_status(allowed_codes=(404,))"]
    before = "def send(request):\n" + "\n".join(deleted) + "\n"
    after = "def send(request):\n" + "\n".join(added) + "\n"
    judged = judge([_diff(before, after, after, [(2, added[0]), (3, added[1])], deleted)])
    assert judged.fact_lines["pkg/m.py"] == (added[1],)



def test_round9_a_directive_comment_changed_is_no_new_text() -> None:
    # pluggy history-07: the line only changed its type-ignore code; a new prose comment
    # on the same code is the commit's
    deleted = ("        co = wrap_controller.gi_code  # type: ignore[union-attr]",
               "        teardown = wrap_controller.send(result)  # noqa: F841")
    added = ["        co = wrap_controller.gi_code  # type: ignore[attr-defined]",
             "        teardown = wrap_controller.send(result)  # the wrapper's own result",
             "        raise RuntimeError(_wrapper_error_message(co))  # pragma: no cover"]
    before = "def f():\n" + "\n".join(deleted) + "\n"
    after = "def f():\n" + "\n".join(added) + "\n"
    judged = judge([_diff(before, after, after, list(enumerate(added, start=2)), deleted)])
    assert judged.fact_lines["pkg/m.py"] == (added[1], added[2])


# issue 24's ninth fresh review (round 12): subjects the history route should not ask.
@pytest.mark.parametrize("raw", [
    # several topics (alembic history-16, tox history-02, -04, -01)
    "bump pytest to 9; add pyv to file template; use = for all custom args",
    "Honor tox c -o, clean devenv ALL error, correct provision pin",
    "Honor metadata behind a BOM, fail cleanly on bad blocks",
    "Rename to AsyncHTTPTransport, add AsyncByteStream",
    "Added response.freeze, fixed make_action in profiler and improved performance",
    "Dropped the cache, stopped the timer",
    "🐛 fix(ux): four run-edge polish fixes (#4000)",
    "Various fixes", "Two small doc tweaks",
    # a number of fixes or findings anywhere (round 13, gunicorn history-18)
    "Address six WSGI/ASGI parser and protocol findings",
    "Fix two small documentation issues (#3297)", "Fixed various issues on the Python 3 port",
])
def test_several_topics_in_one_subject_are_mixed(raw) -> None:
    from evaluator.core.commit_filters import SKIP_MIXED
    from evaluator.core.commits import clean_subject
    assert subject_reason(raw, clean_subject(raw)) == SKIP_MIXED


@pytest.mark.parametrize("raw", [
    # look-alikes that stay questions: one topic said in two clauses, a list of names
    "Honor the fail-fast contract, resilient teardown",          # tox history-03, kept
    "Fix structuring of nested generics, add test",              # cattrs history-14, kept
    "Remove support for Click 7, require Click 8+",
    "Remove urllib3.util.current_time, use time.monotonic instead",
    "Clarify the contract of Response#ok, and avoid exceptions in it",
    "Add env argument to Jinja2Templates, deprecate **env_options",
    "Move set_wakeup_fd into common code, used on all platforms",
    "Emit DROP CHECK for MySQL, DROP CONSTRAINT for MariaDB",
    "Split, simplify, and fix egg_info_matches",
    "Allow to provide importable string in `--http`, `--ws` and `--loop`",
    "Modify color tags (add auto-close, raise on unknown tag, remove mixing)",
    "If possible, raise the last exception when stopping",
    "Escape the package name, allowing rich to stylize URLs",
    "Fix pool; keep sockets open",
    "Two changes of state are reported once",
    "Fix issue with two headers", "Handle two-phase commit issues",
    "Report the issues of two workers once",
    # a behaviour said of several changes, a number of another noun, operations listed for
    # one object, separators inside code or an entity (the final read of round 13)
    "Two updates to the same key are merged into one",
    "Multiple changes to a watched file trigger one reload",
    "Several changes in quick succession are coalesced",
    "Avoid deadlock when two threads report issues",
    "Retry up to ten times on connection problems",
    "Fix race between two workers causing problems",
    "Add read, update and delete handlers", "Allow get, set and delete on headers",
    "Support add, remove and clear on the registry",
    "Support `a; b; c` in statements", "Escape &lt; and &gt; in attribute values",
])
def test_one_topic_with_commas_is_a_question(raw) -> None:
    from evaluator.core.commits import clean_subject
    assert subject_reason(raw, clean_subject(raw)) is None


@pytest.mark.parametrize(("raw", "reason"), [
    # a test named (trio history-01), a test fixed (alembic history-19), coverage (trio
    # history-11), documentation builds (trio history-07)
    ("Run GC on PyPy more for test_worker_thread_context_not_leaked", SKIP_TESTS_SUBJECT),
    ("Remove python2 compat stuff from test_socketlevel.py", SKIP_TESTS_SUBJECT),
    ("Adjust sqlite test further", SKIP_TESTS_SUBJECT),
    ("Fix redis tests", SKIP_TESTS_SUBJECT),
    ("Get and enforce 100% coverage", SKIP_TESTS_SUBJECT),
    ("Increase code coverage on fspath", SKIP_TESTS_SUBJECT),
    ("Allow documentation builds on Windows", "docs"),
    ("Fix docs build on sphinx 1.6.1", "docs"),
    # look-alikes: an API named test_…, a coverage tool's feature, a build of packages
    ("Allow to specify subdomain and url_scheme in app.test_request_context()", None),
    ("Pass keyword args from `test_client` method to client class constructor", None),
    ("Add test_cli_runner for testing app.cli commands", None),
    ("Support branch coverage in the tracer", None),
    ("Update the test client", None),
    ("Allow wheel builds on Windows", None),
])
def test_tests_and_docs_build_subjects(raw, reason) -> None:
    from evaluator.core.commit_filters import SKIP_DOCS_SUBJECT
    from evaluator.core.commits import clean_subject
    want = SKIP_DOCS_SUBJECT if reason == "docs" else reason
    assert subject_reason(raw, clean_subject(raw)) == want


def _init(added: str, deleted: str, rest: str = "from pkg.core import run\n") -> ModuleDiff:
    return ModuleDiff(module="pkg/__init__.py", added=((2, added),), deleted=(deleted,),
                      before=rest + deleted + "\n", after=rest + added + "\n",
                      today=rest + added + "\n")


@pytest.mark.parametrize(("added", "deleted"), [
    ('__version__ = "1.16.0"', '__version__ = "1.15.4"'),     # alembic history-02
    ("VERSION = (2, 1, 0)", "VERSION = (2, 0, 9)"),
    ('__version__: str = "3.0"', '__version__: str = "2.9"'),
])
def test_round12_a_version_line_bumped_in_any_module_is_not_graded(added: str,
                                                                    deleted: str) -> None:
    from evaluator.core.commit_filters import version_string_only
    assert version_string_only(_init(added, deleted))


@pytest.mark.parametrize(("added", "deleted"), [
    ('__version__ = get_version("pkg")', '__version__ = "1.15.4"'),  # code, not a literal
    ('DEFAULT_TIMEOUT = "30"', 'DEFAULT_TIMEOUT = "20"'),            # no version line
    ('version_info = "1.2"', 'version_info = "1.1"'),
    # a protocol's version, or one set inside a function (the final read of round 13)
    ('version = "HTTP/1.1"', 'version = "HTTP/1.0"'), ("VERSION = 13", "VERSION = 8"),
    ('    __version__ = "2.0"', '    __version__ = "1.0"'),
])
def test_round12_other_lines_of_a_module_are_graded(added: str, deleted: str) -> None:
    from evaluator.core.commit_filters import version_string_only
    assert not version_string_only(_init(added, deleted))


@pytest.mark.parametrize(("line", "is_fragment"), [
    # round 14's paired reviews asked for block headers in place of the drafted facts
    ("if bracket_depth > 0:", False), ("if (md->used < md->keys->nentries) {", False),
    ("if write_to.is_absolute(): # an absolute path stays", False),
    ("for man_page in MAN_PAGES_DIR.glob('*.1'):", False),
    # a conditional expression or a comprehension continued is still a fragment
    ("if x is not None", True), ("for item in items)", True),
    ("if value else default_value,", True), ("and not self.closed:", True),
])
def test_round14_a_block_header_is_a_statement(line: str, is_fragment: bool) -> None:
    from evaluator.core.commit_facts import fragment
    assert fragment(line) is is_fragment
