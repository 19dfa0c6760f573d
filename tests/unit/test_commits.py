"""Unit tests for evaluator.core.commits: parsing git's log, cleaning subjects, grading."""

from __future__ import annotations

import pytest

from evaluator.core.commit_facts import added_lines, evidence_facts
from evaluator.core.commits import (
    SKIP_CHORE,
    SKIP_CUT_OFF,
    SKIP_IN_PULL,
    SKIP_MERGE,
    SKIP_TOOLING,
    SKIP_VERSION,
    Commit,
    FileChange,
    clean_subject,
    mine,
    one_line,
    parse_log,
    pull_request,
    pull_request_commits,
    top_files,
)

A, B, C = "a" * 40, "b" * 40, "c" * 40


@pytest.mark.parametrize(("subject", "question"), [
    ("feat(session): add a retry budget to the session (#12)",
     "Add a retry budget to the session"),
    ("fix!: keep cookies across redirects, fixes #40", "Keep cookies across redirects"),
    ("Fix GH-1234: handle empty bodies", "Handle empty bodies"),
    # round 15: the words that only pointed at a reference go with it ("in", "described
    # in", "regression from"); a changelog's mark and ticket go
    ("[core] Handle empty bodies in owner/repo#5", "Handle empty bodies"),
    ("Fix regression described in #348 - not all reports returning the total.",
     "Fix regression - not all reports returning the total"),
    ("fix DoctestItem has no attribute fixturenames (regression from #78)",
     "Fix DoctestItem has no attribute fixturenames (regression)"),
    ("- [bug] Fixed a lambda within a template tag. [ticket:190]",
     "Fixed a lambda within a template tag"),
    ("Allow logging in", "Allow logging in"),
    ("Closes #3 - parse chunked responses.", "Parse chunked responses"),
    ("docs: Explain the hooks", "Explain the hooks"),
    ("Session: drop the proxy cache", "Session: drop the proxy cache"),
    ("Use \x1b[31mred\x1b[0m text\x07 here", "Use red text here"),
    # round 15 (the seventeenth review): a scope without its colon, an issue label without
    # its separator before a capital (not before a word that goes on the sentence)
    ("Feat(cli) add --format= option to list command", "Add --format= option to list command"),
    ("Fix (typo) in docs", "Fix (typo) in docs"),
    ("Fix issue #64 Uncaptured exception instead of 400", "Uncaptured exception instead of 400"),
    ("Fix issue #64 in the parser", "Fix issue in the parser"),
    ("Fix for issue #862 - ignore invalid keys in a jwks. (#863)",
     "Ignore invalid keys in a jwks"),
    # the twentieth review (platformdirs): a platform scope is said, once
    ("fix(windows): stop leaking ctypes pointer types on repeated calls (#507)",
     "Stop leaking ctypes pointer types on repeated calls on Windows"),
    ("\U0001f41b fix(macos): yield individual site dirs in iter_*_dirs (#429)",
     "Yield individual site dirs in iter_*_dirs on macOS"),
    ("fix(unix): use correct runtime dir path for OpenBSD",      # it names one already
     "Use correct runtime dir path for OpenBSD"),
    ("fix(win32): handle long paths on windows", "Handle long paths on windows"),
    ("fix(cli): handle long paths", "Handle long paths"),               # not a platform
    ("windows: handle long paths", "Windows: handle long paths"),       # no type: as written
])
def test_clean_subject(subject: str, question: str) -> None:
    assert clean_subject(subject) == question


def test_one_line_never_keeps_surrogates_or_controls() -> None:
    assert one_line(b"caf\xe9 \x00x\ty") == "caf\ufffd x y"
    assert one_line("lone \udc80 surrogate\u2028next") == "lone ? surrogate next"


def _log(*records: tuple[str, str, str, list[bytes]]) -> bytes:
    out = b""
    for sha, parents, subject, stats in records:
        out += b"\0" + f"{sha} {parents}".rstrip(" ").encode() + b"\0" + subject.encode() \
            + b"\0\0\n" + b"".join(stats) + b"\0"   # an empty body
    return out


