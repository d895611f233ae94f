"""Request validation: proto requests to runtime values, or INVALID_ARGUMENT with
one field violation per problem (field paths as in the proto, snake_case)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from agentd.grpc import convert
from agentd.runtime import messages as rm
from agentd.runtime import options as ro
from agentd.runtime.errors import FieldViolation, InvalidArgument
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb

#: Request-context keys the runtime reads itself; set through `memory` and
#: `response_cache`, never directly.
RESERVED_CONTEXT_PREFIX = "agentd."
MAX_STEPS_LIMIT = 1000
MAX_PAGE_SIZE = 1000


class Violations:
    """Collects field violations, then raises them all at once."""

    def __init__(self) -> None:
        self.items: list[FieldViolation] = []
        self.reason = "INVALID_REQUEST"

    def add(self, field: str, description: str, reason: str | None = None) -> None:
        self.items.append(FieldViolation(field, description))
        if reason is not None and self.reason == "INVALID_REQUEST":
            self.reason = reason

    def require(self, value: str, field: str) -> None:
        if not value:
            self.add(field, "is required")

    def check(self) -> None:
        if self.items:
            raise InvalidArgument.fields(self.items, self.reason)


# google.protobuf.Timestamp's valid range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z.
_MIN_SECONDS, _MAX_SECONDS = -62135596800, 253402300799


def timestamp(pb: Any, field: str, v: Violations) -> datetime | None:
    """A valid Timestamp as a datetime, or a field violation."""
    if not _MIN_SECONDS <= pb.seconds <= _MAX_SECONDS or not 0 <= pb.nanos < 1_000_000_000:
        v.add(field, "is not a valid timestamp (years 1 to 9999, nanos in [0, 1e9))")
        return None
    return convert.from_timestamp(pb)


def duration_seconds(pb: Any, field: str, v: Violations) -> float | None:
    """A valid Duration in seconds, or a field violation."""
    ok = abs(pb.seconds) <= 315_576_000_000 and abs(pb.nanos) < 1_000_000_000
    if not ok or (pb.seconds > 0 > pb.nanos) or (pb.seconds < 0 < pb.nanos):
        v.add(field, "is not a valid duration")
        return None
    return float(pb.seconds + pb.nanos / 1e9)


def page_size(value: int, field: str, v: Violations, default: int = 50) -> int:
    if value < 0:
        v.add(field, "must not be negative")
    return default if value <= 0 else min(value, MAX_PAGE_SIZE)


def run_input(messages: Any, text: str, v: Violations) -> list[rm.Message]:
    """`messages` xor `text`."""
    if messages and text:
        v.add("text", "set either text or messages, not both")
        return []
    if not messages and not text:
        v.add("text", "set text or messages")
        return []
    if text:
        return [rm.Message.user(text)]
    out: list[rm.Message] = []
    for i, message in enumerate(messages):
        out.extend(_message(message, f"messages[{i}]", v))
    if out and all(m.role == "system" for m in out):
        v.add("messages", "needs at least one non-system message")
    return out


def _message(message: mpb.Message, path: str, v: Violations) -> list[rm.Message]:
    before = len(v.items)
    if message.role not in (mpb.ROLE_USER, mpb.ROLE_ASSISTANT, mpb.ROLE_SYSTEM):
        v.add(f"{path}.role", "must be ROLE_USER, ROLE_ASSISTANT or ROLE_SYSTEM")
    if not message.parts:
        v.add(f"{path}.parts", "must not be empty")
    for j, part in enumerate(message.parts):
        _part(part, f"{path}.parts[{j}]", message.role, v)
    if message.HasField("create_time"):
        timestamp(message.create_time, f"{path}.create_time", v)
    if len(v.items) > before:
        return []
    return [convert.message_from_pb(message)]


def _part(part: mpb.Part, path: str, role: int, v: Violations) -> None:
    kind = part.WhichOneof("part")
    if kind is None:
        v.add(path, "no part set")
    elif kind == "file":
        file_part(part.file, f"{path}.file", v)
    elif kind == "signal":
        v.add(f"{path}.signal", "signal parts are written by the server; send signals with SignalService")
    elif kind in ("tool_call", "tool_result", "reasoning") and role != mpb.ROLE_ASSISTANT:
        v.add(f"{path}.{kind}", "only assistant messages carry this part")
    elif kind == "tool_call" and not (part.tool_call.tool_call_id and part.tool_call.tool_name):
        v.add(f"{path}.tool_call", "tool_call_id and tool_name are required")
    elif kind == "tool_result" and not part.tool_result.tool_call_id:
        v.add(f"{path}.tool_result.tool_call_id", "is required")
    elif kind == "data" and not part.data.type.startswith("data-"):
        v.add(f"{path}.data.type", 'must start with "data-"')
    elif kind == "text" and role == mpb.ROLE_SYSTEM and not part.text.text:
        v.add(f"{path}.text.text", "must not be empty")


def file_part(f: mpb.FilePart, path: str, v: Violations) -> None:
    if not f.media_type or "/" not in f.media_type:
        v.add(f"{path}.media_type", 'is required, as an IANA media type such as "image/png"')
    source = f.WhichOneof("source")
    if source is None:
        v.add(f"{path}.data", "set data or url")
    elif source == "url" and not f.url.startswith(("http://", "https://", "data:")):
        v.add(f"{path}.url", "must be an http(s) or data: URL")


def execution_options(
    pb: opb.ExecutionOptions,
    path: str,
    v: Violations,
    registry: ProcessorRegistry | None = None,
    step_functions: dict[str, Any] | None = None,
    *,
    thread_bound: bool = False,
) -> ro.ExecutionOptions:
    """Validated runtime options; per-call processors are built from `registry`."""
    registry = registry or ProcessorRegistry()
    max_steps: int | None = None
    if pb.HasField("max_steps"):
        if not 1 <= pb.max_steps <= MAX_STEPS_LIMIT:
            v.add(f"{path}.max_steps", f"must be between 1 and {MAX_STEPS_LIMIT}")
        max_steps = pb.max_steps

    tool_choice = None
    if pb.HasField("tool_choice"):
        which = pb.tool_choice.WhichOneof("choice")
        if which == "tool_name":
            if not pb.tool_choice.tool_name:
                v.add(f"{path}.tool_choice.tool_name", "must not be empty")
            tool_choice = ro.ToolChoice("tool", pb.tool_choice.tool_name)
        elif which == "mode" and pb.tool_choice.mode != opb.TOOL_CHOICE_MODE_UNSPECIFIED:
            modes = {
                opb.TOOL_CHOICE_MODE_AUTO: "auto",
                opb.TOOL_CHOICE_MODE_NONE: "none",
                opb.TOOL_CHOICE_MODE_REQUIRED: "required",
            }
            if pb.tool_choice.mode not in modes:
                v.add(f"{path}.tool_choice.mode", "unknown mode")
            else:
                tool_choice = ro.ToolChoice(modes[pb.tool_choice.mode])  # type: ignore[arg-type]
        else:
            v.add(f"{path}.tool_choice", "set mode or tool_name")

    active_tools = tuple(pb.active_tools.names) if pb.HasField("active_tools") else None
    if active_tools is not None and any(not n for n in active_tools):
        v.add(f"{path}.active_tools.names", "names must not be empty")

    settings = (
        _model_settings(pb.model_settings, f"{path}.model_settings", v) if pb.HasField("model_settings") else None
    )

    structured = None
    if pb.HasField("structured_output"):
        if not pb.structured_output.HasField("schema") or not pb.structured_output.schema.fields:
            v.add(f"{path}.structured_output.schema", "is required (a JSON Schema object)")
        else:
            structured = ro.StructuredOutput(
                convert.from_struct(pb.structured_output.schema),
                pb.structured_output.name or None,
                pb.structured_output.description or None,
            )

    request_context = convert.from_struct(pb.request_context) if pb.HasField("request_context") else None
    for key in request_context or {}:
        if key.startswith(RESERVED_CONTEXT_PREFIX):
            v.add(
                f"{path}.request_context.{key}",
                f"{key!r} is reserved (keys starting with {RESERVED_CONTEXT_PREFIX!r}); "
                "use memory and response_cache instead",
                "RESERVED_CONTEXT_KEY",
            )

    memory = _memory(pb.memory, f"{path}.memory", v) if pb.HasField("memory") else None

    client_tools: tuple[ro.ClientTool, ...] | None = None
    if pb.client_tools:
        names: set[str] = set()
        tools = []
        for i, t in enumerate(pb.client_tools):
            if not t.name:
                v.add(f"{path}.client_tools[{i}].name", "is required")
            elif t.name in names:
                v.add(f"{path}.client_tools[{i}].name", f"duplicate tool name {t.name!r}")
            names.add(t.name)
            tools.append(ro.ClientTool(t.name, t.description, convert.from_struct(t.input_schema)))
        client_tools = tuple(tools)
        if not thread_bound and (memory is None or memory.thread is None):
            v.add(
                f"{path}.client_tools",
                "client tools are answered through ThreadService.Connect, so they need a "
                "thread-bound run: set memory.resource and memory.thread_id",
                "CLIENT_TOOLS_REQUIRE_THREAD",
            )

    cache = None
    if pb.HasField("response_cache"):
        cache_pb = pb.response_cache
        if cache_pb.HasField("key") and not cache_pb.key:
            v.add(f"{path}.response_cache.key", "must not be empty when set")
        scope_kind = cache_pb.WhichOneof("scope_override")
        scope = cache_pb.scope if scope_kind == "scope" else ro.NO_SCOPE if scope_kind == "no_scope" else None
        if scope_kind == "scope" and not cache_pb.scope:
            v.add(f"{path}.response_cache.scope", "must not be empty; use no_scope for an unscoped entry")
        cache = ro.ResponseCacheOptions(
            cache_pb.key if cache_pb.HasField("key") else None, scope, cache_pb.bust or None
        )

    lanes: dict[str, tuple[Any, ...] | None] = {}
    for lane in ("input_processors", "output_processors", "error_processors"):
        lanes[lane] = (
            build_processors(
                getattr(pb, lane), f"{path}.{lane}", v, registry, allow_workflows=lane != "error_processors"
            )
            if pb.HasField(lane)
            else None
        )

    retries = None
    if pb.HasField("max_processor_retries"):
        if pb.max_processor_retries < 0:
            v.add(f"{path}.max_processor_retries", "must not be negative")
        retries = pb.max_processor_retries

    prepare_step = None
    if pb.prepare_step:
        prepare_step = (step_functions or {}).get(pb.prepare_step)
        if prepare_step is None:
            known = ", ".join(sorted(step_functions or {})) or "none"
            v.add(
                f"{path}.prepare_step",
                f"no step function named {pb.prepare_step!r} is registered (registered: {known})",
                "UNKNOWN_STEP_FUNCTION",
            )

    return ro.ExecutionOptions(
        max_steps=max_steps,
        tool_choice=tool_choice,
        active_tools=active_tools,
        model_settings=settings,
        provider_options=convert.from_struct(pb.provider_options) if pb.HasField("provider_options") else None,
        structured_output=structured,
        client_tools=client_tools,
        request_context=request_context,
        memory=memory,
        response_cache=cache,
        input_processors=lanes["input_processors"],
        output_processors=lanes["output_processors"],
        error_processors=lanes["error_processors"],
        max_processor_retries=retries,
        error_processor_defaults=pb.error_processor_defaults if pb.HasField("error_processor_defaults") else None,
        prepare_step=prepare_step,
    )


def _model_settings(pb: opb.ModelSettings, path: str, v: Violations) -> ro.ModelSettings:
    def opt(name: str) -> Any:
        return getattr(pb, name) if pb.HasField(name) else None

    if pb.HasField("temperature") and not 0 <= pb.temperature <= 2:
        v.add(f"{path}.temperature", "must be between 0 and 2")
    if pb.HasField("top_p") and not 0 <= pb.top_p <= 1:
        v.add(f"{path}.top_p", "must be between 0 and 1")
    if pb.HasField("top_k") and pb.top_k < 1:
        v.add(f"{path}.top_k", "must be at least 1")
    if pb.HasField("max_output_tokens") and pb.max_output_tokens < 1:
        v.add(f"{path}.max_output_tokens", "must be at least 1")
    return ro.ModelSettings(
        temperature=opt("temperature"),
        top_p=opt("top_p"),
        top_k=opt("top_k"),
        max_output_tokens=opt("max_output_tokens"),
        presence_penalty=opt("presence_penalty"),
        frequency_penalty=opt("frequency_penalty"),
        stop_sequences=tuple(pb.stop_sequences),
        seed=opt("seed"),
    )


def _memory(pb: opb.MemoryOptions, path: str, v: Violations) -> ro.MemoryOptions:
    which = pb.WhichOneof("thread")
    thread = None
    if which == "thread_id":
        if not pb.thread_id:
            v.add(f"{path}.thread_id", "must not be empty")
        thread = ro.ThreadRef(pb.thread_id)
    elif which == "thread_object":
        t = pb.thread_object
        if not t.id:
            v.add(f"{path}.thread_object.id", "is required")
        thread = ro.ThreadRef(
            t.id, t.title or None, convert.from_struct(t.metadata) if t.HasField("metadata") else None
        )
    if thread is not None and not pb.resource:
        v.add(f"{path}.resource", "is required with a thread", "MEMORY_IDS_REQUIRED")
    return ro.MemoryOptions(pb.resource or None, thread)


def build_processors(
    pb: opb.ProcessorList,
    path: str,
    v: Violations,
    registry: ProcessorRegistry,
    *,
    allow_workflows: bool = True,
) -> tuple[Any, ...]:
    """Processor instances for a per-call list; every problem becomes a field violation."""
    out: list[Any] = []
    for i, spec in enumerate(processor_specs(pb, path, v, registry.names())):
        item = f"{path}.processors[{i}]"
        if isinstance(spec, ro.ProcessorWorkflowSpec) and not allow_workflows:
            v.add(f"{item}.workflow", "workflows cannot run in the error lane")
            continue
        try:
            out.append(registry.build_ref(spec))
        except InvalidArgument as exc:
            kind = "workflow" if isinstance(spec, ro.ProcessorWorkflowSpec) else "processor"
            for violation in exc.violations:
                v.add(f"{item}.{kind}.{violation.field}", violation.description, exc.reason)
        except ValueError as exc:  # a workflow that does not hold together
            v.add(f"{item}.workflow", str(exc))
    return tuple(out)


def processor_specs(
    pb: opb.ProcessorList, path: str, v: Violations, known: frozenset[str]
) -> tuple[ro.ProcessorRef, ...]:
    out: list[ro.ProcessorRef] = []
    for i, ref in enumerate(pb.processors):
        item = f"{path}.processors[{i}]"
        kind = ref.WhichOneof("kind")
        if kind == "processor":
            spec = _processor_spec(ref.processor, f"{item}.processor", v, known)
            if spec is not None:
                out.append(spec)
        elif kind == "workflow":
            workflow = ref.workflow
            if not workflow.id:
                v.add(f"{item}.workflow.id", "is required")
            if not workflow.steps:
                v.add(f"{item}.workflow.steps", "must not be empty")
            steps: list[ro.ProcessorSpec | ro.ParallelStep | ro.MapStep] = []
            for j, step in enumerate(workflow.steps):
                spath = f"{item}.workflow.steps[{j}]"
                skind = step.WhichOneof("step")
                if skind == "processor":
                    spec = _processor_spec(step.processor, f"{spath}.processor", v, known)
                    if spec is not None:
                        steps.append(spec)
                elif skind == "parallel":
                    if not step.parallel.branches:
                        v.add(f"{spath}.parallel.branches", "must not be empty")
                    branches = [
                        _processor_spec(b, f"{spath}.parallel.branches[{k}]", v, known)
                        for k, b in enumerate(step.parallel.branches)
                    ]
                    steps.append(ro.ParallelStep(tuple(b for b in branches if b is not None)))
                elif skind == "map":
                    if not step.map.select.startswith("processor:"):
                        v.add(f"{spath}.map.select", 'must name a branch as "processor:<id>"')
                    steps.append(ro.MapStep(step.map.select))
                else:
                    v.add(spath, "no step set")
            out.append(ro.ProcessorWorkflowSpec(workflow.id, tuple(steps)))
        else:
            v.add(item, "set processor or workflow")
    return tuple(out)


def _processor_spec(pb: opb.ProcessorSpec, path: str, v: Violations, known: frozenset[str]) -> ro.ProcessorSpec | None:
    if not pb.name:
        v.add(f"{path}.name", "is required")
        return None
    if pb.name not in known:
        listing = ", ".join(sorted(known)) or "none yet"
        v.add(
            f"{path}.name",
            f"no processor named {pb.name!r} is registered (registered: {listing})",
            "UNKNOWN_PROCESSOR",
        )
        return None
    return ro.ProcessorSpec(pb.name, pb.id or None, convert.from_struct(pb.options))
