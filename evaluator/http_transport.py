"""HTTP to GitHub's API: the only module in the project that imports ``requests``.

:class:`GitHubTransport` sends requests on an injected ``requests.Session`` and owns what
every call needs: the headers (the token goes only to the API's own host), pagination
(``Link: rel="next"``, never to another host), the retries and their budget, the deadline,
size caps on every answer, and scrubbing (the token in any encoding becomes ``***`` in every
message). :class:`evaluator.github_comments.GitHubClient` builds the comments and artifacts
on it.

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

An artifact's zip (:meth:`GitHubTransport.download_artifact`) follows the redirect to the
storage host without the Authorization header, and the body is size-bounded.

A write whose outcome is unknown (timeout, dropped connection, 5xx) is never simply re-sent
when the caller says it is not ``repeatable``: :class:`AmbiguousWrite` tells the caller,
which looks before it sends again.
"""

from __future__ import annotations

import math
import random as _random
import threading
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any, Final, TypeVar
from urllib.parse import urljoin, urlsplit

import requests

from evaluator import __version__
from evaluator.errors import GitHubError
from evaluator.github_context import REPO_RE, GitHubContext, positive_int
from evaluator.scrub import secret_forms

API_VERSION: Final = "2022-11-28"
USER_AGENT: Final = f"neuralmind-retrieval-eval/{__version__}"
PER_PAGE: Final = 100
MAX_PAGES: Final = 1_000
BACKOFF_BASE: Final = 1.0
BACKOFF_CAP: Final = 60.0
SECONDARY_LIMIT_WAIT: Final = 60.0
MAX_SINGLE_WAIT: Final = 900.0
_MAX_MESSAGE_CHARS: Final = 300

Response = requests.Response  # for the modules that build on the transport


class ReadForbidden(GitHubError):
    """A read answered 403 that is not a rate limit (``Resource not accessible by
    integration``: what the workflow's token gets for ``GET /user``)."""


class _Transient(GitHubError):
    """A download failure worth another attempt (5xx, timeout, dropped connection)."""


class AmbiguousWrite(GitHubError):
    """A write whose outcome is unknown (timeout, dropped connection, 5xx); internal only."""

    def __init__(self, message: str, *, wait: tuple[float, bool] | None = None) -> None:
        super().__init__(message)
        self.wait = wait  # (seconds, dictated by GitHub) when the answer said how long


# ----------------------------------------------------------------------------- client


def new_session() -> requests.Session:
    """A fresh HTTP session for :class:`GitHubTransport` (tests inject their own)."""
    return requests.Session()


class Budget:
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


class GitHubTransport:
    """Requests to GitHub's REST API on an injected ``requests.Session``.

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
        if not REPO_RE.fullmatch(context.repository):
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
        self._secrets = secret_forms(token) if token else ()
        self._me: str | None = None
        self._base = context.api_url.rstrip("/")
        base = urlsplit(self._base)
        self._origin = (base.scheme, base.netloc)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(api_url={self._base!r}, "
                f"repository={self._context.repository!r})")

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


    def get_json(self, suffix: str) -> Any:
        """``GET /repos/{repo}{suffix}``'s JSON (with the usual retries)."""
        url = self._url(suffix)
        return self._json(self._request("GET", url), "GET", url)


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
        artifact = positive_int(artifact_id)
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


    # ------------------------------------------------------------------ helpers

    def _url(self, suffix: str) -> str:
        return f"{self._base}/repos/{self._context.repository}{suffix}"

    @staticmethod
    def _run(run_id: int) -> int:
        number = positive_int(run_id)
        if number is None:
            raise GitHubError(f"the workflow run id must be a positive integer, not "
                              f"{run_id!r}")
        return number

    @staticmethod
    def _pr(pr: int) -> int:
        number = positive_int(pr)
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
        if status == 401:
            return GitHubError(f"GitHub API {what} failed: {detail}",
                               hint="the GitHub token is invalid or expired")
        if status == 403 and method == "GET":
            return ReadForbidden(f"GitHub API {what} failed: {detail}")
        return GitHubError(f"GitHub API {what} failed: {detail}")

    def _request(self, method: str, url: str, *, body: dict[str, Any] | None = None,
                 length: int | None = None, budget: Budget | None = None,
                 repeatable: bool = True) -> requests.Response:
        """Send with retries; a non-``repeatable`` request raises :class:`AmbiguousWrite`
        instead of re-sending when its outcome is unknown."""
        budget = budget if budget is not None else Budget(self._max_attempts)
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
                    raise AmbiguousWrite(failure) from None
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
                    raise AmbiguousWrite(failure, wait=wait)
                if budget.exhausted:
                    raise GitHubError(f"GitHub API {what} failed after {budget.used} "
                                      f"attempts: {failure}")
                self._pause(wait[0], dictated=wait[1], what=what, why=f"({failure})")
                continue
            if budget.exhausted:
                raise GitHubError(f"GitHub API {what} failed after {budget.used} attempts: "
                                  f"{failure}")
            self._pause(self._backoff(attempt), dictated=False, what=what, why=f"({failure})")