def test_parse_log_reads_renames_binaries_and_odd_names() -> None:
    data = _log(
        (A, B, "Rename it", [b"3\t1\t\0old/x.py\0new/x.py\0", b"-\t-\timg.png\0"]),
        (B, "", "First", [b"2\t0\t" + C.encode() + b"\0", b"1\t0\tcaf\xe9.py\0",
                          b"1\t0\tbad\x1bname.py\0"]))
    first, second = parse_log(data)
    assert first == Commit(A, (B,), "Rename it", (FileChange("new/x.py", 3, 1, "old/x.py"),
                                                 FileChange("img.png", 0, 0)))
    # a file named like a sha is a file; names that are not UTF-8 or hold controls go
    assert second == Commit(B, (), "First", (FileChange(C, 2, 0),))


def test_parse_log_ignores_garbage_and_a_truncated_tail() -> None:
    assert parse_log(b"not a log\0\0\n1\t2\tx.py\0") == []
    (only,) = parse_log(b"\0" + A.encode() + b"\0subject\0\0\n1\t0\t\0a.py")
    assert (only.sha, only.subject, only.changes) == (A, "subject", ())  # rename cut short


def test_top_files_hold_more_than_half_of_the_lines() -> None:
    assert top_files({"a": 10}) == {"a"}
    assert top_files({"a": 10, "b": 9, "c": 2}) == {"a", "b"}
    assert top_files({"a": 50, "b": 10, "c": 10}) == {"a"}
    assert top_files({"a": 5, "b": 5}) == {"a", "b"}


def test_top_files_grade_a_tie_alike() -> None:
    # round 11: a file with as many lines as the last grade-3 file is graded 3 too
    assert top_files({"a": 4, "b": 3, "c": 3}) == {"a", "b", "c"}
    assert top_files({"b": 10, "a": 10, "c": 10}) == {"a", "b", "c"}
    assert top_files({"a": 7, "b": 3, "c": 3}) == {"a"}  # a holds more than half alone
    assert top_files({"a": 4, "b": 3, "c": 2, "d": 2}) == {"a", "b"}


def test_mine_counts_every_skip_and_follows_renames() -> None:
    commits = [
        Commit("1" * 40, ("2" * 40,), "Bump version to 2.0.1", (FileChange("pkg/a.py", 1, 1),)),
        Commit("2" * 40, ("3" * 40,), "Move the parser to a new module",
               (FileChange("pkg/new.py", 0, 0, "pkg/old.py"),)),
        Commit("3" * 40, ("4" * 40, "5" * 40), "Merge pull request #1 from x/y", ()),
        Commit("4" * 40, ("6" * 40,), "Parse headers case-insensitively",
               (FileChange("pkg/old.py", 9, 1), FileChange("pkg/a.py", 1, 0),
                FileChange("tests/test_a.py", 30, 0))),
    ]
    mined = mine(commits, is_module_path=lambda p: not p.startswith("tests/"),
                 modules=["pkg/a.py", "pkg/new.py"])
    assert mined.skipped == {SKIP_VERSION: 1, SKIP_MERGE: 1}
    move, parse = mined.candidates
    assert move.grades == {"pkg/new.py": 3} and move.shape == "focused"
    assert parse.grades == {"pkg/new.py": 3, "pkg/a.py": 2}
    assert parse.paths_then == {"pkg/new.py": "pkg/old.py", "pkg/a.py": "pkg/a.py"}


def test_added_lines_and_evidence_facts() -> None:
    patch = (b"diff --git a/p.py b/p.py\n--- a/p.py\n+++ b/p.py\n@@ -1 +1,3 @@\n"
             b"-old_line = 1\n+def compute_budget(attempts):\n+    return max(0, LIMIT - "
             b"attempts)\n+x = 1\n"
             b"diff --git a/\"q\\tx.py\" b/\"q\\tx.py\"\n+++ \"b/q\\tx.py\"\n+ignored_line = 1\n")
    added = added_lines(patch)
    assert added == {"p.py": ["def compute_budget(attempts):",
                              "return max(0, LIMIT - attempts)", "x = 1"]}
    today = ["def compute_budget(attempts):", "    return max(0,   LIMIT - attempts)"]
    # found whitespace aside, quoted as today's file spells it (isort's review, round 14:
    # a fact with one space before its comment did not match the file's two)
    assert evidence_facts(added["p.py"], today) == ["return max(0,   LIMIT - attempts)",
                                                    "def compute_budget(attempts):"]
    assert evidence_facts(added["p.py"], ["something else"]) == []


