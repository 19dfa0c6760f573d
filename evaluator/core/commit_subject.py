"""Wording a commit subject carries that is no part of the question it asks: gitmoji,
emptied references, retry markers.

Found by issue 24's fourth fresh review (structlog, tenacity, yarl);
:func:`evaluator.core.commits.clean_subject` drops:

* **gitmoji and emoji** leading the subject: ``:bug: Raises …``, ``📦 Make …`` (a code is
  ``:name:`` not followed by a backtick, so a reST role such as ``:class:`Foo``` stays);
* **emptied references**: what is left in brackets once the reference itself went,
  ``(issue )``, ``(#)``, ``(see )``, ``(PR )``, and a leading issue label with its verb,
  ``Fix issue #288: …``, ``Issue 901: …``, ``For Issue #2286: …`` (the rest is the question);
* (read, not dropped) a **component tag** leading the subject, ``Dev: refactor …``: the
  chore rules read the subject after it too (:func:`untagged`);
* **retry markers** ending the subject: ``…, take 2``, ``… (take 2)``. Not "again":
  "Allow salt=None again" restores a behaviour, and a review kept it as asked
  (itsdangerous history-08).

The cleaning keeps a call's ``()`` (tomlkit history-02 "… built with string()"); for the
give-away rule (:func:`evaluator.core.giveaway.plain_calls`) a call of a plain word is
read as the word unless the answer defines it (``chunked()``, ``last()``: the reviews
counted every such call as naming its answer, :func:`~evaluator.core.giveaway.
called_definitions`), while a name spelled as code (``load_default()``,
``Logger.exception()``, `` `key()` ``) always states its answer.

Found by the fifth fresh review (marshmallow history-06 "Default Nested Partial Fix"): a
pull request whose title is its **branch name** title-cased (:func:`branch_title`: GitHub's
"Merge pull request #N from owner/branch", a title in Title Case with at most one word its
branch ``2149-default-nested-partial`` does not hold) is no sentence to ask; its own commits
are asked instead ("Fix the default inheritance of nested partial schemas").

Found by issue 24's round-9 cold review (urllib3 ``Port "Reject CR/LF in HTTP tunnel
request headers" (#5091)``, edited to the quoted title): a commit that **ports, backports or
cherry-picks** another change often wraps that change's title, and the title is the
question; the wrapper is noise (:func:`ported_title`, :func:`drop_backport_label`,
:func:`drop_backport_mark`). Only a delimited title is unwrapped: a quoted one, one after a
``Backport …:`` label, or one before a trailing ``(backport …)``; a wrapper around no title
(``Backport #3504 from main to stable``, ``Port the tests to pytest``) stays as it is.

Pure: text in, text out.
"""

from __future__ import annotations

import re
import unicodedata

_GITMOJI = re.compile(r"^\s*:[a-z0-9_+-]{1,40}:(?!`)\s*")
_JOINERS = frozenset({"\u200d", "\ufe0e", "\ufe0f", "\u20e3"})
#: Brackets a reference was removed from: empty but for a word that introduced it.
_EMPTIED = re.compile(r"\(\s*(?:(?:issues?|see|pr|pull(?:\s+request)?|gh|refs?|fix(?:es)?|"
                      r"closes?|#)\s*[,;:]?\s*)+\)", re.IGNORECASE)
_RETRY = re.compile(r"(?:\s*[,;:–—-]\s*take\s+\d+|\s*\(\s*take\s+\d+\s*\))[\s.]*$",
                    re.IGNORECASE)


def _pictograph(char: str) -> bool:
    """An emoji or pictograph (a symbol of category ``So``, a regional indicator), or what
    joins or varies them."""
    return char in _JOINERS or unicodedata.category(char) == "So" or \
        0x1F1E6 <= ord(char) <= 0x1F1FF


def drop_emoji(text: str) -> str:
    """``text`` without its leading gitmoji codes and emoji (any number of them)."""
    while True:
        before = text
        text = _GITMOJI.sub("", text)
        stripped = text.lstrip()
        while stripped and _pictograph(stripped[0]):
            stripped = stripped[1:].lstrip()
        text = stripped
        if text == before:
            return text


def drop_emptied(text: str) -> str:
    """``text`` without brackets that held only a reference's introduction."""
    return _EMPTIED.sub("", text)


