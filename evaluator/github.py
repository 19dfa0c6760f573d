"""GitHub's REST API for the sticky PR comment: the only module in the project that talks HTTP.

What it does:

* :func:`context_from_env` reads the Actions environment (repository, API URL, the event
  file) into a :class:`GitHubContext` with the token the settings layer read (it reads none);
  the token never appears in a message or repr.
* :class:`GitHubClient` lists a pull request's comments (following every ``Link: rel="next"``)
  and creates or updates one comment per *key*, found by a hidden marker (:func:`marker`).

Retries are bounded: each request is sent at most ``max_attempts`` times in total.

* 403/429 with ``Retry-After`` → wait that many seconds; 403/429 with
  ``x-ratelimit-remaining: 0`` → wait until ``x-ratelimit-reset`` (at least 1 s); a 429, or a
  403 whose message names a rate limit, without those headers → wait 60 s, doubling per
  attempt. A 403 with no rate-limit signal is a permission error and is not retried.
* 5xx, timeouts and connection errors → exponential back-off with jitter:
  ``BACKOFF_BASE * 2**attempt * (0.5 + random())`` capped at ``BACKOFF_CAP``.
* No single wait exceeds ``max_wait`` (default 15 minutes): a wait that GitHub asks for
  beyond it fails at once instead of sleeping; the client's own back-off is clamped to it.

So one request costs at most ``max_attempts`` sends, ``max_attempts - 1`` waits of at most
``max_wait`` each, and ``max_attempts * timeout`` seconds of waiting on the network.

The fork-safe comment also reads workflow runs, lists a run's artifacts and downloads an
artifact's zip (:meth:`GitHubClient.download_artifact`): the redirect to the storage host is
followed without the Authorization header, and the body is size-bounded.

Creating a comment is not idempotent: a POST whose outcome is unknown (timeout, dropped
connection, 5xx) is never simply re-sent. The comments are listed again first and a marked
comment that appeared meanwhile is updated instead, so a retry cannot leave a duplicate.
"""

from __future__ import annotations

import base64
import json
import math
import random as _random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Final, TypeVar
from urllib.parse import quote, urljoin, urlsplit

import requests

from evaluator import __version__
from evaluator.errors import GitHubError

DEFAULT_API_URL: Final = "https://api.github.com"
API_VERSION: Final = "2022-11-28"
USER_AGENT: Final = f"neuralmind-retrieval-eval/{__version__}"
MAX_COMMENT_CHARS: Final = 65_536
MARKER_PREFIX: Final = "neuralmind-retrieval-eval:comment-key="
STATE_PREFIX: Final = "neuralmind-retrieval-eval:state "
COMMENT_MODES: Final = ("always", "on-change", "on-failure", "never")
MAX_HIDE: Final = 5  # previous comments minimized per run (older ones were hidden before)
DEFAULT_KEY: Final = "default"
PER_PAGE: Final = 100
MAX_PAGES: Final = 1_000
MAX_ARTIFACT_PAGES: Final = 10
BACKOFF_BASE: Final = 1.0
BACKOFF_CAP: Final = 60.0
SECONDARY_LIMIT_WAIT: Final = 60.0
MAX_SINGLE_WAIT: Final = 900.0

_PR_EVENTS: Final = frozenset({"pull_request", "pull_request_target"})
_REPO_RE: Final = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_KEY_UNSAFE: Final = re.compile(r"[^A-Za-z0-9._-]")
_STATE_RE: Final = re.compile(r"<!-- neuralmind-retrieval-eval:state fingerprint=([0-9a-f]{16})"
                              r"(?: run=([0-9a-f]{16}))? -->")
_HEX16: Final = re.compile(r"[0-9a-f]{16}")
_MAX_KEY_CHARS: Final = 64
_MAX_MESSAGE_CHARS: Final = 300
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


class _ReadForbidden(GitHubError):
    """A read answered 403 that is not a rate limit (``Resource not accessible by
    integration``: what the workflow's token gets for ``GET /user``)."""


class _Transient(GitHubError):
    """A download failure worth another attempt (5xx, timeout, dropped connection)."""


