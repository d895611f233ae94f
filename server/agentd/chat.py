"""`agentd chat`: a terminal conversation with an agent on a running server,
over one `ThreadService.Connect` stream through the Python client.

Replies print as their deltas arrive; tool calls, tool results, tripwires,
errors and signals print on lines of their own, marked; what another client
sends to the same thread appears as it happens, with the reply it wakes.

A server with `[auth]` takes `--token` (or `$AGENTD_TOKEN`); one with
`[server.tls]` takes `--tls-ca` (or `--tls` for the system's roots), and
`--tls-cert`/`--tls-key` when it wants a client certificate.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any, TextIO

#: How long the first call waits for the server to answer.
PROBE_SECONDS = 10.0
HELP = "type a message and press Enter; /abort stops the current reply; /quit (or Ctrl-D) leaves"


#: TLS for the chat's channel, as the client's TLS takes it: the CA to trust
#: (None: the system's roots) and, for mutual TLS, a certificate and its key.
TLSFiles = tuple[str | None, str | None, str | None]


@dataclass
class Screen:
    """Turns chunks into terminal output; remembers which messages were ours."""

    out: TextIO
    sent: set[str] = field(default_factory=set)
    #: The terminal echoes what is typed where the cursor is (the keyboard and
    #: the screen are one terminal): a line typed mid-reply lands on its line.
    echoes: bool = False
    _open_line: bool = False  # a reply is mid-line
    _column: int = 0  # characters on the screen's current line

    def write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        _, newline, tail = text.rpartition("\n")
        self._column = len(tail) if newline else self._column + len(text)

    def typed(self, line: str) -> None:
        """A line the person typed while a reply was mid-line: it goes on a line
        of its own (the terminal's echo is taken back from the reply's line), and
        the reply goes on below it."""
        if not self._open_line:
            return
        self._open_line = False
        if not self.echoes:
            self.write("\n")
            return
        width = _columns(self.out) or 1 << 30
        # A reply that filled its last row exactly left the echo to start the next one.
        start = self._column % width
        wrapped = self._column > 0 and start == 0
        rows = max(1, -(-(start + len(line)) // width))
        # Up to where the reply stopped, erase the echo below it, and show the line on its own.
        self.write(f"\x1b[{rows}A\x1b[{start + 1}G\x1b[J" + ("" if wrapped else "\n") + line + "\n")

    def end_line(self) -> None:
        if self._open_line:
            self.write("\n")
            self._open_line = False

    def line(self, text: str) -> None:
        """A line of its own, ending any reply that is mid-line."""
        self.end_line()
        self.write(text + "\n")

    def chunk(self, chunk: Any) -> None:
        kind = chunk.WhichOneof("payload")
        if kind == "text_delta":
            if not self._open_line:  # a reply's first delta, or its text after a marked line
                self.write("agent> ")
            self.write(chunk.text_delta.text)
            self._open_line = True
        elif kind == "signal":
            signal = chunk.signal.signal
            if signal.id in self.sent:
                return  # our own message, already on the screen as typed
            who = "another client" if signal.type == "user" else f"{signal.type} signal"
            self.line(f"[{who}] {signal.text}")
        elif kind == "tool_call":
            call = chunk.tool_call
            self.line(f"[tool call] {call.tool_name}({_compact(call.args)})")
        elif kind == "tool_result":
            result = chunk.tool_result
            mark = "tool error" if result.is_error else "tool result"
            self.line(f"[{mark}] {result.tool_name} -> {_compact(result.result)}")
        elif kind == "tripwire":
            tripwire = chunk.tripwire.tripwire
            self.line(f"[blocked by {tripwire.processor_id or 'a processor'}] {tripwire.reason}")
        elif kind == "error":
            self.line(f"[error {chunk.error.reason}] {chunk.error.message}")
        elif kind == "abort":
            self.line(f"[aborted {chunk.abort.reason}] {chunk.abort.message}".rstrip())
        elif kind == "finish":
            self.end_line()


def _columns(out: TextIO) -> int:
    try:
        return os.get_terminal_size(out.fileno()).columns
    except (OSError, ValueError, AttributeError):  # not a terminal, or one that does not say
        return 0


def _compact(value: Any) -> str:
    from google.protobuf.json_format import MessageToDict

    try:
        data = MessageToDict(value) if hasattr(value, "DESCRIPTOR") else value
    except (TypeError, ValueError):
        data = str(value)
    text = json.dumps(data, separators=(",", ":"), default=str)
    return text if len(text) <= 200 else text[:197] + "..."


async def _lines(fd: int) -> Any:
    """Lines typed on `fd`, without a thread (a blocked reader thread would
    hold the process open at exit)."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def readable() -> None:
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        queue.put_nowait(data)
        if not data:
            loop.remove_reader(fd)

    loop.add_reader(fd, readable)
    buffer = b""
    try:
        while True:
            data = await queue.get()
            if not data:
                if buffer:
                    yield buffer.decode(errors="replace")
                return
            buffer += data
            while b"\n" in buffer:
                raw, buffer = buffer.split(b"\n", 1)
                yield raw.decode(errors="replace").rstrip("\r")
    finally:
        loop.remove_reader(fd)


