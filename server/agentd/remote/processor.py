"""The `remote` processor: every hook forwarded to a processor service over
one stream per run (session.py), with the answers applied as an in-process
hook's return values would be.

The stream opens at the run's first hook and closes when the run ends
(`on_finish`); the hello says which hooks the service implements, and the
others return at once without a message. A failure of the service is handled
by `on_error`: `fail-open` skips the processor for the rest of the run (and
logs why), `fail-closed` fails the run with UNAVAILABLE PROCESSOR_UNAVAILABLE,
`tripwire` ends it as a tripwire of this processor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc

from agentd.grpc.values import from_struct, to_struct
from agentd.remote import convert
from agentd.remote.session import ProcessorStreamError, Session
from agentd.remote.settings import RemoteSettings
from agentd.runtime import chunks as rc
from agentd.runtime.processors.base import (
    HookArgs,
    ProcessAPIErrorArgs,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    ProcessLLMResponseArgs,
    Processor,
    ProcessorUnavailable,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
    ProcessToolResultArgs,
)
from agentd.runtime.processors.phases import is_data
from agentd_proto.v1 import processor_service_pb2 as ppb

log = logging.getLogger("agentd.processors.remote")

#: Keys of this processor's per-run state (the runner's, one per processor per run).
_SESSION = "remote.session"
_SKIPPED = "remote.skipped"
_PREFETCHED = "remote.prefetched"


@dataclass
class _Prefetched:
    """A part's answer from a batch, until the part comes."""

    payload: rc.Payload
    answer: ppb.ChunkAnswer | None
    abort: ppb.ProcessorAbort | None = None
    #: The batch's custom chunks and signals, applied with its first part.
    effects: ppb.HookAnswer | None = None


