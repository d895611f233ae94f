"""Execution options a caller sends (ExecutionOptions, its processor lists and
workflows) to validated runtime options."""

from __future__ import annotations

from typing import Any

from agentd.grpc.authz import caller
from agentd.grpc.tenancy import scope_id, scope_resource
from agentd.grpc.values import from_struct, from_value
from agentd.grpc.violations import Violations
from agentd.runtime import options as ro
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.host import Host
from agentd.runtime.identity import SUBJECT_KEY, TENANT_KEY, Identity
from agentd.runtime.models.router import check_model_spec
from agentd.runtime.processors.registry import ProcessorRegistry
from agentd_proto.v1 import options_pb2 as opb

#: Request-context keys the runtime reads itself; set through `memory` and
#: `response_cache`, never directly.
RESERVED_CONTEXT_PREFIX = "agentd."
MAX_STEPS_LIMIT = 1000

#: A run's options when its request sets none and there is no caller to name:
#: one value, shared (frozen), where building its 21 fields was a third of
#: translating a Generate request.
_UNSET = ro.ExecutionOptions()


def host_options(
    host: Host, pb: opb.ExecutionOptions, path: str, v: Violations, *, thread_bound: bool = False
) -> ro.ExecutionOptions:
    """`execution_options` with the host's processors and step functions."""
    return execution_options(pb, path, v, host.processors, host.step_functions, thread_bound=thread_bound)


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
    if not pb.ListFields():  # nothing set (most calls): every check below would pass over it
        return unset_options()
    registry = registry or ProcessorRegistry()
    max_steps: int | None = None
    if pb.HasField("max_steps"):
        if not 1 <= pb.max_steps <= MAX_STEPS_LIMIT:
            v.add(f"{path}.max_steps", f"must be between 1 and {MAX_STEPS_LIMIT}")
        max_steps = pb.max_steps

    tool_choice = tool_choice_from_pb(pb.tool_choice, f"{path}.tool_choice", v) if pb.HasField("tool_choice") else None

    active_tools = tuple(pb.active_tools.names) if pb.HasField("active_tools") else None
    if active_tools is not None and any(not n for n in active_tools):
        v.add(f"{path}.active_tools.names", "names must not be empty")

    settings = (
        model_settings_from_pb(pb.model_settings, f"{path}.model_settings", v)
        if pb.HasField("model_settings")
        else None
    )

    structured = (
        _structured_output(pb.structured_output, f"{path}.structured_output", v)
        if pb.HasField("structured_output")
        else None
    )

    request_context = from_struct(pb.request_context) if pb.HasField("request_context") else None
    for key in request_context or {}:
        if key.startswith(RESERVED_CONTEXT_PREFIX):
            v.add(
                f"{path}.request_context.{key}",
                f"{key!r} is reserved (keys starting with {RESERVED_CONTEXT_PREFIX!r}); "
                "use memory and response_cache instead",
                "RESERVED_CONTEXT_KEY",
            )

    memory = _memory(pb.memory, f"{path}.memory", v) if pb.HasField("memory") else None
    request_context = _with_caller(request_context)

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
            tools.append(ro.ClientTool(t.name, t.description, from_struct(t.input_schema)))
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
        provider_options=from_struct(pb.provider_options) if pb.HasField("provider_options") else None,
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
        persist_partial_on_abort=(pb.persist_partial_on_abort if pb.HasField("persist_partial_on_abort") else None),
        scorers=_scoring_mode(pb, f"{path}.scorers.mode", v),
        prepare_step=prepare_step,
    )


def unset_options(who: Identity | None = None) -> ro.ExecutionOptions:
    """The options of a request that sets none (the field unset or empty),
    for `who` (the caller unless given)."""
    request_context = _with_caller(None, who)
    return _UNSET if request_context is None else ro.ExecutionOptions(request_context=request_context)


def _with_caller(request_context: dict[str, Any] | None, who: Identity | None = None) -> dict[str, Any] | None:
    """Processors and tools see who is calling (`who`, the caller unless given), under keys no caller can set."""
    if who is None:
        who = caller()
    if who.method == "none":
        return request_context
    return {**(request_context or {}), TENANT_KEY: who.tenant, SUBJECT_KEY: who.subject}


_ERROR_STRATEGIES: dict[int, ro.StructuredErrorStrategy] = {
    opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_UNSPECIFIED: "strict",
    opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT: "strict",
    opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN: "warn",
    opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK: "fallback",
}


def _structured_output(pb: opb.StructuredOutput, path: str, v: Violations) -> ro.StructuredOutput | None:
    ok = True
    if not pb.HasField("schema") or not pb.schema.fields:
        v.add(f"{path}.schema", "is required (a JSON Schema object)")
        ok = False
    strategy = _ERROR_STRATEGIES.get(pb.error_strategy)
    if strategy is None:
        v.add(f"{path}.error_strategy", "unknown error strategy")
        ok = False
    elif (strategy == "fallback") != pb.HasField("fallback_value"):
        v.add(
            f"{path}.fallback_value",
            "is required with error_strategy FALLBACK"
            if strategy == "fallback"
            else "is only used with error_strategy FALLBACK",
        )
        ok = False
    if pb.model:
        try:
            check_model_spec(pb.model)
        except InvalidArgument as exc:
            v.add(f"{path}.model", exc.message, exc.reason)
            ok = False
    elif pb.instructions:
        v.add(f"{path}.instructions", "are the structuring model's: set model too")
        ok = False
    if not ok or strategy is None:
        return None
    return ro.StructuredOutput(
        from_struct(pb.schema),
        pb.name or None,
        pb.description or None,
        error_strategy=strategy,
        fallback_value=from_value(pb.fallback_value) if pb.HasField("fallback_value") else None,
        model=pb.model or None,
        instructions=pb.instructions or None,
    )