async def chat(
    addr: str,
    agent: str,
    thread_id: str,
    resource_id: str,
    *,
    provider_options: dict[str, Any] | None = None,
    token: str | None = None,
    tls: TLSFiles | None = None,
    stdin_fd: int | None = None,
    out: TextIO | None = None,
) -> int:
    """`token`: None reads `$AGENTD_TOKEN`; `tls`: None for plaintext."""
    try:
        from agentd_client import TLS, AgentdClient, AgentdError
    except ImportError:
        print("agentd chat needs the Python client: pip install -e clients/python", file=sys.stderr)
        return 2
    stdin_fd = sys.stdin.fileno() if stdin_fd is None else stdin_fd
    screen = Screen(out or sys.stdout)
    screen.echoes = os.isatty(stdin_fd) and screen.out.isatty()
    options: dict[str, Any] = {"provider_options": provider_options} if provider_options else {}
    try:
        channel_tls = None if tls is None else TLS(*tls)
        client = AgentdClient(addr, token=token, tls=channel_tls)
    except (ValueError, OSError) as exc:  # a token that would go in clear, a certificate file that is not there
        print(f"agentd chat: {exc}", file=sys.stderr)
        return 2
    async with client:
        try:
            # One call first: it fails at once when nothing listens, where Connect would keep reconnecting.
            await client.get_agent(agent, timeout=PROBE_SECONDS)
            session = await client.connect(agent, thread_id, resource_id, **options)
        except AgentdError as err:
            if err.code_name in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):
                print(
                    f"agentd chat: no agentd server answers on {addr}: start one with `agentd serve` "
                    "(in another terminal), or pass --addr (or set AGENTD_ADDR) to reach a running one",
                    file=sys.stderr,
                )
            else:
                print(f"cannot open the thread: {err}", file=sys.stderr)
            return 1
        screen.line(f"connected to {agent} on thread {thread_id} (resource {resource_id}); {HELP}")

        async def show() -> None:
            async for chunk in session:
                screen.chunk(chunk)

        shower = asyncio.create_task(show())
        try:
            async for typed in _lines(stdin_fd):
                if shower.done():
                    break
                screen.typed(typed)
                text = typed.strip()
                if not text:
                    continue
                if text == "/quit":
                    break
                try:
                    if text == "/abort":
                        await session.abort()
                        continue
                    message_id = uuid.uuid4().hex
                    screen.sent.add(message_id)
                    await session.send_message(text, message_id=message_id)
                except AgentdError as err:
                    screen.line(f"[not sent: {err.reason or err}] {err}")
        finally:
            shower.cancel()
            await asyncio.gather(shower, return_exceptions=True)
            await session.close()
        if shower.done() and not shower.cancelled() and shower.exception() is not None:
            screen.line(f"[stream ended] {shower.exception()}")
            return 1
    return 0


def run(args: Any) -> int:
    provider_options = json.loads(args.provider_options) if args.provider_options else None
    thread_id = args.thread or f"chat-{uuid.uuid4().hex[:8]}"
    tls = None
    if args.tls or args.tls_ca or args.tls_cert or args.tls_key:
        tls = (args.tls_ca, args.tls_cert, args.tls_key)
    try:
        return asyncio.run(
            chat(
                args.addr,
                args.agent,
                thread_id,
                args.resource,
                provider_options=provider_options,
                token=args.token,
                tls=tls,
            )
        )
    except KeyboardInterrupt:
        return 130
