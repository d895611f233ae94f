"""One run's stream to a processor service: open, hello, then one call and
its answer at a time, each within the processor's timeout.

Anything that is not a well-formed answer in time (the service unreachable,
crashed, slow, or out of protocol) is a `ProcessorStreamError`; the stream is
then cancelled, so a late answer can never be taken for the next call's.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

import grpc

from agentd.runtime.lazy import lazy
from agentd_proto.v1 import processor_service_pb2 as ppb
from agentd_proto.v1 import processor_service_pb2_grpc as ppb_grpc

if TYPE_CHECKING:
    from opentelemetry import propagate
else:
    propagate = lazy("opentelemetry.propagate")  # its propagators are entry points: read at the first call

#: What a stream's read returns once the other side has finished (untyped in grpc-stubs).
_EOF: Final = grpc.aio.EOF  # type: ignore[attr-defined]


class ProcessorStreamError(Exception):
    """The processor service did not answer as the contract says."""


class Session:
    def __init__(self, channel: grpc.aio.Channel, *, timeout: float, token: str | None) -> None:
        self._stub = ppb_grpc.ProcessorServiceStub(channel)
        self._timeout = timeout
        self._token = token
        self._call: grpc.aio.StreamStreamCall[ppb.ProcessRequest, ppb.ProcessResponse] | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0
        self.hooks: frozenset[int] = frozenset()
        self.process_data_parts = False
        self.broken: ProcessorStreamError | None = None

    def _metadata(self) -> list[tuple[str, str]]:
        # The caller's trace context (current in the run's task) travels to the processor.
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        metadata = list(carrier.items())
        if self._token is not None:
            metadata.append(("authorization", f"Bearer {self._token}"))
        return metadata

    async def open(self, request: ppb.ProcessOpen) -> None:
        async with self._lock:
            self._call = self._stub.Process(metadata=self._metadata())  # type: ignore[call-arg]
            answer = await self._exchange(ppb.ProcessRequest(open=request), "hello")
            self.hooks = frozenset(answer.hello.hooks)
            self.process_data_parts = answer.hello.process_data_parts

    async def call(self, call: ppb.HookCall) -> ppb.HookAnswer:
        async with self._lock:
            self._next_id += 1
            call.call_id = self._next_id
            answer = (await self._exchange(ppb.ProcessRequest(call=call), "answer")).answer
            if answer.call_id != call.call_id:
                raise self._break(f"answered call {answer.call_id} where call {call.call_id} was due")
            return answer

    async def _exchange(self, request: ppb.ProcessRequest, kind: str) -> ppb.ProcessResponse:
        if self.broken is not None:
            raise self.broken
        call = self._call
        assert call is not None
        try:
            async with asyncio.timeout(self._timeout):
                await call.write(request)
                response = await call.read()
        except TimeoutError:
            raise self._break(f"no answer within {self._timeout * 1000:g} ms") from None
        except grpc.aio.AioRpcError as error:
            raise self._break(f"{error.code().name}: {error.details()}") from None
        except (grpc.aio.UsageError, asyncio.InvalidStateError) as error:
            raise self._break(f"the stream ended: {error}") from None
        if response is _EOF:
            raise self._break("the processor closed the stream")
        assert isinstance(response, ppb.ProcessResponse)
        if response.WhichOneof("kind") != kind:
            raise self._break(f"sent {response.WhichOneof('kind')} where {kind} was due")
        return response

    def _break(self, why: str) -> ProcessorStreamError:
        self.broken = ProcessorStreamError(why)
        if self._call is not None:
            self._call.cancel()
        return self.broken

    async def close(self) -> None:
        """Half-closes the stream (the processor sees the run end) without waiting for it."""
        call, self._call = self._call, None
        if call is None or self.broken is not None:
            return
        try:
            await call.done_writing()
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
            pass
        call.cancel()
