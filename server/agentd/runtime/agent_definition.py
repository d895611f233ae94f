"""What an agent is: its model, instructions, tools, processors and options,
and how the fields that depend on the request resolve.

`AgentDefinition` holds the fields the agent loop reads; `agent.Agent` adds
the methods that start runs. The split keeps the loop below the Agent: the
loop runs a definition, and the Agent's `stream()` starts the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import operator
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, Union

from agentd.runtime.editor import EditorPolicy, editor_policy
from agentd.runtime.messages import JSON, Message, TextPart
from agentd.runtime.options import ExecutionOptions, ToolHooks
from agentd.runtime.signals import ActiveDelivery, signal_delivery_policy
from agentd.runtime.tool_payloads import ToolPayloadTransformPolicy
from agentd.runtime.tools import Tool, ToolSource

if TYPE_CHECKING:
    from agentd.runtime.scoring.scorer import Scorer

T = TypeVar("T")
RequestContext = dict[str, JSON]
#: A field given as a value, or as a (sync or async) function of the request context.
Dynamic = Union[T, Callable[[RequestContext], Union[T, Awaitable[T]]]]  # noqa: UP007
Instructions = str | Message | Sequence[str | Message]
RunInput = str | Message | Sequence[Message]

#: Request-context keys the runtime itself writes (callers set them through
#: `memory` and `response_cache`; over RPC any "agentd." key is reserved).
RESOURCE_ID_KEY = "agentd.resourceId"
THREAD_ID_KEY = "agentd.threadId"
RESPONSE_CACHE_KEY = "agentd.responseCache"
#: The thread a memory-bound run reads and writes (a memory.MemoryThread).
MEMORY_THREAD_KEY = "agentd.memoryThread"


def is_dynamic(value: object) -> bool:
    """True for a field given as a function of the request context."""
    return callable(value) and not isinstance(value, (Tool, Message))


async def resolve_dynamic(value: Dynamic[T], request_context: RequestContext) -> T:
    if callable(value) and not isinstance(value, (Tool, Message)):  # is_dynamic, narrowing for mypy
        result = value(request_context)
        if inspect.isawaitable(result):
            result = await result
        return result
    return value


async def maybe_await(value: Any) -> Any:
    """A callback's result, awaited when the callback was async."""
    if asyncio.iscoroutine(value) or isinstance(value, asyncio.Future):
        return await value
    return value


def instructions_to_messages(instructions: Instructions) -> list[Message]:
    """Instructions as system messages (each keeps its own provider options)."""
    if not instructions:  # "" or none given: no message (and no list to walk)
        return []
    items: Sequence[str | Message]
    items = [instructions] if isinstance(instructions, (str, Message)) else instructions
    out: list[Message] = []
    for item in items:
        if isinstance(item, str):
            if item:
                out.append(Message.system(item))
        else:
            if item.role != "system":
                raise ValueError("instruction messages must have role 'system'")
            out.append(item)
    return out


def input_to_messages(run_input: RunInput) -> list[Message]:
    if type(run_input) is tuple:  # a request's messages (RunRequest's): the common case first
        return list(run_input)
    if isinstance(run_input, str):
        return [Message(role="user", parts=[TextPart(run_input)])]
    if isinstance(run_input, Message):
        return [run_input]
    return list(run_input)


#: Stamps for AgentDefinition.stamp: each write of a field takes the next one.
_next_stamp = itertools.count(1).__next__


def holds_same(entries: Any, held: Sequence[Any]) -> bool:
    """Whether a field's list still holds the entries `held` took from it: the
    same objects, by identity (an entry's __eq__ is never asked). What a stamp
    cannot tell: a list changed in place keeps its agent's stamp. (`entries`
    is Any: a caller may pass a field typed list-or-function that its stamp
    says is a list, without a cast's call.)"""
    return len(entries) == len(held) and (not held or all(map(operator.is_, entries, held)))


def merge_tools(first: Sequence[Tool], then: Sequence[Tool]) -> list[Tool]:
    """`first`, then each tool of `then` whose name is not taken yet."""
    out = {t.name: t for t in first}
    for t in then:
        out.setdefault(t.name, t)
    return list(out.values())


