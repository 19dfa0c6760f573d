"""Unit tests for evaluator.core.giveaway: does a question name its own answer?"""

from __future__ import annotations

import pytest

from evaluator.core.giveaway import answer_names, overlap, overlaps, words

SESSIONS = '''"""Session objects that keep settings across requests."""


class Session:
    """A Requests session."""

    def prepare_request(self, request):
        """Build the PreparedRequest to send."""


def merge_setting(request_setting, session_setting):
    """Merge a request's setting with the session's."""
'''


@pytest.fixture
def sessions():
    return answer_names("src/requests/sessions.py", SESSIONS)


def test_answer_names_read_the_file_symbols_and_first_docstring_lines(sessions) -> None:
    assert sessions.files == {"sessions.py", "sessions"}
    assert sessions.symbols == {"Session", "prepare_request", "merge_setting"}
    assert {"requests", "sessions", "session", "prepare", "merge", "setting", "keep",
            "across", "built"} - sessions.words == {"built"}


@pytest.mark.parametrize(("question", "named"), [
    ("How does `echo()` in `sessions.py` work?", ("sessions", "sessions.py")),
    ("Fix `prepare_request` for redirects", ("prepare_request",)),
    ("Why does merge_setting drop None values?", ("merge_setting",)),
    ("Keep the Session's cookies after a redirect", ("Session",)),  # the class, as written
    ("Keep the session's cookies after a redirect", ()),             # a word
    ("Align Session.get parameters with requests.get", ("Session",)),
    ("Constrain Session to one adapter", ("Session",)),
    ("How are settings merged between a request and its session?", ()),
    # the file named in words: the fifth and sixth cold reviews counted "the validate
    # module" (marshmallow history-14) and "in the main module" (uvicorn history-07)
    ("Where do the sessions module's helpers live", ("sessions.py",)),
    ("Deprecate `ServerState` in the sessions submodule", ("sessions.py",)),
    ("Read the sessions file from disk", ()),           # a file of that kind, not the module
    ("Sessions: keep cookies after a redirect", ()),    # a component tag, a plain word
])
def test_a_question_names_its_answer_only_when_it_states_a_name(sessions, question,
                                                                named) -> None:
    found = overlap(question, [sessions])
    assert found.named == named
    assert found.names_answer is bool(named)


ITERTOOLS = '''"""Routines for iterables: each one chunked, peeked or bucketed as the
caller asks, and every result is an iterator the caller may close when done."""


def chunked(iterable, n):
    """Break the iterable into lists of length n: the chunked form of the input."""


class peekable:
    """Wrap an iterator to allow lookahead."""

    def close(self):
        """Close the wrapped iterator."""
'''


@pytest.mark.parametrize(("question", "named"), [
    # the twentieth review (more-itertools): a call of a plain word it defines names it
    ("Raise a clear ValueError for negative n in chunked()", ("chunked",)),
    ("Allow negative indexing and arbitrary slicing for peekable()", ("peekable",)),
    ("Fix close() after the last item", ("close",)),                  # a method too
    ("Raise a clear ValueError for negative n when chunked", ()),     # a word of its prose
    ("Fix select() for empty input", ()),                             # not defined here
])
def test_a_call_of_a_plain_word_the_answer_defines_names_it(question, named) -> None:
    found = overlap(question, [answer_names("more_itertools/more.py", ITERTOOLS)])
    assert found.named == named


@pytest.mark.parametrize(("question", "named"), [
    # the twentieth review (platformdirs): a platform is a domain word, even where a class
    # is named after it; written as code it is the class
    ("Avoid FileNotFoundError in sandboxed environments on Windows", ()),
    ("Fix the no-ctypes fallback on windows", ()),
    ("Avoid FileNotFoundError in `Windows`", ("Windows", "windows")),  # the file too
    ("Avoid FileNotFoundError in Windows()", ("Windows", "windows")),
    ("Stop WindowsDirs leaking handles", ("WindowsDirs",)),             # not a platform
])
def test_a_platform_is_a_word_unless_written_as_code(question, named) -> None:
    module = answer_names("platformdirs/windows.py",
                          "class Windows:\n    pass\n\n\nclass WindowsDirs:\n    pass\n")
    assert overlap(question, [module]).named == named


def test_shared_words_and_share(sessions) -> None:
    found = overlap("How are settings merged between a request and its session?", [sessions])
    assert found.shared == ("request", "session", "settings")
    assert found.share == pytest.approx(3 / len(words(
        "How are settings merged between a request and its session?")))
    assert overlap("Why?", [sessions]).share == 0.0