_ISSUE_PREFIX = re.compile(r"^(?:(?:for|fix(?:e[sd]|ing)?(?:\s+for)?|close[sd]?|resolve[sd]?)\s+)?"
                           r"(?:issues?|pr|pull request|gh)[\s-]*(?:#?\d+\s*[:,–—-]\s*(?=\S)|"
                           r"#\d+\s+(?=(?-i:[A-Z])))", re.IGNORECASE)


def drop_issue_prefix(text: str) -> str:
    """``text`` without a leading issue label: ``Fix issue #288 : X`` → ``X``, and
    without a separator before a capital: ``Fix issue #64 Uncaptured exception …`` →
    ``Uncaptured exception …`` (the seventeenth review's waitress history-18, drafted as
    "Fix issue Uncaptured exception …"); ``Fix for issue #862 - X`` → ``X`` (the twentieth
    review's pyjwt history-05, drafted as "Fix for issue - X")."""
    return _ISSUE_PREFIX.sub("", text, count=1)


def drop_retry(text: str) -> str:
    """``text`` without a trailing retry marker (``, take 2``, ``(take 2)``)."""
    return _RETRY.sub("", text)


_TAG = re.compile(r"^[A-Za-z][\w.-]{0,30}:\s+(?=\S)")


def untagged(text: str) -> str:
    """``text`` after a one-word component tag (``Dev: refactor …`` → ``refactor …``)."""
    return _TAG.sub("", text, count=1)


_PULL_BRANCH = re.compile(r"^Merge pull request #\d+ from \S+?/(\S+)")
_WORD = re.compile(r"[A-Za-z0-9]+")


def branch_title(subject: str, title: str) -> bool:
    """A merged pull request's ``title`` is its branch name (from ``subject``, GitHub's merge
    subject) title-cased: two words or more, each capitalised, all but one of them the
    branch's words."""
    branch = _PULL_BRANCH.match(subject)
    found = _WORD.findall(title)
    if branch is None or len(found) < 2 or \
            not all(w[0].isupper() or w[0].isdigit() for w in found):
        return False
    words = {w.lower() for w in _WORD.findall(branch.group(1))}
    return sum(1 for w in found if w.lower() not in words) <= 1


#: "Upgrade websockets to 0.13.1", "Bump the minimum attrs to 23.1", "Require click>=8.1":
#: the whole subject moves one dependency to a version (uvicorn history-13, issue 24's
#: sixth fresh review): a packaging chore, whatever the modules adapted.
_DEPENDENCY_UPGRADE = re.compile(
    r"^(?:upgrade|update|bump|pin|require)[sd]?\s+(?:the\s+)?(?:minimum\s+)?"
    r"(?:(?:required|supported)\s+)?(?:version\s+of\s+)?`?[A-Za-z][\w.\[\]-]*`?"
    r"(?:\s+(?:dependency|requirement|version))?"
    r"\s*(?:to|>=|==|~=)\s*v?\d+(?:\.\d+)+(?:\.\*)?(?:\s*\+)?$", re.IGNORECASE)


def dependency_upgrade(text: str) -> bool:
    """``text`` (a cleaned subject) only moves a dependency to a version (the route also asks
    that the commit change a file outside the modules, its manifest: "Bump timeout to 30.0"
    in a module alone is asked)."""
    return _DEPENDENCY_UPGRADE.match(text.strip()) is not None


#: Linter rules turned on (and what they flagged fixed), "Enable the rest of the rulesets
#: we care about and fix minor things" (jsonschema history-17, the sixth fresh review), "Add
#: a linter to …", and a "Minor cleanup": tidying announced as such.
_LINTERS = r"(?:lint(?:er|ing)?|style|ruff|flake8|pylint|pyflakes) rules|linters?"
_LINT_CHORE = re.compile(
    # rule sets only turned on ("Add rulesets for validating webhook payloads" is a feature)
    r"^(?:enable|turn(?:ed)? on|adopt)[sd]?\b.{0,40}?\b(?:rule ?sets?|" + _LINTERS + r")\b"
    r"|^(?:apply|add|use)[sd]?\b.{0,40}?\b(?:" + _LINTERS + r")\b"
    r"|^minor clean-?ups?\b", re.IGNORECASE)