def tool_choice_from_pb(pb: opb.ToolChoice, path: str, v: Violations) -> ro.ToolChoice | None:
    which = pb.WhichOneof("choice")
    if which == "tool_name":
        if not pb.tool_name:
            v.add(f"{path}.tool_name", "must not be empty")
        return ro.ToolChoice("tool", pb.tool_name)
    if which == "mode" and pb.mode != opb.TOOL_CHOICE_MODE_UNSPECIFIED:
        modes = {
            opb.TOOL_CHOICE_MODE_AUTO: "auto",
            opb.TOOL_CHOICE_MODE_NONE: "none",
            opb.TOOL_CHOICE_MODE_REQUIRED: "required",
        }
        if pb.mode not in modes:
            v.add(f"{path}.mode", "unknown mode")
            return None
        return ro.ToolChoice(modes[pb.mode])  # type: ignore[arg-type]
    v.add(path, "set mode or tool_name")
    return None


def model_settings_from_pb(pb: opb.ModelSettings, path: str, v: Violations) -> ro.ModelSettings:
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
    """The memory ids, scoped to the caller's tenant (a resource it may not act for is NOT_FOUND)."""
    which = pb.WhichOneof("thread")
    thread = None
    if which == "thread_id":
        if not pb.thread_id:
            v.add(f"{path}.thread_id", "must not be empty")
        thread = ro.ThreadRef(scope_id(pb.thread_id, f"{path}.thread_id"))
    elif which == "thread_object":
        t = pb.thread_object
        if not t.id:
            v.add(f"{path}.thread_object.id", "is required")
        metadata = from_struct(t.metadata) if t.HasField("metadata") else None
        thread = ro.ThreadRef(scope_id(t.id, f"{path}.thread_object.id"), t.title or None, metadata)
    if thread is not None and not pb.resource:
        v.add(f"{path}.resource", "is required with a thread", "MEMORY_IDS_REQUIRED")
    return ro.MemoryOptions(scope_resource(pb.resource, f"{path}.resource") or None, thread)


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
            v.absorb(exc, f"{item}.workflow" if isinstance(spec, ro.ProcessorWorkflowSpec) else f"{item}.processor")
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
            out.extend(_processor_spec(ref.processor, f"{item}.processor", v, known))
        elif kind == "workflow":
            out.append(_workflow_spec(ref.workflow, f"{item}.workflow", v, known))
        else:
            v.add(item, "set processor or workflow")
    return tuple(out)


def _workflow_spec(
    workflow: opb.ProcessorWorkflow, path: str, v: Violations, known: frozenset[str]
) -> ro.ProcessorWorkflowSpec:
    if not workflow.id:
        v.add(f"{path}.id", "is required")
    if not workflow.steps:
        v.add(f"{path}.steps", "must not be empty")
    steps: list[ro.ProcessorSpec | ro.ParallelStep | ro.MapStep] = []
    for j, step in enumerate(workflow.steps):
        spath = f"{path}.steps[{j}]"
        kind = step.WhichOneof("step")
        if kind == "processor":
            steps.extend(_processor_spec(step.processor, f"{spath}.processor", v, known))
        elif kind == "parallel":
            if not step.parallel.branches:
                v.add(f"{spath}.parallel.branches", "must not be empty")
            branches = [
                spec
                for k, branch in enumerate(step.parallel.branches)
                for spec in _processor_spec(branch, f"{spath}.parallel.branches[{k}]", v, known)
            ]
            steps.append(ro.ParallelStep(tuple(branches)))
        elif kind == "map":
            if not step.map.select.startswith("processor:"):
                v.add(f"{spath}.map.select", 'must name a branch as "processor:<id>"')
            steps.append(ro.MapStep(step.map.select))
        else:
            v.add(spath, "no step set")
    return ro.ProcessorWorkflowSpec(workflow.id, tuple(steps))


def _processor_spec(
    pb: opb.ProcessorSpec, path: str, v: Violations, known: frozenset[str]
) -> tuple[ro.ProcessorSpec, ...]:
    """The spec, or none (and a violation) when it names no registered processor."""
    if not pb.name:
        v.add(f"{path}.name", "is required")
        return ()
    if pb.name not in known:
        listing = ", ".join(sorted(known)) or "none yet"
        v.add(
            f"{path}.name",
            f"no processor named {pb.name!r} is registered (registered: {listing})",
            "UNKNOWN_PROCESSOR",
        )
        return ()
    return (ro.ProcessorSpec(pb.name, pb.id or None, from_struct(pb.options)),)


_SCORING_MODES: dict[int, ro.ScoringMode] = {opb.SCORING_MODE_OFF: "off", opb.SCORING_MODE_FORCE: "force"}


def _scoring_mode(pb: opb.ExecutionOptions, path: str, v: Violations) -> ro.ScoringMode | None:
    mode = pb.scorers.mode
    if mode != opb.SCORING_MODE_UNSPECIFIED and mode not in _SCORING_MODES:
        v.add(path, "unknown scoring mode")
    return _SCORING_MODES.get(mode) if pb.HasField("scorers") else None
