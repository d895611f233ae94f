"""A run's three processor lanes (input, output, error), and the default error lane.

`resolve_lanes` builds the lanes a run uses: framework processors (memory)
around the configured ones, the per-call `prepare_step` as an input
processor, and the error lane merged with the defaults.

Every agent's error lane gets whichever of the four defaults its list lacks
(matched by id), unless defaults are turned off:

1. `provider-history-compat`       ProviderHistoryCompat
2. `prefill-error-handler`         PrefillErrorHandler
3. `unsupported-file-handler`      UnsupportedFileHandler
4. `stream-error-retry-processor`  StreamErrorRetryProcessor

Repair processors come before the retry processor because the first
`retry=True` ends the chain: a blind resend must not pre-empt a repair.

Merge rule (`resolve_error_processors`): the caller's list is never reordered
(custom-id processors keep their place; caller processors with a default id
take part in the default ordering). Each missing default is inserted right
before the first entry carrying a later default id, or appended when there is
none. An empty list gets all four. Fresh default instances are built on every
call of `resolve_error_processors`; `resolve_lanes` builds an agent's merged
lane once and reuses it while the agent's list stays the same (the defaults
hold options only: what a processor keeps during a run is in the run's
runner, per processor). This applies to the agent's list (static, or as returned by a function of
the request context); a per-call list replaces the resolved list as given.

The order and the ids are the runtime's; the processors are built-in plugins
that register themselves under those ids
(agentd.runtime.processors.builtins.error_defaults), so the loop never imports
a plugin.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from agentd.runtime.agent_definition import AgentDefinition, holds_same, is_dynamic, maybe_await, resolve_dynamic
from agentd.runtime.lazy import resolve
from agentd.runtime.options import ExecutionOptions
from agentd.runtime.processors.base import ProcessInputStepArgs, Processor
from agentd.runtime.processors.runner import HookTables

log = logging.getLogger("agentd.processors")

#: The default error processors' ids, in their order.
DEFAULT_ERROR_PROCESSOR_IDS: tuple[str, ...] = (
    "provider-history-compat",
    "prefill-error-handler",
    "unsupported-file-handler",
    "stream-error-retry-processor",
)
#: Error-lane retry cap when error processors exist and `max_processor_retries`
#: is unset (up to 4 model calls per turn).
DEFAULT_MAX_PROCESSOR_RETRIES = 3

#: Builds a fresh default error processor from its id.
DefaultFactory = Callable[[str], Any]

# Filled by the plugins that implement the defaults, by id: a class, or the
# "module:name" of one, imported when the first lane is built (a server loads
# the four built-ins with its first run, not at start-up).
_default_classes: dict[str, Callable[[], Any] | str] = {}


def register_default_error_processor(default_id: str, cls: Callable[[], Any] | str) -> None:
    """Names the processor built (with default options) for a default error id:
    its class, or its "module:name"."""
    if default_id not in DEFAULT_ERROR_PROCESSOR_IDS:
        raise ValueError(f"{default_id!r} is not a default error processor id")
    _default_classes[default_id] = cls


def build_default_error_processor(default_id: str) -> Any:
    """A fresh instance of the default error processor `default_id`, with default options."""
    if default_id not in DEFAULT_ERROR_PROCESSOR_IDS:
        raise ValueError(f"{default_id!r} is not a default error processor id")
    cls = _default_classes.get(default_id)
    if cls is None:
        raise RuntimeError(
            f"no processor is registered for the default error processor {default_id!r} "
            "(agentd.runtime.processors.builtins.error_defaults registers them)"
        )
    if isinstance(cls, str):
        cls = _default_classes[default_id] = resolve(cls)
    return cls()


def _id_of(entry: Any) -> Any:
    return getattr(entry, "id", None)


def resolve_error_processors(
    caller: Sequence[Any],
    *,
    defaults_enabled: bool = True,
    factory: DefaultFactory | None = None,
) -> list[Any]:
    """The error lane for an agent: `caller` in its own order plus the missing
    defaults (see the module docstring). `defaults_enabled=False` returns the
    caller's list only. `factory(default_id)` builds each added default (fresh
    per call; `build_default_error_processor` when None) and must return a
    processor with that id."""
    resolved = list(caller)
    if not defaults_enabled:
        return resolved
    build = factory or build_default_error_processor
    rank = {default_id: i for i, default_id in enumerate(DEFAULT_ERROR_PROCESSOR_IDS)}
    present = {_id_of(entry) for entry in resolved}
    for default_id in DEFAULT_ERROR_PROCESSOR_IDS:
        if default_id in present:
            continue
        processor = build(default_id)
        if _id_of(processor) != default_id:
            raise ValueError(f"the default error processor factory built {processor!r} for {default_id!r}: ids differ")
        position = next(
            (
                i
                for i, entry in enumerate(resolved)
                if isinstance(_id_of(entry), str) and rank.get(_id_of(entry), -1) > rank[default_id]
            ),
            len(resolved),
        )
        resolved.insert(position, processor)
        present.add(default_id)
    return resolved


def resolve_max_processor_retries(explicit: int | None, error_processors: Sequence[Any]) -> int | None:
    """The error-lane retry cap: an explicit value wins; else none is needed
    without error processors; else DEFAULT_MAX_PROCESSOR_RETRIES."""
    if explicit is not None:
        return explicit
    return DEFAULT_MAX_PROCESSOR_RETRIES if error_processors else None


def error_retry_cap(agent: AgentDefinition, explicit: int | None, own_error_processors: bool) -> int:
    """The error-lane retry cap of a run: `explicit` when set, else
    DEFAULT_MAX_PROCESSOR_RETRIES. An agent with error processors of its own
    and no cap is told once (a log warning) that the implicit cap applies: its
    processors may be counting on more (or fewer) retries."""
    if explicit is not None:
        return explicit
    if own_error_processors and not agent.retry_cap_warned:
        agent.retry_cap_warned = True
        log.warning(
            "agent %r has its own error processors and no max_processor_retries: "
            "model-call retries are capped at %d (set max_processor_retries to choose)",
            agent.id,
            DEFAULT_MAX_PROCESSOR_RETRIES,
        )
    return DEFAULT_MAX_PROCESSOR_RETRIES


@dataclass
class FrameworkProcessors:
    """Processors a framework part (memory) adds around the configured lanes."""

    input: list[Any] = field(default_factory=list)
    output: list[Any] = field(default_factory=list)
    error: list[Any] = field(default_factory=list)


class PrepareStepProcessor(Processor):
    """The per-call `prepare_step` callback as a processor (id "prepare-step"):
    `process_input_step` calls `prepare_step(args)`, same arguments, same
    results. Not registered by name: over RPC, `prepare_step` names a step
    function the server registered."""

    def __init__(self, prepare_step: Callable[[ProcessInputStepArgs], Any]) -> None:
        self.id = "prepare-step"
        self._prepare_step = prepare_step

    def process_input_step(self, args: ProcessInputStepArgs) -> Any:
        return self._prepare_step(args)


@dataclass(frozen=True)
class Lanes:
    """The processors of a run, lane by lane, in the order they run."""

    input: list[Any]
    output: list[Any]
    error: list[Any]
    #: Their hook tables, when these lanes are an agent's, reused run after run.
    hooks: HookTables | None = None


@dataclass(frozen=True, slots=True)
class _Resolved:
    """Lanes resolved from an agent's processor lists, and what they were resolved from."""

    enabled: bool
    #: The lists' entries as they were (input, output, error; or the error list
    #: alone): a list changed, even in place, no longer holds these same objects.
    held: tuple[tuple[Any, ...], ...]
    lanes: Lanes
    #: The agent's stamp as its lists were read (AgentDefinition.stamp), and
    #: whether they were all tuples: with the same stamp the agent holds the
    #: same lists, and tuples have nothing to compare (nothing changes them in place).
    stamp: int = 0
    frozen: bool = False
    #: `held`'s entries in one tuple (input, output, error): one identity check for the three lists.
    entries: tuple[Any, ...] = ()

    def resolved_from(self, enabled: bool, *lists: Sequence[Any]) -> bool:
        """Whether `lists` (and the flag) are what these lanes were resolved from:
        the same objects, by identity (an entry's __eq__ is never asked)."""
        if enabled != self.enabled:
            return False
        return all(map(holds_same, lists, self.held))  # (as many: the same lanes)