class _AmbiguousWrite(GitHubError):
    """A write whose outcome is unknown (timeout, dropped connection, 5xx); internal only."""

    def __init__(self, message: str, *, wait: tuple[float, bool] | None = None) -> None:
        super().__init__(message)
        self.wait = wait  # (seconds, dictated by GitHub) when the answer said how long


@dataclass(frozen=True)
class GitHubContext:
    """Where and as whom to talk to GitHub. ``repr`` never shows the token."""

    api_url: str
    repository: str
    pr_number: int | None
    token: str | None = field(repr=False)
    event_name: str | None
    head_sha: str | None


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


# ----------------------------------------------------------------------------- context


def _positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _nonempty_str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _read_event(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise GitHubError(f"cannot read the GitHub event file {path}: {reason}") from None
    except UnicodeDecodeError:
        raise GitHubError(f"the GitHub event file {path} is not UTF-8 text") from None
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise GitHubError(f"the GitHub event file {path} is not valid JSON: {exc}") from None
    except RecursionError:
        raise GitHubError(f"the GitHub event file {path} is nested too deeply") from None
    if not isinstance(payload, dict):
        raise GitHubError(f"the GitHub event file {path} is not a JSON object")
    return payload


read_event = _read_event  # the event payload, for the publishing module


def _from_event(event_name: str | None, payload: Mapping[str, Any],
                path: str) -> tuple[int | None, str | None]:
    """The PR number and head sha an event carries; (None, None) for a non-PR event."""
    if event_name in _PR_EVENTS:
        pull = payload.get("pull_request")
        number = _positive_int(pull.get("number")) if isinstance(pull, dict) else None
        if pull is None or number is None:
            raise GitHubError(f"the GitHub event file {path} has no pull_request.number "
                              f"for a {event_name} event")
        head = pull.get("head")
        return number, _nonempty_str(head.get("sha")) if isinstance(head, dict) else None
    if event_name == "workflow_run":
        run = payload.get("workflow_run")
        if not isinstance(run, dict):
            raise GitHubError(f"the GitHub event file {path} has no workflow_run object "
                              "for a workflow_run event")
        prs = run.get("pull_requests")
        number = None
        if isinstance(prs, list) and prs and isinstance(prs[0], dict):
            number = _positive_int(prs[0].get("number"))
        return number, _nonempty_str(run.get("head_sha"))
    return None, None


def context_from_env(env: Mapping[str, str], *, token: str | None,
                     pr: int | None = None) -> GitHubContext:
    """Read the Actions environment; an explicit ``pr`` wins over the event's. ``token`` is
    the one the settings layer read (``Deps.github_token``): this never reads one.

    A non-PR event without ``pr`` gives ``pr_number=None`` (the caller decides). The event
    file is read when ``GITHUB_EVENT_PATH`` is set; when it is missing or garbled that is an
    error only if no explicit ``pr`` was given (then only the head sha is lost).
    """
    api_url = (env.get("GITHUB_API_URL") or "").strip().rstrip("/") or DEFAULT_API_URL
    try:
        parts = urlsplit(api_url)
        _ = parts.port  # a malformed port raises ValueError
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) \
            and not parts.username and not parts.password
    except ValueError:
        valid = False
    if not valid:
        raise GitHubError(f"GITHUB_API_URL {api_url[:100]!r} is not an http(s) URL",
                          hint="leave it unset for github.com")
    repository = (env.get("GITHUB_REPOSITORY") or "").strip()
    if not _REPO_RE.fullmatch(repository):
        shown = repr(repository) if repository else "not set"
        raise GitHubError(f"GITHUB_REPOSITORY must be 'owner/name' (it is {shown})")
    if pr is not None and _positive_int(pr) is None:
        raise GitHubError(f"the pull-request number must be a positive integer, not {pr!r}")
    event_name = (env.get("GITHUB_EVENT_NAME") or "").strip() or None
    event_path = (env.get("GITHUB_EVENT_PATH") or "").strip()

    event_pr: int | None = None
    head_sha: str | None = None
    if event_path:
        try:
            event_pr, head_sha = _from_event(event_name, _read_event(event_path), event_path)
        except GitHubError:
            if pr is None:
                raise
    elif pr is None and (event_name in _PR_EVENTS or event_name == "workflow_run"):
        raise GitHubError(f"GITHUB_EVENT_PATH is not set for a {event_name} event; "
                          "pass the pull-request number explicitly")
    return GitHubContext(api_url=api_url, repository=repository,
                         pr_number=pr if pr is not None else event_pr, token=token,
                         event_name=event_name, head_sha=head_sha)


