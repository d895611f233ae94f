"""A tiny HTTP file server on a loopback port, for attachment downloads in tests.

    with FileServer() as files:
        files.add("/cat.png", PNG, "image/png")
        files.fail("/cat.png", status=503, times=1)   # the next request fails
        url = files.url("/cat.png")
        ...
        assert files.hits("/cat.png") == 2

Unknown paths answer 404; `fail(..., times=None)` fails every request;
`delay(path, seconds)` holds the answer back; `redirect(path, location)` answers 302.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class FileServer:
    def __init__(self) -> None:
        self._files: dict[str, tuple[bytes, str]] = {}
        self._failures: dict[str, tuple[int, int | None]] = {}  # path -> (status, remaining; None = always)
        self._delays: dict[str, float] = {}
        self._redirects: dict[str, str] = {}
        self._lock = threading.Lock()
        self.requests: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server._answer(self)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.05,), daemon=True)

    # ------------------------------------------------------------ setup

    def add(self, path: str, body: bytes, content_type: str = "application/octet-stream") -> str:
        with self._lock:
            self._files[path] = (body, content_type)
        return self.url(path)

    def fail(self, path: str, *, status: int = 503, times: int | None = None) -> None:
        """The next `times` requests of `path` (every one when None) answer `status`."""
        with self._lock:
            self._failures[path] = (status, times)

    def delay(self, path: str, seconds: float) -> None:
        with self._lock:
            self._delays[path] = seconds

    def redirect(self, path: str, location: str) -> None:
        with self._lock:
            self._redirects[path] = location

    def url(self, path: str) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}{path}"

    def hits(self, path: str | None = None) -> int:
        """Requests received (for `path`, or in all)."""
        with self._lock:
            return len(self.requests) if path is None else self.requests.count(path)

    # ------------------------------------------------------------ serving

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        path = handler.path.split("?", 1)[0]
        with self._lock:
            self.requests.append(path)
            delay = self._delays.get(path, 0.0)
            failure = self._failures.get(path)
            if failure is not None:
                status, remaining = failure
                if remaining is not None:
                    if remaining <= 0:
                        failure = None
                    else:
                        self._failures[path] = (status, remaining - 1)
            location = self._redirects.get(path)
            file = self._files.get(path)
        if delay:
            time.sleep(delay)
        try:
            if failure is not None:
                self._send(handler, failure[0], b"failed", "text/plain")
            elif location is not None:
                handler.send_response(302)
                handler.send_header("Location", location)
                handler.send_header("Content-Length", "0")
                handler.end_headers()
            elif file is None:
                self._send(handler, 404, b"not found", "text/plain")
            else:
                self._send(handler, 200, *file)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, body: bytes, content_type: str) -> None:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    # ------------------------------------------------------------ lifetime

    def start(self) -> FileServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FileServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