def test_grade_2_modules_count_by_their_public_names_spelt_as_code(sessions) -> None:
    """Issue 24, fourth fresh review (tenacity history-19 `` `stop_after_delay` ``, a
    function of a module graded 2): a public class or function of a module graded 2 spelt
    as code (backticks, a call) is named; written as a word it is not (starlette history-07
    "… on BaseHTTPMiddleware", kept as asked), nor are its methods, its file, its private
    names, or the names of a module graded 1."""
    other = answer_names("src/requests/models.py", "class Response:\n    pass\n")
    names = {sessions.module: sessions, other.module: other}
    grades = [(sessions.module, 2), (other.module, 3)]
    assert overlaps("Fix the Response reason", grades, names).named == ("Response",)
    assert overlaps("Fix `merge_setting`", grades, names).named == ("merge_setting",)
    assert overlaps("Make `Session` picklable", grades, names).named == ("Session",)
    assert overlaps("Let Session() be pickled", grades, names).named == ("Session",)
    assert overlaps("Make Session picklable", grades, names).named == ()
    assert overlaps("Fix `prepare_request` and sessions.py", grades, names).named == ()
    assert overlaps("Make `Session` picklable", [(sessions.module, 1), (other.module, 3)],
                    names).named == ()
    private = answer_names("src/requests/hooks.py", "class _Hook:\n    pass\n")
    assert overlap("Fix _Hook", [], seconds=[private]).named == ()


def test_hyphenated_and_misspelt_names() -> None:
    """structlog history-06 "level-styles" (the ``level_styles`` property) and tenacity
    history-17 "AsyncRetring" (``AsyncRetrying``): a hyphenated spelling of an underscored
    class, function or method and a CapWords name of 8 letters or more one letter off are
    named; an imported name (structlog history-02 "better-exceptions"), a capitalised
    hyphenated word (werkzeug history-10 "Content-MD5"), a short or lower-case near miss and
    a plain hyphenated phrase are not (both kept as asked)."""
    source = ("class ConsoleRenderer:\n    @property\n    def level_styles(self):\n"
              "        pass\n\n\nclass AsyncRetrying:\n    pass\n\n\n"
              "class Styles:\n    pass\n\n\ndef out_of_band():\n    pass\n")
    dev = answer_names("src/structlog/dev.py", source)
    assert overlap("Dev: add level-styles properties", [dev]).named == ("level_styles",)
    assert overlap("Remove __iter__ from AsyncRetring", [dev]).named == ("AsyncRetrying",)
    assert overlap("Remove __iter__ from AsyncRetryingX", [dev]).named == \
        ("AsyncRetrying",)
    imported = answer_names("src/structlog/dev.py", "try:\n    import better_exceptions\n"
                            "except ImportError:\n    better_exceptions = None\n\n\n"
                            "def content_md5(self):\n    pass\n")
    for question in ("Deprecate better-exceptions integration", "Deprecate Content-MD5 header"):
        assert overlap(question, [imported]).named == (), question
    for question in ("Support Trio out-of-the-box", "Make Style public",
                     "Make asyncretring work", "Fix Stiles", "Add AsyncRetryingToo"):
        assert overlap(question, [dev]).named == (), question


def test_other_languages_and_unreadable_sources() -> None:
    go = answer_names("pkg/pool.go", "package pool\n\nfunc NewPool(size int) *Pool {\n}\n"
                                     "type Pool struct {\n}\n")
    assert go.symbols == {"NewPool", "Pool"}
    broken = answer_names("pkg/broken.py", "def (:\n")
    assert broken.symbols == frozenset() and broken.files == {"broken.py", "broken"}
    assert answer_names("pkg/gone.py", None).symbols == frozenset()


HASHTABLE_H = """#ifndef _MULTIDICT_HASHTABLE_H
#define _MULTIDICT_HASHTABLE_H
#define CHECK(x) (x)
/* getall(key) returns a list:
 * md_not_a_definition(key) in a comment */
static inline int
_md_shrink(MultiDictObject *md, bool update)
{
    if (md->used == 0) {
        return md_clear(md);
    }
}

static PyObject *md_clear(MultiDictObject *md);
PyObject *getall(PyObject *self) { return NULL; }
"""