def test_a_fact_is_a_line_found_at_most_twice_in_todays_file() -> None:
    # arrow's review (round 14): `raise ValueError(` 9 times in arrow.py, a
    # `_format_timeframe` signature every locale repeats; isort's `return output` 7 times
    added = ["raise ValueError(f\"Invalid granularity {granularity!r}\")",
             "return self._format_timeframe(timeframe, delta)",
             "granularity = self._granularity_of(delta)"]
    today = [*added, "    return self._format_timeframe(timeframe,  delta)"]
    # twice: a twin is a fact, after the lines the file holds once (round 15)
    assert evidence_facts(added, today) == [added[2], added[0], added[1]]
    thrice = [*today, "return self._format_timeframe(timeframe, delta)"]
    assert evidence_facts(added, thrice) == [added[2], added[0]]
    assert evidence_facts(added, [*thrice, added[0], added[0]]) == [added[2]]


@pytest.mark.parametrize("subject", ["Fix pyright type errors", "Fix mypy errors",
                                     "Improve static typing of 3rd party imports"])
def test_type_checker_subjects_are_chores(subject) -> None:
    from evaluator.core.commits import _CHORE
    assert _CHORE.search(subject)
    assert not _CHORE.search("Fix generic typed dict `TypeError` on Python 3.10")
def test_parse_log_reads_the_bodys_first_line() -> None:
    data = (b"\0" + f"{A} {B} {C}".encode() + b"\0Merge pull request #7 from dev/x\0"
            b"\n  Give every request a timeout\x1b[0m\n\nMore.\n\0\n3\t1\tpkg/a.py\0")
    (merge,) = parse_log(data)
    assert merge.body_line == "Give every request a timeout"
    assert merge.changes == (FileChange("pkg/a.py", 3, 1),)


@pytest.mark.parametrize(("subject", "parents", "body", "expected"), [
    ("Merge pull request #7 from dev/x", 2, "Give a timeout", (7, "Give a timeout")),
    ("Merge pull request #7 from dev/x", 2, "", (7, "")),           # no title: a merge
    ("Retry idempotent requests (#11)", 2, "", (11, "Retry idempotent requests (#11)")),
    ("Cache parsed URLs (#9)", 1, "", (9, "Cache parsed URLs (#9)")),
    ("Merge branch 'stable'", 2, "", None),
    ("Fix (#9) in the middle", 1, "", None),
    ("Merge pull request #7 from dev/x", 1, "Title", None),          # not a merge
])
def test_a_merged_pull_request_and_its_title(subject: str, parents: int, body: str,
                                              expected: tuple[int, str] | None) -> None:
    commit = Commit(A, (B, C)[:parents], subject, (), body)
    assert pull_request(commit) == expected


def _c(sha: str, *parents: str, subject: str = "Change things here", body: str = "") -> Commit:
    return Commit(sha * 40, tuple(p * 40 for p in parents), subject, (), body)


def test_pull_request_commits_are_those_only_its_second_parent_reaches() -> None:
    """main: 1 - 2 - M(2, 5) - 6; the pull request: 1 - 4 - 5, with main merged into it
    (5 has parents 4 and 2): 4 and 5 are the pull request's, 1 and 2 are not; a branch
    merge (B) brings in 8 without making it a pull request's commit. Dates out of order
    (the list is not topological) do not matter."""
    commits = [
        _c("b", "6", "8", subject="Merge branch 'stable'"),
        _c("8", "1"),
        _c("6", "m"),
        _c("1"),                                   # listed early: a skewed date
        _c("m", "2", "5", subject="Merge pull request #3 from dev/x", body="Do x"),
        _c("5", "4", "2", subject="Merge branch 'main' into x"),
        _c("4", "1"),
        _c("2", "1"),
    ]
    assert pull_request_commits(commits) == {"4" * 40, "5" * 40}
    mined = mine(commits, is_module_path=lambda p: True, modules=[])
    assert mined.skipped[SKIP_IN_PULL] == 2
    # Without a title, or merging branches, nothing asks for the pull request: its
    # commits are asked themselves.
    untitled = [_c("m", "2", "5", subject=c.subject) if c.sha == "m" * 40 else c
                for c in commits]
    assert pull_request_commits(untitled) == set()
    merging = [_c("m", "2", "5", subject="Merge pull request #3 from dev/x",
                  body="Merge main into x") if c.sha == "m" * 40 else c for c in commits]
    assert pull_request_commits(merging) == set()