def _error_lane(agent: AgentDefinition, errors: Sequence[Any], enabled: bool) -> list[Any]:
    """The agent's static error list merged with the defaults, built once per list and flag."""
    cached = agent.lane_cache.get("error")
    if cached is None or not cached.resolved_from(enabled, errors):
        lanes = Lanes([], [], resolve_error_processors(list(errors), defaults_enabled=enabled))
        cached = agent.lane_cache["error"] = _Resolved(enabled, (tuple(errors),), lanes)
    return list(cached.lanes.error)


def _static(configured: Any) -> Sequence[Any] | None:
    """A lane's configured list, None when it is a function of the request context."""
    return None if is_dynamic(configured) else cast(Sequence[Any], configured)


def _agent_lanes(
    agent: AgentDefinition, inputs: Sequence[Any], outputs: Sequence[Any], errors: Sequence[Any], enabled: bool
) -> Lanes:
    """The lanes of a run that takes the agent's static lists as they are
    (no memory, no per-call lists or prepare_step): one Lanes, and its hook
    tables, per agent while its lists stay the same."""
    cached = agent.lane_cache.get("all")
    if cached is None or not cached.resolved_from(enabled, inputs, outputs, errors):
        merged = _error_lane(agent, errors, enabled)
        hooks = HookTables.of(inputs, outputs, merged)
        lanes = Lanes(list(inputs), list(outputs), merged, hooks)
    else:
        lanes = cached.lanes  # the same entries, read under another stamp (an override's copy, or a write)
    held = (tuple(inputs), tuple(outputs), tuple(errors))
    frozen = type(inputs) is tuple and type(outputs) is tuple and type(errors) is tuple
    agent.lane_cache["all"] = _Resolved(enabled, held, lanes, agent.stamp, frozen, held[0] + held[1] + held[2])
    return lanes


