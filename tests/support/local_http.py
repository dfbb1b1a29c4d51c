"""A real HTTP server on localhost for connector tests: recorded payloads, scripted failures.

Each route answers from a queue of scripted responses (status, headers, body, delay); the last
one repeats. Every request is recorded with its headers so tests can check what was sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    body: bytes = b""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class LocalServer:
    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.requests: list[Recorded] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def route(self, path: str, *replies: Reply) -> None:
        self.routes[path] = list(replies)

    def _reply_for(self, path: str) -> Reply:
        queue = self.routes.get(path)
        if not queue:
            return Reply(b"not found", status=404)
        return queue.pop(0) if len(queue) > 1 else queue[0]


@contextmanager
def local_server() -> Iterator[LocalServer]:
    state = LocalServer()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            state.requests.append(Recorded(self.command, self.path, dict(self.headers), body))
            reply = state._reply_for(self.path.split("?", 1)[0])
            if reply.delay:
                time.sleep(reply.delay)
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        do_GET = _answer
        do_POST = _answer

        def log_message(self, format: str, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state._server = server
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