class RemoteProcessor(Processor):
    # The hello decides whether data parts reach the service; the rest pass here.
    process_data_parts = True

    def __init__(self, settings: RemoteSettings, channel: Callable[[], grpc.aio.Channel]) -> None:
        self.id = settings.id
        self.name = f"remote {settings.target}"
        self.settings = settings
        self._channel = channel

    # ------------------------------------------------------------ the session

    async def _session(self, args: HookArgs, hook: int) -> Session | None:
        """The run's open session when the service implements `hook`; None to skip."""
        state = args.state
        if state.get(_SKIPPED):
            return None
        session: Session | None = state.get(_SESSION)
        if session is None:
            session = state[_SESSION] = Session(
                self._channel(), timeout=self.settings.timeout, token=self.settings.token
            )
            if args.on_finish is not None:
                args.on_finish(session.close)
            try:
                await session.open(self._open_request(args))
            except ProcessorStreamError as error:
                self._failed(args, error)
                return None
        return session if hook in session.hooks else None

    def _open_request(self, args: HookArgs) -> ppb.ProcessOpen:
        agent = args.agent
        context = {k: v for k, v in args.request_context.items() if isinstance(k, str)}
        try:
            request_context = to_struct(context)
        except (TypeError, ValueError):
            request_context = None  # not JSON: the service gets none rather than a guess
        return ppb.ProcessOpen(
            run_id=args.run_id,
            agent_id=getattr(agent, "id", "") or "",
            processor_id=self.id,
            request_context=request_context,
            config=convert.open_config(self.settings.config),
        )

    def _failed(self, args: HookArgs, error: ProcessorStreamError) -> None:
        """Applies on_error; returns only under fail-open."""
        policy = self.settings.on_error
        message = f"processor {self.id!r} ({self.settings.target}) is unavailable: {error}"
        if policy == "fail-open":
            log.warning("%s; skipped for the rest of run %s (on_error = fail-open)", message, args.run_id)
            args.state[_SKIPPED] = True
            return
        if policy == "tripwire":
            args.abort(message, metadata={"processor_unavailable": True})
        raise ProcessorUnavailable(message, "PROCESSOR_UNAVAILABLE", {"processor_id": self.id})

    async def _call(self, args: HookArgs, hook: int, build: Callable[[], ppb.HookCall]) -> ppb.HookAnswer | None:
        session = await self._session(args, hook)
        if session is None:
            return None
        call = build()
        call.retry_count = args.retry_count
        try:
            answer = await session.call(call)
        except ProcessorStreamError as error:
            self._failed(args, error)
            return None
        await self._effects(args, answer)
        return answer

    async def _effects(self, args: HookArgs, answer: ppb.HookAnswer, *, abort: bool = True) -> None:
        """The answer's custom chunks and signals, then its abort."""
        if answer.custom and args.writer is not None:
            for data in answer.custom:
                payload = self._read(args, convert.data_payload, data)
                await args.writer.custom(payload.type, payload.data, id=payload.id, transient=payload.transient)
        if answer.signals:
            send = getattr(args, "send_signal", None)
            if send is None:
                log.warning("processor %r sent a signal from a hook without send_signal; ignored", self.id)
            else:
                for signal in answer.signals:
                    await send(**convert.signal_kwargs(signal))
        if abort and answer.HasField("abort"):
            self._abort(args, answer.abort)

    def _abort(self, args: HookArgs, abort: ppb.ProcessorAbort) -> NoReturn:
        metadata = from_struct(abort.metadata) if abort.HasField("metadata") else None
        args.abort(abort.reason or None, retry=abort.retry, metadata=metadata)

    def _read(self, args: HookArgs, read: Callable[[Any], Any], value: Any) -> Any:
        try:
            return read(value)
        except ProcessorStreamError as error:
            self._failed(args, error)
            return None

    # ------------------------------------------------------------ the hooks

    async def process_input(self, args: ProcessInputArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_INPUT, lambda: convert.input_call(args))
        return None if answer is None else self._read(args, convert.messages_result, answer)

    async def process_input_step(self, args: ProcessInputStepArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_INPUT_STEP, lambda: convert.input_step_call(args))
        return None if answer is None else self._read(args, convert.step_result, answer)

    async def process_llm_request(self, args: ProcessLLMRequestArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_LLM_REQUEST, lambda: convert.llm_request_call(args))
        return None if answer is None else self._read(args, convert.llm_request_result, answer)

    async def process_llm_response(self, args: ProcessLLMResponseArgs) -> None:
        await self._call(args, ppb.HOOK_PROCESS_LLM_RESPONSE, lambda: convert.llm_response_call(args))

    async def process_output_stream(self, args: ProcessOutputStreamArgs) -> rc.Chunk | None:
        part = args.part
        prefetched = args.state.get(_PREFETCHED)
        if prefetched:
            entry = prefetched.pop(id(part.payload), None)
            if entry is not None and entry.payload is part.payload:  # answered in a batch
                if entry.effects is not None:
                    await self._effects(args, entry.effects, abort=False)
                if entry.abort is not None:
                    self._abort(args, entry.abort)
                return self._apply(args, part, entry.answer)
        session = await self._session(args, ppb.HOOK_PROCESS_OUTPUT_STREAM)
        if session is None or (is_data(part) and not session.process_data_parts):
            return part
        answer = await self._call(args, ppb.HOOK_PROCESS_OUTPUT_STREAM, lambda: convert.output_stream_call([part]))
        if answer is None or answer.WhichOneof("result") != "chunks" or not answer.chunks.answers:
            return part
        return self._apply(args, part, answer.chunks.answers[0])

    async def prefetch_output_stream(self, payloads: list[rc.Payload], args: HookArgs) -> None:
        """Answers a batch of the model's parts in one call; process_output_stream
        then takes each part's answer as the part comes (a failure is left for it:
        the broken session raises again there, under the processor's policy)."""
        session = await self._session(args, ppb.HOOK_PROCESS_OUTPUT_STREAM)
        if session is None:
            return
        call = convert.output_stream_call([rc.Chunk(p, args.run_id, 0) for p in payloads])
        call.retry_count = args.retry_count
        try:
            answer = await session.call(call)
        except ProcessorStreamError:
            return
        answers = list(answer.chunks.answers) if answer.WhichOneof("result") == "chunks" else []
        prefetched: dict[int, _Prefetched] = args.state.setdefault(_PREFETCHED, {})
        prefetched.clear()  # what is left was never reached (the stream was blocked): parts come in order
        for payload, one in zip(payloads, answers, strict=False):
            prefetched[id(payload)] = _Prefetched(payload, one)
        if answer.HasField("abort") and len(answers) < len(payloads):
            blocked = payloads[len(answers)]
            prefetched[id(blocked)] = _Prefetched(blocked, None, abort=answer.abort)
        if (answer.custom or answer.signals) and id(payloads[0]) in prefetched:
            prefetched[id(payloads[0])].effects = answer

    def _apply(self, args: ProcessOutputStreamArgs, part: rc.Chunk, one: ppb.ChunkAnswer | None) -> rc.Chunk | None:
        """One part's answer: passed, dropped or replaced, with the parts it emits after it."""
        if one is None:
            return part
        if args.emit_after is not None:
            for pb in one.emit_after:
                extra = self._read(args, lambda p: convert.emitted(part, p), pb)
                if extra is not None:
                    args.emit_after(extra)
        which = one.WhichOneof("result")
        if which == "drop":
            return None
        if which == "replace":
            return self._read(args, lambda p: convert.replaced(part, p), one.replace) or part
        return part

    async def process_output_step(self, args: ProcessOutputStepArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_OUTPUT_STEP, lambda: convert.output_step_call(args))
        return None if answer is None else self._read(args, convert.messages_result, answer)

    async def process_output_result(self, args: ProcessOutputResultArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_OUTPUT_RESULT, lambda: convert.output_result_call(args))
        return None if answer is None else self._read(args, convert.messages_result, answer)

    async def process_tool_result(self, args: ProcessToolResultArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_TOOL_RESULT, lambda: convert.tool_result_call(args))
        return None if answer is None else self._read(args, convert.messages_result, answer)

    async def process_api_error(self, args: ProcessAPIErrorArgs) -> Any:
        answer = await self._call(args, ppb.HOOK_PROCESS_API_ERROR, lambda: convert.api_error_call(args))
        return None if answer is None else self._read(args, convert.api_error_result, answer)