# ----------------------------------------------------------------------------- client


def _base64_cores(data: bytes) -> set[str]:
    """The base64 text (standard and URL-safe) that encodes ``data`` wherever it sits in a
    longer value (``basic base64(user:TOKEN)`` with any user): for each of the three byte
    alignments, only the characters that depend on ``data`` alone."""
    cores = set()
    for shift in range(3):
        end = (8 * (shift + len(data))) // 6
        start = -(-8 * shift // 6)
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            cores.add(encode(b"\0" * shift + data).decode()[start:end])
    return cores


def _secret_forms(token: str) -> tuple[re.Pattern[str], ...]:
    """The token in every encoding an API could reasonably echo: as is in any letter case,
    base64 (standard and URL-safe, whole or at any offset inside a longer base64 value such
    as ``basic base64(x-access-token:TOKEN)``), hex and percent-encoding."""
    raw = token.encode()
    forms = {token, raw.hex(), quote(token, safe="")}
    for data in (raw, b"x-access-token:" + raw, b"Bearer " + raw, b":" + raw):
        for encoded in (base64.b64encode(data), base64.urlsafe_b64encode(data)):
            text = encoded.decode()
            forms.update({text, text.rstrip("=")})
    forms.update(_base64_cores(raw))
    return tuple(re.compile(re.escape(f), re.IGNORECASE) for f in sorted(forms, key=len,
                                                                          reverse=True) if f)


def new_session() -> requests.Session:
    """A fresh HTTP session for :class:`GitHubClient` (tests inject their own)."""
    return requests.Session()


class _Budget:
    """How many sends one logical request may still make."""

    def __init__(self, attempts: int) -> None:
        self.total = attempts
        self.used = 0

    @property
    def exhausted(self) -> bool:
        return self.used >= self.total

    def take(self) -> int:
        """Spend one attempt; returns its 0-based index."""
        self.used += 1
        return self.used - 1


def _parse_number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None



_T = TypeVar("_T")
MAX_API_BYTES = 16 * 1024 * 1024  # one API answer (a page of comments is far smaller)


def _abandonable(call: Callable[[], _T], seconds: float | None,
                 late: Callable[[], GitHubError]) -> _T:
    """``call()`` in a worker thread that is abandoned after ``seconds`` (``late()`` is then
    raised): a server that trickles bytes or never answers cannot hold the job. ``None``:
    no deadline, called inline. The call's own exception is re-raised as it is."""
    if seconds is None:
        return call()
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=work, daemon=True, name="github-request")
    worker.start()
    worker.join(seconds + 0.5)
    if worker.is_alive():
        raise late()
    if "error" in box:
        raise box["error"]
    value: _T = box["value"]
    return value


def _read_capped(response: requests.Response, max_bytes: int, what: str) -> bytes:
    """A streamed body, refused past ``max_bytes`` (declared or actually sent)."""
    declared = _parse_number(response.headers.get("content-length"))
    if declared is not None and declared > max_bytes:
        raise GitHubError(f"{what} is {int(declared):,} bytes, over the limit of "
                          f"{max_bytes:,}; not downloaded")
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_content(chunk_size=65_536):
        size += len(chunk)
        if size > max_bytes:
            raise GitHubError(f"{what} is over the limit of {max_bytes:,} bytes; download "
                              "stopped")
        chunks.append(chunk)
    return b"".join(chunks)