def lint_chore(text: str) -> bool:
    """``text`` (a cleaned subject) turns linter rules on, or announces a minor clean-up."""
    return _LINT_CHORE.search(text.strip()) is not None


#: A branch a change is carried to or from: a version (``2.x``, ``1.26.x``, ``release-3.1``,
#: ``0.16``) or a main-line name, in backticks or not.
_BRANCH = (r"`?(?:[\w.+/-]*\d[\w.+/-]*|main|master|stable|trunk|develop|dev|upstream)`?"
           r"(?:\s+branch)?")
_PORT_VERB = r"(?:back[- ]?port|port|cherry[- ]?pick)(?:s|ed|ing)?"
#: ``Port "X"``, ``Backport of “X” to 2.x``, ``Cherry-pick 'X' into 1.26.x``: the whole
#: (cleaned) subject wraps a quoted title, straight or curly quotes.
_PORTED = re.compile(
    r"^" + _PORT_VERB + r"(?:\s+of\b|\s*:)?\s*"
    r"(?:\"(?P<a>.+)\"|\u201c(?P<b>.+)[\u201d\"]|'(?P<c>.+)'|\u2018(?P<d>.+)[\u2019'])"
    r"(?:\s+from\s+(?:the\s+)?" + _BRANCH + r")?"
    r"(?:\s+(?:to|into|onto|on|for)\s+(?:the\s+)?" + _BRANCH + r")?[\s.]*$",
    re.IGNORECASE)
_DOUBLE_QUOTE = re.compile(r'["\u201c\u201d]')


def ported_title(text: str) -> str | None:
    """The title a (cleaned) subject only ports, backports or cherry-picks, or ``None``:
    ``Port "Reject CR/LF in HTTP tunnel request headers"`` → ``Reject CR/LF …`` (urllib3,
    the round-9 review). A quote inside a longer sentence (``Use "utf-8" as default``,
    ``Report "X" in errors``) and an unquoted wrapper (``Port the tests to pytest``) are
    no wrapper."""
    match = _PORTED.match(text.strip())
    if match is None:
        return None
    title = next(g for g in match.group("a", "b", "c", "d") if g is not None).strip()
    # ``Port "a" and "b"``: the first double quote inside closes the wrapper's (a word
    # before it), so this is two quotes, no wrapped title (an apostrophe may follow a word)
    inner = _DOUBLE_QUOTE.search(title)
    if inner is not None and inner.start() > 0 and not title[inner.start() - 1].isspace():
        return None
    return title or None


#: ``Backport #982: X``, ``backport 2.2.x: X``, ``Backport to 1.x: X``, ``Backport: X``: a
#: leading label saying where the change came from or goes (a colon or dash ends it; a
#: ``[backport 1.26]`` in brackets is a ``[tag]``, dropped already).
_BACKPORT_LABEL = re.compile(
    r"^(?:back[- ]?port|cherry[- ]?pick)(?:s|ed)?"
    r"(?:\s+(?:of\s+)?(?:pr\s*|pull\s+request\s*)?(?:[\w.-]+/[\w.-]+)?#\d+"
    r"|\s+(?:to\s+|for\s+|into\s+)?" + _BRANCH + r")?"
    r"\s*(?::|\s[\u2013\u2014-])\s*(?=\S)", re.IGNORECASE)


def drop_backport_label(text: str) -> str:
    """``text`` without a leading backport label (``Backport #982: Allow …`` → ``Allow …``;
    marshmallow, flask pull request titles)."""
    return _BACKPORT_LABEL.sub("", text, count=1)


#: ``X (backport)``, ``X (backport of #123)`` (its reference already gone), ``X [backport]``,
#: ``X (cherry picked from commit 1a2b3c)``: a trailing marker, the rest is the title.
_BACKPORT_MARK = re.compile(
    r"\s*(?:\((?:\s*(?:back[- ]?port|cherry[- ]?pick)(?:s|ed)?\b[^()]*)\)"
    r"|\[(?:\s*(?:back[- ]?port|cherry[- ]?pick)(?:s|ed)?\b[^\[\]]*)\])[\s.]*$",
    re.IGNORECASE)


def drop_backport_mark(text: str) -> str:
    """``text`` without a trailing ``(backport …)`` marker (cattrs "Fix include_subclasses
    strategy with a generic parent and tagged_union (backport) (#683)")."""
    return _BACKPORT_MARK.sub("", text)
