"""A small fake of GitHub's issue-comment API for the Docker and ``act`` end-to-end tests.

A real HTTP server (stdlib ``http.server``, in a thread) bound to 127.0.0.1 on a free port.
The action's container reaches it through the host network (act runs job and action
containers with ``--network host``). It implements what the sticky comment needs:

* ``GET  /repos/{owner}/{repo}/issues/{number}/comments?per_page=&page=`` — oldest first,
  ``per_page`` 30 by default and at most 100, an absolute ``Link: <…>; rel="next"`` while more
  pages follow;
* ``POST /repos/{owner}/{repo}/issues/{number}/comments`` ``{"body": …}`` → 201;
* ``PATCH /repos/{owner}/{repo}/issues/comments/{id}`` ``{"body": …}`` → 200;

and records every request (method, path, query, headers, JSON body) for the assertions.
Anything else answers 404 like GitHub does.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

_LIST = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/(?P<number>\d+)/comments$")
_EDIT = re.compile(r"^/repos/(?P<repo>[^/]+/[^/]+)/issues/comments/(?P<id>\d+)$")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


class FakeGitHub:
    """In-memory issue comments behind a real HTTP server; see the module docstring."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._comments: dict[int, dict[str, Any]] = {}
        self._next_id = 5001
        self.requests: list[Request] = []
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    # ------------------------------------------------------------------ test helpers

    def start(self) -> FakeGitHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def add_comment(self, repo: str, number: int, body: str, login: str = "someone") -> int:
        """A comment that exists before the run (e.g. to push ours past the first page)."""
        with self._lock:
            return self._create(repo, number, body, login)["id"]

    def comments(self, repo: str, number: int) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(c) for c in self._comments.values()
                    if c["repo"] == repo and c["issue"] == number]

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method in ("POST", "PATCH")]

    # ------------------------------------------------------------------ the API

    def _create(self, repo: str, number: int, body: str, login: str) -> dict[str, Any]:
        cid = self._next_id
        self._next_id += 1
        comment = {
            "id": cid, "repo": repo, "issue": number, "body": body, "user": {"login": login},
            "html_url": f"https://github.com/{repo}/pull/{number}#issuecomment-{cid}",
            "url": f"{self.url}/repos/{repo}/issues/comments/{cid}",
        }
        self._comments[cid] = comment
        return comment

    @staticmethod
    def _public(comment: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in comment.items() if k not in ("repo", "issue")}

    def _list(self, repo: str, number: int, query: dict[str, list[str]]
              ) -> tuple[int, Any, dict[str, str]]:
        try:
            per_page = min(max(int(query.get("per_page", ["30"])[0]), 1), 100)
            page = max(int(query.get("page", ["1"])[0]), 1)
        except ValueError:
            return 422, {"message": "Validation Failed"}, {}
        with self._lock:
            items = sorted((c for c in self._comments.values()
                            if c["repo"] == repo and c["issue"] == number),
                           key=lambda c: c["id"])
            chunk = [self._public(c) for c in items[(page - 1) * per_page:page * per_page]]
        headers = {}
        if page * per_page < len(items):
            nxt = f"{self.url}/repos/{repo}/issues/{number}/comments?per_page={per_page}" \
                  f"&page={page + 1}"
            headers["Link"] = f'<{nxt}>; rel="next"'
        return 200, chunk, headers

    def _answer(self, method: str, path: str, query: dict[str, list[str]], body: Any
                ) -> tuple[int, Any, dict[str, str]]:
        listing = _LIST.match(path)
        if listing and method == "GET":
            return self._list(listing["repo"], int(listing["number"]), query)
        if listing and method == "POST":
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return 422, {"message": "Validation Failed"}, {}
            with self._lock:
                made = self._create(listing["repo"], int(listing["number"]), body["body"],
                                    "github-actions[bot]")
                return 201, self._public(made), {}
        edit = _EDIT.match(path)
        if edit and method == "PATCH":
            if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                return 422, {"message": "Validation Failed"}, {}
            with self._lock:
                comment = self._comments.get(int(edit["id"]))
                if comment is None or comment["repo"] != edit["repo"]:
                    return 404, {"message": "Not Found"}, {}
                comment["body"] = body["body"]
                return 200, self._public(comment), {}
        return 404, {"message": "Not Found"}, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                query = parse_qs(parts.query)
                with fake._lock:
                    fake.requests.append(Request(self.command, parts.path, query,
                                                 dict(self.headers.items()), body))
                status, payload, headers = fake._answer(self.command, parts.path, query, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("x-ratelimit-limit", "1000")
                self.send_header("x-ratelimit-remaining", "999")
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the recorded requests are the log."""

        return Handler


@contextmanager
def fake_github() -> Iterator[FakeGitHub]:
    server = FakeGitHub().start()
    try:
        yield server
    finally:
        server.stop()