def reused_lanes(agent: AgentDefinition, options: ExecutionOptions) -> Lanes | None:
    """The agent's own lanes, kept from run to run, when a run takes its static
    lists as they are (no memory, no per-call lists or prepare_step); None
    when the run needs lanes of its own (resolve_lanes). No coroutine: most runs are these."""
    if (
        options.input_processors is not None
        or options.output_processors is not None
        or options.error_processors is not None
        or options.prepare_step is not None
    ):
        return None
    enabled = options.error_processor_defaults
    if enabled is None:
        enabled = agent.error_processor_defaults
    cached: _Resolved | None = agent.lane_cache.get("all")
    if cached is not None and cached.stamp == agent.stamp and cached.enabled == enabled:
        # No field written since: no memory, the same static lists; as tuples, unchanged.
        if cached.frozen:
            return cached.lanes
        held_in, held_out, _ = cached.held
        ins: Any = agent.input_processors  # (lists: the stamp says so; Any, not a cast's call)
        outs: Any = agent.output_processors
        errs: Any = agent.error_processors
        # Each list as long as it was, and all their entries the same objects: one check, not three.
        if len(ins) == len(held_in) and len(outs) == len(held_out) and holds_same((*ins, *outs, *errs), cached.entries):
            return cached.lanes
    if agent.memory is not None:
        return None
    inputs, outputs, errors = agent.input_processors, agent.output_processors, agent.error_processors
    if is_dynamic(inputs) or is_dynamic(outputs) or is_dynamic(errors):
        return None
    static = cast(tuple[Sequence[Any], Sequence[Any], Sequence[Any]], (inputs, outputs, errors))
    return _agent_lanes(agent, *static, enabled)


async def resolve_lanes(agent: AgentDefinition, options: ExecutionOptions, context: dict[str, Any]) -> Lanes:
    """The lanes of one run of `agent` with the merged call `options` (the
    lists are the caller's to read, not to change: they may be the agent's)."""
    reused = reused_lanes(agent, options)
    if reused is not None:
        return reused
    enabled = options.error_processor_defaults
    if enabled is None:
        enabled = agent.error_processor_defaults
    static_errors = _static(agent.error_processors)

    async def lane(override: tuple[Any, ...] | None, configured: Any) -> list[Any]:
        return list(override) if override is not None else list(await resolve_dynamic(configured, context))

    # Framework processors (memory) run around the configured ones, even when
    # a call replaces them: memory loads first and saves last, so an output
    # guardrail's abort leaves nothing saved.
    framework = FrameworkProcessors()
    if agent.memory is not None:
        framework = await maybe_await(agent.memory.processors(context))
    inputs = [*framework.input, *await lane(options.input_processors, agent.input_processors)]
    if options.prepare_step is not None:
        inputs.append(PrepareStepProcessor(options.prepare_step))
    outputs = [*await lane(options.output_processors, agent.output_processors), *framework.output]
    if options.error_processors is not None:
        errors = list(options.error_processors)  # replaces the resolved list, defaults included
    elif static_errors is None:
        errors = resolve_error_processors(
            list(await resolve_dynamic(agent.error_processors, context)), defaults_enabled=enabled
        )
    else:
        errors = _error_lane(agent, static_errors, enabled)
    errors.extend(framework.error)  # memory's error processors run after the list, always
    return Lanes(inputs, outputs, errors)