def test_c_definitions_are_names_of_their_module() -> None:
    # multidict (the twelfth held-out review): "Fixed inconsistencies generated by
    # _md_shrink" names a function of the header graded 3
    header = answer_names("multidict/_multilib/hashtable.h", HASHTABLE_H)
    assert header.symbols == {"_MULTIDICT_HASHTABLE_H", "CHECK", "_md_shrink", "md_clear"}
    for question in ("Fixed inconsistencies generated by _md_shrink",
                     "Fix memory leaks during md_clear"):
        assert overlap(question, [header]).named != (), question
    for question in ("Check the size of a shrunk table", "Fix getall() on an empty dict"):
        assert overlap(question, [header]).named == (), question


TYPES = '''"""Types."""
from typing import TYPE_CHECKING, Any

DEFAULT_POOLSIZE = 10
if TYPE_CHECKING:
    JsonType: "TypeAlias" = dict[str, Any] | list[Any]
    HeadersType, CookiesType = dict, dict


class Response:
    def iter_content(self):
        """Iterate over the body."""

    def iter_lines(self):
        """Iterate over the lines."""
'''


@pytest.mark.parametrize(("question", "named"), [
    # requests history-04: a module-level type alias, under `if TYPE_CHECKING:`
    ("Update JsonType containers to read-based collections", ("JsonType",)),
    ("Let HeadersType accept tuples", ("HeadersType",)),
    ("Raise DEFAULT_POOLSIZE for busy hosts", ("DEFAULT_POOLSIZE",)),
    # requests history-09: a brace expansion names both methods
    ("Clarify decode_unicode behaviour in iter_{content,lines} docstrings",
     ("iter_content", "iter_lines")),
    ("Clarify how the body is decoded while streaming", ()),
])
def test_module_level_names_and_brace_expansions_are_names(question, named) -> None:
    answer = answer_names("src/requests/_types.py", TYPES)
    assert {"JsonType", "HeadersType", "CookiesType", "DEFAULT_POOLSIZE"} <= answer.symbols
    assert overlap(question, [answer]).named == named


FUNCS = '''"""Turning records into plain data, and responses."""


def asdict(record):
    """Return the record's fields as a dict, one entry per field of the record."""


def redirect(location):
    """Create a redirect response that sends the client to the location."""


def ne(value):
    """Fail unless the value differs from the given one."""


def safe_join(directory, *parts):
    """Join the parts below a directory, or give up."""
'''


def test_round3_names_a_capitalised_first_word_a_short_backticked_name_and_a_coined_word():
    answer = answer_names("pkg/funcs.py", FUNCS)
    assert overlap("Safe_join prevents device names", [answer]).named == ("safe_join",)
    assert overlap("Add `ne` validator", [answer]).named == ("ne",)
    assert overlap("Improve performance of asdict in the common case",
                   [answer]).named == ("asdict",)
    # a name its prose uses as a word is a domain word; "ne" outside backticks is no name
    assert not overlap("Redirect defaults to see other", [answer]).names_answer
    assert not overlap("Add a ne validator", [answer]).names_answer
    # without prose to tell a name from a word, a plain word is not counted
    bare = answer_names("pkg/bare.py", "def asdict(record):\n    return record\n")
    assert not overlap("Improve performance of asdict", [bare]).names_answer


def test_round3_names_defined_under_a_module_level_if_or_try_are_names():
    source = ('import sys\n\nif sys.platform == "win32":\n\n    def proxy_bypass_registry(host):\n'
              '        return False\n\ntry:\n    from fast import speedup\n'
              'except ImportError:\n\n    def speedup(x):\n        return x\n')
    answer = answer_names("pkg/utils.py", source)
    assert {"proxy_bypass_registry", "speedup"} <= answer.symbols
    assert overlap("Fix the proxy_bypass_registry function returning true",
                   [answer]).named == ("proxy_bypass_registry",)


PRIVATE = '''"""Transports and models."""


class _ASGIApp:
    """The app a transport calls."""


def _parse_header_links(value):
    """Links from a header value."""
    return value


class _SubsetHookCaller:
    """Calls a subset of the plugins."""


def is_async(value):
    return value


def get_name(value):
    return value
'''


@pytest.mark.parametrize(("question", "named"), [
    # httpx history-16, -17 and pluggy history-15 (the fresh review, round 4)
    ("Use more permissible types in ASGIApp", ("_ASGIApp",)),
    ("Test `parse_header_links` via public api", ("_parse_header_links",)),
    ("Test parse header links via public api", ("_parse_header_links",)),
    ("Fix subset hook caller reuse", ("_SubsetHookCaller",)),
    # not a run of the name's words, or a run of short / generic words only
    ("Parse the header and links", ()),
    ("Check is async for hooks", ()),
    ("Get name of the hook", ()),
    ("Use more permissible types in the asgi app", ()),   # two words read as a phrase
])
def test_round4_a_private_name_without_its_underscore_or_spelt_as_words_is_named(
        question, named) -> None:
    assert overlap(question, [answer_names("pkg/_models.py", PRIVATE)]).named == named


