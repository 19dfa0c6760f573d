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
            if (m := EDIT_RE.match(parts.path)) and h.command == "PATCH":
                cid = int(m.group(2))
                if cid not in self.comments:
                    return 404, {"message": "Not Found"}, {}
                self.comments[cid]["body"] = body["body"]
                return 200, self.comments[cid], {}
        return 404, {"message": "Not Found"}, {}

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

    @staticmethod
    def reply(h: BaseHTTPRequestHandler, status: int, payload: Any,
              headers: dict[str, str]) -> None:
        data = b"" if payload is None else json.dumps(payload).encode()
        try:
            h.send_response(status)
            h.send_header("Content-Type", "application/json; charset=utf-8")
            h.send_header("Content-Length", str(len(data)))
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
