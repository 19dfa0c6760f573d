"""A fault-injecting GitHub API on 127.0.0.1 for the hostile-input corpus.

Each request takes the next scripted fault (or the one ``forever`` fault); without one the
server answers like GitHub: an empty comment list, a created comment. Faults: an HTTP status
with headers/body, ``trickle`` (headers, then one byte every ``gap`` seconds), ``silent``
(accept, never answer), ``redirect`` (307 to another host), ``loop`` (a next link to
itself), ``endless`` (a new next page every time), ``badjson``.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Fault:
    kind: str = "status"  # status | trickle | silent | redirect | loop | endless | badjson
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    method: str = ""  # only requests with this method ("" = any)
    path: str = ""  # only requests whose path holds this ("" = any)
    gap: float = 2.0


class FaultServer:
    def __init__(self) -> None:
        self.faults: list[Fault] = []
        self.forever: Fault | None = None
        self.requests: list[tuple[str, str]] = []
        self.posted: list[str] = []
        self.stop = threading.Event()
        self.other_host_hits = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"

    def _next(self, method: str, path: str) -> Fault | None:
        def matches(fault: Fault) -> bool:
            return fault.method in ("", method) and fault.path in path

        for i, fault in enumerate(self.faults):
            if matches(fault):
                return self.faults.pop(i)
        if self.forever is not None and matches(self.forever):
            return self.forever
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: Any, headers: dict[str, str] | None = None,
                      raw: bytes | None = None) -> None:
                data = raw if raw is not None else json.dumps(body).encode()
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = self.rfile.read(length) if length else b""
                server.requests.append((method, self.path))
                if self.headers.get("Host", "").startswith("localhost"):
                    server.other_host_hits += 1
                fault = server._next(method, self.path)
                if fault is not None and self._fault(fault, method):
                    return
                if method == "POST":
                    body = json.loads(payload or b"{}").get("body", "")
                    server.posted.append(body)
                    self._send(201, {"id": len(server.posted),
                                     "html_url": f"{server.base_url}/c/{len(server.posted)}",
                                     "body": body})
                elif self.path.startswith("/user"):
                    self._send(403, {"message": "Resource not accessible by integration"})
                else:
                    self._send(200, [])

            def _fault(self, fault: Fault, method: str) -> bool:
                if fault.kind == "status":
                    self._send(fault.status, fault.body if fault.body is not None
                               else {"message": f"fault {fault.status}"}, fault.headers)
                elif fault.kind == "badjson":
                    self._send(200, None, raw=b"{not json")
                elif fault.kind == "trickle":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "100000")
                    self.end_headers()
                    with contextlib.suppress(OSError):
                        self.wfile.write(b"[")
                        self.wfile.flush()
                        while not server.stop.wait(fault.gap):
                            self.wfile.write(b" ")
                            self.wfile.flush()
                elif fault.kind == "silent":
                    server.stop.wait(600)
                elif fault.kind == "redirect":
                    self._send(307, {}, {"Location": f"http://localhost:{server.port}{self.path}"})
                elif fault.kind == "loop":
                    self._send(200, [], {"Link": f'<{server.base_url}{self.path}>; rel="next"'})
                elif fault.kind == "endless":
                    n = len(server.requests)
                    path = self.path.split("&page=")[0] + f"&page={n}"
                    self._send(200, [], {"Link": f'<{server.base_url}{path}>; rel="next"'})
                else:
                    return False
                return True

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PATCH(self) -> None:
                self._handle("PATCH")

        return Handler


@contextlib.contextmanager
def fault_server() -> Iterator[FaultServer]:
    server = FaultServer()
    thread = threading.Thread(target=server.httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.stop.set()
        server.httpd.shutdown()
        server.httpd.server_close()
        time.sleep(0)
