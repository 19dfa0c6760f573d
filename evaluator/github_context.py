"""The GitHub Actions runner context: which repository, pull request and head commit a run is
for, read from the Actions environment and the event file.

:func:`context_from_env` reads ``GITHUB_API_URL``, ``GITHUB_REPOSITORY``,
``GITHUB_EVENT_NAME`` and the event file (``GITHUB_EVENT_PATH``) into a
:class:`GitHubContext`. It reads no token: the caller gives the one the settings layer read
(:func:`evaluator.settings.token_of`, carried as ``Deps.github_token``); ``repr`` never shows
it. Everything in the event file is hostile input: a garbled one is a clear error.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from evaluator.errors import GitHubError

DEFAULT_API_URL: Final = "https://api.github.com"
REPO_RE: Final = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_PR_EVENTS: Final = frozenset({"pull_request", "pull_request_target"})


@dataclass(frozen=True)
class GitHubContext:
    """Where and as whom to talk to GitHub. ``repr`` never shows the token."""

    api_url: str
    repository: str
    pr_number: int | None
    token: str | None = field(repr=False)
    event_name: str | None
    head_sha: str | None


def positive_int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _nonempty_str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def read_event(path: str) -> dict[str, Any]:
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


def _from_event(event_name: str | None, payload: Mapping[str, Any],
                path: str) -> tuple[int | None, str | None]:
    """The PR number and head sha an event carries; (None, None) for a non-PR event."""
    if event_name in _PR_EVENTS:
        pull = payload.get("pull_request")
        number = positive_int(pull.get("number")) if isinstance(pull, dict) else None
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
            number = positive_int(prs[0].get("number"))
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
    if not REPO_RE.fullmatch(repository):
        shown = repr(repository) if repository else "not set"
        raise GitHubError(f"GITHUB_REPOSITORY must be 'owner/name' (it is {shown})")
    if pr is not None and positive_int(pr) is None:
        raise GitHubError(f"the pull-request number must be a positive integer, not {pr!r}")
    event_name = (env.get("GITHUB_EVENT_NAME") or "").strip() or None
    event_path = (env.get("GITHUB_EVENT_PATH") or "").strip()

    event_pr: int | None = None
    head_sha: str | None = None
    if event_path:
        try:
            event_pr, head_sha = _from_event(event_name, read_event(event_path), event_path)
        except GitHubError:
            if pr is None:
                raise
    elif pr is None and (event_name in _PR_EVENTS or event_name == "workflow_run"):
        raise GitHubError(f"GITHUB_EVENT_PATH is not set for a {event_name} event; "
                          "pass the pull-request number explicitly")
    return GitHubContext(api_url=api_url, repository=repository,
                         pr_number=pr if pr is not None else event_pr, token=token,
                         event_name=event_name, head_sha=head_sha)
