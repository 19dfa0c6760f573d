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
read as the word, as the reviews read it ("Allow select() to prefer …": 'select' is the
operation in plain words, packaging history-16, kept), while a name spelled as code
(``load_default()``, ``Logger.exception()``, `` `key()` ``) still states its answer.

Found by the fifth fresh review (marshmallow history-06 "Default Nested Partial Fix"): a
pull request whose title is its **branch name** title-cased (:func:`branch_title`: GitHub's
"Merge pull request #N from owner/branch", a title in Title Case with at most one word its
branch ``2149-default-nested-partial`` does not hold) is no sentence to ask; its own commits
are asked instead ("Fix the default inheritance of nested partial schemas").

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


_ISSUE_PREFIX = re.compile(r"^(?:(?:for|fix(?:e[sd]|ing)?|close[sd]?|resolve[sd]?)\s+)?"
                           r"(?:issues?|pr|pull request|gh)[\s-]*#?\d+\s*[:,–—-]\s*(?=\S)",
                           re.IGNORECASE)


def drop_issue_prefix(text: str) -> str:
    """``text`` without a leading issue label: ``Fix issue #288 : X`` → ``X``."""
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
