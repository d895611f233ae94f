"""Write a processor agentd calls over gRPC (its `remote` processor), in Python.

    from agentd_client.processor import Processor, serve_processor

    class Redactor(Processor):
        def process_output_stream(self, run, part):
            if part.HasField("text_delta"):
                part.text_delta.text = EMAIL.sub("[email]", part.text_delta.text)
            return part            # the part (changed or not); None drops it

    await serve_processor(Redactor(), "127.0.0.1:50070")

Implement the hooks you want (the others are never called: the hello names
only yours), sync or async. Each takes the run (`Run`: its state across
hooks, `custom()` data chunks, `send_signal()`, `abort()`) and the hook's
call (`agentd_proto.v1.processor_service_pb2.<Hook>Call`; the stream hook
gets each part, a `Chunk`). Return:

- message hooks (input, output step/result, tool result): a list of messages
  to replace the hook's, or None for unchanged;
- process_output_stream: the part, a replacement chunk, or None to drop it;
- process_input_step: a `StepOverrides`, a list of messages, or None;
- process_llm_request: a list of messages (the prompt), or None;
- process_api_error: True to retry the model call;
- process_llm_response: nothing.

`run.abort("reason", retry=True, metadata={...})` is a tripwire, as in-process.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import grpc

from agentd_proto.v1 import chunk_pb2, message_pb2, signal_pb2
from agentd_proto.v1 import processor_service_pb2 as ppb
from agentd_proto.v1 import processor_service_pb2_grpc as ppb_grpc

from ._values import from_struct, to_struct, to_value

__all__ = ["Abort", "Processor", "Run", "StepOverrides", "serve_processor", "servicer"]

HOOKS: dict[str, ppb.Hook] = {
    "process_input": ppb.HOOK_PROCESS_INPUT,
    "process_input_step": ppb.HOOK_PROCESS_INPUT_STEP,
    "process_llm_request": ppb.HOOK_PROCESS_LLM_REQUEST,
    "process_llm_response": ppb.HOOK_PROCESS_LLM_RESPONSE,
    "process_output_stream": ppb.HOOK_PROCESS_OUTPUT_STREAM,
    "process_output_step": ppb.HOOK_PROCESS_OUTPUT_STEP,
    "process_output_result": ppb.HOOK_PROCESS_OUTPUT_RESULT,
    "process_tool_result": ppb.HOOK_PROCESS_TOOL_RESULT,
    "process_api_error": ppb.HOOK_PROCESS_API_ERROR,
}


class Abort(Exception):
    """Raised by `run.abort()`: agentd ends the run (or, with retry, the step) as a tripwire."""

    def __init__(self, reason: str, *, retry: bool = False, metadata: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.reason, self.retry, self.metadata = reason, retry, metadata


@dataclass
class Run:
    """One run, as one processor sees it: its hooks share `state`."""

    run_id: str
    agent_id: str
    processor_id: str
    request_context: dict[str, Any]
    #: The entry's `config` option.
    config: dict[str, Any]
    state: dict[str, Any] = field(default_factory=dict)
    retry_count: int = 0
    #: The stream's metadata: agentd sends the caller's trace context (`traceparent`).
    metadata: dict[str, str] = field(default_factory=dict)
    _answer: ppb.HookAnswer = field(default_factory=ppb.HookAnswer)

    @property
    def call_id(self) -> int:
        """The call being answered: parts agentd sent in one batch share it."""
        return self._answer.call_id

    def abort(self, reason: str = "", *, retry: bool = False, metadata: dict[str, Any] | None = None) -> NoReturn:
        raise Abort(reason, retry=retry, metadata=metadata)

    def custom(self, type: str, data: Any = None, *, id: str = "", transient: bool = False) -> None:
        """A `data-*` chunk into the run's stream (writer.custom)."""
        if not type.startswith("data-"):
            raise ValueError(f"custom chunk types start with 'data-', not {type!r}")
        self._answer.custom.append(chunk_pb2.DataChunk(type=type, id=id, data=to_value(data), transient=transient))

    def send_signal(self, text: str = "", *, type: str = "reactive", tag_name: str = "", **fields: Any) -> None:
        """A signal into the run (input step, output step, output result and API error hooks)."""
        self._answer.signals.append(signal_pb2.SignalInput(type=type, text=text, tag_name=tag_name, **fields))


class Processor:
    """Subclass and implement hooks (see the module's doc). `process_data_parts = True`
    also sends `data-*` and signal chunks to process_output_stream."""

    name: str = ""
    process_data_parts: bool = False

    def hooks(self) -> list[ppb.Hook]:
        return [value for name, value in HOOKS.items() if callable(getattr(self, name, None))]


