"""A step's tool calls: the agent's and the call's tool hooks around each,
processToolResult after each success, and a cached step's results replayed."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from agentd.runtime.agent_definition import AgentDefinition, maybe_await
from agentd.runtime.background import BACKGROUND_SIGNAL_KEY, TASK_PREFIX, BackgroundFull, Detached
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import ToolResult
from agentd.runtime.clone import clone
from agentd.runtime.loop.state import LoopContext
from agentd.runtime.messages import Message, ToolCallPart, ToolResultPart, new_id
from agentd.runtime.options import ExecutionOptions, ToolHooks
from agentd.runtime.processors.base import TripWire
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.results import StepResult
from agentd.runtime.storage import BackgroundTask, StorageError
from agentd.runtime.tool_payloads import ToolPayloadTransform, show_result
from agentd.runtime.tools import Tool, ToolContext, payload_rules
from agentd.runtime.unset import UNSET

log = logging.getLogger("agentd.run")


@dataclass
class ToolHookContext:
    """What `before_tool_call` and `after_tool_call` receive."""

    tool_name: str
    input: Any
    context: ToolContext
    metadata: dict[str, Any]
    output: Any = None
    error: BaseException | None = None


class ToolCalls:
    """Runs the tool calls of a run's steps."""

    def __init__(
        self,
        run: LoopContext,
        *,
        agent: AgentDefinition,
        writer: Any,
        thread_id: str | None,
        resource_id: str | None,
    ) -> None:
        self._run = run
        self._agent = agent
        self._writer = writer
        self._thread_id = thread_id
        self._resource_id = resource_id

    async def run(
        self,
        step: StepResult,
        tools: dict[str, Tool],
        options: ExecutionOptions,
        context: dict[str, Any],
        assistant: Message,
        replayed: dict[str, ToolResultPart],
    ) -> None:
        """Runs `step`'s tool calls in order; `replayed` holds the results of a
        step replayed from a cache, by tool call id (those tools do not run)."""
        if not step.tool_calls:
            return
        hooks = _effective_hooks(self._agent.hooks, options.hooks)
        for call in step.tool_calls:
            cached = replayed.get(call.tool_call_id)
            if cached is not None:  # a cached step: the tool is not run again
                outcome = clone(cached)
                assistant.parts.append(outcome)
                step.tool_results.append(outcome)
                await self._run.emit_processed(ToolResult(outcome))
                continue
            tool = tools.get(call.tool_name)
            transform = None if call.client_tool else self.transform_of(call.tool_name, tool)
            tool_trace = self._run.trace.tool(call.tool_name, call.tool_call_id, call.args)
            try:
                with tool_trace.active():
                    if tool is not None and tool.background and not call.client_tool:
                        outcome, deferred = await self._detach(
                            tool, call, context, hooks, assistant.id, step.step_number
                        )
                    else:
                        outcome, deferred = await self._call(tool, call, context, hooks), False
            except BaseException:
                tool_trace.end(result="cancelled", is_error=True)
                raise
            tool_trace.end(result=outcome.result, is_error=outcome.is_error)
            assistant.parts.append(outcome)
            if not outcome.is_error and not deferred:  # a deferred one: when its work ends (_background_work)
                outcome = await self._processed(self._run.message_list, call, outcome, step.step_number)
            show_result(outcome, transform)
            step.tool_results.append(outcome)
            # A deferred result is reconciled in place later: its chunk keeps what was answered then.
            await self._run.emit_processed(ToolResult(clone(outcome) if deferred else outcome))

    async def _processed(
        self, message_list: MessageList, call: ToolCallPart, outcome: ToolResultPart, step_number: int
    ) -> ToolResultPart:
        """`outcome` after the `process_tool_result` processors (which may rewrite it in `message_list`)."""
        await self._run.runner.run_tool_result(
            message_list,
            step_number=step_number,
            tool_name=call.tool_name,
            tool_call_id=call.tool_call_id,
            args=call.args,
            result=outcome.result,
            steps=self._run.steps,
            provider_executed=call.provider_executed,
        )
        return message_list.find_tool_result(call.tool_call_id) or outcome

    async def _background_work(
        self, tool: Tool, call: ToolCallPart, request_context: dict[str, Any], hooks: ToolHooks, step_number: int
    ) -> ToolResultPart:
        """A background call's authoritative result: the call, then what a
        foreground success gets, `process_tool_result`, over a list holding just
        this call and its result (by now the run may be over, or mid-step)."""
        # No writer: the run may be over when it writes.
        outcome = await self._call(tool, call, request_context, hooks, writer=None)
        if outcome.is_error or not self._run.runner.on_tool_result:
            return outcome
        alone = MessageList()
        alone.add(Message(role="assistant", parts=[clone(call), outcome], id=new_id("msg_")), "response")
        return await self._processed(alone, call, outcome, step_number)

    def transform_of(self, name: str, tool: Tool | None) -> ToolPayloadTransform | None:
        return payload_rules(self._agent.tool_transform, name, tool)

    async def _detach(
        self,
        tool: Tool,
        call: ToolCallPart,
        request_context: dict[str, Any],
        hooks: ToolHooks,
        message_id: str,
        step_number: int,
    ) -> tuple[ToolResultPart, bool]:
        """A background tool's call: its deferred result, and whether it was
        deferred. With no thread to reconcile into (or no host), it runs in the
        foreground; at the process's cap, or when it cannot be recorded, the
        call answers an error at once and the tool does not run."""
        state = self._run.state
        background = state.background
        if background is None or not self._thread_id or not self._resource_id:
            return await self._call(tool, call, request_context, hooks), False
        placeholder = ToolResultPart(call.tool_call_id, call.tool_name, None, False, call.args)
        task = BackgroundTask(
            task_id=new_id(TASK_PREFIX),
            agent_id=self._agent.id,
            resource_id=self._resource_id,
            thread_id=self._thread_id,
            run_id=state.run_id,
            message_id=message_id,
            tool_call_id=call.tool_call_id,
            tool_name=call.tool_name,
            args=call.args,
        )
        detached = Detached(
            task,
            placeholder,
            work=lambda: self._background_work(tool, call, request_context, hooks, step_number),
            live=lambda: not state.closed_to_signals and not state.buffer.closed,
            transform=self.transform_of(call.tool_name, tool),
            notify=request_context.get(BACKGROUND_SIGNAL_KEY),
        )
        try:
            placeholder.result = await background.start(detached)
        except BackgroundFull as exc:
            return ToolResultPart(call.tool_call_id, call.tool_name, str(exc), True, call.args), False
        except StorageError as exc:
            raise_if_cancelling(exc)
            log.exception("background call %s of %s could not be recorded", call.tool_call_id, call.tool_name)
            failed = "the background call could not be recorded, so it did not run; try again"
            return ToolResultPart(call.tool_call_id, call.tool_name, failed, True, call.args), False
        return placeholder, True

    async def _call(
        self,
        tool: Tool | None,
        call: ToolCallPart,
        request_context: dict[str, Any],
        hooks: ToolHooks,
        *,
        writer: Any = UNSET,
    ) -> ToolResultPart:
        def result(value: Any, is_error: bool = False) -> ToolResultPart:
            return ToolResultPart(call.tool_call_id, call.tool_name, value, is_error, call.args)

        if tool is None:
            return result(f"unknown tool {call.tool_name!r}", True)
        agent = self._agent
        ctx = ToolContext(
            run_id=self._run.state.run_id,
            agent_id=agent.id,
            tool_call_id=call.tool_call_id,
            request_context=request_context,
            thread_id=self._thread_id,
            resource_id=self._resource_id,
            writer=self._writer if writer is UNSET else writer,
        )
        hook_ctx = ToolHookContext(
            tool_name=call.tool_name,
            input=call.args,
            context=ctx,
            metadata={"agentId": agent.id, "agentName": agent.name},
        )
        if hooks.before_tool_call is not None:
            decision = await maybe_await(hooks.before_tool_call(hook_ctx))
            if isinstance(decision, dict) and decision.get("proceed") is False:
                return result(decision.get("output"))
        output: Any = None
        failure: BaseException | None = None
        try:
            output = await tool.call(call.args, ctx)
        except (asyncio.CancelledError, TripWire):  # an output processor blocked what the tool wrote
            raise
        except Exception as exc:
            raise_if_cancelling(exc)  # a tool that turned the run's cancellation into its failure
            failure = exc
        if hooks.after_tool_call is not None:
            hook_ctx.output, hook_ctx.error = output, failure
            try:
                await maybe_await(hooks.after_tool_call(hook_ctx))
            except Exception as exc:
                raise_if_cancelling(exc)
                log.exception("after_tool_call hook failed for %s", call.tool_name)
        if failure is not None:
            return result(str(failure), True)
        return result(output)


def _effective_hooks(agent_hooks: ToolHooks | None, call_hooks: ToolHooks | None) -> ToolHooks:
    agent_hooks = agent_hooks or ToolHooks()
    if call_hooks is None:
        return agent_hooks
    return ToolHooks(
        before_tool_call=call_hooks.before_tool_call or agent_hooks.before_tool_call,
        after_tool_call=call_hooks.after_tool_call or agent_hooks.after_tool_call,
    )