def test_a_folder_that_reads_as_code_is_named() -> None:
    """yarl history-14 "Sync `pep517_backend` w/ upstream": a folder of the answer's path
    spelt as code names it; a folder that is a plain word (the package, ``src``) does not."""
    backend = answer_names("packaging/pep517_backend/_backend.py", "def build():\n    pass\n")
    assert overlap("Sync `pep517_backend` w/ upstream", [backend]).named == ("pep517_backend",)
    dev = answer_names("src/structlog/dev.py", "def render():\n    pass\n")
    assert dev.files == {"dev.py", "dev"}
    assert overlap("Make `structlog` output colourful in `src`", [dev]).named == ()


def test_answer_names_parses_a_module_once(monkeypatch) -> None:
    """A module's names, members, definitions and prose all come from one ``ast.parse``
    (it parsed the same source three times: 3 calls per module of every drafted question)."""
    import ast

    from evaluator.core import giveaway

    calls = []
    real = ast.parse

    def counting(source, *args, **kwargs):
        calls.append(len(source))
        return real(source, *args, **kwargs)

    monkeypatch.setattr(giveaway.ast, "parse", counting)
    names = answer_names("src/requests/sessions.py", SESSIONS)
    assert len(calls) == 1
    # and what it reads is unchanged: symbols, definitions, prose
    assert {"Session", "prepare_request", "merge_setting"} <= names.symbols
    assert names.public == {"Session", "merge_setting"}
    assert {"session", "objects", "keep"} <= names.prose


CLIENT = '''"""Errors of the protocols."""


class ClientDisconnected(OSError):
    """The client went away."""


class Flow:
    """Flow control."""
'''


@pytest.mark.parametrize(("question", "named"), [
    # uvicorn history-17: the class named without its last letters
    ("`ClientDisconnect` inherits from `OSError` instead of `IOError`", ("ClientDisconnected",)),
    ("Give ClientDisconnect a close code", ("ClientDisconnected",)),
    ("Handle a client disconnect during the body", ()),   # plain words
    ("Keep ClientDisc in the log", ()),                   # too short a clip to be the name
])
def test_a_class_named_without_its_last_letters_is_a_give_away(question, named) -> None:
    assert overlap(question, [answer_names("pkg/protocols/utils.py", CLIENT)]).named == named


@pytest.mark.parametrize(("line", "options"), [
    ('@click.option("--override/--no-override", default=True, help="Override.")',
     {"--override", "--no-override"}),
    ("    '--format', default='simple', type=click.Choice(['simple', 'json'])", {"--format"}),
    ('parser.add_argument("-f", "--maxschedchunk", action="store")', {"--maxschedchunk"}),
    ('"--ramp=10s"', {"--ramp"}),
    # a help text that mentions an option, a comment, words: no option declared
    ('help="use --foo instead of -x"', set()),
    ("# see --foo in the docs", set()),
    # an option read, not declared (pytest-mock history-17, kept)
    ('if config.getoption("--tb") == "native":', set()),
    ('parser.addoption("--mock-use-standalone", action="store_true")', {"--mock-use-standalone"}),
    ('"--"', set()),
])
def test_round15_options_a_line_declares(line: str, options: set[str]) -> None:
    from evaluator.core.giveaway import options_in
    assert options_in(line) == options


@pytest.mark.parametrize(("question", "stated"), [
    ("Add --override/--no-override flag to dotenv run", {"--override", "--no-override"}),
    ("Feat(cli) add --format= option to list command", {"--format"}),
    ("Add an option to print the list in other formats", set()),
    ("Fix --formats crash", set()),  # another option
])
def test_round15_a_question_stating_an_option_its_change_adds(question: str,
                                                              stated: set[str]) -> None:
    from evaluator.core.giveaway import options_stated
    assert options_stated(question, {"--override", "--no-override", "--format"}) == stated


def test_round15_a_private_folder_is_stated_without_its_underscore() -> None:
    # filelock history-09 (the eighteenth review): "Soft_rw: …" states `_soft_rw/`
    from evaluator.core.giveaway import answer_names, overlap
    answer = answer_names("src/filelock/_soft_rw/_sync.py", "def acquire():\n    pass\n")
    assert overlap("Soft_rw: release the marker on error", [answer]).named == ("soft_rw",)
    assert overlap("Release the soft read-write marker on error", [answer]).named == ()
