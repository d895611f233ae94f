"""Running a workflow as a tool call: its steps, the chunks it streams nested
under the calling run, and its spans.

A workflow run has a run id of its own; its chunks carry it, the calling
run's id as `parent_run_id` and source "workflow", in the calling run's
stream (as a sub-agent's run is). It streams `data-workflow-start`, then
`data-workflow-step-start` / `data-workflow-step-result` around each tool,
agent or workflow step (an agent step's run, and a workflow step's, nest
under this run), and ends with `data-workflow-finish` whose status is
success, failed or aborted. A failed step fails the workflow (no later step
runs): the tool call's result is an error. An abort stops it where it is.

Payload transforms (tool_payloads.py) hold in these chunks too: the workflow
tool's rules show its input (`data-workflow-start`) and output
(`data-workflow-finish`); when it has rules, its steps' inputs and outputs,
which derive from them, are withheld (as a transformed call's argument
deltas are), nested workflows' included; otherwise a tool step's rules show
that step's input and output."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from agentd.runtime.agent_definition import AgentDefinition
from agentd.runtime.buffer import ChunkBuffer
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.chunks import Chunk, Data
from agentd.runtime.concurrency import run_all
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import JSON, new_id
from agentd.runtime.telemetry import Telemetry
from agentd.runtime.tool_payloads import Phase, ToolPayloadContext, ToolPayloadTransform
from agentd.runtime.tools import Tool, ToolContext
from agentd.runtime.workflows.definition import Branch, Node, Parallel, Sequential, Step, Workflow, holds, output_key

if TYPE_CHECKING:
    import jsonschema
    import jsonschema.exceptions
else:
    jsonschema = lazy("jsonschema")  # input schemas only: loaded on first use

log = logging.getLogger("agentd.workflows")

#: Runs `agent` on `prompt` as a nested run (`run_id`, under `parent_run_id`)
#: whose chunks join the calling run's stream; its text, or an exception.
RunAgent = Callable[[AgentDefinition, str, dict[str, Any], str, str], Awaitable[str]]
#: The payload rules that apply to a tool of the calling agent, by name (and the tool, when there is one).
TransformOf = Callable[[str, Tool | None], ToolPayloadTransform | None]


class StepFailed(Exception):
    """A step failed; the message says which, and why."""


@dataclass(frozen=True, slots=True)
class WorkflowHost:
    """What a calling run lends its workflows."""

    #: The calling run's chunk buffer (None: the run keeps no chunks).
    sink: ChunkBuffer | None
    run_agent: RunAgent
    telemetry: Telemetry
    transform_of: TransformOf


def workflow_tool(workflow: Workflow, host: WorkflowHost, parent_run_id: str) -> Tool:
    """`workflow` as a tool of the run `parent_run_id`."""

    async def execute(args: Any, context: ToolContext) -> Any:
        try:
            return await WorkflowRun(workflow, host, context, parent_run_id).run(args)
        except StepFailed as exc:
            raise StepFailed(f"workflow {workflow.id!r} failed: {exc}") from None

    return Tool(workflow.id, workflow.description, execute, workflow.input_schema)


class WorkflowRun:
    """One run of a workflow: its chunks (own run id and seq) and its steps."""

    def __init__(
        self, workflow: Workflow, host: WorkflowHost, context: ToolContext, parent_run_id: str, *, nested: bool = False
    ) -> None:
        self.workflow = workflow
        self.host = host
        self.context = context
        self.parent_run_id = parent_run_id
        self.run_id = new_id()
        self.seq = 0
        #: The workflow tool's own rules (a nested workflow is shown by its caller's).
        self.transform = None if nested else host.transform_of(workflow.id, None)
        #: Steps' inputs and outputs are withheld: they derive from a transformed payload.
        self.withheld = self.transform is not None

    def shown(self, transform: ToolPayloadTransform | None, tool: str, phase: Phase, value: Any, call_id: str) -> JSON:
        """`value` as callers are shown it under `transform`'s rule for `phase` (of tool `tool`'s call)."""
        rule = None if transform is None else transform.args if phase == "args" else transform.result
        value = _json(value)
        return value if rule is None else rule.apply(ToolPayloadContext(tool, call_id, phase, value))

    def _own(self, key: str, value: Any) -> dict[str, JSON]:
        """The workflow's own input or output for its start or finish chunk: by
        its tool's rules; nothing when a calling workflow withholds its steps."""
        if self.withheld and self.transform is None:
            return {}
        phase: Phase = "args" if key == "input" else "result"
        return {key: self.shown(self.transform, self.workflow.id, phase, value, self.context.tool_call_id)}

    def emit(self, kind: str, data: dict[str, JSON]) -> None:
        self.seq += 1
        if self.host.sink is None:
            return
        self.host.sink.append(
            Chunk(
                Data(f"data-workflow-{kind}", data),
                self.run_id,
                self.seq,
                parent_run_id=self.parent_run_id,
                source="workflow",
                metadata={"workflowId": self.workflow.id, "toolCallId": self.context.tool_call_id},
            )
        )

    async def run(self, args: Any) -> Any:
        workflow = self.workflow
        trace = self.host.telemetry.workflow(workflow.id, self.run_id, self.context.tool_call_id)
        self.emit("start", {"workflowId": workflow.id, **self._own("input", args)})
        try:
            with trace.active():
                errors = jsonschema.Draft202012Validator(workflow.input_schema).iter_errors(args)
                problem = jsonschema.exceptions.best_match(errors)
                if problem is not None:
                    where = "".join(f"[{p!r}]" for p in problem.absolute_path) or "input"
                    raise StepFailed(
                        f"the input does not match the workflow's input schema: {where}: {problem.message}"
                    )
                output = await self.node(workflow.root, args)
        except asyncio.CancelledError:
            self.emit("finish", {"workflowId": workflow.id, "status": "aborted"})
            trace.finish(error_type="aborted", message="the run was aborted")
            raise
        except Exception as exc:
            message = str(exc) if isinstance(exc, StepFailed) else f"{type(exc).__name__}: {exc}"
            self.emit("finish", {"workflowId": workflow.id, "status": "failed", "error": message})
            trace.finish(error_type="workflow_failed", message=message)
            raise StepFailed(message) from None
        self.emit("finish", {"workflowId": workflow.id, "status": "success", **self._own("output", output)})
        trace.finish()
        return output

    async def node(self, node: Node, value: Any) -> Any:
        if isinstance(node, Step):
            return await self.step(node, value)
        if isinstance(node, Sequential):
            for child in node.steps:
                value = await self.node(child, value)
            return value
        if isinstance(node, Parallel):
            chosen = list(enumerate(node.steps))
        else:
            assert isinstance(node, Branch)
            chosen = [(i, n) for i, (condition, n) in enumerate(node.cases) if await holds(condition, value)]

        def also_failed(index: int, error: BaseException) -> None:
            log.info("workflow %r: another step also failed: %s", self.workflow.id, error)

        outputs = await run_all([self.node(n, value) for _, n in chosen], also_failed)
        return {output_key(n, i): out for (i, n), out in zip(chosen, outputs, strict=True)}

    async def step(self, step: Step, value: Any) -> Any:
        step_id, kind, target = step.step_id, step.kind, step.target
        call_id = self._call_id(step_id)
        name = target.name if isinstance(target, Tool) else step_id
        rules = self.host.transform_of(name, target) if isinstance(target, Tool) else None
        started: dict[str, JSON] = {"stepId": step_id, "type": kind}
        if not self.withheld:
            started["input"] = self.shown(rules, name, "args", value, call_id)
        child_run = new_id() if kind != "tool" else ""
        if child_run:
            started["runId"] = child_run
        self.emit("step-start", started)
        try:
            if isinstance(target, Tool):
                output = await self._tool(target, step_id, value)
            elif isinstance(target, Workflow):
                nested = WorkflowRun(target, self.host, self.context, self.run_id, nested=True)
                nested.run_id, nested.withheld = child_run, self.withheld
                output = await nested.run(value)
            else:
                output = await self.host.run_agent(
                    target, _prompt(value), self.context.request_context, child_run, self.run_id
                )
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise_if_cancelling(exc)  # a step that turned the run's cancellation into its failure: the run aborts
            message = str(exc) or type(exc).__name__
            self.emit("step-result", {"stepId": step_id, "type": kind, "status": "failed", "error": message})
            raise StepFailed(f"step {step_id!r} failed: {message}") from None
        result: dict[str, JSON] = {"stepId": step_id, "type": kind, "status": "success"}
        if not self.withheld:
            result["output"] = self.shown(rules, name, "result", output, call_id)
        self.emit("step-result", result)
        return output

    def _call_id(self, step_id: str) -> str:
        """A tool step's call id (its spans', its tool context's, its payload rules')."""
        return f"{self.run_id}:{step_id}"

    async def _tool(self, tool: Tool, step_id: str, value: Any) -> Any:
        call_id = self._call_id(step_id)
        trace = self.host.telemetry.step_tool(tool.name, call_id, value, step_id)
        try:
            with trace.active():
                output = await tool.call(value, replace(self.context, tool_call_id=call_id))
        except BaseException as exc:
            trace.end(result=str(exc) or type(exc).__name__, is_error=True)
            raise
        trace.end(result=output)
        return output


def _prompt(value: Any) -> str:
    """An agent step's prompt: text as it is, `{"prompt": ...}`'s prompt, else the value as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("prompt"), str):
        return str(value["prompt"])
    return json.dumps(value, default=str)


def _json(value: Any) -> JSON:
    """A value as chunk data can carry it (what JSON cannot hold, as text)."""
    try:
        return json.loads(json.dumps(value, default=str))
    except (TypeError, ValueError):
        return str(value)
