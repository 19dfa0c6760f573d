"""The sticky PR comment and the fork-safe stage's reads over :mod:`evaluator.http_transport`.

* :class:`GitHubClient` lists a pull request's comments (following every ``Link: rel="next"``)
  and creates or updates one comment per *key*, found by a hidden marker (:func:`marker`);
  it posts per the comment mode (:meth:`GitHubClient.publish`) and hides superseded comments
  (GraphQL ``minimizeComment``);
* it reads workflow runs, pull requests and a run's artifacts (the zip itself is downloaded
  by the transport).

Creating a comment is not idempotent: a POST whose outcome is unknown (timeout, dropped
connection, 5xx) is never simply re-sent. The comments are listed again first and a marked
comment that appeared meanwhile is updated instead, so a retry cannot leave a duplicate.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from evaluator.errors import GitHubError
from evaluator.github_context import positive_int
from evaluator.http_transport import (
    MAX_PAGES,
    PER_PAGE,
    AmbiguousWrite,
    Budget,
    GitHubTransport,
    ReadForbidden,
    Response,
)

MAX_COMMENT_CHARS: Final = 65_536
MARKER_PREFIX: Final = "neuralmind-retrieval-eval:comment-key="
STATE_PREFIX: Final = "neuralmind-retrieval-eval:state "
COMMENT_MODES: Final = ("always", "on-change", "on-failure", "never")
MAX_HIDE: Final = 5  # previous comments minimized per run (older ones were hidden before)
DEFAULT_KEY: Final = "default"
MAX_ARTIFACT_PAGES: Final = 10
_KEY_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]")
_STATE_RE: Final = re.compile(r"<!-- neuralmind-retrieval-eval:state fingerprint=([0-9a-f]{16})"
                              r"(?: run=([0-9a-f]{16}))? -->")
_HEX16: Final = re.compile(r"[0-9a-f]{16}")
_MAX_KEY_CHARS: Final = 64
_WRITE_METHODS: Final = frozenset({"POST", "PATCH"})
_FORBIDDEN_HINT: Final = (
    "pull requests from forks run `pull_request` workflows with a read-only GITHUB_TOKEN; "
    "the workflow needs `permissions: pull-requests: write` (for fork pull requests, post "
    "the comment from a `workflow_run` workflow)"
)


class CommentTooLong(GitHubError):
    """The comment body is over GitHub's limit: shrink it and post again (never retried)."""

    def __init__(self, message: str, *, length: int | None = None,
                 limit: int = MAX_COMMENT_CHARS) -> None:
        super().__init__(message, hint="shorten the comment; the full report belongs in the "
                                       "job summary")
        self.length = length
        self.limit = limit


class CommentForbidden(GitHubError):
    """GitHub refused to write the comment (403/404): usually a fork's read-only token."""


@dataclass(frozen=True)
class CommentResult:
    """The comment that was written: its page, its id and whether it is new."""

    url: str
    comment_id: int
    created: bool


def sanitize_key(key: str) -> str:
    """The comment key as it appears in the marker: ``[A-Za-z0-9._-]``, at most 64 chars.

    Every other character becomes ``-``, so a key can never close the HTML comment
    (``-->`` and ``--!>`` need ``>``); an empty key is ``default``.
    """
    cleaned = _KEY_UNSAFE.sub("-", key.strip())[:_MAX_KEY_CHARS]
    return cleaned or DEFAULT_KEY


def _author(comment: Mapping[str, Any]) -> str | None:
    user = comment.get("user")
    login = user.get("login") if isinstance(user, Mapping) else None
    return login if isinstance(login, str) else None


# Who the workflow's token (an Actions installation token) posts as.
ACTIONS_BOT = "github-actions[bot]"


def marker(key: str) -> str:
    """The hidden HTML comment that identifies the sticky comment for ``key``."""
    return f"<!-- {MARKER_PREFIX}{sanitize_key(key)} -->"


def max_body_chars(key: str) -> int:
    """The longest body :meth:`GitHubClient.upsert_sticky_comment` accepts for ``key``."""
    return MAX_COMMENT_CHARS - len(marker(key)) - 1


def _with_marker(body: str, key: str) -> str:
    mark = marker(key)
    return body if mark in body else f"{mark}\n{body}"


