"""The GitHub rooms (evaluator.github_context, evaluator.http_transport and
evaluator.github_comments) against a real HTTP server on 127.0.0.1 (stdlib, in a thread).

The fake GitHub keeps comments in memory, paginates with absolute ``Link`` URLs built from the
request's Host, records every request and can be scripted to answer errors, rate limits and
slow responses. Waits go through an injected fake sleep, so nothing really sleeps except the
two slow-response tests (client timeout 0.2 s, server delay 0.5 s).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from evaluator import __version__
from evaluator.errors import GitHubError
from evaluator.github_comments import (
    MAX_COMMENT_CHARS,
    CommentForbidden,
    CommentResult,
    CommentTooLong,
    GitHubClient,
    marker,
    max_body_chars,
)
from evaluator.github_context import GitHubContext, context_from_env
from evaluator.http_transport import new_session
from tests.fake_github import PR, REPO, FakeGitHub, Scripted

TOKEN = "ghs_S3CRET-t0ken-NEVER-PRINT-4711"
NOW = 1_700_000_000.0



# --------------------------------------------------------------------------- fake GitHub


class FakeTime:
    """Injected clock and sleep: sleeping records the wait and advances the clock."""

    def __init__(self) -> None:
        self.now = NOW
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture
def session() -> Iterator[requests.Session]:
    with requests.Session() as s:
        yield s


def make_client(server: FakeGitHub, session: requests.Session, fake_time: FakeTime,
                **kwargs: Any) -> GitHubClient:
    context = GitHubContext(api_url=server.base_url, repository=REPO, pr_number=PR,
                            token=kwargs.pop("token", TOKEN), event_name="pull_request",
                            head_sha="abc123")
    kwargs.setdefault("random", lambda: 0.5)  # jitter factor 0.5 + 0.5 = 1.0
    kwargs.setdefault("max_attempts", 5)
    kwargs.setdefault("timeout", 5.0)
    return GitHubClient(session, context, sleep=fake_time.sleep, clock=fake_time.clock,
                        **kwargs)


@pytest.fixture
def client(server: FakeGitHub, session: requests.Session, fake_time: FakeTime) -> GitHubClient:
    return make_client(server, session, fake_time)


def assert_no_token(exc: BaseException) -> None:
    for text in (str(exc), repr(exc), *(str(a) for a in exc.args)):
        assert TOKEN not in text
    hint = getattr(exc, "hint", None)
    assert hint is None or TOKEN not in hint


# --------------------------------------------------------------------------- headers, sticky


def test_headers_are_sent_on_every_request(server: FakeGitHub, client: GitHubClient) -> None:
    client.upsert_sticky_comment(PR, "hello", key="main")
    assert [r.method for r in server.requests] == ["GET", "POST"]
    for r in server.requests:
        assert r.headers["Authorization"] == f"Bearer {TOKEN}"
        assert r.headers["Accept"] == "application/vnd.github+json"
        assert r.headers["X-GitHub-Api-Version"] == "2022-11-28"
        assert r.headers["User-Agent"] == f"neuralmind-retrieval-eval/{__version__}"
    assert server.requests[0].path == f"/repos/{REPO}/issues/{PR}/comments?per_page=100"


def test_two_upserts_leave_exactly_one_comment(server: FakeGitHub,
                                               client: GitHubClient) -> None:
    server.add_comment(PR, "an unrelated review comment")
    first = client.upsert_sticky_comment(PR, "first report", key="main")
    second = client.upsert_sticky_comment(PR, "second report", key="main")

    assert first.created is True
    assert second.created is False
    assert second.comment_id == first.comment_id
    assert first.url.endswith(f"#issuecomment-{first.comment_id}")
    ours = [c for c in server.on_issue() if marker("main") in c["body"]]
    assert len(ours) == 1
    assert "second report" in ours[0]["body"]
    assert len(server.on_issue()) == 2
    patch = server.sent("PATCH")[0]
    assert patch.path == f"/repos/{REPO}/issues/comments/{first.comment_id}"
    assert patch.body == {"body": f"{marker('main')}\nsecond report"}


def test_marked_comment_on_page_three_of_250_is_updated(server: FakeGitHub,
                                                        client: GitHubClient) -> None:
    target = 0
    for i in range(250):
        body = f"comment {i}"
        if i == 220:
            body = f"old report\n{marker('main')}"
        cid = server.add_comment(PR, body, login="github-actions[bot]" if i == 220
                                 else "someone")
        if i == 220:
            target = cid

    assert len(client.list_comments(PR)) == 250
    server.requests.clear()

    result = client.upsert_sticky_comment(PR, "new report", key="main")

    assert result == CommentResult(url=f"https://github.com/{REPO}/pull/{PR}#issuecomment-"
                                   f"{target}", comment_id=target, created=False)
    gets = [r for r in server.sent("GET") if r.path != "/user"]  # who we are: asked once
    assert [r.path for r in server.sent("GET")].count("/user") == 1
    assert [parse_qs(urlsplit(r.path).query).get("page", ["1"])[0] for r in gets] == [
        "1", "2", "3"]
    assert all("per_page=100" in r.path for r in gets)
    assert [r.path for r in server.sent("PATCH")] == [f"/repos/{REPO}/issues/comments/{target}"]
    assert server.sent("POST") == []
    assert len(server.on_issue()) == 250


def test_newest_marked_comment_is_the_one_updated(server: FakeGitHub,
                                                  client: GitHubClient) -> None:
    server.add_comment(PR, f"{marker('main')}\nolder", login="github-actions[bot]")
    newer = server.add_comment(PR, f"{marker('main')}\nnewer", login="github-actions[bot]")
    result = client.upsert_sticky_comment(PR, "now", key="main")
    assert result.comment_id == newer
    assert "now" in server.comments[newer]["body"]


def test_two_keys_keep_two_comments(server: FakeGitHub, client: GitHubClient) -> None:
    a1 = client.upsert_sticky_comment(PR, "backend A", key="backend-a")
    b1 = client.upsert_sticky_comment(PR, "backend B", key="backend-b")
    a2 = client.upsert_sticky_comment(PR, "backend A again", key="backend-a")
    b2 = client.upsert_sticky_comment(PR, "backend B again", key="backend-b")
    assert [a1.created, b1.created, a2.created, b2.created] == [True, True, False, False]
    assert a1.comment_id == a2.comment_id != b1.comment_id == b2.comment_id
    bodies = sorted(c["body"] for c in server.on_issue())
    assert bodies == [f"{marker('backend-a')}\nbackend A again",
                      f"{marker('backend-b')}\nbackend B again"]


def test_key_is_sanitized_and_keys_do_not_shadow_each_other() -> None:
    hostile = marker("x --> <script>alert(1)</script> --!>")
    assert hostile.startswith("<!-- ")
    assert hostile.endswith(" -->")
    inner = hostile[len("<!-- "):-len(" -->")]
    assert not any(bad in inner for bad in ("-->", "--!>", ">", "<"))
    assert marker("") == marker("   ") == marker("default")
    assert marker("a") not in marker("ab")
    assert marker("ab") not in marker("a")
    assert len(marker("k" * 500)) < 120


def test_body_already_carrying_the_marker_is_not_marked_twice(
        server: FakeGitHub, client: GitHubClient) -> None:
    client.upsert_sticky_comment(PR, f"report\n{marker('main')}", key="main")
    assert server.on_issue()[0]["body"].count(marker("main")) == 1


# --------------------------------------------------------------------------- failures


def test_forbidden_post_is_not_retried_and_explains_forks(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("POST", 403, {"message": "Resource not accessible by "
                                                           "integration"}))
    with pytest.raises(CommentForbidden) as info:
        client.upsert_sticky_comment(PR, "x", key="main")
    text = str(info.value)
    assert "Resource not accessible by integration" in text
    assert "pull-requests: write" in text
    assert "fork" in text
    assert f"POST /repos/{REPO}/issues/{PR}/comments" in text
    assert "403" in text
    assert len(server.sent("POST")) == 1
    assert fake_time.sleeps == []
    assert_no_token(info.value)


def test_not_found_on_update_is_forbidden(server: FakeGitHub, client: GitHubClient) -> None:
    server.add_comment(PR, marker("main"), login="github-actions[bot]")
    server.script.append(Scripted("PATCH", 404, {"message": "Not Found"}))
    with pytest.raises(CommentForbidden, match="404"):
        client.upsert_sticky_comment(PR, "x", key="main")
    assert len(server.sent("PATCH")) == 1


def test_server_says_too_long_raises_comment_too_long_without_retry(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("POST", 422, {
        "message": "Validation Failed",
        "errors": [{"resource": "IssueComment", "code": "custom", "field": "body",
                    "message": "Body is too long (maximum is 65536 characters)"}]}))
    with pytest.raises(CommentTooLong) as info:
        client.upsert_sticky_comment(PR, "x" * 100, key="main")
    assert "too long" in str(info.value)
    assert isinstance(info.value, GitHubError)
    assert info.value.length == len(marker("main")) + 1 + 100
    assert len(server.sent("POST")) == 1
    assert fake_time.sleeps == []


def test_too_long_body_is_refused_before_sending(server: FakeGitHub,
                                                 client: GitHubClient) -> None:
    fits = "x" * max_body_chars("main")
    with pytest.raises(CommentTooLong) as info:
        client.upsert_sticky_comment(PR, fits + "y", key="main")
    assert info.value.limit == MAX_COMMENT_CHARS
    assert info.value.length == MAX_COMMENT_CHARS + 1
    assert server.requests == []

    result = client.upsert_sticky_comment(PR, fits, key="main")
    assert result.created
    assert len(server.on_issue()[0]["body"]) == MAX_COMMENT_CHARS


def test_other_failure_names_method_path_status_and_message(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 401, {"message": "Bad credentials"}))
    with pytest.raises(GitHubError) as info:
        client.list_comments(PR)
    text = str(info.value)
    assert f"GET /repos/{REPO}/issues/{PR}/comments?per_page=100" in text
    assert "HTTP 401" in text
    assert "Bad credentials" in text
    assert not isinstance(info.value, CommentForbidden)
    assert len(server.requests) == 1
    assert fake_time.sleeps == []


def test_forbidden_read_without_rate_limit_signal_is_not_retried(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 403, {"message": "Must have admin rights"}))
    with pytest.raises(GitHubError, match="Must have admin rights"):
        client.list_comments(PR)
    assert len(server.requests) == 1
    assert fake_time.sleeps == []


# --------------------------------------------------------------------------- retries


def test_429_retry_after_is_honoured(server: FakeGitHub, client: GitHubClient,
                                     fake_time: FakeTime) -> None:
    server.script.append(Scripted("POST", 429, {"message": "slow down"},
                                  {"Retry-After": "7"}))
    result = client.upsert_sticky_comment(PR, "x", key="main")
    assert result.created
    assert fake_time.sleeps == [7.0]
    assert [r.method for r in server.requests] == ["GET", "POST", "POST"]
    assert len(server.on_issue()) == 1


def test_403_secondary_limit_retry_after_is_honoured(server: FakeGitHub, client: GitHubClient,
                                                     fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 403, {"message": "You have exceeded a secondary "
                                                          "rate limit"}, {"Retry-After": "3"}))
    assert client.list_comments(PR) == []
    assert fake_time.sleeps == [3.0]


def test_403_secondary_limit_without_headers_waits_a_minute(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 403, {"message": "You have exceeded a secondary "
                                                          "rate limit"}))
    assert client.list_comments(PR) == []
    assert fake_time.sleeps == [60.0]


def test_rate_limit_reset_is_computed_from_the_injected_clock(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 403, {"message": "API rate limit exceeded"}, {
        "x-ratelimit-remaining": "0", "x-ratelimit-limit": "1000",
        "x-ratelimit-reset": str(int(NOW) + 42)}))
    server.script.append(Scripted("GET", 403, {"message": "API rate limit exceeded"}, {
        "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) - 100)}))
    assert client.list_comments(PR) == []
    # 42 s until the reset; then a reset already in the past waits the 1 s minimum
    assert fake_time.sleeps == [42.0, 1.0]
    assert len(server.requests) == 3


def test_rate_limit_wait_beyond_the_cap_fails_at_once(
        server: FakeGitHub, client: GitHubClient, fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 403, {"message": "API rate limit exceeded"}, {
        "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 7200)}))
    with pytest.raises(GitHubError, match="7200 s"):
        client.list_comments(PR)
    assert fake_time.sleeps == []
    assert len(server.requests) == 1


def test_500_then_success_backs_off_once(server: FakeGitHub, client: GitHubClient,
                                         fake_time: FakeTime) -> None:
    server.script.append(Scripted("GET", 500, {"message": "boom"}))
    server.add_comment(PR, "hi")
    assert len(client.list_comments(PR)) == 1
    assert fake_time.sleeps == [1.0]  # base 1 s * 2**0 * (0.5 + 0.5)
    assert len(server.requests) == 2


def test_500_on_create_relists_before_posting_again(server: FakeGitHub,
                                                    client: GitHubClient,
                                                    fake_time: FakeTime) -> None:
    server.script.append(Scripted("POST", 502, {"message": "Bad Gateway"}))
    result = client.upsert_sticky_comment(PR, "x", key="main")
    assert result.created
    assert [r.method for r in server.requests] == ["GET", "POST", "GET", "POST"]
    assert fake_time.sleeps == [1.0]
    assert len(server.on_issue()) == 1


def test_503_on_create_honours_retry_after(server: FakeGitHub, client: GitHubClient,
                                          fake_time: FakeTime) -> None:
    server.script.append(Scripted("POST", 503, {"message": "busy"}, {"Retry-After": "4"}))
    assert client.upsert_sticky_comment(PR, "x", key="main").created
    assert fake_time.sleeps == [4.0]
    assert [r.method for r in server.requests] == ["GET", "POST", "GET", "POST"]


def test_backoff_is_exponential_with_jitter_and_capped(server: FakeGitHub,
                                                       session: requests.Session,
                                                       fake_time: FakeTime) -> None:
    client = make_client(server, session, fake_time, max_attempts=9, random=lambda: 0.25)
    for _ in range(8):
        server.script.append(Scripted("GET", 503, {"message": "unavailable"}))
    assert client.list_comments(PR) == []
    assert fake_time.sleeps == [0.75, 1.5, 3.0, 6.0, 12.0, 24.0, 48.0, 60.0]


@pytest.mark.parametrize(("status", "headers", "sleep_each"), [
    (500, {}, None),
    (429, {"Retry-After": "2"}, 2.0),
    (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 5)}, None),
])
def test_no_retries_beyond_the_bound(server: FakeGitHub, session: requests.Session,
                                     fake_time: FakeTime, status: int,
                                     headers: dict[str, str], sleep_each: float | None) -> None:
    client = make_client(server, session, fake_time, max_attempts=3)
    for _ in range(10):
        server.script.append(Scripted("GET", status, {"message": "nope"}, headers))
    with pytest.raises(GitHubError) as info:
        client.list_comments(PR)
    assert len(server.requests) == 3
    assert len(fake_time.sleeps) == 2
    if sleep_each is not None:
        assert fake_time.sleeps == [sleep_each, sleep_each]
    assert "after 3 attempts" in str(info.value)
    assert f"HTTP {status}" in str(info.value)


def test_create_attempts_are_bounded_in_total(server: FakeGitHub, session: requests.Session,
                                              fake_time: FakeTime) -> None:
    client = make_client(server, session, fake_time, max_attempts=3)
    for _ in range(10):
        server.script.append(Scripted("POST", 500, {"message": "boom"}))
        server.script.append(Scripted("POST", 429, {"message": "slow"}, {"Retry-After": "1"}))
    with pytest.raises(GitHubError, match="after 3 attempts"):
        client.upsert_sticky_comment(PR, "x", key="main")
    assert len(server.sent("POST")) == 3
    assert server.on_issue() == []


def test_connection_errors_are_retried_within_the_bound(session: requests.Session,
                                                        fake_time: FakeTime) -> None:
    probe = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    port = probe.server_address[1]
    probe.server_close()  # nothing listens there any more
    context = GitHubContext(api_url=f"http://127.0.0.1:{port}", repository=REPO,
                            pr_number=PR, token=TOKEN, event_name=None, head_sha=None)
    client = GitHubClient(session, context, sleep=fake_time.sleep, clock=fake_time.clock,
                          max_attempts=3, random=lambda: 0.5, timeout=2.0)
    with pytest.raises(GitHubError, match="after 3 attempts") as info:
        client.list_comments(PR)
    assert fake_time.sleeps == [1.0, 2.0]
    assert_no_token(info.value)


def test_slow_response_times_out_and_is_retried(server: FakeGitHub,
                                                session: requests.Session,
                                                fake_time: FakeTime) -> None:
    client = make_client(server, session, fake_time, timeout=0.2)
    server.script.append(Scripted("GET", 200, [], delay=0.5))
    server.add_comment(PR, "hi")
    started = time.monotonic()
    assert len(client.list_comments(PR)) == 1
    assert time.monotonic() - started < 0.5
    assert fake_time.sleeps == [1.0]
    assert len(server.requests) == 2


def test_slow_create_that_succeeded_is_not_duplicated(server: FakeGitHub,
                                                      session: requests.Session,
                                                      fake_time: FakeTime) -> None:
    client = make_client(server, session, fake_time, timeout=0.2)
    # The server creates the comment but answers too late for the client.
    server.script.append(Scripted("POST", delay=0.5, apply=True))
    result = client.upsert_sticky_comment(PR, "report", key="main")
    # list, create (answer lost), list again, ask who we are (GET /user), update
    assert [r.method for r in server.requests] == ["GET", "POST", "GET", "GET", "PATCH"]
    assert server.requests[3].path == "/user"
    assert len(server.on_issue()) == 1
    assert result.comment_id == server.on_issue()[0]["id"]
    assert result.created is False


def test_pagination_link_to_another_host_is_refused(server: FakeGitHub,
                                                    client: GitHubClient) -> None:
    server.script.append(Scripted("GET", 200, [], {
        "Link": '<http://evil.example/steal?page=2>; rel="next"'}))
    with pytest.raises(GitHubError, match="another host"):
        client.list_comments(PR)
    assert len(server.requests) == 1


# --------------------------------------------------------------------------- token hygiene


def test_token_never_appears_in_errors(server: FakeGitHub, client: GitHubClient) -> None:
    echo = {"message": f"token {TOKEN} is not allowed here"}
    server.script.append(Scripted("GET", 401, echo))
    with pytest.raises(GitHubError) as info:
        client.list_comments(PR)
    assert_no_token(info.value)
    assert "***" in str(info.value)

    server.script.append(Scripted("POST", 403, echo))
    with pytest.raises(CommentForbidden) as forbidden:
        client.upsert_sticky_comment(PR, "x", key="main")
    assert_no_token(forbidden.value)

    server.script.append(Scripted("POST", 422, {"message": f"too long {TOKEN}"}))
    with pytest.raises(CommentTooLong) as too_long:
        client.upsert_sticky_comment(PR, "x", key="main")
    assert_no_token(too_long.value)

    assert TOKEN not in repr(client)
    assert TOKEN not in repr(GitHubContext(api_url="u", repository=REPO, pr_number=1,
                                           token=TOKEN, event_name=None, head_sha=None))


def test_new_session_works_with_the_client(server: FakeGitHub, fake_time: FakeTime) -> None:
    with new_session() as fresh:
        assert isinstance(fresh, requests.Session)
        assert make_client(server, fresh, fake_time).list_comments(PR) == []


def test_missing_token_refuses_to_post(server: FakeGitHub, session: requests.Session,
                                       fake_time: FakeTime) -> None:
    client = make_client(server, session, fake_time, token=None)
    with pytest.raises(GitHubError, match="no GitHub token"):
        client.upsert_sticky_comment(PR, "x", key="main")
    assert server.requests == []


# --------------------------------------------------------------------------- context_from_env


def write_event(tmp_path: Path, payload: Any) -> str:
    path = tmp_path / "event.json"
    path.write_text(payload if isinstance(payload, str) else json.dumps(payload),
                    encoding="utf-8")
    return str(path)


def base_env(event_name: str, event_path: str | None) -> dict[str, str]:
    env = {"GITHUB_REPOSITORY": REPO, "GITHUB_EVENT_NAME": event_name,
           "GITHUB_API_URL": "https://ghe.example.com/api/v3/"}
    if event_path is not None:
        env["GITHUB_EVENT_PATH"] = event_path
    return env


@pytest.mark.parametrize("event_name", ["pull_request", "pull_request_target"])
def test_context_from_pull_request_events(tmp_path: Path, event_name: str) -> None:
    path = write_event(tmp_path, {"pull_request": {"number": 42, "head": {"sha": "feed"}}})
    ctx = context_from_env(base_env(event_name, path), token=TOKEN)
    assert ctx == GitHubContext(api_url="https://ghe.example.com/api/v3", repository=REPO,
                                pr_number=42, token=TOKEN, event_name=event_name,
                                head_sha="feed")
    assert TOKEN not in repr(ctx)


def test_context_from_workflow_run(tmp_path: Path) -> None:
    path = write_event(tmp_path, {"workflow_run": {
        "head_sha": "cafe", "pull_requests": [{"number": 9}, {"number": 10}]}})
    ctx = context_from_env(base_env("workflow_run", path), token=TOKEN)
    assert (ctx.pr_number, ctx.head_sha, ctx.event_name) == (9, "cafe", "workflow_run")


def test_context_from_workflow_run_of_a_fork_has_no_pr(tmp_path: Path) -> None:
    path = write_event(tmp_path, {"workflow_run": {"head_sha": "cafe", "pull_requests": []}})
    ctx = context_from_env(base_env("workflow_run", path), token=TOKEN)
    assert (ctx.pr_number, ctx.head_sha) == (None, "cafe")
    explicit = context_from_env(base_env("workflow_run", path), token=TOKEN, pr=12)
    assert (explicit.pr_number, explicit.head_sha) == (12, "cafe")


def test_explicit_pr_wins_over_the_event(tmp_path: Path) -> None:
    path = write_event(tmp_path, {"pull_request": {"number": 42, "head": {"sha": "feed"}}})
    assert context_from_env(base_env("pull_request", path), token=TOKEN, pr=5).pr_number == 5


def test_explicit_pr_survives_a_garbled_event_file(tmp_path: Path) -> None:
    path = write_event(tmp_path, "{not json")
    ctx = context_from_env(base_env("pull_request", path), token=TOKEN, pr=5)
    assert (ctx.pr_number, ctx.head_sha) == (5, None)


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", {"pull_request": {"id": 1}},
                                     {"pull_request": {"number": "42"}}])
def test_garbled_event_file_is_a_clear_error(tmp_path: Path, content: Any) -> None:
    path = write_event(tmp_path, content)
    with pytest.raises(GitHubError) as info:
        context_from_env(base_env("pull_request", path), token=TOKEN)
    message = str(info.value)
    assert path in message
    assert "\n" not in message
    assert_no_token(info.value)


def test_missing_event_file_is_a_clear_error(tmp_path: Path) -> None:
    path = str(tmp_path / "nope.json")
    with pytest.raises(GitHubError, match=r"nope\.json"):
        context_from_env(base_env("pull_request", path), token=TOKEN)
    with pytest.raises(GitHubError, match="GITHUB_EVENT_PATH"):
        context_from_env(base_env("pull_request", None), token=TOKEN)


def test_non_pr_event_gives_no_pr_number(tmp_path: Path) -> None:
    path = write_event(tmp_path, {"ref": "refs/heads/main", "after": "beef"})
    ctx = context_from_env(base_env("push", path), token=TOKEN)
    assert (ctx.pr_number, ctx.head_sha, ctx.event_name) == (None, None, "push")
    assert context_from_env(base_env("push", path), token=TOKEN, pr=3).pr_number == 3


def test_context_defaults_and_the_token_it_is_given() -> None:
    """The token is the one the settings layer read (issue 21): the environment's token
    variables are not read here."""
    env = {"GITHUB_REPOSITORY": REPO, "GITHUB_TOKEN": "ghs_other", "INPUT_GITHUB-TOKEN": "x"}
    ctx = context_from_env(env, token=TOKEN)
    assert ctx.api_url == "https://api.github.com"
    assert ctx.token == TOKEN
    assert (ctx.pr_number, ctx.event_name, ctx.head_sha) == (None, None, None)
    assert context_from_env(env, token=None).token is None


@pytest.mark.parametrize("repo", ["", "no-slash", "a/b/c"])
def test_context_needs_owner_and_name(repo: str) -> None:
    with pytest.raises(GitHubError, match="GITHUB_REPOSITORY"):
        context_from_env({"GITHUB_REPOSITORY": repo}, token=TOKEN)


def test_context_rejects_a_bad_explicit_pr() -> None:
    with pytest.raises(GitHubError, match="positive integer"):
        context_from_env({"GITHUB_REPOSITORY": REPO}, token=TOKEN, pr=0)


def test_a_marker_pasted_by_someone_else_is_not_taken_over(server: FakeGitHub,
                                                             client: GitHubClient) -> None:
    """Anyone can paste the hidden marker; only the bot's own comment is sticky."""
    ours = client.upsert_sticky_comment(PR, "first report", key="main")
    hijack = server.add_comment(PR, f"nice PR {marker('main')}", login="mallory")
    again = client.upsert_sticky_comment(PR, "second report", key="main")
    assert again.comment_id == ours.comment_id
    assert "second report" in server.comments[ours.comment_id]["body"]
    assert server.comments[hijack]["body"] == f"nice PR {marker('main')}"
    assert [r.path for r in server.sent("GET")][-2:] == [
        f"/repos/{REPO}/issues/{PR}/comments?per_page=100", "/user"]


def test_only_foreign_marked_comments_means_create_our_own(server: FakeGitHub,
                                                            client: GitHubClient) -> None:
    server.add_comment(PR, f"{marker('main')}", login="mallory")
    result = client.upsert_sticky_comment(PR, "report", key="main")
    assert result.created
    assert [r.path for r in server.sent("GET") if r.path == "/user"] == ["/user"]
    assert len(server.on_issue(PR)) == 2


def test_personal_access_token_finds_its_own_comment(server: FakeGitHub,
                                                      client: GitHubClient) -> None:
    server.token_login = "alice"
    server.author = {"login": "alice", "type": "User"}
    first = client.upsert_sticky_comment(PR, "report 1", key="main")
    server.add_comment(PR, f"{marker('main')} copy", login="mallory")
    second = client.upsert_sticky_comment(PR, "report 2", key="main")
    assert second.comment_id == first.comment_id and not second.created
    assert len(server.on_issue(PR)) == 2