@dataclass
class StepOverrides:
    """What process_input_step may return (unset fields change nothing)."""

    messages: list[message_pb2.Message] | None = None
    model: str = ""
    active_tools: list[str] | None = None


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def _messages(result: Any) -> ppb.MessagesResult | None:
    return None if result is None else ppb.MessagesResult(messages=list(result))


class _Servicer(ppb_grpc.ProcessorServiceServicer):
    def __init__(self, processor: Processor) -> None:
        self.processor = processor

    async def Process(
        self, request_iterator: AsyncIterator[ppb.ProcessRequest], context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[ppb.ProcessResponse]:
        first = await anext(aiter(request_iterator), None)
        if first is None or first.WhichOneof("kind") != "open":
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "the first message must be open")
            return
        opened = first.open
        run = Run(
            opened.run_id,
            opened.agent_id,
            opened.processor_id,
            from_struct(opened.request_context),
            from_struct(opened.config),
            metadata={k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)},
        )
        p = self.processor
        yield ppb.ProcessResponse(
            hello=ppb.ProcessorHello(hooks=p.hooks(), process_data_parts=p.process_data_parts, name=p.name)
        )
        async for request in request_iterator:
            if request.WhichOneof("kind") != "call":
                continue
            yield ppb.ProcessResponse(answer=await self._answer(run, request.call))

    async def _answer(self, run: Run, call: ppb.HookCall) -> ppb.HookAnswer:
        answer = run._answer = ppb.HookAnswer(call_id=call.call_id)
        run.retry_count = call.retry_count
        hook = call.WhichOneof("hook")
        try:
            if hook == "process_output_stream":
                await self._stream(run, call.process_output_stream, answer)
            elif hook is not None:
                await self._hook(run, hook, getattr(call, hook), answer)
        except Abort as abort:
            answer.abort.CopyFrom(
                ppb.ProcessorAbort(reason=abort.reason, retry=abort.retry, metadata=to_struct(abort.metadata or {}))
            )
        return answer

    async def _stream(self, run: Run, call: ppb.ProcessOutputStreamCall, answer: ppb.HookAnswer) -> None:
        hook: Callable[[Run, chunk_pb2.Chunk], Any] = self.processor.process_output_stream  # type: ignore[attr-defined]
        answers = answer.chunks.answers
        answer.chunks.SetInParent()
        for part in call.parts:
            original = chunk_pb2.Chunk()
            original.CopyFrom(part)
            result = await _maybe(hook(run, part))  # an Abort leaves the parts after unanswered
            if result is None:
                answers.add(drop=ppb.ChunkDrop())
            elif result == original:
                answers.add(**{"pass": ppb.ChunkPass()})
            else:
                answers.add(replace=result)

    async def _hook(self, run: Run, hook: str, call: Any, answer: ppb.HookAnswer) -> None:
        result = await _maybe(getattr(self.processor, hook)(run, call))
        if result is None:
            return
        if hook == "process_api_error":
            answer.api_error.retry = bool(result)
        elif hook == "process_llm_request":
            answer.prompt.CopyFrom(ppb.MessagesResult(messages=list(result)))
        elif hook == "process_input_step" and isinstance(result, StepOverrides):
            step = answer.step
            step.SetInParent()
            if result.messages is not None:
                step.messages.CopyFrom(ppb.MessagesResult(messages=result.messages))
            step.model = result.model
            if result.active_tools is not None:
                step.active_tools.names.extend(result.active_tools)
        elif hook != "process_llm_response":
            messages = _messages(result)
            if messages is not None:
                answer.messages.CopyFrom(messages)


def servicer(processor: Processor) -> ppb_grpc.ProcessorServiceServicer:
    """The servicer to add to a server of your own (`add_ProcessorServiceServicer_to_server`)."""
    return _Servicer(processor)


async def serve_processor(
    processor: Processor, address: str, *, credentials: grpc.ServerCredentials | None = None
) -> grpc.aio.Server:
    """Starts a grpc.aio server for `processor` on `address` ("host:port"; port 0 picks one,
    see `server.bound_port`) and returns it started."""
    server = grpc.aio.server()
    ppb_grpc.add_ProcessorServiceServicer_to_server(_Servicer(processor), server)
    port = server.add_secure_port(address, credentials) if credentials else server.add_insecure_port(address)
    server.bound_port = port  # type: ignore[attr-defined]
    await server.start()
    return server
