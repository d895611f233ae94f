"""A stdio MCP server's stderr, into agentd's log.

Left to itself the SDK hands the server agentd's own stderr, so whatever the
server prints (a traceback quoting its API key, say) bypasses redaction and
is not told apart from agentd's own lines. Each connection instead gives its
process a pipe; every line read from it is logged under `agentd.mcp` with the
server's id, redacted and cut to `MAX_LINE` characters, and the last one is
kept for the message that says the server went away."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import TextIO

from agentd.runtime.redact import redact

__all__ = ["MAX_LINE", "ServerStderr"]

log = logging.getLogger("agentd.mcp")

#: The most characters of one stderr line logged (the rest is dropped).
MAX_LINE = 2000
_READ = 65536


class ServerStderr:
    """One server process's stderr: `errlog` is what the process is given;
    `spawned()` is called once it runs (or failed to start)."""

    def __init__(self, server_id: str) -> None:
        self._server_id = server_id
        read_fd, write_fd = os.pipe()
        self._reader = os.fdopen(read_fd, "rb", buffering=0)
        self.errlog: TextIO = os.fdopen(write_fd, "w")
        self._task: asyncio.Task[None] | None = None
        self._transport: asyncio.ReadTransport | None = None
        #: The last line the server printed (redacted, cut), if any.
        self.last_line: str | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader()
        self._transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), self._reader)
        self._task = asyncio.ensure_future(self._pump(stream))

    def spawned(self) -> None:
        """The process holds its own copy of the pipe now: without closing
        ours, the reader would never see the end."""
        self.errlog.close()

    async def close(self, drain: float = 1.0) -> None:
        """Reads what the ended process still left in the pipe (its last words
        are often why it ended) for up to `drain` seconds, then stops."""
        self.errlog.close()
        if self._task is not None:
            await asyncio.wait({self._task}, timeout=drain)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._transport is not None:
            self._transport.close()
        self._reader.close()

    async def _pump(self, stream: asyncio.StreamReader) -> None:
        pending = bytearray()
        while chunk := await stream.read(_READ):
            pending += chunk
            *lines, rest = pending.split(b"\n")
            for line in lines:
                self._line(line)
            # A line longer than MAX_LINE is logged in pieces rather than held.
            while len(rest) > MAX_LINE * 4:
                self._line(rest[: MAX_LINE * 4])
                rest = rest[MAX_LINE * 4 :]
            pending = bytearray(rest)
        if pending:
            self._line(bytes(pending))

    def _line(self, raw: bytes | bytearray) -> None:
        text = redact(raw.decode("utf-8", errors="replace").rstrip("\r"))  # before cutting: a cut secret is not found
        if not text.strip():
            return
        if len(text) > MAX_LINE:
            text = text[:MAX_LINE] + "..."
        self.last_line = text
        log.info("MCP server %r (stderr): %s", self._server_id, text)