class GitHubClient:
    """The sticky PR comment over GitHub's REST API, on an injected ``requests.Session``.

    ``sleep``, ``clock`` and ``random`` are injectable so tests never wait; see the module
    docstring for the retry rules and their bound.
    """

    def __init__(
        self,
        session: requests.Session,
        context: GitHubContext,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_attempts: int = 5,
        timeout: float = 30.0,
        random: Callable[[], float] = _random.random,
        max_wait: float = MAX_SINGLE_WAIT,
        deadline_s: float | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if timeout <= 0 or max_wait < 0:
            raise ValueError("timeout must be positive and max_wait not negative")
        if not _REPO_RE.fullmatch(context.repository):
            raise GitHubError(f"the repository must be 'owner/name', not "
                              f"{context.repository!r}")
        token = context.token
        if token is not None and (not token or any(c.isspace() or not c.isprintable()
                                                   for c in token)):
            raise GitHubError("the GitHub token is empty or contains whitespace or "
                              "control characters")
        self._session = session
        self._context = context
        self._token = token
        self._sleep = sleep
        self._clock = clock
        self._random = random
        self._max_attempts = max_attempts
        self._timeout = timeout
        self._max_wait = max_wait
        self._budget_s = deadline_s
        self._deadline = None if deadline_s is None else time.monotonic() + deadline_s
        self._secrets = _secret_forms(token) if token else ()
        self._me: str | None = None
        self._base = context.api_url.rstrip("/")
        base = urlsplit(self._base)
        self._origin = (base.scheme, base.netloc)

    def __repr__(self) -> str:
        return (f"GitHubClient(api_url={self._base!r}, "
                f"repository={self._context.repository!r})")

    # ------------------------------------------------------------------ public API

    def _paginate(self, url: str, *, max_pages: int, what: str,
                  items: Callable[[Any], Any]) -> list[dict[str, Any]]:
        """Every item across the pages that start at ``url`` (``Link: rel="next"``), at most
        ``max_pages`` of them and never a page twice; ``items`` picks a page's list."""
        found: list[dict[str, Any]] = []
        seen: set[str] = set()
        next_url: str | None = url
        while next_url is not None:
            if next_url in seen or len(seen) >= max_pages:
                raise GitHubError(f"GitHub API GET {self._display(next_url)}: pagination does "
                                  f"not end (a repeated link or over {max_pages} pages)")
            seen.add(next_url)
            response = self._request("GET", next_url)
            page = items(self._json(response, "GET", next_url))
            if not isinstance(page, list) or not all(isinstance(i, dict) for i in page):
                raise GitHubError(f"GitHub API GET {self._display(next_url)} answered "
                                  f"something other than a list of {what}")
            found.extend(page)
            next_url = self._next_link(response, next_url)
        return found

    def list_comments(self, pr: int) -> list[dict[str, Any]]:
        """Every comment on pull request ``pr``, oldest first, across all pages."""
        return self._paginate(self._url(f"/issues/{self._pr(pr)}/comments?per_page={PER_PAGE}"),
                              max_pages=MAX_PAGES, what="comments", items=lambda page: page)

    def get_json(self, suffix: str) -> Any:
        """``GET /repos/{repo}{suffix}``'s JSON (with the usual retries)."""
        url = self._url(suffix)
        return self._json(self._request("GET", url), "GET", url)

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

    def download_artifact(self, artifact_id: int, *, max_bytes: int) -> bytes:
        """The zip of artifact ``artifact_id``, at most ``max_bytes`` long, under the deadline.

        ``GET /repos/{repo}/actions/artifacts/{id}/zip`` answers a redirect to a storage
        host: it is followed (https, or the API's own scheme) *without* the Authorization
        header, which goes only to the API's own host. The body is streamed unencoded
        (``Accept-Encoding: identity``, so no decompression can inflate it) and the download
        stops as soon as it passes ``max_bytes``. A 5xx, timeout or dropped connection is
        tried again (at most ``max_attempts`` sends, back-off as for the API calls); anything
        else is an error naming it.
        """
        artifact = _positive_int(artifact_id)
        if artifact is None:
            raise GitHubError(f"the artifact id must be a positive integer, not "
                              f"{artifact_id!r}")
        url = self._url(f"/actions/artifacts/{artifact}/zip")
        what = f"GET {self._display(url)}"
        for attempt in range(self._max_attempts):
            try:
                return self._download_once(url, what, max_bytes)
            except _Transient as exc:
                if attempt + 1 >= self._max_attempts:
                    raise GitHubError(f"downloading the artifact failed after "
                                      f"{attempt + 1} attempts: {exc.message}") from None
                self._pause(self._backoff(attempt), dictated=False, what=what,
                            why=f"({exc.message})")
        raise AssertionError("unreachable")  # pragma: no cover

    def _download_once(self, url: str, what: str, max_bytes: int) -> bytes:
        left = self._remaining(what)
        try:
            return _abandonable(
                lambda: self._fetch_zip(url, what, max_bytes), left,
                lambda: GitHubError(f"GitHub API {what}: the artifact did not arrive within "
                                    f"the {self._budget_s:g} s deadline",
                                    hint="GitHub or the network is too slow; raise "
                                         "comment-timeout"))
        except BaseException as error:
            if isinstance(error, GitHubError):
                raise
            if isinstance(error, requests.Timeout) and self._deadline is not None \
                    and self._deadline - time.monotonic() <= 1.0:
                raise GitHubError(f"GitHub API {what}: the artifact did not arrive within the "
                                  f"{self._budget_s:g} s deadline (timed out)",
                                  hint="GitHub or the network is too slow; raise "
                                       "comment-timeout") from None
            if isinstance(error, requests.Timeout | requests.ConnectionError):
                kind = "timed out" if isinstance(error, requests.Timeout) \
                    else "connection failed"
                raise _Transient(f"{what}: {kind} ({self._clean(str(error))})") from None
            if isinstance(error, requests.RequestException):
                raise GitHubError(f"GitHub API {what} failed: "
                                  f"{self._clean(str(error))}") from None
            raise

    def _fetch_zip(self, url: str, what: str, max_bytes: int) -> bytes:
        for _hop in range(5):
            parts = urlsplit(url)
            own = (parts.scheme, parts.netloc) == self._origin
            headers = self._headers()
            headers["Accept-Encoding"] = "identity"
            if not own:
                headers.pop("Authorization", None)
                headers["Accept"] = "*/*"
            left = self._remaining(what)
            timeout = self._timeout if left is None else min(self._timeout, left)
            with self._session.request("GET", url, headers=headers, timeout=timeout,
                                       allow_redirects=False, stream=True) as response:
                status = response.status_code
                if 300 <= status < 400 and response.headers.get("location"):
                    target = urljoin(url, response.headers["location"])
                    scheme = urlsplit(target).scheme
                    if scheme not in ("https", self._origin[0]):
                        raise GitHubError(f"GitHub API {what} redirected to a {scheme!r} URL; "
                                          "not followed")
                    url = target
                    continue
                if not 200 <= status < 300:
                    message = self._api_message(response) if own else ""
                    detail = f"HTTP {status}" + (f": {message}" if message else "")
                    where = what if own else \
                        f"{what} (storage host {self._clean(parts.netloc)})"
                    if status >= 500:
                        raise _Transient(f"{where} answered {detail}")
                    hint = ("the artifact may have expired, or the job lacks "
                            "`permissions: actions: read`") if status in (401, 403, 404, 410) \
                        else None
                    raise GitHubError(f"downloading the artifact failed: {where} answered "
                                      f"{detail}", hint=hint)
                return _read_capped(response, max_bytes, "the artifact zip")
        raise GitHubError(f"GitHub API {what}: too many redirects")

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
        budget = _Budget(self._max_attempts)
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
            except _AmbiguousWrite as exc:
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
        """Post the report according to ``mode``; see the README's "Comment modes".

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
                  and _positive_int(c.get("id")) is not None]
        if not marked:
            return []
        me = self._identity()
        return [c for c in marked if _author(c) == me]

    def _create_once(self, pr: int, full: str, run: str) -> CommentResult:
        """POST a new comment; after an unknown outcome, look for it (by ``run``) first."""
        self._check_postable(full)
        url = self._url(f"/issues/{pr}/comments")
        budget = _Budget(self._max_attempts)
        while True:
            try:
                response = self._request("POST", url, body={"body": full}, length=len(full),
                                         budget=budget, repeatable=False)
            except _AmbiguousWrite as exc:
                if budget.exhausted:
                    raise GitHubError(f"GitHub API POST {self._display(url)} failed after "
                                      f"{budget.used} attempts: {exc.message}") from None
                seconds, dictated = exc.wait or (self._backoff(budget.used - 1), False)
                self._pause(seconds, dictated=dictated, what=f"POST {self._display(url)}")
                for comment in self.list_comments(pr):
                    text = comment.get("body")
                    found = _STATE_RE.search(text) if isinstance(text, str) else None
                    cid = _positive_int(comment.get("id"))
                    if found and found.group(2) == run and cid is not None:
                        return CommentResult(url=str(comment.get("html_url", "")),
                                             comment_id=cid, created=True)
                continue
            return self._result(response, "POST", created=True)

    def _url(self, suffix: str) -> str:
        return f"{self._base}/repos/{self._context.repository}{suffix}"

    @staticmethod
    def _run(run_id: int) -> int:
        number = _positive_int(run_id)
        if number is None:
            raise GitHubError(f"the workflow run id must be a positive integer, not "
                              f"{run_id!r}")
        return number

    @staticmethod
    def _pr(pr: int) -> int:
        number = _positive_int(pr)
        if number is None:
            raise GitHubError(f"the pull-request number must be a positive integer, not {pr!r}")
        return number

    def _scrub(self, text: str) -> str:
        for pattern in self._secrets:
            text = pattern.sub("***", text)
        return text

    def _clean(self, text: str) -> str:
        """One scrubbed, short line for a user-facing message."""
        line = " ".join(self._scrub(text).split())
        if len(line) > _MAX_MESSAGE_CHARS:
            line = line[: _MAX_MESSAGE_CHARS - 1] + "…"
        return line

    def _display(self, url: str) -> str:
        parts = urlsplit(url)
        shown = parts.path + (f"?{parts.query}" if parts.query else "")
        return self._clean(shown)

    def _headers(self) -> dict[str, str]:
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": API_VERSION,
            "User-Agent": USER_AGENT,
        }
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

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
            except _ReadForbidden:
                self._me = ACTIONS_BOT
            else:
                login = data.get("login") if isinstance(data, dict) else None
                if not isinstance(login, str) or not login:
                    raise GitHubError(f"GitHub API GET {self._display(url)} answered without "
                                      "the token's login, so its comments cannot be told "
                                      "from anyone else's")
                self._me = login
        return self._me

    def _next_link(self, response: requests.Response, current: str) -> str | None:
        link = response.links.get("next")
        target = link.get("url") if isinstance(link, dict) else None
        if not isinstance(target, str) or not target:
            return None
        absolute = urljoin(current, target)
        parts = urlsplit(absolute)
        if (parts.scheme, parts.netloc) != self._origin:
            raise GitHubError(f"GitHub API GET {self._display(current)}: refusing to follow a "
                              f"pagination link to another host ({self._clean(parts.netloc)})")
        return absolute

    def _json(self, response: requests.Response, method: str, url: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise GitHubError(f"GitHub API {method} {self._display(url)} answered HTTP "
                              f"{response.status_code} with a body that is not JSON") from None

    def _result(self, response: requests.Response, method: str, *,
                created: bool) -> CommentResult:
        data = self._json(response, method, response.url)
        if isinstance(data, dict):
            comment_id = _positive_int(data.get("id"))
            html_url = data.get("html_url")
            if comment_id is not None and isinstance(html_url, str):
                return CommentResult(url=html_url, comment_id=comment_id, created=created)
        raise GitHubError(f"GitHub API {method} {self._display(response.url)} answered without "
                          "the comment's id and html_url")

    def _api_message(self, response: requests.Response) -> str:
        """GitHub's ``message`` (and any ``errors[].message``), scrubbed, on one line."""
        try:
            data = response.json()
        except ValueError:
            return self._clean(response.text or response.reason or "")
        if not isinstance(data, dict):
            return ""
        parts: list[str] = []
        if isinstance(data.get("message"), str):
            parts.append(data["message"])
        errors = data.get("errors")
        if isinstance(errors, list):
            for item in errors:
                if isinstance(item, dict) and isinstance(item.get("message"), str):
                    parts.append(item["message"])
                elif isinstance(item, str):
                    parts.append(item)
        return self._clean("; ".join(parts))

    def _backoff(self, attempt: int) -> float:
        return float(min(BACKOFF_CAP,
                         BACKOFF_BASE * 2.0 ** attempt * (0.5 + self._random())))

    def _retry_after(self, value: str | None) -> float | None:
        if value is None:
            return None
        seconds = _parse_number(value)
        if seconds is None:
            try:
                seconds = parsedate_to_datetime(value).timestamp() - self._clock()
            except (TypeError, ValueError, IndexError):
                return None
        return max(seconds, 0.0)

    def _retry_wait(self, response: requests.Response, message: str,
                    attempt: int) -> tuple[float, bool] | None:
        """(seconds, dictated by GitHub) before the next attempt, or None: do not retry."""
        status = response.status_code
        headers = response.headers
        if status in (403, 429):
            retry_after = self._retry_after(headers.get("retry-after"))
            if retry_after is not None:
                return retry_after, True
            if (headers.get("x-ratelimit-remaining") or "").strip() == "0":
                reset = _parse_number(headers.get("x-ratelimit-reset"))
                if reset is not None:
                    return max(reset - self._clock(), 1.0), True
            elif status == 403 and "rate limit" not in message.lower():
                return None  # a permission error, not a rate limit
            # A rate limit without a usable time: at least a minute, doubling.
            return min(SECONDARY_LIMIT_WAIT * 2.0 ** attempt, self._max_wait), False
        if status >= 500:
            retry_after = self._retry_after(headers.get("retry-after"))
            if retry_after is not None:
                return retry_after, True
            return self._backoff(attempt), False
        return None

    def _remaining(self, what: str) -> float | None:
        """Seconds left of the deadline (None: no deadline); past it, a GitHubError."""
        if self._deadline is None:
            return None
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise GitHubError(f"GitHub API {what}: the deadline of {self._budget_s:g} s for "
                              "talking to GitHub passed",
                              hint="raise comment-timeout, or check the network / API URL")
        return left

    def _send(self, method: str, url: str, body: dict[str, Any] | None) -> requests.Response:
        """One exchange, redirects followed only on the same host, under the deadline.

        With a deadline the exchange runs in a worker thread that is abandoned when the
        deadline passes: a server that trickles one byte at a time (each read within the
        per-read timeout) cannot hold the run.
        """
        what = f"{method} {self._display(url)}"
        for _hop in range(5):
            left = self._remaining(what)
            timeout = self._timeout if left is None else min(self._timeout, left)
            response = self._exchange(method, url, body, timeout, what)
            if not (300 <= response.status_code < 400 and response.headers.get("location")):
                return response
            target = urljoin(url, response.headers["location"])
            parts = urlsplit(target)
            if (parts.scheme, parts.netloc) != self._origin:
                raise GitHubError(f"GitHub API {what} answered a redirect (HTTP "
                                  f"{response.status_code}) to another host "
                                  f"({self._clean(parts.netloc)}); not followed, nothing was "
                                  "sent there")
            url = target
        raise GitHubError(f"GitHub API {what}: too many redirects")

    def _exchange(self, method: str, url: str, body: dict[str, Any] | None, timeout: float,
                  what: str) -> requests.Response:
        def call() -> requests.Response:
            response = self._session.request(method, url, headers=self._headers(), json=body,
                                             timeout=timeout, allow_redirects=False,
                                             stream=True)
            with response:  # the body, read here under the deadline and the size cap
                response._content = _read_capped(response, MAX_API_BYTES,
                                                 f"the answer to {what}")
            return response

        return _abandonable(
            call, None if self._deadline is None else timeout,
            lambda: GitHubError(f"GitHub API {what}: no complete answer within the deadline "
                                f"({timeout:.0f} s of the {self._budget_s:g} s "
                                "comment-timeout)",
                                hint="GitHub or the network is too slow; raise "
                                     "comment-timeout"))

    def _pause(self, seconds: float, *, dictated: bool, what: str, why: str = "") -> None:
        left = self._remaining(what)
        if left is not None and seconds >= left:
            raise GitHubError(f"GitHub API {what}{' ' + why if why else ''}: a wait of "
                              f"{seconds:.0f} s before the next "
                              f"attempt would pass the {self._budget_s:g} s deadline "
                              "(comment-timeout)", hint="run the job again later")
        if seconds > self._max_wait:
            if dictated:
                raise GitHubError(
                    f"GitHub API {what}{' ' + why if why else ''}: GitHub asks to wait "
                    f"{seconds:.0f} s (rate limit), "
                    f"more than the {self._max_wait:.0f} s this tool waits at once",
                    hint="run the job again later")
            seconds = self._max_wait
        self._sleep(seconds)

    def _failure(self, method: str, url: str, status: int, message: str,
                 length: int | None) -> GitHubError:
        what = f"{method} {self._display(url)}"
        detail = f"HTTP {status}" + (f": {message}" if message else "")
        if status == 422 and "too long" in message.lower():
            return CommentTooLong(f"GitHub API {what} refused the comment as too long "
                                  f"({detail})", length=length)
        if method in _WRITE_METHODS and status in (403, 404):
            return CommentForbidden(f"GitHub refused to write the PR comment: {what} answered "
                                    f"{detail}", hint=_FORBIDDEN_HINT)
        if status == 401:
            return GitHubError(f"GitHub API {what} failed: {detail}",
                               hint="the GitHub token is invalid or expired")
        if status == 403 and method == "GET":
            return _ReadForbidden(f"GitHub API {what} failed: {detail}")
        return GitHubError(f"GitHub API {what} failed: {detail}")

    def _request(self, method: str, url: str, *, body: dict[str, Any] | None = None,
                 length: int | None = None, budget: _Budget | None = None,
                 repeatable: bool = True) -> requests.Response:
        """Send with retries; a non-``repeatable`` request raises :class:`_AmbiguousWrite`
        instead of re-sending when its outcome is unknown."""
        budget = budget if budget is not None else _Budget(self._max_attempts)
        what = f"{method} {self._display(url)}"
        while True:
            attempt = budget.take()
            try:
                response = self._send(method, url, body)
            except requests.ConnectTimeout as exc:  # nothing was sent: safe to repeat
                failure = f"connection timed out ({self._clean(str(exc))})"
            except (requests.Timeout, requests.ConnectionError) as exc:
                kind = "timed out" if isinstance(exc, requests.Timeout) else "connection failed"
                failure = f"{kind} ({self._clean(str(exc))})"
                if not repeatable:
                    raise _AmbiguousWrite(failure) from None
            except requests.RequestException as exc:
                raise GitHubError(f"GitHub API {what} failed: "
                                  f"{self._clean(str(exc))}") from None
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return response
                message = self._api_message(response)
                wait = self._retry_wait(response, message, attempt)
                if wait is None:
                    raise self._failure(method, url, status, message, length)
                failure = f"HTTP {status}" + (f": {message}" if message else "")
                if status >= 500 and not repeatable:
                    raise _AmbiguousWrite(failure, wait=wait)
                if budget.exhausted:
                    raise GitHubError(f"GitHub API {what} failed after {budget.used} "
                                      f"attempts: {failure}")
                self._pause(wait[0], dictated=wait[1], what=what, why=f"({failure})")
                continue
            if budget.exhausted:
                raise GitHubError(f"GitHub API {what} failed after {budget.used} attempts: "
                                  f"{failure}")
            self._pause(self._backoff(attempt), dictated=False, what=what, why=f"({failure})")