def state_marker(fingerprint: str, run: str | None = None) -> str:
    """The hidden line that records what a comment reported (``comment: on-change``) and, for
    ``hide-previous``, which run wrote it. Both values are 16 lowercase hex digits."""
    for value in (fingerprint, run):
        if value is not None and not _HEX16.fullmatch(value):
            raise ValueError(f"expected 16 lowercase hex digits, got {value!r}")
    suffix = f" run={run}" if run else ""
    return f"<!-- {STATE_PREFIX}fingerprint={fingerprint}{suffix} -->"


def fingerprint_of(body: str) -> str | None:
    """The fingerprint recorded in a comment's state marker, if any."""
    match = _STATE_RE.search(body)
    return match.group(1) if match else None


@dataclass(frozen=True)
class PublishResult:
    """What :meth:`GitHubClient.publish` did: ``created``, ``updated`` or ``skipped``."""

    action: str
    reason: str
    comment: CommentResult | None = None
    hidden: int = 0
    hide_error: str | None = None


class GitHubClient(GitHubTransport):
    """The sticky PR comment, workflow runs and artifacts over GitHub's REST API (the
    transport's retries, deadline, size caps and scrubbing apply to every call)."""

    def list_comments(self, pr: int) -> list[dict[str, Any]]:
        """Every comment on pull request ``pr``, oldest first, across all pages."""
        return self._paginate(self._url(f"/issues/{self._pr(pr)}/comments?per_page={PER_PAGE}"),
                              max_pages=MAX_PAGES, what="comments", items=lambda page: page)


    def workflow_run(self, run_id: int) -> dict[str, Any]:
        """``GET /repos/{repo}/actions/runs/{run_id}``: the run's head sha, pull requests..."""
        data = self.get_json(f"/actions/runs/{self._run(run_id)}")
        if not isinstance(data, dict):
            raise GitHubError(f"GitHub API GET /repos/{self._context.repository}/actions/runs/"
                              f"{run_id} answered something other than a workflow run")
        return data

    def pull_request(self, pr: int) -> dict[str, Any]:
        """``GET /repos/{repo}/pulls/{pr}``."""
        data = self.get_json(f"/pulls/{self._pr(pr)}")
        if not isinstance(data, dict):
            raise GitHubError(f"GitHub API GET /repos/{self._context.repository}/pulls/{pr} "
                              "answered something other than a pull request")
        return data

    def list_run_artifacts(self, run_id: int, *, max_pages: int = MAX_ARTIFACT_PAGES
                           ) -> list[dict[str, Any]]:
        """The artifacts of workflow run ``run_id`` across at most ``max_pages`` pages."""
        return self._paginate(
            self._url(f"/actions/runs/{self._run(run_id)}/artifacts?per_page={PER_PAGE}"),
            max_pages=max_pages, what="artifacts",
            items=lambda page: page.get("artifacts") if isinstance(page, dict) else None)


    def _check_postable(self, full: str) -> None:
        """Refuse, before anything is sent, a body over GitHub's limit or a missing token."""
        if len(full) > MAX_COMMENT_CHARS:
            raise CommentTooLong(
                f"the PR comment is {len(full):,} characters with its marker, over GitHub's "
                f"limit of {MAX_COMMENT_CHARS:,}", length=len(full))
        if self._token is None:
            raise GitHubError("no GitHub token to post the PR comment with",
                              hint="pass the github-token input or set GITHUB_TOKEN")

    def upsert_sticky_comment(self, pr: int, body: str, *, key: str) -> CommentResult:
        """Update the newest comment marked for ``key``, or create one; never a duplicate.

        Raises :class:`CommentTooLong` (body over 65,536 characters with its marker, checked
        before anything is sent), :class:`CommentForbidden` (403/404 on a write) or
        :class:`GitHubError`.
        """
        number = self._pr(pr)
        full = _with_marker(body, key)
        self._check_postable(full)
        mark = marker(key)
        create_url = self._url(f"/issues/{number}/comments")
        budget = Budget(self._max_attempts)
        while True:
            existing = self._newest_marked(number, mark)
            if existing is not None:
                comment_id = existing["id"]
                response = self._request("PATCH", self._url(f"/issues/comments/{comment_id}"),
                                         body={"body": full}, length=len(full))
                return self._result(response, "PATCH", created=False)
            try:
                response = self._request("POST", create_url, body={"body": full},
                                         length=len(full), budget=budget,
                                         repeatable=False)
            except AmbiguousWrite as exc:
                if budget.exhausted:
                    raise GitHubError(
                        f"GitHub API POST {self._display(create_url)} failed after "
                        f"{budget.used} attempts: {exc.message}") from None
                # The comment may have been created: list again before sending again.
                seconds, dictated = exc.wait or (self._backoff(budget.used - 1), False)
                self._pause(seconds, dictated=dictated,
                            what=f"POST {self._display(create_url)}")
                continue
            return self._result(response, "POST", created=True)

    def publish(self, pr: int, body: str, *, key: str, mode: str = "always",
                fingerprint: str, failed: bool = False, hide_previous: bool = False,
                run_id: str | None = None) -> PublishResult:
        """Post the report according to ``mode``; see docs/github-action.md, "Comment controls".

        * ``always`` — update the sticky comment (or create it);
        * ``on-change`` — only when ``fingerprint`` differs from the one recorded in the
          newest marked comment (a question's metrics or the verdict changed); otherwise the
          old comment stays as it is;
        * ``on-failure`` — create a comment only when ``failed``; when the check passes an
          existing comment is still updated, so an old failure report never lingers;
        * ``never`` — nothing is sent.

        ``hide_previous``: instead of editing in place, post a new comment and minimize the
        superseded ones (GraphQL ``minimizeComment``, classifier ``OUTDATED``), newest
        :data:`MAX_HIDE` first. Hiding is best effort: a failure is reported in
        ``hide_error``, the new comment stands. ``run_id`` (16 hex digits, random by
        default) marks the new comment so a POST whose answer was lost is found, not repeated.
        """
        if mode not in COMMENT_MODES:
            raise GitHubError(f"comment must be one of {', '.join(COMMENT_MODES)}, not {mode!r}")
        if mode == "never":
            return PublishResult("skipped", "comment: never")
        number = self._pr(pr)
        mark = marker(key)
        previous = self._newest_marked(number, mark) if self._token is not None else None
        if mode == "on-failure" and not failed and previous is None:
            return PublishResult("skipped", "comment: on-failure, and the check passed")
        if (mode == "on-change" and previous is not None
                and fingerprint_of(str(previous.get("body", ""))) == fingerprint):
            return PublishResult("skipped", "comment: on-change, and nothing changed since "
                                            "the last comment")
        if not hide_previous:
            result = self.upsert_sticky_comment(
                number, f"{state_marker(fingerprint)}\n{body}", key=key)
            return PublishResult("created" if result.created else "updated", "posted",
                                 comment=result)
        run = run_id or "".join(f"{int(self._random() * 16) & 15:x}" for _ in range(16))
        created = self._create_once(number, _with_marker(
            f"{state_marker(fingerprint, run)}\n{body}", key), run)
        hidden, error = 0, None
        older = [c for c in self._ours(number, mark) if c.get("id") != created.comment_id]
        older.sort(key=lambda c: (str(c.get("created_at") or ""), int(c["id"])), reverse=True)
        for comment in older[:MAX_HIDE]:
            node = comment.get("node_id")
            if not isinstance(node, str) or not node:
                continue
            try:
                self.minimize_comment(node)
            except GitHubError as exc:
                error = exc.message
                break
            hidden += 1
        return PublishResult("created", "posted", comment=created, hidden=hidden,
                             hide_error=error)

    def minimize_comment(self, node_id: str) -> None:
        """Hide one comment as outdated (GraphQL ``minimizeComment``)."""
        query = ("mutation($id: ID!) { minimizeComment(input: {subjectId: $id, classifier: "
                 "OUTDATED}) { minimizedComment { isMinimized } } }")
        url = self._graphql_url()
        response = self._request("POST", url, body={"query": query,
                                                    "variables": {"id": node_id}})
        data = self._json(response, "POST", url)
        errors = data.get("errors") if isinstance(data, dict) else None
        if errors or not isinstance(data, dict):
            detail = "; ".join(str(e.get("message", "")) for e in errors
                               if isinstance(e, dict)) if isinstance(errors, list) else ""
            raise GitHubError(f"GitHub GraphQL minimizeComment failed: "
                              f"{self._clean(detail) or 'no data'}")

    # ------------------------------------------------------------------ helpers

    def _graphql_url(self) -> str:
        """``https://api.github.com/graphql``; on GitHub Enterprise ``…/api/graphql``."""
        if self._base.endswith("/api/v3"):
            return self._base[: -len("/v3")] + "/graphql"
        return f"{self._base}/graphql"

    def _ours(self, pr: int, mark: str) -> list[dict[str, Any]]:
        marked = [c for c in self.list_comments(pr)
                  if isinstance(c.get("body"), str) and mark in c["body"]
                  and positive_int(c.get("id")) is not None]
        if not marked:
            return []
        me = self._identity()
        return [c for c in marked if _author(c) == me]

    def _create_once(self, pr: int, full: str, run: str) -> CommentResult:
        """POST a new comment; after an unknown outcome, look for it (by ``run``) first."""
        self._check_postable(full)
        url = self._url(f"/issues/{pr}/comments")
        budget = Budget(self._max_attempts)
        while True:
            try:
                response = self._request("POST", url, body={"body": full}, length=len(full),
                                         budget=budget, repeatable=False)
            except AmbiguousWrite as exc:
                if budget.exhausted:
                    raise GitHubError(f"GitHub API POST {self._display(url)} failed after "
                                      f"{budget.used} attempts: {exc.message}") from None
                seconds, dictated = exc.wait or (self._backoff(budget.used - 1), False)
                self._pause(seconds, dictated=dictated, what=f"POST {self._display(url)}")
                for comment in self.list_comments(pr):
                    text = comment.get("body")
                    found = _STATE_RE.search(text) if isinstance(text, str) else None
                    cid = positive_int(comment.get("id"))
                    if found and found.group(2) == run and cid is not None:
                        return CommentResult(url=str(comment.get("html_url", "")),
                                             comment_id=cid, created=True)
                continue
            return self._result(response, "POST", created=True)


    def _newest_marked(self, pr: int, mark: str) -> dict[str, Any] | None:
        """The newest marked comment *written by us*.

        Anyone (a person or another app's bot) can paste the hidden marker into a comment;
        editing, hiding or trusting theirs would silence or forge the report. Ours are only
        those whose author is the identity this token posts as (:meth:`_identity`, asked
        only when a marked comment exists).
        """
        ours = self._ours(pr, mark)
        if not ours:
            return None
        return max(ours, key=lambda c: (str(c.get("created_at") or ""), int(c["id"])))

    def _identity(self) -> str:
        """The login this token posts as, asked once: a personal token's own user
        (``GET /user``), or :data:`ACTIONS_BOT` for the workflow's token, which GitHub
        refuses ``GET /user`` (403, "Resource not accessible by integration"). Any other
        answer is an error: guessing could edit or hide someone else's comment."""
        if self._me is None:
            url = f"{self._base}/user"
            try:
                data = self._json(self._request("GET", url), "GET", url)
            except ReadForbidden:
                self._me = ACTIONS_BOT
            else:
                login = data.get("login") if isinstance(data, dict) else None
                if not isinstance(login, str) or not login:
                    raise GitHubError(f"GitHub API GET {self._display(url)} answered without "
                                      "the token's login, so its comments cannot be told "
                                      "from anyone else's")
                self._me = login
        return self._me


    def _result(self, response: Response, method: str, *,
                created: bool) -> CommentResult:
        data = self._json(response, method, response.url)
        if isinstance(data, dict):
            comment_id = positive_int(data.get("id"))
            html_url = data.get("html_url")
            if comment_id is not None and isinstance(html_url, str):
                return CommentResult(url=html_url, comment_id=comment_id, created=created)
        raise GitHubError(f"GitHub API {method} {self._display(response.url)} answered without "
                          "the comment's id and html_url")


    def _failure(self, method: str, url: str, status: int, message: str,
                 length: int | None) -> GitHubError:
        """A comment too long (422) or a write refused (403/404) says so; the rest as the
        transport's."""
        what = f"{method} {self._display(url)}"
        detail = f"HTTP {status}" + (f": {message}" if message else "")
        if status == 422 and "too long" in message.lower():
            return CommentTooLong(f"GitHub API {what} refused the comment as too long "
                                  f"({detail})", length=length)
        if method in _WRITE_METHODS and status in (403, 404):
            return CommentForbidden(f"GitHub refused to write the PR comment: {what} answered "
                                    f"{detail}", hint=_FORBIDDEN_HINT)
        return super()._failure(method, url, status, message, length)
