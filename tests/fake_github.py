"""A fake GitHub REST API for tests: a real HTTP server on 127.0.0.1 (stdlib, in a thread).

It keeps issue comments in memory, paginates with absolute ``Link`` URLs built from the
request's Host, records every request and can be scripted to answer errors, rate limits and
slow responses. Shared by the client, CLI and end-to-end tests.

``POST /graphql`` (and ``/api/graphql``) serves the one mutation the client sends,
``minimizeComment``: the comment with that ``node_id`` gets ``minimized`` and the
classifier; an unknown id answers GraphQL's 200 with ``errors``, like GitHub.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

REPO = "octo/widgets"
PR = 7
LIST_RE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/(\d+)/comments$")
EDIT_RE = re.compile(r"^/repos/([^/]+/[^/]+)/issues/comments/(\d+)$")
RUN_RE = re.compile(r"^/repos/([^/]+/[^/]+)/actions/runs/(\d+)$")
RUN_ARTIFACTS_RE = re.compile(r"^/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts$")
ZIP_RE = re.compile(r"^/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip$")
PULL_RE = re.compile(r"^/repos/([^/]+/[^/]+)/pulls/(\d+)$")
BLOB_RE = re.compile(r"^/blobs/(\d+)$")


@dataclass
class Scripted:
    """One canned answer, used by the next request whose method (and path) match.

    ``apply`` performs the real operation first (then the delay, then its normal answer),
    which models a write that succeeded on the server but whose answer the client missed.
    """

    method: str
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    apply: bool = False
    path_contains: str = ""


@dataclass(frozen=True)
class RawBody:
    """Bytes answered as they are (an artifact zip), not as JSON."""

    data: bytes


@dataclass
class Recorded:
    method: str
    path: str  # with the query string, as sent
    headers: dict[str, str]
    body: Any

    @property
    def query(self) -> dict[str, list[str]]:
        """The parsed query string (``{"page": ["2"], ...}``)."""
        return parse_qs(urlsplit(self.path).query)


class FakeGitHub:
    def __init__(self, *, repo: str = REPO, host: str = "127.0.0.1") -> None:
        self.repo = repo
        self.lock = threading.Lock()
        self.comments: dict[int, dict[str, Any]] = {}  # id -> comment (with "issue")
        self.next_id = 1000
        self.requests: list[Recorded] = []
        self.script: list[Scripted] = []
        # GET /user: a personal access token's login; None answers 403 like GITHUB_TOKEN.
        self.token_login: str | None = None
        self.author: dict[str, str] = {"login": "github-actions[bot]", "type": "Bot"}
        # Workflow runs and their artifacts (the fork-safe comment's download).
        self.runs: dict[int, dict[str, Any]] = {}  # run id -> run (head_sha, pull_requests)
        self.artifacts: dict[int, list[dict[str, Any]]] = {}  # run id -> artifact objects
        self.zips: dict[int, bytes] = {}  # artifact id -> zip bytes
        self.pulls: dict[int, dict[str, Any]] = {}  # number -> pull request
        # Where GET .../artifacts/{id}/zip redirects (another server: the storage host);
        # None serves the zip from here (a same-host redirect to /blobs/{id}).
        self.storage: FakeGitHub | None = None
        self.artifacts_per_page = 100
        self.blob_content_length: int | None = None  # a lying Content-Length for /blobs
        self.httpd = ThreadingHTTPServer((host, 0), self._handler_class())
        self.httpd.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,),
                                       daemon=True)

    # --- state helpers for tests
    def add_comment(self, issue: int, body: str, *, login: str = "someone") -> int:
        with self.lock:
            cid = self._create(issue, body)
            self.comments[cid]["user"] = {"login": login,
                                          "type": "Bot" if login.endswith("[bot]") else "User"}
            return cid

    def on_issue(self, issue: int = PR) -> list[dict[str, Any]]:
        return sorted((c for c in self.comments.values() if c["issue"] == issue),
                      key=lambda c: c["id"])

    def sent(self, method: str | None = None) -> list[Recorded]:
        return [r for r in self.requests if method is None or r.method == method]

    def writes(self) -> list[Recorded]:
        """The requests that change comments (POST and PATCH), in the order received."""
        return [r for r in self.requests if r.method in ("POST", "PATCH")]

    # --- server
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                fake.handle(self)

            def do_POST(self) -> None:
                fake.handle(self)

            def do_PATCH(self) -> None:
                fake.handle(self)

        return Handler

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        raw = h.rfile.read(length) if length else b""
        body = json.loads(raw) if raw else None
        with self.lock:
            self.requests.append(Recorded(h.command, h.path, dict(h.headers.items()), body))
            canned = None
            for i, item in enumerate(self.script):
                if item.method == h.command and item.path_contains in h.path:
                    canned = self.script.pop(i)
                    break
        if canned is not None and not canned.apply:
            time.sleep(canned.delay)
            self.reply(h, canned.status, canned.body, canned.headers)
            return
        status, payload, headers = self.route(h, body)
        if canned is not None:
            time.sleep(canned.delay)
        self.reply(h, status, payload, headers)

    def route(self, h: BaseHTTPRequestHandler,
              body: Any) -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(h.path)
        with self.lock:
            if parts.path in ("/graphql", "/api/graphql") and h.command == "POST":
                return self.graphql(body)
            if parts.path == "/user" and h.command == "GET":
                if self.token_login is None:
                    return 403, {"message": "Resource not accessible by integration"}, {}
                return 200, {"login": self.token_login, "type": "User"}, {}
            if (m := LIST_RE.match(parts.path)) and m.group(1) == self.repo:
                issue = int(m.group(2))
                if h.command == "GET":
                    return self.list_page(h, issue, parts.query)
                if h.command == "POST":
                    cid = self._create(issue, body["body"])
                    return 201, self.comments[cid], {}
            if h.command == "GET" and (answer := self.route_actions(h, parts.path,
                                                                     parts.query)):
                return answer
            if (m := EDIT_RE.match(parts.path)) and h.command == "PATCH":
                cid = int(m.group(2))
                if cid not in self.comments:
                    return 404, {"message": "Not Found"}, {}
                self.comments[cid]["body"] = body["body"]
                return 200, self.comments[cid], {}
        return 404, {"message": "Not Found"}, {}

    def route_actions(self, h: BaseHTTPRequestHandler, path: str,
                      query: str) -> tuple[int, Any, dict[str, str]] | None:
        """Workflow runs, their artifacts, artifact zips (a redirect), pulls and blobs."""
        if (m := RUN_RE.match(path)) and m.group(1) == self.repo:
            run = self.runs.get(int(m.group(2)))
            return (200, run, {}) if run is not None else (404, {"message": "Not Found"}, {})
        if (m := RUN_ARTIFACTS_RE.match(path)) and m.group(1) == self.repo:
            run_id = int(m.group(2))
            items = self.artifacts.get(run_id, [])
            per_page = self.artifacts_per_page
            page = int(parse_qs(query).get("page", ["1"])[0])
            chunk = items[(page - 1) * per_page: page * per_page]
            headers = {}
            if page * per_page < len(items):
                base = f"http://{h.headers['Host']}{path}"
                headers["Link"] = f'<{base}?per_page=100&page={page + 1}>; rel="next"'
            return 200, {"total_count": len(items), "artifacts": chunk}, headers
        if (m := ZIP_RE.match(path)) and m.group(1) == self.repo:
            artifact_id = int(m.group(2))
            if artifact_id not in self.zips:
                return 404, {"message": "Not Found"}, {}
            target = self.storage if self.storage is not None else self
            if target is not self:
                target.zips[artifact_id] = self.zips[artifact_id]
            return 302, None, {"Location": f"{target.base_url}/blobs/{artifact_id}?sig=x"}
        if (m := PULL_RE.match(path)) and m.group(1) == self.repo:
            pull = self.pulls.get(int(m.group(2)))
            return (200, pull, {}) if pull is not None else (404, {"message": "Not Found"}, {})
        if m := BLOB_RE.match(path):
            data = self.zips.get(int(m.group(1)))
            if data is None:
                return 404, {"message": "BlobNotFound"}, {}
            return 200, RawBody(data), {}
        return None

    def add_run(self, run_id: int, *, head_sha: str, pull_requests: list[int],
                artifacts: dict[str, bytes], expired: tuple[str, ...] = ()) -> None:
        """A workflow run with the named artifacts (zip bytes)."""
        with self.lock:
            self.runs[run_id] = {
                "id": run_id, "head_sha": head_sha, "event": "pull_request",
                "pull_requests": [{"number": n, "head": {"sha": head_sha}}
                                  for n in pull_requests]}
            listed = self.artifacts.setdefault(run_id, [])
            for name, data in artifacts.items():
                self.next_id += 1
                listed.append({"id": self.next_id, "name": name,
                               "size_in_bytes": len(data), "expired": name in expired})
                self.zips[self.next_id] = data

    def graphql(self, body: Any) -> tuple[int, Any, dict[str, str]]:
        query = body.get("query", "") if isinstance(body, dict) else ""
        variables = body.get("variables", {}) if isinstance(body, dict) else {}
        if "minimizeComment" not in query or "OUTDATED" not in query:
            return 200, {"errors": [{"message": "this fake serves minimizeComment only"}]}, {}
        node = variables.get("id")
        for comment in self.comments.values():
            if comment["node_id"] == node:
                comment["minimized"] = "OUTDATED"
                return 200, {"data": {"minimizeComment": {
                    "minimizedComment": {"isMinimized": True}}}}, {}
        return 200, {"data": None, "errors": [
            {"type": "NOT_FOUND", "message": f"Could not resolve to a node with the global id "
                                             f"of '{node}'"}]}, {}

    def _create(self, issue: int, text: str) -> int:
        self.next_id += 1
        cid = self.next_id
        self.comments[cid] = {
            "id": cid, "node_id": f"IC_kwDO{cid}", "minimized": None,
            "issue": issue, "body": text, "user": self.author,
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                        time.gmtime(1_600_000_000 + cid)),
            "html_url": f"https://github.com/{self.repo}/pull/{issue}#issuecomment-{cid}",
        }
        return cid

    def list_page(self, h: BaseHTTPRequestHandler, issue: int,
                  query: str) -> tuple[int, Any, dict[str, str]]:
        params = parse_qs(query)
        per_page = min(int(params.get("per_page", ["30"])[0]), 100)
        page = int(params.get("page", ["1"])[0])
        items = self.on_issue(issue)
        chunk = items[(page - 1) * per_page: page * per_page]
        last = max(1, -(-len(items) // per_page))
        base = f"http://{h.headers['Host']}{urlsplit(h.path).path}"
        links = []
        if page < last:
            links.append(f'<{base}?per_page={per_page}&page={page + 1}>; rel="next"')
            links.append(f'<{base}?per_page={per_page}&page={last}>; rel="last"')
        if page > 1:
            links.append(f'<{base}?per_page={per_page}&page=1>; rel="first"')
        headers = {"Link": ", ".join(links)} if links else {}
        return 200, [{k: v for k, v in c.items() if k not in ("issue", "minimized")}
                     for c in chunk], headers

    def reply(self, h: BaseHTTPRequestHandler, status: int, payload: Any,
              headers: dict[str, str]) -> None:
        raw = isinstance(payload, RawBody)
        data = payload.data if raw else (b"" if payload is None
                                         else json.dumps(payload).encode())
        length = self.blob_content_length if raw and self.blob_content_length is not None \
            else len(data)
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/zip" if raw
                          else "application/json; charset=utf-8")
            h.send_header("Content-Length", str(length))
            for name, value in headers.items():
                h.send_header(name, value)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout test)


@contextlib.contextmanager
def running(**kwargs: Any) -> Iterator[FakeGitHub]:
    fake = FakeGitHub(**kwargs)
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.httpd.shutdown()
        fake.httpd.server_close()
        fake.thread.join(timeout=5)