@dataclass(eq=False)
class AgentDefinition:
    """An agent's fields. Fields typed `Dynamic` may be functions of the
    request context, resolved once per request."""

    id: str
    model: Dynamic[str] = "local/echo"
    instructions: Dynamic[Instructions] = ""
    name: str = ""
    description: str = ""
    metadata: Dynamic[dict[str, JSON]] = field(default_factory=dict)
    tools: Dynamic[Sequence[Tool]] = ()
    #: Tools read from their sources at the start of each run (an MCP server's:
    #: `McpServers.select(...)`); a tool in `tools` wins over one of the same name.
    tool_sources: Sequence[ToolSource] = ()
    default_options: Dynamic[ExecutionOptions | None] = None
    #: Cap on processor-requested retries; unset disables step retries.
    max_processor_retries: int | None = None
    #: Processor (or ProcessorWorkflow) lists, or functions of the request context.
    input_processors: Dynamic[Sequence[Any]] = ()
    output_processors: Dynamic[Sequence[Any]] = ()
    error_processors: Dynamic[Sequence[Any]] = ()
    #: False: no default error processors are added.
    error_processor_defaults: bool = True
    hooks: ToolHooks | None = None
    #: What callers are shown of tool payloads (the seed's `hooks.transform`):
    #: rules for every tool, and per tool name; a tool's own `transform` wins.
    tool_transform: ToolPayloadTransformPolicy | None = None
    #: JSON Schema the request context must satisfy.
    request_context_schema: dict[str, Any] | None = None
    #: Other agents offered to this one as tools, by tool name.
    agents: Dynamic[dict[str, AgentDefinition]] = field(default_factory=dict)
    #: Workflows the agent can run, each a tool named by its id (workflows.Workflow
    #: objects: typed loosely, as the workflows' module imports this one).
    workflows: Dynamic[Sequence[Any]] = ()
    #: Models tried in order when the error processors give up on the model
    #: ("provider/model" strings); the run records which model answered.
    fallback_models: Sequence[str] = ()
    #: How notifications for this agent are delivered (a notifications.DeliveryPolicy).
    delivery_policy: Any = None
    #: Conversation memory (threads). It contributes framework processors:
    #: `memory.processors(request_context) -> lanes.FrameworkProcessors`.
    memory: Any = None
    #: What a signal of each category does when it reaches this agent's thread
    #: while a run is active and its sender left `if_active` unset: "deliver"
    #: (the default: into the run), "queue" (a run of its own once the active
    #: one ends), "persist" or "discard". E.g. `{"user": "queue"}`.
    signal_delivery: Mapping[str, ActiveDelivery] = field(default_factory=dict)
    #: Live scorers (or a function of the request context returning them):
    #: each scores a sample of the runs that answered, after they did.
    scorers: Dynamic[Sequence[Scorer]] = ()
    #: What editor overrides may change (the seed's `editor`): None (omitted)
    #: allows instructions and tools, False locks the agent, or a dict such as
    #: `{"instructions": True, "tools": {"description": True}}`; kept as an EditorPolicy.
    editor: EditorPolicy | bool | dict[str, Any] | None = None
    #: Whether the implicit error-lane retry cap was logged for this agent (once per agent).
    retry_cap_warned: bool = field(default=False, init=False, repr=False, compare=False)
    #: The lanes resolved from the processor lists, by lanes.resolve_lanes (an
    #: editor override's copy shares them: overrides change no processor).
    lane_cache: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    #: Changes with every write of a field (and differs between definitions):
    #: what was set up from the fields, stamped with it, still holds while it
    #: is the same. A list changed in place keeps the stamp: whoever caches
    #: from a list checks its entries too.
    stamp: int = field(default=0, init=False, repr=False, compare=False)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        object.__setattr__(self, "stamp", _next_stamp())  # (writes are rare: set-up, tests, an app's code)

    def __post_init__(self) -> None:
        if not self.id:
            raise ValueError("an agent needs an id")
        if not self.name:
            self.name = self.id
        self.signal_delivery = signal_delivery_policy(self.signal_delivery)
        self.editor = editor_policy(self.editor, f"agent {self.id!r}: editor")

    @property
    def policy(self) -> EditorPolicy:
        """`editor`, as the EditorPolicy __post_init__ made it."""
        assert isinstance(self.editor, EditorPolicy)
        return self.editor

    def static_model(self) -> str:
        """The model string when it does not depend on the request, else ""."""
        return self.model if isinstance(self.model, str) else ""

    def static_metadata(self) -> dict[str, JSON]:
        return self.metadata if isinstance(self.metadata, dict) else {}

    def static_tools(self) -> list[Tool]:
        """The tools known without a request: `tools` (unless a function) and
        what the sources offer now."""
        own = list(self.tools) if not callable(self.tools) else []
        return merge_tools(own, self.source_tools())

    def source_tools(self) -> list[Tool]:
        """What the tool sources offer now; an earlier source wins a name."""
        return merge_tools([], [t for source in self.tool_sources for t in source.tools()])

    def static_processor_ids(self, lane: str) -> list[str]:
        """Ids of a lane's processors when the list does not depend on the request."""
        entries = getattr(self, f"{lane}_processors")
        return [] if callable(entries) else [e.id for e in entries]
