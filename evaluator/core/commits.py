"""Questions from a repository's own history: what ``init --from-history`` drafts.

Every commit describes a change in a person's words, and its diff names the files that
answer it (the way SWE-bench, Loc-Bench and SweRank build localisation questions from an
issue's or pull request's text and the files its fix changed). This module is pure: it
reads the bytes of ``git log`` and ``git show`` (:func:`evaluator.git_repo.commit_log`,
:func:`evaluator.git_repo.commit_patch`) and decides, per commit:

* the **question**: the subject, cleaned deterministically (:func:`clean_subject`):
  conventional-commit prefixes (``fix(core):``), issue and pull-request references
  (``#123``, ``GH-123``, ``Fixes #12``, a trailing ``(#123)``) and control characters go.
  A merged **pull request** asks its title (:func:`pull_request`): GitHub's merge commit
  "Merge pull request #N from …" has it as its body's first line (the merge's changes are
  its diff against the first parent, the PR's own commits are skipped: its title asks for
  them), a merge or a squash commit "Title (#N)" has it as its subject;
* the **relevant modules**: the files it changed that are modules of the universe by their
  path, followed through later renames to today's paths (:class:`RenameMap`); a file that
  no longer exists is dropped. Grade 3 for the files carrying most of the changed lines
  (the fewest files, most lines first, holding more than half of them, and any file tied
  with the last), 2 for the rest;
* the **shape**: ``focused`` for one module, ``cross-file`` for two or more;
* or why it is **skipped** (:data:`SKIP_REASONS`): the first commit, a merge of branches (not
  a pull request), a commit of a merged pull request, a revert or
  a commit reverted later (git's ``Revert "subject"``), a version bump, a
  change to tests/docs/CI only, a change over the size limit, files that no longer exist,
  a subject that says too little or is cut off (``…``), a typo/lint/typing/clean-up
  subject (or a conventional-commit scope naming one: ``fix(type):``), a Python-version
  drop, a change to typing examples only (never graded 3 otherwise: :func:`typing_example`),
  a change only to tooling outside a src layout's ``src/`` package (:func:`src_layout`).

Commit messages are hostile input: they are decoded with replacement characters (never
surrogates), control characters become spaces, and a subject longer than
:data:`MAX_SUBJECT_CHARS` is skipped, never cut.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evaluator.core.askability import SKIP_OUTRANKED
from evaluator.core.commit_filters import (
    FILTER_REASONS,
    SKIP_DOCS_SUBJECT,
    SKIP_TESTS_SUBJECT,
    subject_reason,
)
from evaluator.core.commit_grades import in_src, src_layout, top_files, typing_example
from evaluator.core.commit_subject import (
    branch_title,
    dependency_upgrade,
    drop_backport_label,
    drop_backport_mark,
    drop_emoji,
    drop_emptied,
    drop_issue_prefix,
    drop_retry,
    lint_chore,
    ported_title,
    untagged,
)
from evaluator.core.commit_topics import SKIP_REPEAT, SKIP_TWO_TOPICS
from evaluator.core.commit_wording import SKIP_WORDING
from evaluator.core.giveaway import PLATFORM_WORDS, PLATFORMS
from evaluator.core.groundtruth import MAX_SUBJECT_CHARS, unnameable
from evaluator.core.textcheck import HIDDEN

#: A change over either limit (in the modules it touches) is too big to be one question.
MAX_FILES = 8
MAX_LINES = 400
#: ... or a patch, or a module's text at the commit, over this many MiB (git's output is
#: read no further: :data:`evaluator.git_repo.MAX_PATCH_BYTES`; no larger module is indexed)
MAX_CHANGE_MIB = 2
MIN_QUESTION_WORDS = 3

SKIP_ROOT = "the repository's first commit (it adds everything)"
SKIP_MERGE = "merge of branches"
SKIP_IN_PULL = "a commit of a merged pull request (its title is asked instead)"
SKIP_BRANCH_TITLE = "a pull request titled by its branch name (its commits are asked)"
SKIP_REVERT = "revert, or reverted later"
SKIP_VERSION = "version bump or release"
SKIP_NO_MODULE = "changes only tests, docs, CI or other files outside the module universe"
SKIP_SIZE = (f"over the size limit ({MAX_FILES} modules, {MAX_LINES} changed lines, or "
             f"{MAX_CHANGE_MIB} MiB of patch or module)")
SKIP_GONE = "its modules no longer exist"
SKIP_VAGUE = f"subject too short to ask (under {MIN_QUESTION_WORDS} words once cleaned)"
SKIP_LONG = f"subject over {MAX_SUBJECT_CHARS} characters"
SKIP_CUT_OFF = "subject cut off (ends with \"…\", the rest not in the body)"
SKIP_DUPLICATE = "same question as a newer commit"
SKIP_CHORE = "a typo, formatting, lint, typing or clean-up change"
SKIP_PYTHON_DROP = "drops a Python version (support and syntax chores)"
SKIP_TYPING_EXAMPLES = "changes only typing examples (and type stubs) among the modules"
SKIP_TOOLING = ("changes only tooling outside the src/ package (test servers, release "
                "scripts)")
SKIP_GIVEAWAY = ("names its answer (a file or symbol of a module graded 3, a public "
                 "class or function of one graded 2, or a command-line option it adds)")
SKIP_REASONS: tuple[str, ...] = (SKIP_ROOT, SKIP_MERGE, SKIP_IN_PULL, SKIP_BRANCH_TITLE,
                                 SKIP_REVERT, SKIP_VERSION,
                                 SKIP_NO_MODULE, SKIP_SIZE, SKIP_GONE, SKIP_VAGUE, SKIP_LONG,
                                 SKIP_CUT_OFF,
                                 SKIP_DUPLICATE, SKIP_CHORE, SKIP_PYTHON_DROP, SKIP_TYPING_EXAMPLES,
                                 SKIP_TOOLING, SKIP_GIVEAWAY,
                                 *FILTER_REASONS, SKIP_REPEAT, SKIP_TWO_TOPICS,
                                 SKIP_WORDING, SKIP_OUTRANKED)


@dataclass(frozen=True)
class FileChange:
    """One file of a commit: its path after the commit (``old`` before it, for a rename) and
    its added/deleted lines (0 for a binary file)."""

    path: str
    added: int
    deleted: int
    old: str | None = None

    @property
    def lines(self) -> int:
        return self.added + self.deleted


@dataclass(frozen=True)
class Commit:
    sha: str
    parents: tuple[str, ...]
    subject: str          # one line, control characters replaced, whitespace collapsed
    changes: tuple[FileChange, ...]
    body_line: str = ""   # the body's first non-empty line, as one line (a PR's title)


_HEADER = re.compile(r"\n?([0-9a-f]{40}|[0-9a-f]{64})((?: (?:[0-9a-f]{40}|[0-9a-f]{64}))*) ?\Z")
_NUMSTAT = re.compile(r"\n?(\d+|-)\t(\d+|-)\t(.*)\Z", re.DOTALL)
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-_])")


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def one_line(raw: bytes | str) -> str:
    """Hostile text as one printable line: control characters become spaces, runs of
    whitespace one space; undecodable bytes become U+FFFD (never a surrogate)."""
    text = _text(raw) if isinstance(raw, bytes) else \
        raw.encode("utf-8", "replace").decode("utf-8")
    return " ".join(_CONTROLS.sub(" ", HIDDEN.sub("", _ANSI.sub("", text))).split())


def _number(text: str) -> int:
    return int(text) if text.isdigit() else 0


def parse_log(data: bytes) -> list[Commit]:
    """The commits of ``git log -z --format=%x00%H %P%x00%s%x00%b --numstat -M``, newest
    first.

    A state machine over the NUL-separated fields: a header (sha and parents), then the
    subject and the body (always the next two fields), then numstat entries; a rename's
    entry has an empty path followed by the old and the new path, which are consumed as
    such (a file named like a sha cannot start a commit). Paths that are not UTF-8 or hold
    control characters are left out (no ground truth can grade them)."""
    fields = data.split(b"\0")
    commits: list[Commit] = []
    sha: str | None = None
    parents: tuple[str, ...] = ()
    subject = body = ""
    changes: list[FileChange] = []

    def close() -> None:
        if sha is not None:
            commits.append(Commit(sha, parents, subject, tuple(changes), body))

    i = 0
    while i < len(fields):
        raw = fields[i]
        i += 1
        text = _text(raw)
        if not text.strip("\n"):
            continue
        stat = _NUMSTAT.match(text) if sha is not None else None
        if stat is not None:
            path = stat.group(3)
            old = None
            if not path:  # a rename: old and new path follow
                old_raw = fields[i] if i < len(fields) else b""
                new_raw = fields[i + 1] if i + 1 < len(fields) else b""
                i += 2
                old, path = decoded_path(old_raw), decoded_path(new_raw)
            else:
                path = decoded_path(raw[raw.index(b"\t", raw.index(b"\t") + 1) + 1:])
            if path is not None:
                changes.append(FileChange(path, _number(stat.group(1)),
                                          _number(stat.group(2)), old))
            continue
        header = _HEADER.match(text)
        if header is None:
            continue  # nothing else is expected here; never guessed at
        close()
        sha = header.group(1)
        parents = tuple(header.group(2).split())
        subject = one_line(fields[i]) if i < len(fields) else ""
        lines = _text(fields[i + 1]).splitlines() if i + 1 < len(fields) else []
        body = next((one_line(line) for line in lines if one_line(line)), "")
        i += 2
        changes = []
    close()
    return commits


def decoded_path(raw: bytes) -> str | None:
    try:
        path = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return None if not path or unnameable(path) else path


# ----------------------------------------------------------------------------- the question

_TYPES = ("feat", "feature", "fix", "bugfix", "hotfix", "docs", "doc", "chore", "refactor",
          "perf", "test", "tests", "build", "ci", "style", "revert", "deps", "security")
#: ``fix(cli): …``, ``feat!: …``; with a scope, the colon may be missing: ``Feat(cli) add
#: --format= option`` (the seventeenth review's python-dotenv history-06).
_CONVENTIONAL = re.compile(r"^(?:" + "|".join(_TYPES) + r")(?:(?:\([^)]{0,60}\))?!?\s*:\s*|"
                           r"\([\w ,./-]{1,60}\)!?\s+(?=\S))", re.IGNORECASE)
#: Conventional-commit types that change no behaviour, read before the subject is cleaned.
_TYPE_REASONS = {"refactor": SKIP_CHORE, "style": SKIP_CHORE, "chore": SKIP_CHORE,
                 "ci": SKIP_CHORE, "build": SKIP_CHORE, "docs": SKIP_DOCS_SUBJECT,
                 "doc": SKIP_DOCS_SUBJECT, "test": SKIP_TESTS_SUBJECT,
                 "tests": SKIP_TESTS_SUBJECT}


#: Conventional-commit scopes that name a chore, docs or tests whatever the type: ``fix(type):
#: Correct argparse override signatures …`` (issue 24's ninth fresh review, tox history-19,
#: a typing chore), ``perf(tests): …``, ``fix(docs): …``.
_SCOPE_REASONS = {**dict.fromkeys(("type", "typing", "typecheck", "mypy", "pyright",
                                   "ty", "lint", "linting", "ci", "deps",
                                   "dependencies"), SKIP_CHORE),
                  **dict.fromkeys(("doc", "docs", "documentation"), SKIP_DOCS_SUBJECT),
                  **dict.fromkeys(("test", "tests", "testing"), SKIP_TESTS_SUBJECT)}
_SCOPE = re.compile(r"\(\s*([\w-]+)\s*\)")


def _conventional_reason(text: str) -> str | None:
    """Why a ``refactor:``, ``style:``, ``chore:``, ``ci:``, ``build:``, ``docs:`` or
    ``test:`` subject is skipped (``fix:``, ``feat:``, ``perf:`` are asked), or one of any
    type whose scope names a chore, docs or tests (:data:`_SCOPE_REASONS`: ``fix(type):``).
    A leading gitmoji (``🐛 fix(type): …``) is read past."""
    match = _CONVENTIONAL.match(drop_emoji(text).strip())
    kind = re.match(r"[a-z]+", match.group(0).lower()) if match else None
    if match is None or kind is None:
        return None
    scope = _SCOPE.search(match.group(0))
    return _TYPE_REASONS.get(kind.group(0)) or \
        (_SCOPE_REASONS.get(scope.group(1).lower()) if scope else None)


_BRACKET_TAG = re.compile(r"^\[[^\]]{1,30}\]\s*")
_CLOSING = re.compile(r"\b(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|refs?|see|part of|"
                      r"related to)\s*:?\s+(?:[\w.-]+/[\w.-]+)?(?:#|gh-)\d+",
                      re.IGNORECASE)
_REF = re.compile(r"(?:[\w.-]+/[\w.-]+)?(?:#|\bgh-)\d+\b", re.IGNORECASE)
#: A reference with the words that only pointed at it: "described in #348", "(regression
#: from #78)" (the eighteenth review's pytest-cov history-13, -14, drafted as "described
#: in -" and "(regression from )").
_POINTED_REF = re.compile(r"(?:\b(?:(?:described|reported|mentioned|introduced|discussed)\s+)?"
                          r"(?:in|from|see|by|at|of|on)\s+)?" + _REF.pattern, re.IGNORECASE)
#: A changelog's list mark and category leading a subject, a ticket reference in square
#: brackets anywhere: "- [bug] Fixed … [ticket:190]" (the eighteenth review's mako).
_CHANGELOG_MARK = re.compile(r"^[-*•]\s+(?=\[)")
_TICKET = re.compile(r"\s*\[(?:ticket|issue|bug|gh|pr)\s*[:#]?\s*\d+\]", re.IGNORECASE)
#: Brackets emptied once their references went; a call's ``()`` (``string()``, ``key()``:
#: no space before it) is kept (issue 24's fifth fresh review, tomlkit history-02, -15).
_EMPTY_BRACKETS = re.compile(r"(?<![\w`'\"\]])\(\s*[,;]?\s*\)|\[\s*[,;]?\s*\]")
#: A reference in brackets of its own, ``foo(#12)``, ``(#12, #13)``: dropped whole.
_BRACKETED_REFS = re.compile(r"\s*\((?:\s*[,;]?\s*(?:[\w.-]+/[\w.-]+)?(?:#|\bgh-)\d+\b)+"
                             r"\s*[,;]?\s*\)", re.IGNORECASE)
#: A pull request or squash that merges branches ("Merge stable into main", "Backport …").
#: "Merge any number of slashes" is a feature's title, not a merge of branches. Read on the
#: cleaned subject: a backport that wraps a delimited title (``Backport "X"``, ``Backport
#: #982: X``) asks X, one change (issue 24 round 9); "Backport #3504 from main to stable"
#: or "Backport fixes for …" wraps none and still reads as a merge of branches.
_MERGE_TEXT = re.compile(
    r"^(?:backport\b|merge\s*$|merge\s+(?:(?:(?:remote-tracking\s+)?branch|tags?|pull|commit|"
    r"remote|upstream|origin|from|changes|main|master|stable|develop|dev|release|trunk|"
    r"latest|\d+\.\d+\S*)\b|['\"`])|merge\s+\S+\s+(?:into|to|with)\s)", re.IGNORECASE)
_REVERT = re.compile(r"^(?:revert\b|reverts?\s*:|back out\b|undo\b)", re.IGNORECASE)
_REVERTED = re.compile(r'^Revert "(.+)"$')
_CHORE = re.compile(r"\b(?:typos?|spelling|whitespace|lint(?:ing)?|flake8|pep ?8|pylint|"
                    r"black|isort|ruff|reformat(?:ted)?|formatting|pre[- ]?commit|autoupdate|"
                    r"mypy|pyright|type (?:check(?:er|ing)? )?errors|static typing|typing|"
                    r"type[- ]hint(?:s|ing|ed)?|type annotations?|type ?casts?|"
                    # a type checker's ignore comment (the tenth review's virtualenv
                    # history-18 "Replace ty: ignore with proper type declarations")
                    r"(?:type|ty|pyright|mypy)\s*:\s*ignores?)\b"
                    r"|^clean(?:ed)? ?up\b"
                    # "Improve types in …": annotations; "Remove unnecessary …": clean-up
                    r"|^(?:improve|fix|add|update|tighten|refine)[sd]?\s+(?:the\s+|some\s+|more\s+)?"
                    r"types\b(?!\s+(?:of|that|returned|when)\b)"
                    r"|^(?:remove[sd]?|drop(?:s|ped)?|delete[sd]?)\s+(?:an?\s+|the\s+|some\s+)?"
                    r"(?:unnecessary|unneeded|needless|redundant|superfluous)\b"
                    # tidying announced as such: a tool run, "cleanups", "simplifications",
                    # "… a bit", or a refactor or "Simplify …" that states no purpose
                    # ("to allow …")
                    r"|\b(?:clean-?ups|pyupgrade|autoflake|flynt|codespell|"
                    r"(?:code-level )?simplifications?|tid(?:y|ied|ying)(?:-ups?)?)\b"
                    r"|\b(?:a bit|a little)\s*$|^(?:use\s+|more\s+|apply\s+)?f-?strings\b"
                    r"|^(?:refactor(?:s|ed|ing)?|simplif(?:y|ies|ied|ying))\b"
                    r"(?!.*\b(?:allow|support|fix|improv|custom|"
                    r"enabl|handl|new|add))"
                    # issue 24's eighth fresh review (loguru -06, pip -04, httpcore -16,
                    # loguru -16). Wording announced as such: "Trivial grammar fix", "Fix
                    # wording in …", "Reword …" (never a parser's "parse_lines grammar")
                    r"|\bgrammatical(?:ly)?\b|\bgrammar\s+(?:fix|nit|correction|error|mistake)"
                    r"|(?:^|\b(?:fix(?:e[sd]|ing)?|correct(?:s|ed|ing)?|improve[sd]?|minor|"
                    r"small|tiny|trivial|more|moar|some)\s+(?:(?:the|some|a|up)\s+)?)grammar"
                    # ... said of text, not a parser's grammar ("Fix grammar parsing of …")
                    r"(?:\s*$|\s+(?:fix|nit|error|mistake|issues?)\b|\s+in\s+(?:the\s+)?"
                    r"(?:docs?|documentation|comments?|docstrings?|(?:error\s+)?messages?|"
                    r"readme|changelog|warnings?)\b)"
                    r"|\b(?:wording|phrasing)\b|^(?:rephrase[sd]?|reword(?:s|ed)?)\b"
                    # dead code removed: "Remove the unreachable … branch", "Removed unused
                    # argument …", "Add pragma on unreachable code" (never "Remove dead lock
                    # in pool", "Drop unused connections": things that live at run time)
                    r"|^(?:remov(?:e[sd]?|ing)|drop(?:s|ped|ping)?|delet(?:e[sd]?|ing)|"
                    r"kill(?:s|ed)?|prune[sd]?)\s+(?:(?:an?|the|some|more|now|all|two|few)\s+)*"
                    r"(?:unreachable|dead|unused)\b(?!\s+(?:locks?|connections?|sockets?|"
                    r"threads?|workers?|process(?:es)?|sessions?|streams?|handles?|peers?|"
                    r"hosts?)\b)"
                    r"|\b(?:dead|unused|unreachable)\s+code\b"
                    # a refactor announced as minor, or code moved into a helper of its own
                    r"|\b(?:minor|small|tiny|little|slight)\s+(?:code\s+)?(?:refactor(?:s|ings?)?|"
                    r"restructur\w*|reorgani[sz]\w*)\b"
                    r"|^(?:extract|move|factor|split|turn|pull|break)(?:s|ed)?\b.{0,60}?"
                    r"\b(?:into|to|as)\s+(?:(?:an?|its|their|the)\s+)?(?:(?:dedicated|separate|"
                    r"new|own|private|helper|internal)\s+)*(?:method|function|helper)s?\b(?!\.\w)"
                    # ... that states no purpose ("… to a function so it runs for HTTP/2 too")
                    r"(?!.*\b(?:so|and|allow|support|fix|enabl|handl)\w*\b)"
                    r"|\bas\s+(?:an?\s+)?(?:(?:dedicated|separate|new)\s+)?private\s+"
                    r"(?:method|function|helper)\b",
                    re.IGNORECASE)
#: Dropping a Python version: CI, packaging and modernised syntax, nothing to ask.
_PYTHON_DROP = re.compile(r"\b(?:drop(?:ped|s)?|remove[ds]?|end)\b.{0,30}\bpython\b|"
                          # the version alone: "Drop support for 3.8, which is near EOL"
                          # (never "Remove 2.0 deprecation shims": "support for" or py)
                          r"\b(?:drop(?:ped|s)?|remove[ds]?)\s+(?:support\s+for\s+"
                          r"(?:py(?:thon)?\s*)?|py(?:thon)?\s*)[23]\.\d{1,2}\b(?![.\d])|"
                          r"\bend[- ]of[- ]life python|\bpython\s*\d(?:\.\d+)?\+?\s+"
                          r"(?:is\s+)?(?:dropped|removed|no longer supported)",
                          re.IGNORECASE)


def python_drop(text: str) -> bool:
    """``text`` (a cleaned subject) drops a Python version ("Drop support for 3.8")."""
    return _PYTHON_DROP.search(text) is not None


_VERSION = re.compile(
    r"^(?:v?\d+(?:\.\d+)+\S*$"                                  # "2.31.0", "v8.1.3"
    r"|(?:release|releasing|prepare|preparing|bump(?:ed)?|tag(?:ged)?|version)\b.*\d+\.\d+"
    r"|bump(?:ed)?\s+(?:the\s+)?version|bump\s+\S+\s+from\s"   # dependabot
    r"|(?:start|back to)\s+(?:the\s+)?(?:next\s+)?(?:dev(?:elopment)?\s+)?version"
    r"|(?:back to|bump(?:ed)?\s+(?:for|to))\s+(?:the\s+)?(?:next\s+)?dev(?:elopment)?\b)",
    re.IGNORECASE)


def clean_subject(subject: str) -> str:
    """The question a subject asks, cleaned deterministically: a conventional-commit
    prefix or a ``[tag]``, issue and pull-request references (``Fixes #12``, ``(#123)``,
    ``GH-123``, ``owner/repo#5``) go (a call's ``()`` stays), and what
    :mod:`evaluator.core.commit_subject` drops (gitmoji, emptied references, retry
    markers); spaces collapse; the first letter is upper case; a trailing period goes.

    Only the first ``MAX_SUBJECT_CHARS + 1`` characters are read: a longer subject is
    skipped (:data:`SKIP_LONG`) whatever its cleaning says, and a subject is text a pull
    request writes, so the cleaning's expressions (some quadratic in the worst case) never
    see more than that.

    A subject that only ports, backports or cherry-picks a change asks that change's title
    (:func:`~evaluator.core.commit_subject.ported_title`: ``Port "X" (#5091)`` → ``X``,
    cleaned in turn; a ``Backport #982:`` label and a trailing ``(backport)`` go too)."""
    text = _cleaned(one_line(subject[:MAX_SUBJECT_CHARS + 1]))
    while (title := ported_title(text)) is not None:  # each pass is shorter: it ends
        text = _cleaned(title)
    return text


def _platform_of(text: str) -> str | None:
    """The platform a conventional-commit scope names (:data:`~evaluator.core.giveaway.
    PLATFORMS`: ``fix(windows): …``), unless the subject's words already name a platform
    (``fix(unix): … for OpenBSD``). Without it, "avoid FileNotFoundError in a sandbox"
    asks about every platform (the twentieth review's platformdirs
    history-02, -06, -08, -10, edited to name theirs)."""
    text = text.strip()
    match = _CONVENTIONAL.match(text)
    scope = _SCOPE.search(match.group(0)) if match else None
    if match is None or scope is None or scope.group(1).lower() not in PLATFORMS:
        return None
    rest = set(re.findall(r"[a-z0-9]+", text[match.end():].lower()))
    return None if rest & PLATFORM_WORDS else PLATFORMS[scope.group(1).lower()]


def _cleaned(text: str) -> str:
    """One pass of :func:`clean_subject`'s cleaning over a one-line ``text``; a platform
    scope is said at the end (``fix(windows): stop leaking …`` → ``Stop leaking … on
    Windows``)."""
    text = _TICKET.sub("", _CHANGELOG_MARK.sub("", drop_emoji(text)))
    platform = _platform_of(text)
    for _ in range(2):  # "[core] fix: ...", "fix: [core] ..."
        text = drop_emoji(_BRACKET_TAG.sub("", _CONVENTIONAL.sub("", text)))
    text = _CLOSING.sub("", drop_backport_label(drop_issue_prefix(text)))
    text = drop_emptied(_POINTED_REF.sub("", _BRACKETED_REFS.sub("", text)))
    text = drop_backport_mark(_EMPTY_BRACKETS.sub("", text))
    text = re.sub(r"\(\s+|\s+\)", lambda m: m.group(0).strip(), " ".join(text.split()))
    text = drop_retry(text).strip(" ,;:-–—")
    text = text.removesuffix(".").rstrip()
    if platform is not None and text:
        text = f"{text} on {platform}"
    return text[:1].upper() + text[1:]


_PULL_MERGE = re.compile(r"^Merge pull request #(\d+) from \S")
_PULL_SUFFIX = re.compile(r"\(#(\d+)\)\s*$")


def pull_request(commit: Commit) -> tuple[int, str] | None:
    """``(number, title)`` when ``commit`` is a merged pull request: GitHub's merge commit
    "Merge pull request #N from owner/branch" (the title is its body's first line; ``''``
    without one), or a merge or squash commit whose subject is the title with ``(#N)``."""
    merge = _PULL_MERGE.match(commit.subject)
    if merge is not None and len(commit.parents) > 1:
        return int(merge.group(1)), commit.body_line
    suffix = _PULL_SUFFIX.search(commit.subject)
    if suffix is not None and merge is None:
        return int(suffix.group(1)), commit.subject
    return None


def _generations(commits: Sequence[Commit]) -> dict[str, int]:
    """Each commit's generation among ``commits``: 1 + its parents' highest (0 without a
    parent read), so a child always outranks its parents whatever the commit dates say."""
    parents = {c.sha: c.parents for c in commits}
    generation: dict[str, int] = {}
    for commit in reversed(commits):
        stack = [commit.sha]
        while stack:
            sha = stack[-1]
            if sha in generation:
                stack.pop()
                continue
            pending = [p for p in parents[sha] if p in parents and p not in generation]
            if pending:
                stack += pending
                continue
            stack.pop()
            generation[sha] = 1 + max((generation[p] for p in parents[sha] if p in parents),
                                      default=-1)
    return generation


def pull_request_commits(commits: Sequence[Commit]) -> set[str]:
    """The commits that only a merged pull request brought in: reachable from a pull
    request merge's second parent and not from its first (git's merge-base walk over the
    commits read, children before parents by generation). A pull request without a title,
    or one that merges branches, asks nothing, so its commits are asked themselves."""
    generation = _generations(commits)
    position = {sha: -n for sha, n in generation.items()}  # the heap pops the newest first
    parents = {c.sha: c.parents for c in commits}
    out: set[str] = set()
    for commit in commits:
        pull = pull_request(commit)
        if len(commit.parents) < 2 or pull is None or not pull[1] or \
                _MERGE_TEXT.match(clean_subject(pull[1])) or \
                branch_title(commit.subject, pull[1]):
            continue
        flags: dict[str, int] = {}
        heap: list[tuple[int, str]] = []
        for sha, flag in ((commit.parents[0], 1), (commit.parents[1], 2)):
            if sha in position:
                flags[sha] = flags.get(sha, 0) | flag
                heapq.heappush(heap, (position[sha], sha))
        seen: set[str] = set()
        # Until every queued commit is reachable from the first parent.
        while heap and any(flags[sha] == 2 for _n, sha in heap):
            _n, sha = heapq.heappop(heap)
            if sha in seen:
                continue
            seen.add(sha)
            if flags[sha] == 2:
                out.add(sha)
            for parent in parents[sha]:
                if parent in position and flags.get(parent, 0) | flags[sha] != \
                        flags.get(parent, 0):
                    flags[parent] = flags.get(parent, 0) | flags[sha]
                    heapq.heappush(heap, (position[parent], parent))
    return out


# ----------------------------------------------------------------------------- renames


class RenameMap:
    """Today's path of a path as it was after a commit, fed newest commit first: a commit's
    renames apply to the commits older than it (:meth:`record` after :meth:`today`)."""

    def __init__(self) -> None:
        self._forward: dict[str, str] = {}

    def today(self, path: str) -> str:
        return self._forward.get(path, path)

    def record(self, commit: Commit) -> None:
        for change in commit.changes:
            if change.old is not None and change.old != change.path:
                self._forward[change.old] = self.today(change.path)


# ----------------------------------------------------------------------------- drafting


@dataclass(frozen=True)
class HistoryCandidate:
    """A commit that makes a question: its grades over today's modules (3 for the files
    carrying most changed lines, 2 for the rest), their paths at the commit, and its
    shape."""

    commit: Commit
    question: str
    grades: Mapping[str, int]
    lines: Mapping[str, int]       # today's path → lines the commit changed in it
    paths_then: Mapping[str, str]  # today's path → its path at the commit

    @property
    def shape(self) -> str:
        return "focused" if len(self.grades) == 1 else "cross-file"


@dataclass(frozen=True)
class Mined:
    """Every commit read: the candidates (newest first) and the skipped, by reason."""

    candidates: tuple[HistoryCandidate, ...]
    skipped: Mapping[str, int]
    read: int
    reasons: Mapping[str, str] = field(default_factory=dict)  # sha → why it was skipped


def asked_text(commit: Commit) -> str:
    """What a commit asks, before cleaning: a merged pull request's title, else its
    subject. A title GitHub cut off at its end (``… postgresql_inc…``) with the rest at the
    start of the body (``…lude``) is joined again; one whose rest is not there is skipped
    (:data:`SKIP_CUT_OFF`; issue 24's ninth fresh review, alembic history-04)."""
    pull = pull_request(commit)
    text = pull[1] if pull is not None else commit.subject
    rest = commit.body_line[1:].strip() if commit.body_line.startswith("…") else ""
    if _cut_off(text) and text == commit.subject and rest and not rest.endswith("…"):
        return _PULL_SUFFIX.sub("", text).rstrip()[:-1] + commit.body_line[1:]
    return text


def _cut_off(text: str) -> bool:
    """``text`` ends with "…", before a squash's " (#5)": GitHub cut the title there."""
    return _PULL_SUFFIX.sub("", text).rstrip().endswith("…")


def _skip_reason(commit: Commit, is_module_path: Callable[[str], bool],
                 reverted: set[str]) -> str | None:
    if not commit.parents:
        return SKIP_ROOT
    text = asked_text(commit)
    if (len(commit.parents) > 1 and (pull_request(commit) is None or not text)) or \
            _MERGE_TEXT.match(clean_subject(text)):
        return SKIP_MERGE
    if len(commit.parents) > 1 and branch_title(commit.subject, text):
        return SKIP_BRANCH_TITLE
    if commit.subject in reverted:
        return SKIP_REVERT
    if len(text) > MAX_SUBJECT_CHARS:
        return SKIP_LONG
    if _cut_off(text):
        return SKIP_CUT_OFF
    if _REVERT.match(text) or _REVERT.match(_CONVENTIONAL.sub("", text)):
        return SKIP_REVERT
    cleaned = clean_subject(text)
    if _VERSION.search(cleaned) or (dependency_upgrade(cleaned) and any(
            not is_module_path(c.path) for c in commit.changes)):  # a manifest moves too
        return SKIP_VERSION
    if _CHORE.search(cleaned) or _CHORE.search(untagged(cleaned)) or lint_chore(cleaned):
        return SKIP_CHORE
    if python_drop(cleaned):
        return SKIP_PYTHON_DROP
    if not any(is_module_path(c.path) for c in commit.changes):
        return SKIP_NO_MODULE
    return _conventional_reason(text) or subject_reason(commit.subject, cleaned)


def mine(commits: Sequence[Commit], *, is_module_path: Callable[[str], bool],
         modules: Iterable[str]) -> Mined:
    """Decide every commit (newest first): a candidate, or its counted skip reason.
    ``is_module_path`` says whether a path is a module by the universe's rules (for any
    commit's files); ``modules`` are today's modules. In a src layout (:func:`src_layout`)
    a commit none of whose today's modules lies under ``src/`` changed only tooling."""
    present = frozenset(modules)
    tooling_outside = src_layout(present)   # a src layout: modules outside src/ are tooling
    renames = RenameMap()
    skipped: dict[str, int] = {}
    reasons: dict[str, str] = {}
    out: list[HistoryCandidate] = []
    asked: set[str] = set()
    reverted: set[str] = set()   # subjects a newer commit reverts (git's "Revert "…"")
    in_pull = pull_request_commits(commits)

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for commit in commits:
        reason = SKIP_IN_PULL if commit.sha in in_pull else \
            _skip_reason(commit, is_module_path, reverted)
        if (undone := _REVERTED.match(commit.subject)) is not None:
            reverted.add(undone.group(1))
        lines: dict[str, int] = {}
        then: dict[str, str] = {}
        if reason is None:
            touched = [c for c in commit.changes if is_module_path(c.path)]
            if len(touched) > MAX_FILES or sum(c.lines for c in touched) > MAX_LINES:
                reason = SKIP_SIZE
            else:
                for change in touched:
                    now = renames.today(change.path)
                    if now in present:
                        lines[now] = lines.get(now, 0) + change.lines
                        then[now] = change.path
                if not lines:
                    reason = SKIP_GONE
                elif all(typing_example(p) for p in lines):
                    reason = SKIP_TYPING_EXAMPLES
                elif tooling_outside and not any(in_src(p) for p in lines):
                    reason = SKIP_TOOLING
        question = clean_subject(asked_text(commit))
        if reason is None and len(question.split()) < MIN_QUESTION_WORDS:
            reason = SKIP_VAGUE
        if reason is None and question.lower() in asked:
            reason = SKIP_DUPLICATE
        renames.record(commit)
        if reason is not None:
            skip(reason)
            reasons[commit.sha] = reason
            continue
        asked.add(question.lower())
        if not any(lines.values()):       # only binary or mode changes: one file each
            lines = dict.fromkeys(lines, 1)
        best = top_files(lines)
        grades = {path: 3 if path in best else 2 for path in sorted(lines)}
        out.append(HistoryCandidate(commit, question, grades, lines, then))
    return Mined(tuple(out), skipped, len(commits), reasons)
