"""One MCP server's connection, kept up for the whole process: connected at
open, its tools listed then and again on `list_changed`, restarted with
backoff when it dies, closed at shutdown. The SDK's `Client` speaks the
protocol; this module only supervises it.

The SDK's transports are anyio task groups that must be entered and left in
one task, so a supervisor task owns the `Client`; runs call through it from
their own tasks, each call raced against the connection going down, so a call
never outlives the server it was sent to."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from contextlib import AsyncExitStack
from typing import Any

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED, CallToolResult, ToolListChangedNotification
from mcp.types import Tool as McpTool

from agentd.runtime.mcp_tools.results import McpToolError
from agentd.runtime.mcp_tools.spec import McpServerSpec
from agentd.runtime.mcp_tools.stderr import ServerStderr
from agentd.runtime.redact import redact

__all__ = ["Backoff", "McpConnection"]

log = logging.getLogger("agentd.mcp")

#: How long connecting (start-up, handshake, first listing) may take.
CONNECT_TIMEOUT = 30.0
#: A live connection is pinged this often, and a ping unanswered this long
#: means the server stopped answering: it is restarted.
PING_INTERVAL = 15.0
PING_TIMEOUT = 10.0
#: The most tools one server's listing may hold (pages are followed up to it).
MAX_TOOLS = 1000


class Backoff:
    """Delays between restarts: doubling from `first` to `most`, back to
    `first` once a connection stayed up for `steady` seconds."""

    def __init__(self, first: float = 0.2, most: float = 30.0, steady: float = 60.0) -> None:
        self.first, self.most, self.steady = first, most, steady
        self._next = first

    def after(self, uptime: float) -> float:
        if uptime >= self.steady:
            self._next = self.first
        delay, self._next = self._next, min(self._next * 2, self.most)
        return delay


class McpConnection:
    """The process's one connection to `spec`'s server."""

    def __init__(
        self,
        spec: McpServerSpec,
        backoff: Backoff | None = None,
        *,
        ping_interval: float = PING_INTERVAL,
        ping_timeout: float = PING_TIMEOUT,
    ) -> None:
        self.spec = spec
        self._backoff = backoff or Backoff()
        self._ping_interval, self._ping_timeout = ping_interval, ping_timeout
        self._client: Client | None = None
        self._tools: list[McpTool] = []
        #: Why the server is unavailable (None while connected).
        self._down_reason: str | None = "not connected yet"
        #: Set when the current connection is gone (a new event per connection).
        self._gone = asyncio.Event()
        self._relist = asyncio.Event()
        self._closing = asyncio.Event()
        self._first = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: Connections made so far (a test waits for a restart by it).
        self.generation = 0
        #: The last line a stdio server printed to stderr, for the log line saying it went away.
        self._last_words: str | None = None

    # -- what runs see ---------------------------------------------------

    @property
    def tools(self) -> list[McpTool]:
        """The server's tools as last listed (kept while it restarts)."""
        return self._tools

    @property
    def available(self) -> bool:
        return self._client is not None

    async def call(self, name: str, arguments: Any) -> CallToolResult:
        """Calls a tool; McpToolError when the server is down, goes down during
        the call, times out, or refuses the request."""
        client, gone = self._client, self._gone
        if client is None:
            raise McpToolError(f"MCP server {self.spec.id!r} is unavailable ({self._down_reason}); try again later")
        args = arguments if isinstance(arguments, dict) else {}
        call = asyncio.ensure_future(client.call_tool(name, args, read_timeout_seconds=self.spec.timeout_seconds))
        lost = asyncio.ensure_future(gone.wait())
        try:
            await asyncio.wait({call, lost}, return_when=asyncio.FIRST_COMPLETED)
        finally:  # also when the run is aborted: the call is given up
            lost.cancel()
            if not call.done():
                call.cancel()
        if not call.done() or call.cancelled():
            raise McpToolError(f"MCP server {self.spec.id!r} went away during the call")
        failure = call.exception()
        if failure is None:
            return call.result()
        if isinstance(failure, MCPError) and failure.code != CONNECTION_CLOSED:
            raise McpToolError(redact(f"MCP server {self.spec.id!r}: {failure.error.message}")) from failure
        if isinstance(failure, TimeoutError):
            raise McpToolError(f"MCP tool {name!r} took longer than {self.spec.timeout_seconds:g}s") from failure
        self._lose(gone, f"the call failed: {failure}")
        raise McpToolError(redact(f"MCP server {self.spec.id!r} went away during the call ({failure})")) from failure

    # -- lifecycle -----------------------------------------------------------

    async def open(self, wait: float) -> None:
        """Starts the supervisor; waits up to `wait` seconds for the first
        connection (a server that is slow or down does not hold up start-up)."""
        if self._task is None:
            self._task = asyncio.create_task(self._supervise(), name=f"mcp:{self.spec.id}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._first.wait(), wait)

    async def close(self) -> None:
        self._closing.set()
        if self._task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(self._task, CONNECT_TIMEOUT)
            self._task = None

    async def _supervise(self) -> None:
        while not self._closing.is_set():
            started = time.monotonic()
            try:
                await self._connected_once()
            except asyncio.CancelledError:
                if self._closing.is_set():
                    break
                self._down("the connection was cancelled")  # the transport's own cancel scope
            except Exception as exc:
                self._down(_describe(exc))
            self._first.set()
            if self._closing.is_set():
                break
            delay = self._backoff.after(time.monotonic() - started)
            message = f"MCP server {self.spec.id!r} is unavailable ({self._down_reason}); retry in {delay:.1f}s"
            if self._last_words:
                message += f"; its last stderr line: {self._last_words}"
            log.warning("%s", redact(message))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), delay)
        self._down("agentd is shutting down")

    async def _connected_once(self) -> None:
        self._last_words = None
        async with AsyncExitStack() as stack:
            stderr = await self._stderr(stack)
            client = Client(self._target(await self._http_client(stack), stderr), message_handler=self._on_message)
            async with asyncio.timeout(CONNECT_TIMEOUT):  # not wait_for: the SDK's scopes stay in this task
                try:
                    await stack.enter_async_context(client)
                finally:
                    if stderr is not None:
                        stderr.spawned()
                await self._list(client)
            self._gone = gone = asyncio.Event()
            self._client, self._down_reason = client, None
            self.generation += 1
            self._first.set()
            log.info("MCP server %r connected (%d tools)", self.spec.id, len(self._tools))
            watchers = [
                asyncio.ensure_future(self._listen(client, gone)),
                asyncio.ensure_future(self._ping(client, gone)),
                asyncio.ensure_future(self._relists(client, gone)),
            ]
            waits = [asyncio.ensure_future(gone.wait()), asyncio.ensure_future(self._closing.wait())]
            try:
                await asyncio.wait([*watchers, *waits], return_when=asyncio.FIRST_COMPLETED)
            finally:
                self._client = None
                self._lose(gone, "the connection ended")
                for task in (*watchers, *waits):
                    task.cancel()
                await asyncio.gather(*watchers, *waits, return_exceptions=True)

    def _target(self, http: httpx2.AsyncClient | None, stderr: ServerStderr | None) -> Any:
        spec = self.spec
        if spec.command is not None:
            assert stderr is not None
            params = StdioServerParameters(
                command=spec.command, args=list(spec.args), env=dict(spec.env) or None, cwd=spec.cwd
            )
            return stdio_client(params, errlog=stderr.errlog)
        assert spec.url is not None
        return streamable_http_client(spec.url, http_client=http)

    async def _stderr(self, stack: AsyncExitStack) -> ServerStderr | None:
        """A stdio server's stderr pipe, read until the connection's end (stderr.py)."""
        if self.spec.command is None:
            return None
        stderr = ServerStderr(self.spec.id)
        stack.push_async_callback(self._closed_stderr, stderr)
        await stderr.start()
        return stderr

    async def _closed_stderr(self, stderr: ServerStderr) -> None:
        await stderr.close()
        self._last_words = stderr.last_line

    async def _http_client(self, stack: AsyncExitStack) -> httpx2.AsyncClient | None:
        if self.spec.url is None:
            return None
        # The SDK's own timeouts (its helper is private): 30 s to connect, 300 s between stream reads.
        http = httpx2.AsyncClient(headers=dict(self.spec.headers), timeout=httpx2.Timeout(30.0, read=300.0))
        return await stack.enter_async_context(http)

    async def _list(self, client: Client) -> None:
        tools: list[McpTool] = []
        cursor: str | None = None
        while len(tools) < MAX_TOOLS:
            page = await client.list_tools(cursor=cursor, cache_mode="refresh")
            tools.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        self._tools = tools[:MAX_TOOLS]

    async def _listen(self, client: Client, gone: asyncio.Event) -> None:
        """A 2026-07-28 server says `list_changed` on a listen stream (older ones
        send the notification, `_on_message`). The stream ending means the
        server went away."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    self._relist.set()
        except ListenNotSupportedError:
            await gone.wait()  # an older server: the ping watches it
            return
        except Exception as exc:
            self._lose(gone, _describe(exc))
            return
        self._lose(gone, "the server closed the connection")

    async def _ping(self, client: Client, gone: asyncio.Event) -> None:
        while True:
            await asyncio.sleep(self._ping_interval)
            try:
                await asyncio.wait_for(client.send_ping(), self._ping_timeout)
            except Exception as exc:
                self._lose(gone, f"no answer to a ping ({type(exc).__name__})")
                return

    async def _relists(self, client: Client, gone: asyncio.Event) -> None:
        while True:
            await self._relist.wait()
            self._relist.clear()
            try:
                await asyncio.wait_for(self._list(client), CONNECT_TIMEOUT)
            except Exception as exc:
                self._lose(gone, f"listing its tools failed: {exc}")
                return
            log.info("MCP server %r changed its tools (%d now)", self.spec.id, len(self._tools))

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            self._relist.set()

    def _lose(self, gone: asyncio.Event, reason: str) -> None:
        if not gone.is_set():
            self._down_reason = redact(reason)
            gone.set()

    def _down(self, reason: str) -> None:
        self._client = None
        self._down_reason = redact(reason)
        self._gone.set()


def _describe(exc: BaseException) -> str:
    """What went wrong, from inside the task groups' exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