@pytest.mark.parametrize("subject", ["Merge stable into main (#3521)",
                                     "Backport from `main` to `stable` branch (#3508)",
                                     "Merge commit from fork"])
def test_a_pull_request_that_merges_branches_is_a_merge(subject: str) -> None:
    commit = Commit(A, (B,), subject, (FileChange("pkg/a.py", 1, 1),))
    mined = mine([commit], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert mined.skipped == {SKIP_MERGE: 1}


@pytest.mark.parametrize("subject", ["Merge branch 'stable'", "Merge main into x",
                                     "Merge 2.3.x", "Merge remote-tracking branch 'a/b'",
                                     "Merge"])
def test_subjects_that_merge_branches(subject: str) -> None:
    commit = Commit(A, (B,), subject, (FileChange("pkg/a.py", 1, 1),))
    mined = mine([commit], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert mined.skipped == {SKIP_MERGE: 1}


def test_a_title_that_starts_with_the_verb_merge_is_a_question() -> None:
    # werkzeug's "Merge any number of slashes" (kept by the held-out review)
    commit = Commit(A, (B,), "Merge any number of slashes (#2977)",
                    (FileChange("pkg/a.py", 1, 1),))
    mined = mine([commit], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert [c.question for c in mined.candidates] == ["Merge any number of slashes"]


def test_facts_about_the_question_come_before_the_commits_other_topic() -> None:
    # werkzeug's "Deprecate storage_class attributes" also rewrote access_route's docstring
    added = ["items = parse_forwarded_list(self.headers)",
             "The route taken from the client to the application server.",
             "parameter_storage_class: None = None",
             "warn_storage_class_deprecated(type(self))"]
    facts = evidence_facts(added, added, about="Deprecate `storage_class` attributes",
                           limit=2)
    assert facts == ["warn_storage_class_deprecated(type(self))",
                     "parameter_storage_class: None = None"]
    # without a question: code before a docstring's prose (round 15), then the most words;
    # beside two lines of code or more the prose is no fact (round 17)
    assert evidence_facts(added, added) == [
        "items = parse_forwarded_list(self.headers)",
        "warn_storage_class_deprecated(type(self))",
        "parameter_storage_class: None = None"]


@pytest.mark.parametrize(("added", "facts"), [
    # one line of code: the prose completes the two a question needs
    (["check_digest_size(name, digest_size)",
      "The digest size is checked against the algorithm's own size."],
     ["check_digest_size(name, digest_size)",
      "The digest size is checked against the algorithm's own size."]),
    # two lines of code: the prose goes, and nothing takes its place
    (["check_digest_size(name, digest_size)", "def make_hasher(name, digest_size=None):",
      "The digest size is checked against the algorithm's own size."],
     ["def make_hasher(name, digest_size=None):", "check_digest_size(name, digest_size)"]),
    # prose alone: the question's facts are the prose (two lines, both kept)
    (["The digest size is checked against the algorithm's own size.",
      "A hasher is made once per algorithm name and reused."],
     ["The digest size is checked against the algorithm's own size.",
      "A hasher is made once per algorithm name and reused."]),
])
def test_prose_completes_two_facts_but_never_adds_a_third(added, facts) -> None:
    assert sorted(evidence_facts(added, added)) == sorted(facts)


@pytest.mark.parametrize(("line", "is_prose"), [
    ("The digest size is checked against the algorithm's own size.", True),
    ('"""A tuple that ensures that hash() will be called no more than once', True),
    ('r"""Return the mapping of mime headers."""', True),
    ('""":yield: all user and site data directories."""', True),
    ('"""Close."""', False),                                   # under three words
    ('"this is a message string",', False),                    # a string literal
    ('doc = """Return the mapping of mime headers."""', False),  # code that holds one
    ("if encoding_overwrite is not None:", False),
])
def test_prose_is_a_line_of_words_or_a_docstrings_opening(line, is_prose) -> None:
    from evaluator.core.commit_facts import prose
    assert prose(line) is is_prose


_SRC = ["src/pkg/__init__.py", "src/pkg/core.py", "src/pkg/net.py", "dummyserver/server.py",
        "tasks/release.py"]


def _one(path: str, *more: str, subject: str = "Use retrying sockets logic") -> Commit:
    return Commit(A, (B,), subject, tuple(FileChange(p, 5, 1) for p in (path, *more)))


@pytest.mark.parametrize("paths", [("dummyserver/server.py",), ("tasks/release.py",),
                                   ("dummyserver/server.py", "tasks/release.py")])
def test_in_a_src_layout_a_change_to_tooling_only_is_skipped(paths) -> None:
    # urllib3 history-20 (dummyserver/ only), build history-01/-02 (tasks/release.py only)
    mined = mine([_one(*paths)], is_module_path=lambda p: True, modules=_SRC)
    assert mined.skipped == {SKIP_TOOLING: 1} and mined.reasons == {A: SKIP_TOOLING}


def test_tooling_follows_renames_into_the_src_package() -> None:
    # a file outside src/ then, renamed into the package since: the library's
    commits = [Commit(C, (A,), "Move the package to src", (FileChange("src/pkg/net.py", 0, 0,
                                                                      "pkg/net.py"),)),
               _one("pkg/net.py")]
    mined = mine(commits, is_module_path=lambda p: True, modules=_SRC)
    assert [c.grades for c in mined.candidates] == [{"src/pkg/net.py": 3},
                                                    {"src/pkg/net.py": 3}]


def test_a_change_to_the_src_package_and_tooling_is_asked() -> None:
    mined = mine([_one("src/pkg/net.py", "dummyserver/server.py")],
                 is_module_path=lambda p: True, modules=_SRC)
    assert not mined.skipped
    assert set(mined.candidates[0].grades) == {"src/pkg/net.py", "dummyserver/server.py"}


@pytest.mark.parametrize(("modules", "path"), [
    (["pkg/__init__.py", "pkg/core.py", "scripts/release.py"], "scripts/release.py"),  # flat
    (["src/main.py", "src/util.py", "tools/gen.py"], "tools/gen.py"),   # no package in src/
    (["src/pkg/__init__.py", "lib/a.py", "lib/b.py", "scripts/gen.py"], "lib/a.py"),  # few
    (["lib/src/pkg/a.py", "lib/src/pkg/b.py", "tools/gen.py"], "tools/gen.py"),  # not top
])
def test_without_a_src_package_holding_most_modules_nothing_is_tooling(modules, path) -> None:
    mined = mine([_one(path)], is_module_path=lambda p: True, modules=modules)
    assert not mined.skipped
    assert [c.grades for c in mined.candidates] == [{path: 3}]



def test_added_lines_read_header_look_alikes_in_a_hunk_as_content() -> None:
    # round 9: "+++ b/c" inside a hunk is the added line "++ b/c", not the next file
    patch = (b"diff --git a/p.py b/p.py\n--- a/p.py\n+++ b/p.py\n@@ -1 +1,2 @@\n"
             b"--- a/x\n+++ b/c\n+after_the_look_alike = 1\n")
    assert added_lines(patch) == {"p.py": ["++ b/c", "after_the_look_alike = 1"]}


@pytest.mark.parametrize("subject", [
    # wording announced as such (loguru history-06, issue 24's eighth fresh review)
    "Trivial grammar fix (#1429)", "Fix grammatical error", "Grammar.",
    "Minor grammar fix in the warning", "Fix wording in warning message",
    "Rephrase the warning printed when run as root", "Reword the error message",
    # dead code removed (pip history-04)
    "Remove the unreachable (latest) marker branch (#14178)",
    "Remove dead code from _syscall_wrapper", "Removed unused argument to Headers",
    "Drop unreachable except block", "Kill now unused assigned_names",
    "Add pragma on unreachable code",
    # a refactor announced as minor (httpcore history-16)
    "Docstrings and minor refactor for HTTP/2. (#720)", "Small refactor to looping over mro",
    "Minor refactoring of HttpProtocol",
    # code moved into a helper of its own (loguru history-16)
    "Expose `is_valid` as dedicated private method (#1270)",
    "Extract encoding detection into helper function", "Move auth rebuild to its own method.",
    "Factor out editable parsing into a function",
    # a type checker's ignore comments (round 13, virtualenv history-18)
    "Replace ty: ignore with proper type declarations for inheritance patterns",
    "Remove unused type: ignore (#3038)", "Add type: ignore to requirements loop",
])
def test_wording_dead_code_and_minor_refactor_subjects_are_chores(subject: str) -> None:
    commit = Commit(A, (B,), subject, (FileChange("pkg/a.py", 3, 1),))
    mined = mine([commit], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert mined.skipped == {SKIP_CHORE: 1}


@pytest.mark.parametrize("subject", [
    # a parser's grammar, a message changed for what it says, not its words
    "Remove 'headers' from parse_lines grammar", "Fix marker grammar to accept extras",
    "Improve error message to mention dynamic formatter caveat",
    # unused or dead things that are behaviour, not code
    "Fix crash on unused argument", "Remove dead lock in pool",
    "Remove dead connections from the pool", "Drop unused connections after keep-alive expiry",
    "Close unused sockets on shutdown",
    # a minor fix is a fix; a method made public is a feature
    "Minor fix: Initialise _trace in Rule init", "Small fix for potential missing url variable",
    "Expose converter as a decorator", "Expose the regex used to parse versions as a constant",
    "Move the retry budget to the pool so retries are shared",
    # an ignore list of a type, not a type checker's comment
    "Fix type inference for ignore lists",
    # a parser's grammar, and code moved into a function for a stated purpose (the final
    # read of round 13)
    "Fix grammar parsing of extras", "Fix the grammar for extras in markers",
    "Move header validation to a function so it runs for HTTP/2 too",
    "Extract retry into a helper and retry on 503",
    # a file named like a helper is no helper of its own (a move between files)
    "Move the URL helpers to helpers.py and split paths",
])
def test_look_alikes_of_wording_and_dead_code_chores_are_asked(subject: str) -> None:
    commit = Commit(A, (B,), subject, (FileChange("pkg/a.py", 3, 1),))
    mined = mine([commit], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert [c.question for c in mined.candidates] == [clean_subject(subject)]


# issue 24's ninth fresh review (round 12)
@pytest.mark.parametrize(("subject", "reason"), [
    ("🐛 fix(type): correct argparse override signatures for ty 0.0.33 (#3932)", "chore"),
    ("fix(typing): Using correct typing for `param_hint`", "chore"),
    ("fix(ci): drop module scope from commonprefix warning filter (#3735)", "chore"),
    ("fix(deps): raise the floor of the parser", "chore"),
    ("perf(tests): freeze GC after collection (#1385)", "tests"),
    ("fix(docs): correct path for built documentation (#3680)", "docs"),
    ("🔧 chore(config): drop stale loader ignores", "chore"),
    # look-alikes: a scope that names code, not a chore
    ("🐛 fix(cli): keep the override when a section is reached by reference", None),
    ("fix(typer): keep the default of an option", None),
    ("feat(styles): add a dark theme to the renderer", None),
    # "style" and "types" name modules as often as chores (rich's style.py, click's types.py)
    ("fix(style): parse 'not bold' in Style.parse", None),
    ("fix(types): ParamType.convert accepts None", None),
])
def test_a_conventional_scope_that_names_a_chore(subject: str, reason: str | None) -> None:
    from evaluator.core.commit_filters import SKIP_DOCS_SUBJECT, SKIP_TESTS_SUBJECT
    commit = Commit(A, (B,), subject, (FileChange("pkg/a.py", 3, 1),))
    mined = mine([commit], is_module_path=lambda p: True, modules=["pkg/a.py"])
    want = {"chore": SKIP_CHORE, "tests": SKIP_TESTS_SUBJECT, "docs": SKIP_DOCS_SUBJECT}
    assert mined.skipped == ({want[reason]: 1} if reason else {})


def test_a_subject_cut_off_is_joined_with_its_rest_or_skipped() -> None:
    # alembic history-04: GitHub cut the title at "postgresql_inc…"
    cut = "Fix rendering of Column objects in dialect kwargs like postgresql_inc…"
    alone = Commit(A, (B,), cut, (FileChange("pkg/a.py", 3, 1),), "Fixed rendering of …")
    mined = mine([alone], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert mined.skipped == {SKIP_CUT_OFF: 1}
    squash = Commit(A, (B,), cut + " (#1802)", (FileChange("pkg/a.py", 3, 1),))
    assert mine([squash], is_module_path=lambda p: True,
                modules=["pkg/a.py"]).skipped == {SKIP_CUT_OFF: 1}
    joined = Commit(A, (B,), cut, (FileChange("pkg/a.py", 3, 1),), "…lude")
    mined = mine([joined], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert [c.question for c in mined.candidates] == [
        "Fix rendering of Column objects in dialect kwargs like postgresql_include"]
    # a body that starts with "…" under a whole subject is no rest of it
    whole = Commit(A, (B,), "Force prefetch on send", (FileChange("pkg/a.py", 3, 1),),
                   "… otherwise we run out of sockets")
    mined = mine([whole], is_module_path=lambda p: True, modules=["pkg/a.py"])
    assert [c.question for c in mined.candidates] == ["Force prefetch on send"]
    # a body line of "…" alone, or one cut off itself, holds no rest: still skipped
    for body in ("…", "… ", "…lude and more…"):
        bare = Commit(A, (B,), cut, (FileChange("pkg/a.py", 3, 1),), body)
        assert mine([bare], is_module_path=lambda p: True,
                    modules=["pkg/a.py"]).skipped == {SKIP_CUT_OFF: 1}, body


@pytest.mark.parametrize(("line", "little"), [
    # the paired reviews of round 14 replaced these: a local set from a lone value …
    ("target = child", True),
    ("bracket_depth = 0", True),
    ("seen_content_length = None", True),
    ("lines_before = []", True),
    ("secs = delta.seconds", True),
    ("htkeys_t *keys = md->keys;", True),
    # … converted from itself, a counter stepped, a lone value returned
    ("root = Path(root)", True),
    ("bracket_depth -= 1", True),
    ("return output", True),
    ("return None", True),
    # an attribute, a constant or an annotated name set declares something: asked for
    ("self.max_count = max", False),
    ("END_BOUNDARY = 11", False),
    ("_CURRENT.locale = None", False),
    ("parameter_storage_class: None = None", False),
    # a value computed, a name accumulated, a comparison, a call returned
    ("lines_before += line", False),
    ("entry_t *entries = htkeys_entries(keys);", False),
    ("x_option = getattr(sys, '_xoptions', {}).get('cpu_count')", False),
    ("if delta == 0:", False),
    ("return os.path.dirname(p)", False),
])
def test_round15_a_line_that_says_little_is_no_fact(line: str, little: bool) -> None:
    from evaluator.core.commit_facts import says_little
    assert says_little(line) is little
    good = ["warn_storage_class_deprecated(type(self))",
            "items = parse_forwarded_list(self.headers)"]
    facts = evidence_facts([line, *good], [line, *good])
    assert (line in facts) is not (little or line == "if delta == 0:")  # that: a fragment


def test_round15_a_line_that_says_little_never_completes_the_two_facts_needed() -> None:
    added = ["theme_config = {}", "if theme_config is None:", "count += 1"]
    assert evidence_facts(added, added) == ["if theme_config is None:"]


@pytest.mark.parametrize(("line", "is_prose"), [
    ("Converts an integer to Associated Press style.", True),
    ("`newline` is either CRLF, LF, or CR, but `decoded_contents` is decoded with", True),
    ('"(received {} bytes, expected {})".format(', False),   # a message is code
    ("if encoding_overwrite is not None:", False),
    ("warn_storage_class_deprecated(type(self))", False),
])
def test_round15_prose(line: str, is_prose: bool) -> None:
    from evaluator.core.commit_facts import prose
    assert prose(line) is is_prose


def test_round15_a_condition_comes_before_other_code_and_prose_last() -> None:
    # black "Don't double-decode input": the reviewer asked for the condition, not the
    # docstring line the commit fixed on the side
    added = ["`newline` is either CRLF, LF, or CR, but `decoded_contents` is decoded with",
             "decoded = decode_bytes(src_contents, mode, encoding_overwrite)",
             "if encoding_overwrite is not None:"]
    # the docstring line comes last (round 15), and beside two of code it goes (round 17)
    assert evidence_facts(added, added) == [added[2], added[1]]
    assert evidence_facts(added[::2], added) == [added[2], added[0]]


def test_round15_the_question_matches_a_plural_or_a_verb_ending() -> None:
    # arrow "Fix ordinals for norwegian languages": the ordinal line, not the week strings
    added = ['"weeks": "{0} uker",', "def _ordinal_number(self, n: int) -> str:",
             '"week": "ei veke",']
    facts = evidence_facts(added, added, about="Fix ordinals for norwegian languages")
    assert facts[0] == "def _ordinal_number(self, n: int) -> str:"
