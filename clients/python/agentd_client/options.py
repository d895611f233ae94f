"""Keyword arguments mapped onto `agentd.v1.ExecutionOptions` and friends.

Every run-starting call (`generate`, `stream`, a signal's `stream_options`,
`connect`) takes the same keyword options:

=========================  ===================================================
keyword                    maps to
=========================  ===================================================
``max_steps``              ``max_steps``
``tool_choice``            ``"auto" | "none" | "required"`` or a tool name
``active_tools``           a list of tool names (``[]``: none)
``model_settings``         a dict of ``ModelSettings`` fields; the fields are
                           also keywords: ``temperature``, ``top_p``,
                           ``top_k``, ``max_output_tokens``,
                           ``presence_penalty``, ``frequency_penalty``,
                           ``stop_sequences``, ``seed``
``provider_options``       a dict, e.g. ``{"openai": {"reasoningEffort": "low"}}``
``structured_output``      a JSON Schema dict (or ``{"schema", "name", "description",
                           "error_strategy", "fallback_value", "model", "instructions"}``;
                           ``error_strategy`` is ``"strict" | "warn" | "fallback"``)
``client_tools``           names, ``{"name", "description", "input_schema"}`` dicts
                           or ``ClientTool`` messages
``request_context``        a dict (keys starting with ``agentd.`` are reserved)
``memory``                 ``(resource, thread)``; ``thread`` is an id or a
                           ``{"id", "title", "metadata"}`` dict
``response_cache``         ``ResponseCache(key=, scope=, no_scope=, bust=)`` or a dict
``input_processors``,      lists of processor names, ``{"name", "id",
``output_processors``,     "options"}`` dicts or ``ProcessorRef`` messages
``error_processors``       (``None``: the agent's list; ``[]``: none)
``max_processor_retries``  ``max_processor_retries``
``error_processor_defaults`` ``error_processor_defaults``
``prepare_step``           ``prepare_step``
``persist_partial_on_abort`` ``persist_partial_on_abort``
``scorers``                ``"off"`` (no live scorer scores the run) or
                           ``"force"`` (every one does, whatever its rate)
``options``                an ``ExecutionOptions`` message the keywords are
                           merged onto
=========================  ===================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import empty_pb2

from agentd_proto.v1 import options_pb2

from ._values import to_struct, to_value

_MODEL_SETTINGS = (
    "temperature",
    "top_p",
    "top_k",
    "max_output_tokens",
    "presence_penalty",
    "frequency_penalty",
    "stop_sequences",
    "seed",
)
_TOOL_CHOICE_MODES = {
    "auto": options_pb2.TOOL_CHOICE_MODE_AUTO,
    "none": options_pb2.TOOL_CHOICE_MODE_NONE,
    "required": options_pb2.TOOL_CHOICE_MODE_REQUIRED,
}
OPTION_KEYWORDS = frozenset(
    {
        "options",
        "max_steps",
        "tool_choice",
        "active_tools",
        "model_settings",
        "provider_options",
        "structured_output",
        "client_tools",
        "request_context",
        "memory",
        "response_cache",
        "input_processors",
        "output_processors",
        "error_processors",
        "max_processor_retries",
        "error_processor_defaults",
        "prepare_step",
        "persist_partial_on_abort",
        "scorers",
        *_MODEL_SETTINGS,
    }
)


@dataclass(frozen=True)
class ResponseCache:
    """Per-call response-cache overrides.

    `key`: a fixed key used verbatim; `scope`: the tenant scope of this call;
    `no_scope`: explicitly unscoped (shared by all callers); `bust`: skip the
    read and write the fresh result.
    """

    key: str | None = None
    scope: str | None = None
    no_scope: bool = False
    bust: bool = False

    def to_pb(self) -> options_pb2.ResponseCacheOptions:
        if self.scope is not None and self.no_scope:
            raise ValueError("response_cache: set scope or no_scope, not both")
        pb = options_pb2.ResponseCacheOptions(bust=self.bust)
        if self.key is not None:
            pb.key = self.key
        if self.scope is not None:
            pb.scope = self.scope
        elif self.no_scope:
            pb.no_scope.CopyFrom(empty_pb2.Empty())
        return pb


def execution_options(**kwargs: Any) -> options_pb2.ExecutionOptions:
    """Build `ExecutionOptions` from the option keywords (see the module doc).

    Raises TypeError on an unknown keyword.
    """
    unknown = set(kwargs) - OPTION_KEYWORDS
    if unknown:
        raise TypeError(f"unknown option keyword(s): {', '.join(sorted(unknown))}")
    base = kwargs.pop("options", None)
    pb = options_pb2.ExecutionOptions()
    if base is not None:
        if not isinstance(base, options_pb2.ExecutionOptions):
            raise TypeError("options= takes an agentd.v1.ExecutionOptions message")
        pb.CopyFrom(base)
    settings = kwargs.pop("model_settings", None)
    direct = {name: kwargs.pop(name) for name in _MODEL_SETTINGS if kwargs.get(name) is not None}
    for name in _MODEL_SETTINGS:
        kwargs.pop(name, None)
    if settings is None and direct and pb.HasField("model_settings"):
        settings = pb.model_settings  # keywords refine the base message's settings
    if settings is not None or direct:
        pb.model_settings.CopyFrom(model_settings(settings, **direct))
    for name, value in kwargs.items():
        if value is None:
            continue
        if name == "max_steps":
            pb.max_steps = int(value)
        elif name == "tool_choice":
            pb.tool_choice.CopyFrom(tool_choice(value))
        elif name == "active_tools":
            pb.active_tools.CopyFrom(options_pb2.ToolNames(names=list(_names(value, "active_tools"))))
        elif name == "provider_options":
            pb.provider_options.CopyFrom(to_struct(value))
        elif name == "structured_output":
            pb.structured_output.CopyFrom(structured_output(value))
        elif name == "client_tools":
            del pb.client_tools[:]
            pb.client_tools.extend(client_tool(t) for t in value)
        elif name == "request_context":
            pb.request_context.CopyFrom(to_struct(value))
        elif name == "memory":
            pb.memory.CopyFrom(memory(value))
        elif name == "response_cache":
            pb.response_cache.CopyFrom(response_cache(value))
        elif name in ("input_processors", "output_processors", "error_processors"):
            getattr(pb, name).CopyFrom(processor_list(value))
        elif name == "max_processor_retries":
            pb.max_processor_retries = int(value)
        elif name == "error_processor_defaults":
            pb.error_processor_defaults = bool(value)
        elif name == "prepare_step":
            pb.prepare_step = str(value)
        elif name == "persist_partial_on_abort":
            pb.persist_partial_on_abort = bool(value)
        elif name == "scorers":
            if value not in _SCORING_MODES:
                raise ValueError(f"scorers must be 'off' or 'force' (got {value!r})")
            pb.scorers.mode = _SCORING_MODES[value]
    return pb


_SCORING_MODES = {"off": options_pb2.SCORING_MODE_OFF, "force": options_pb2.SCORING_MODE_FORCE}


def split_options(kwargs: dict[str, Any]) -> dict[str, Any]:
    """Pop the option keywords out of `kwargs` (in place) and return them."""
    return {name: kwargs.pop(name) for name in list(kwargs) if name in OPTION_KEYWORDS}


def model_settings(settings: Any = None, **fields: Any) -> options_pb2.ModelSettings:
    if isinstance(settings, options_pb2.ModelSettings):
        pb = options_pb2.ModelSettings()
        pb.CopyFrom(settings)
    else:
        pb = options_pb2.ModelSettings()
        fields = {**dict(settings or {}), **fields}
    for name, value in fields.items():
        if name not in _MODEL_SETTINGS:
            raise TypeError(f"unknown model setting {name!r}")
        if value is None:
            continue
        if name == "stop_sequences":
            del pb.stop_sequences[:]
            pb.stop_sequences.extend(_names(value, "stop_sequences"))
        else:
            setattr(pb, name, value)
    return pb


def tool_choice(value: Any) -> options_pb2.ToolChoice:
    if isinstance(value, options_pb2.ToolChoice):
        return value
    if isinstance(value, Mapping) and set(value) == {"tool"}:
        return options_pb2.ToolChoice(tool_name=str(value["tool"]))
    if not isinstance(value, str) or not value:
        raise TypeError('tool_choice is "auto", "none", "required", a tool name or {"tool": name}')
    mode = _TOOL_CHOICE_MODES.get(value.lower())
    return options_pb2.ToolChoice(mode=mode) if mode is not None else options_pb2.ToolChoice(tool_name=value)


_STRUCTURED_KEYS = {"schema", "name", "description", "error_strategy", "fallback_value", "model", "instructions"}
_ERROR_STRATEGIES = {
    "strict": options_pb2.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT,
    "warn": options_pb2.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN,
    "fallback": options_pb2.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK,
}


def structured_output(value: Any) -> options_pb2.StructuredOutput:
    if isinstance(value, options_pb2.StructuredOutput):
        return value
    if not isinstance(value, Mapping):
        raise TypeError(
            "structured_output is a JSON Schema dict or {'schema': ..., 'name', 'description', "
            "'error_strategy', 'fallback_value', 'model', 'instructions'}"
        )
    if isinstance(value.get("schema"), Mapping) and set(value) <= _STRUCTURED_KEYS:
        strategy = value.get("error_strategy", "strict")
        if strategy not in _ERROR_STRATEGIES:
            raise TypeError('structured_output error_strategy is "strict", "warn" or "fallback"')
        pb = options_pb2.StructuredOutput(
            schema=to_struct(value["schema"]),
            name=str(value.get("name", "")),
            description=str(value.get("description", "")),
            error_strategy=_ERROR_STRATEGIES[strategy],
            model=str(value.get("model", "")),
            instructions=str(value.get("instructions", "")),
        )
        if "fallback_value" in value:
            pb.fallback_value.CopyFrom(to_value(value["fallback_value"]))
        return pb
    return options_pb2.StructuredOutput(schema=to_struct(value))


def client_tool(value: Any) -> options_pb2.ClientTool:
    if isinstance(value, options_pb2.ClientTool):
        return value
    if isinstance(value, str):
        return options_pb2.ClientTool(name=value)
    if isinstance(value, Mapping):
        pb = options_pb2.ClientTool(name=str(value["name"]), description=str(value.get("description", "")))
        schema = value.get("input_schema")
        if schema is not None:
            pb.input_schema.CopyFrom(to_struct(schema))
        return pb
    raise TypeError(f"a client tool is a name, a dict or a ClientTool, not {value!r}")


def memory(value: Any) -> options_pb2.MemoryOptions:
    if isinstance(value, options_pb2.MemoryOptions):
        return value
    if isinstance(value, Mapping):
        resource, thread = value.get("resource", ""), value.get("thread", value.get("thread_id"))
    elif isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        resource, thread = value
    else:
        raise TypeError("memory is (resource, thread), where thread is an id or {'id', 'title', 'metadata'}")
    pb = options_pb2.MemoryOptions(resource=str(resource))
    if isinstance(thread, str):
        pb.thread_id = thread
    elif isinstance(thread, options_pb2.ThreadInput):
        pb.thread_object.CopyFrom(thread)
    elif isinstance(thread, Mapping):
        obj = options_pb2.ThreadInput(id=str(thread.get("id", "")), title=str(thread.get("title", "")))
        if thread.get("metadata") is not None:
            obj.metadata.CopyFrom(to_struct(thread["metadata"]))
        pb.thread_object.CopyFrom(obj)
    elif thread is not None:
        raise TypeError(f"memory thread is an id or a dict, not {thread!r}")
    return pb


def response_cache(value: Any) -> options_pb2.ResponseCacheOptions:
    if isinstance(value, options_pb2.ResponseCacheOptions):
        return value
    if isinstance(value, ResponseCache):
        return value.to_pb()
    if isinstance(value, Mapping):
        return ResponseCache(**value).to_pb()
    raise TypeError("response_cache is a ResponseCache, a dict of its fields or a ResponseCacheOptions")


def processor_list(value: Iterable[Any] | options_pb2.ProcessorList) -> options_pb2.ProcessorList:
    if isinstance(value, options_pb2.ProcessorList):
        return value
    return options_pb2.ProcessorList(processors=[processor_ref(item) for item in value])


def processor_ref(value: Any) -> options_pb2.ProcessorRef:
    if isinstance(value, options_pb2.ProcessorRef):
        return value
    if isinstance(value, options_pb2.ProcessorWorkflow):
        return options_pb2.ProcessorRef(workflow=value)
    return options_pb2.ProcessorRef(processor=processor_spec(value))


def processor_spec(value: Any) -> options_pb2.ProcessorSpec:
    if isinstance(value, options_pb2.ProcessorSpec):
        return value
    if isinstance(value, str):
        return options_pb2.ProcessorSpec(name=value)
    if isinstance(value, Mapping):
        pb = options_pb2.ProcessorSpec(name=str(value["name"]), id=str(value.get("id", "")))
        if value.get("options") is not None:
            pb.options.CopyFrom(to_struct(value["options"]))
        return pb
    raise TypeError(f"a processor is a name, a dict or a ProcessorSpec, not {value!r}")


def _names(value: Any, what: str) -> Iterable[str]:
    if isinstance(value, str):
        raise TypeError(f"{what} is a list of strings, not a string")
    return [str(v) for v in value]
