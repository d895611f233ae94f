"""Server streams: a run's chunks (`RunStream`) and a thread subscription
(`Subscription`) that resumes by offset on its own."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from agentd_proto.v1 import chunk_pb2, thread_service_pb2, thread_service_pb2_grpc

from .errors import AgentdError
from .types import chunk_kind, finish_reason_name

_EOF: Any = grpc.aio.EOF  # type: ignore[attr-defined]
Metadata = Callable[[], list[tuple[str, str]]]


def cancel_call(call: Any) -> None:
    """Cancels a streaming call whose reader was cancelled. grpc.aio does this
    itself for a reader cancelled mid-read, but not for one cancelled while
    the call is still being set up, and a dropped call is never collected
    (grpc/grpc#43462): the call would stay open on the server (a
    subscription, a session, a run nobody reads) for as long as the channel."""
    if call is not None:
        call.cancel()  # a no-op once the call is over


class RunStream:
    """The chunks of one run (`AgentService.Stream`).

    `async for chunk in stream` yields the chunks flattened from the response
    batches; `async for batch in stream.batches()` yields each batch as it came.
    The call starts on first iteration. Leaving the stream early (`break`
    inside `async with`, or `cancel()`) cancels the call, which aborts the run
    unless it was started with `keep_running=True`.

    After the stream ends: `run_id`, `text` (the joined deltas), `finish`
    (the FinishChunk, or None), `error` / `abort` (the ErrorChunk / AbortChunk
    that ended a failed run), `chunks_read` and `batches_read`.
    """

    def __init__(self, start: Callable[[], Any]) -> None:
        self._start = start
        self._call: Any = None
        self._source: AsyncIterator[list[chunk_pb2.Chunk]] | None = None
        self._pending: list[chunk_pb2.Chunk] = []
        self._text: list[str] = []
        self.run_id = ""
        self.finish: chunk_pb2.FinishChunk | None = None
        self.error: chunk_pb2.ErrorChunk | None = None
        self.abort: chunk_pb2.AbortChunk | None = None
        self.tripwire: chunk_pb2.Tripwire | None = None
        self.chunks_read = 0
        self.batches_read = 0

    @property
    def text(self) -> str:
        return "".join(self._text)

    @property
    def finish_reason(self) -> str:
        """ "STOP", "OTHER", ... once the finish chunk arrived ("" before)."""
        return finish_reason_name(self.finish.finish_reason) if self.finish is not None else ""

    def _see(self, chunk: chunk_pb2.Chunk) -> None:
        self.chunks_read += 1
        if chunk.parent_run_id:  # a nested sub-agent run: shown, not the run's own text
            return
        if not self.run_id:
            self.run_id = chunk.run_id
        kind = chunk_kind(chunk)
        if kind == "text_delta":
            self._text.append(chunk.text_delta.text)
        elif kind == "finish":
            self.finish = chunk.finish
        elif kind == "error":
            self.error = chunk.error
        elif kind == "abort":
            self.abort = chunk.abort
        elif kind == "tripwire":
            self.tripwire = chunk.tripwire.tripwire

    async def _read(self) -> AsyncIterator[list[chunk_pb2.Chunk]]:
        self._call = self._start()
        try:
            async for response in self._call:
                self.batches_read += 1
                batch = list(response.chunks)
                for chunk in batch:
                    self._see(chunk)
                yield batch
        except grpc.RpcError as err:
            raise AgentdError.from_rpc_error(err) from None
        except asyncio.CancelledError:
            cancel_call(self._call)
            raise

    def batches(self) -> AsyncIterator[list[chunk_pb2.Chunk]]:
        """The response batches, each a list of chunks of this run in `seq` order."""
        if self._source is None:
            self._source = self._read()
        return self._source

    def __aiter__(self) -> RunStream:
        return self

    async def __anext__(self) -> chunk_pb2.Chunk:
        while not self._pending:
            self._pending = list(await self.batches().__anext__())
        return self._pending.pop(0)

    async def collect(self) -> list[chunk_pb2.Chunk]:
        """Read the rest of the stream."""
        return [chunk async for chunk in self]

    def cancel(self) -> None:
        """Cancel the call (aborts the run unless keep_running was set)."""
        if self._call is not None:
            self._call.cancel()

    async def aclose(self) -> None:
        self.cancel()
        if self._source is not None:
            await self._source.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> RunStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class Subscription:
    """A thread's chunks across runs (`ThreadService.Subscribe`).

    `async for chunk in sub` yields the chunks (flattened from the batches);
    `sub.batches()` yields the batches. `await sub.open()` starts the call and
    returns the first snapshot: once it returns the subscription is live, so a
    message sent afterwards is seen.

    With `reconnect=True` the subscription survives `UNAVAILABLE` (server
    shutdown, a dropped connection; retried with backoff) and a fell-behind
    marker: it resubscribes with a resume point after the last chunk it handed
    out, so the chunks continue with no gap and no duplicate. A resume the
    server cannot serve (another log epoch, an expired offset) raises
    `AgentdError` with reason `RESUME_OFFSET_EXPIRED`: read the history with
    `list_messages` and subscribe again without `after`.

    `snapshot` is the latest `ThreadSnapshot`; `position` the `(log_epoch,
    offset)` to resume after; `reconnects` counts resubscriptions;
    `fell_behind` holds the marker when `reconnect=False` ended the stream.
    """

    def __init__(
        self,
        stub: thread_service_pb2_grpc.ThreadServiceStub,
        thread_id: str,
        resource_id: str,
        *,
        after: tuple[str, int] | None,
        reconnect: bool,
        hide_signals: Sequence[str],
        metadata: Metadata,
        max_reconnect_attempts: int = 8,
        backoff: tuple[float, float] = (0.1, 5.0),
    ) -> None:
        self._stub = stub
        self.thread_id = thread_id
        self.resource_id = resource_id
        self.reconnect = reconnect
        self.hide_signals = list(hide_signals)
        self._metadata = metadata
        self.max_reconnect_attempts = max_reconnect_attempts
        self._backoff = backoff
        self._epoch: str | None = after[0] if after else None
        self._offset: int = int(after[1]) if after else 0
        self._received = self._offset
        self._call: Any = None
        self._source: AsyncIterator[list[chunk_pb2.Chunk]] | None = None
        self._pending: list[chunk_pb2.Chunk] = []
        self._closed = False
        self.snapshot: thread_service_pb2.ThreadSnapshot | None = None
        self.fell_behind: thread_service_pb2.FellBehind | None = None
        self.reconnects = 0

    @property
    def position(self) -> tuple[str, int] | None:
        """`(log_epoch, offset)` of the last chunk handed out (or of the snapshot)."""
        return (self._epoch, self._offset) if self._epoch is not None else None

    # ------------------------------------------------------------ connecting

    def _request(self) -> thread_service_pb2.SubscribeRequest:
        request = thread_service_pb2.SubscribeRequest(
            thread_id=self.thread_id, resource_id=self.resource_id, hide_signals=self.hide_signals
        )
        if self._epoch is not None:
            request.resume.CopyFrom(thread_service_pb2.ResumePoint(log_epoch=self._epoch, after_offset=self._offset))
        return request

    async def _retry_or_raise(self, err: grpc.RpcError, attempt: int) -> None:
        error = AgentdError.from_rpc_error(err)
        if not self.reconnect or self._closed or error.code is not grpc.StatusCode.UNAVAILABLE:
            raise error from None
        if attempt >= self.max_reconnect_attempts:
            raise error from None
        first, cap = self._backoff
        await asyncio.sleep(min(cap, first * 2**attempt))

    async def _connect(self) -> None:
        """Start the call and read its snapshot, retrying UNAVAILABLE."""
        attempt = 0
        while True:
            self._cancel_call()
            self._call = self._stub.Subscribe(self._request(), metadata=tuple(self._metadata()))
            try:
                first = await self._call.read()
            except grpc.RpcError as err:
                await self._retry_or_raise(err, attempt)
                attempt += 1
                continue
            except asyncio.CancelledError:
                self._cancel_call()
                raise
            if first is _EOF or first.WhichOneof("event") != "snapshot":
                raise AgentdError(grpc.StatusCode.INTERNAL, "the subscription did not start with a snapshot")
            self.snapshot = first.snapshot
            if self._epoch is None:  # a fresh subscription: the chunks after the snapshot
                self._epoch, self._offset = first.snapshot.log_epoch, first.snapshot.last_offset
                self._received = self._offset
            return

    async def open(self) -> thread_service_pb2.ThreadSnapshot:
        """Start the subscription (idempotent) and return its snapshot."""
        if self._call is None:
            await self._connect()
        assert self.snapshot is not None
        return self.snapshot

    async def _read(self) -> AsyncIterator[list[chunk_pb2.Chunk]]:
        if self._call is None:
            await self._connect()
        attempt = 0
        while True:
            try:
                response = await self._call.read()
            except grpc.RpcError as err:
                await self._retry_or_raise(err, attempt)
                attempt += 1
                self.reconnects += 1
                await self._connect()
                continue
            if response is _EOF:
                return
            attempt = 0
            event = response.WhichOneof("event")
            if event == "chunks":
                # Offsets strictly increase: drop anything at or before what
                # was already received (never a duplicate across a resume).
                batch = [c for c in response.chunks.chunks if not c.offset or c.offset > self._received]
                if batch:
                    self._received = max(self._received, max(c.offset for c in batch))
                    yield batch
            elif event == "fell_behind":
                if not self.reconnect:
                    self.fell_behind = response.fell_behind
                    return
                self.reconnects += 1
                await self._connect()  # resumes after the last chunk handed out
            elif event == "snapshot":  # not sent mid-stream today; keep the newest
                self.snapshot = response.snapshot

    def _advance(self, chunk: chunk_pb2.Chunk) -> None:
        if chunk.offset > self._offset:
            self._offset = chunk.offset

    async def batches(self) -> AsyncIterator[list[chunk_pb2.Chunk]]:
        """The chunk batches (each of one run), across resumes."""
        if self._source is None:
            self._source = self._read()
        async for batch in self._source:
            for chunk in batch:
                self._advance(chunk)
            yield batch

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> chunk_pb2.Chunk:
        if self._closed:
            raise StopAsyncIteration
        if self._source is None:
            self._source = self._read()
        while not self._pending:
            self._pending = list(await self._source.__anext__())
        chunk = self._pending.pop(0)
        self._advance(chunk)
        return chunk

    def _cancel_call(self) -> None:
        cancel_call(self._call)
        self._call = None

    async def aclose(self) -> None:
        """End the subscription (never aborts a run)."""
        self._closed = True
        self._cancel_call()
        if self._source is not None:
            await self._source.aclose()  # type: ignore[attr-defined]

    async def __aenter__(self) -> Subscription:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
