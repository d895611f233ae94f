"""Tool workflows: declared pipelines an agent runs as one tool. A step is a
tool, an agent or another workflow; steps run in sequence, side by side
(`Parallel`), or when a condition on the previous output holds (`Branch`).

    review = Workflow("review", [
        lookup_tool,                                   # gets the workflow's input
        Parallel([summarizer_agent, Step(lint_tool, id="lint")]),
        Branch([(lambda out: "urgent" in str(out), escalate_workflow),
                ({"field": "lint.ok", "equals": True}, Step(publish_tool))]),
    ], input_schema={...})

As in the reference's workflows, a step's input is the previous step's output
(the first step's is the workflow's input); a parallel or branch step's output
is `{step id: output}` of the steps that ran; the workflow's output is its
last step's. A branch runs every case whose condition holds, side by side.
These are not processor workflows (processors/workflow.py): those run
processors over one hook's value."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union, cast

from agentd.runtime.agent_definition import AgentDefinition
from agentd.runtime.lazy import lazy
from agentd.runtime.tools import Tool
from agentd.runtime.workflows.conditions import FieldTest
from agentd.runtime.workflows.limits import WorkflowLimits

if TYPE_CHECKING:
    import jsonschema
else:
    jsonschema = lazy("jsonschema")  # input schemas only: loaded on first use

#: A branch condition: a function of the previous output (sync or async), or
#: its data form (conditions.FieldTest, or the mapping it is compiled from).
Condition = Callable[[Any], Union[bool, Awaitable[bool]]]  # noqa: UP007


@dataclass(frozen=True, slots=True)
class Step:
    """A tool, an agent or a workflow as a step, under an id of its own (the
    key of its output in a parallel or branch step; default: the tool's name,
    the agent's or the workflow's id)."""

    target: Tool | AgentDefinition | Workflow
    id: str = ""

    @property
    def kind(self) -> str:
        if isinstance(self.target, Tool):
            return "tool"
        return "workflow" if isinstance(self.target, Workflow) else "agent"

    @property
    def step_id(self) -> str:
        if self.id:
            return self.id
        return self.target.name if isinstance(self.target, Tool) else self.target.id


@dataclass(frozen=True, slots=True)
class Sequential:
    """Steps one after the other (a workflow's own steps are one)."""

    steps: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Parallel:
    """Steps run side by side on the same input; each runs to its end."""

    steps: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Branch:
    """(condition, step) cases: every case whose condition holds on the
    previous output runs, side by side; none holding gives `{}`."""

    cases: tuple[tuple[Condition, Node], ...]


Node = Step | Sequential | Parallel | Branch
#: What a workflow's steps may be written as (a bare tool, agent or workflow is a `Step`).
StepLike = Union[Node, Tool, AgentDefinition, "Workflow", Sequence[Any]]


def as_node(value: Any) -> Node:
    """A step as written, as a node; a list is a sequence."""
    if isinstance(value, Step | Sequential | Parallel | Branch):
        if isinstance(value, Parallel | Sequential):
            return type(value)(tuple(as_node(s) for s in value.steps))
        if isinstance(value, Branch):
            return Branch(tuple((as_condition(c), as_node(s)) for c, s in value.cases))
        return value
    if isinstance(value, Tool | AgentDefinition | Workflow):
        return Step(value)
    if isinstance(value, list | tuple):
        return Sequential(tuple(as_node(s) for s in value))
    raise TypeError(f"a workflow step is a Tool, an Agent, a Workflow, Step, Parallel, Branch or a list, not {value!r}")


def as_condition(value: Any) -> Condition:
    if isinstance(value, Mapping):
        return FieldTest(value)
    if not callable(value):
        raise TypeError(f"a branch condition is a function of the previous output or a field test, not {value!r}")
    return cast(Condition, value)


class Workflow:
    """A workflow an agent can run as a tool named by its id. `steps` may be
    set after construction (agentd.toml links workflows that name each other)."""

    def __init__(
        self,
        id: str,
        steps: Sequence[StepLike] = (),
        *,
        description: str = "",
        input_schema: dict[str, Any] | None = None,
    ) -> None:
        if not id:
            raise ValueError("a workflow needs an id")
        self.id = id
        self.description = description or f"Runs the {id} workflow"
        self.input_schema: dict[str, Any] = input_schema if input_schema is not None else {"type": "object"}
        self.root = Sequential(())
        self.steps = steps

    @property
    def steps(self) -> tuple[Node, ...]:
        return self.root.steps

    @steps.setter
    def steps(self, steps: Sequence[StepLike]) -> None:
        self.root = Sequential(tuple(as_node(s) for s in steps))

    def __repr__(self) -> str:
        return f"<Workflow id={self.id!r} steps={len(self.steps)}>"


async def holds(condition: Condition, output: Any) -> bool:
    verdict = condition(output)
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return bool(verdict)


# ------------------------------------------------------------ checks at load


@dataclass
class _Checker:
    """Walks workflows once, checking their depth, width and cycles."""

    limits: WorkflowLimits
    #: Depth of each workflow checked (1: no workflow below it).
    depths: dict[int, int] = field(default_factory=dict)
    path: list[str] = field(default_factory=list)
    on_path: set[int] = field(default_factory=set)

    def workflow(self, workflow: Workflow) -> int:
        key = id(workflow)
        if key in self.on_path:
            start = self.path.index(f"workflow {workflow.id!r}")
            cycle = " → ".join([*self.path[start:], f"workflow {workflow.id!r}"])
            raise ValueError(
                f"workflow {workflow.id!r} runs itself ({cycle}): a workflow cannot take part in its own steps"
            )
        if key in self.depths:
            return self.depths[key]
        if not workflow.steps:
            raise ValueError(f"workflow {workflow.id!r} has no steps")
        try:
            jsonschema.Draft202012Validator.check_schema(workflow.input_schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"workflow {workflow.id!r}: input_schema is not a JSON Schema: {exc.message}") from None
        self.path.append(f"workflow {workflow.id!r}")
        self.on_path.add(key)
        depth = 1 + self.node(workflow, workflow.root, "steps")
        self.on_path.discard(key)
        self.path.pop()
        if depth > self.limits.max_depth:
            raise ValueError(
                f"workflow {workflow.id!r} nests {depth} workflows deep, over workflow_limits.max_depth "
                f"= {self.limits.max_depth}"
            )
        self.depths[key] = depth
        return depth

    def node(self, workflow: Workflow, node: Node, where: str) -> int:
        """The depth of the workflows below `node`."""
        if isinstance(node, Step):
            target = node.target
            if not isinstance(target, Tool | AgentDefinition | Workflow):
                raise ValueError(
                    f"workflow {workflow.id!r} {where}: a step runs a Tool, an Agent or a Workflow, not {target!r}"
                )
            if isinstance(target, Workflow):
                return self.workflow(target)
            if isinstance(target, AgentDefinition):
                self.path.append(f"agent {target.id!r}")
                depth = max((self.workflow(w) for w in static_workflows(target)), default=0)
                self.path.pop()
                return depth
            return 0
        children = [n for _, n in node.cases] if isinstance(node, Branch) else list(node.steps)
        kind = _KINDS[type(node)]
        if not children:
            raise ValueError(f"workflow {workflow.id!r} {where}: an empty {kind} step")
        if isinstance(node, Parallel | Branch):
            if len(children) > self.limits.max_parallel:
                raise ValueError(
                    f"workflow {workflow.id!r} {where}: {len(children)} steps side by side, over "
                    f"workflow_limits.max_parallel = {self.limits.max_parallel}"
                )
            ids = [output_key(c, i) for i, c in enumerate(children)]
            twice = sorted({i for i in ids if ids.count(i) > 1})
            if twice:
                raise ValueError(
                    f"workflow {workflow.id!r} {where}: step ids {twice} appear twice in one {kind} step "
                    "(their outputs share a key): give one an id"
                )
        return max(self.node(workflow, c, f"{where}[{i}]") for i, c in enumerate(children))


def output_key(node: Node, index: int) -> str:
    """A node's key in a parallel or branch step's output."""
    if isinstance(node, Step):
        return node.step_id
    return f"{_KINDS[type(node)]}-{index}"


_KINDS: dict[type, str] = {Sequential: "sequence", Parallel: "parallel", Branch: "branch"}


def static_workflows(agent: AgentDefinition) -> list[Workflow]:
    """An agent's workflows when they do not depend on the request."""
    return [] if callable(agent.workflows) else [w for w in agent.workflows if isinstance(w, Workflow)]


def check_workflows(
    workflows: Iterable[Workflow], agents: Iterable[AgentDefinition] = (), limits: WorkflowLimits | None = None
) -> None:
    """Refuses (ValueError) a workflow with no steps, a cycle (a workflow that
    takes part in its own steps, directly, through another workflow or
    through an agent step's agent), nesting over `max_depth`, a parallel or
    branch step over `max_parallel`, two steps of one parallel or branch step
    under one id, an agent whose workflow names clash with its tools."""
    checker = _Checker(limits or WorkflowLimits())
    for workflow in workflows:
        checker.workflow(workflow)
    for agent in agents:
        if callable(agent.workflows):
            continue
        for item in agent.workflows:
            if not isinstance(item, Workflow):
                raise ValueError(f"agent {agent.id!r}: workflows holds {item!r}, not a Workflow")
        own = [w.id for w in agent.workflows]
        taken = {t.name for t in agent.static_tools()} | (set() if callable(agent.agents) else set(agent.agents))
        clash = sorted({w for w in own if w in taken or own.count(w) > 1})
        if clash:
            raise ValueError(f"agent {agent.id!r}: workflow tool name(s) {clash} are taken by another of its tools")
        checker.path.append(f"agent {agent.id!r}")
        for workflow in agent.workflows:
            checker.workflow(workflow)
        checker.path.pop()
