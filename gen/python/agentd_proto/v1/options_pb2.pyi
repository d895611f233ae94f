from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScoringMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_MODE_UNSPECIFIED: _ClassVar[ScoringMode]
    SCORING_MODE_OFF: _ClassVar[ScoringMode]
    SCORING_MODE_FORCE: _ClassVar[ScoringMode]

class ToolChoiceMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOOL_CHOICE_MODE_UNSPECIFIED: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_AUTO: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_NONE: _ClassVar[ToolChoiceMode]
    TOOL_CHOICE_MODE_REQUIRED: _ClassVar[ToolChoiceMode]

class StructuredOutputErrorStrategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRUCTURED_OUTPUT_ERROR_STRATEGY_UNSPECIFIED: _ClassVar[StructuredOutputErrorStrategy]
    STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT: _ClassVar[StructuredOutputErrorStrategy]
    STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN: _ClassVar[StructuredOutputErrorStrategy]
    STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK: _ClassVar[StructuredOutputErrorStrategy]
SCORING_MODE_UNSPECIFIED: ScoringMode
SCORING_MODE_OFF: ScoringMode
SCORING_MODE_FORCE: ScoringMode
TOOL_CHOICE_MODE_UNSPECIFIED: ToolChoiceMode
TOOL_CHOICE_MODE_AUTO: ToolChoiceMode
TOOL_CHOICE_MODE_NONE: ToolChoiceMode
TOOL_CHOICE_MODE_REQUIRED: ToolChoiceMode
STRUCTURED_OUTPUT_ERROR_STRATEGY_UNSPECIFIED: StructuredOutputErrorStrategy
STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT: StructuredOutputErrorStrategy
STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN: StructuredOutputErrorStrategy
STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK: StructuredOutputErrorStrategy

class ExecutionOptions(_message.Message):
    __slots__ = ("max_steps", "tool_choice", "active_tools", "model_settings", "provider_options", "structured_output", "client_tools", "request_context", "memory", "response_cache", "input_processors", "output_processors", "error_processors", "max_processor_retries", "error_processor_defaults", "prepare_step", "persist_partial_on_abort", "scorers")
    MAX_STEPS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    STRUCTURED_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    CLIENT_TOOLS_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    MEMORY_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_CACHE_FIELD_NUMBER: _ClassVar[int]
    INPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    MAX_PROCESSOR_RETRIES_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSOR_DEFAULTS_FIELD_NUMBER: _ClassVar[int]
    PREPARE_STEP_FIELD_NUMBER: _ClassVar[int]
    PERSIST_PARTIAL_ON_ABORT_FIELD_NUMBER: _ClassVar[int]
    SCORERS_FIELD_NUMBER: _ClassVar[int]
    max_steps: int
    tool_choice: ToolChoice
    active_tools: ToolNames
    model_settings: ModelSettings
    provider_options: _struct_pb2.Struct
    structured_output: StructuredOutput
    client_tools: _containers.RepeatedCompositeFieldContainer[ClientTool]
    request_context: _struct_pb2.Struct
    memory: MemoryOptions
    response_cache: ResponseCacheOptions
    input_processors: ProcessorList
    output_processors: ProcessorList
    error_processors: ProcessorList
    max_processor_retries: int
    error_processor_defaults: bool
    prepare_step: str
    persist_partial_on_abort: bool
    scorers: ScorerOptions
    def __init__(self, max_steps: _Optional[int] = ..., tool_choice: _Optional[_Union[ToolChoice, _Mapping]] = ..., active_tools: _Optional[_Union[ToolNames, _Mapping]] = ..., model_settings: _Optional[_Union[ModelSettings, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., structured_output: _Optional[_Union[StructuredOutput, _Mapping]] = ..., client_tools: _Optional[_Iterable[_Union[ClientTool, _Mapping]]] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., memory: _Optional[_Union[MemoryOptions, _Mapping]] = ..., response_cache: _Optional[_Union[ResponseCacheOptions, _Mapping]] = ..., input_processors: _Optional[_Union[ProcessorList, _Mapping]] = ..., output_processors: _Optional[_Union[ProcessorList, _Mapping]] = ..., error_processors: _Optional[_Union[ProcessorList, _Mapping]] = ..., max_processor_retries: _Optional[int] = ..., error_processor_defaults: _Optional[bool] = ..., prepare_step: _Optional[str] = ..., persist_partial_on_abort: _Optional[bool] = ..., scorers: _Optional[_Union[ScorerOptions, _Mapping]] = ...) -> None: ...

class ScorerOptions(_message.Message):
    __slots__ = ("mode",)
    MODE_FIELD_NUMBER: _ClassVar[int]
    mode: ScoringMode
    def __init__(self, mode: _Optional[_Union[ScoringMode, str]] = ...) -> None: ...

class ToolChoice(_message.Message):
    __slots__ = ("mode", "tool_name")
    MODE_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    mode: ToolChoiceMode
    tool_name: str
    def __init__(self, mode: _Optional[_Union[ToolChoiceMode, str]] = ..., tool_name: _Optional[str] = ...) -> None: ...

class ToolNames(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class ModelSettings(_message.Message):
    __slots__ = ("temperature", "top_p", "top_k", "max_output_tokens", "presence_penalty", "frequency_penalty", "stop_sequences", "seed")
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    TOP_P_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    PRESENCE_PENALTY_FIELD_NUMBER: _ClassVar[int]
    FREQUENCY_PENALTY_FIELD_NUMBER: _ClassVar[int]
    STOP_SEQUENCES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    temperature: float
    top_p: float
    top_k: int
    max_output_tokens: int
    presence_penalty: float
    frequency_penalty: float
    stop_sequences: _containers.RepeatedScalarFieldContainer[str]
    seed: int
    def __init__(self, temperature: _Optional[float] = ..., top_p: _Optional[float] = ..., top_k: _Optional[int] = ..., max_output_tokens: _Optional[int] = ..., presence_penalty: _Optional[float] = ..., frequency_penalty: _Optional[float] = ..., stop_sequences: _Optional[_Iterable[str]] = ..., seed: _Optional[int] = ...) -> None: ...

class StructuredOutput(_message.Message):
    __slots__ = ("schema", "name", "description", "error_strategy", "fallback_value", "model", "instructions")
    SCHEMA_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_STRATEGY_FIELD_NUMBER: _ClassVar[int]
    FALLBACK_VALUE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    schema: _struct_pb2.Struct
    name: str
    description: str
    error_strategy: StructuredOutputErrorStrategy
    fallback_value: _struct_pb2.Value
    model: str
    instructions: str
    def __init__(self, schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., error_strategy: _Optional[_Union[StructuredOutputErrorStrategy, str]] = ..., fallback_value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., model: _Optional[str] = ..., instructions: _Optional[str] = ...) -> None: ...

class ClientTool(_message.Message):
    __slots__ = ("name", "description", "input_schema")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class MemoryOptions(_message.Message):
    __slots__ = ("resource", "thread_id", "thread_object")
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_OBJECT_FIELD_NUMBER: _ClassVar[int]
    resource: str
    thread_id: str
    thread_object: ThreadInput
    def __init__(self, resource: _Optional[str] = ..., thread_id: _Optional[str] = ..., thread_object: _Optional[_Union[ThreadInput, _Mapping]] = ...) -> None: ...

class ThreadInput(_message.Message):
    __slots__ = ("id", "title", "metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    title: str
    metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., title: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ResponseCacheOptions(_message.Message):
    __slots__ = ("key", "scope", "no_scope", "bust")
    KEY_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    NO_SCOPE_FIELD_NUMBER: _ClassVar[int]
    BUST_FIELD_NUMBER: _ClassVar[int]
    key: str
    scope: str
    no_scope: _empty_pb2.Empty
    bust: bool
    def __init__(self, key: _Optional[str] = ..., scope: _Optional[str] = ..., no_scope: _Optional[_Union[_empty_pb2.Empty, _Mapping]] = ..., bust: _Optional[bool] = ...) -> None: ...

class ProcessorList(_message.Message):
    __slots__ = ("processors",)
    PROCESSORS_FIELD_NUMBER: _ClassVar[int]
    processors: _containers.RepeatedCompositeFieldContainer[ProcessorRef]
    def __init__(self, processors: _Optional[_Iterable[_Union[ProcessorRef, _Mapping]]] = ...) -> None: ...

class ProcessorRef(_message.Message):
    __slots__ = ("processor", "workflow")
    PROCESSOR_FIELD_NUMBER: _ClassVar[int]
    WORKFLOW_FIELD_NUMBER: _ClassVar[int]
    processor: ProcessorSpec
    workflow: ProcessorWorkflow
    def __init__(self, processor: _Optional[_Union[ProcessorSpec, _Mapping]] = ..., workflow: _Optional[_Union[ProcessorWorkflow, _Mapping]] = ...) -> None: ...

class ProcessorSpec(_message.Message):
    __slots__ = ("name", "id", "options")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    name: str
    id: str
    options: _struct_pb2.Struct
    def __init__(self, name: _Optional[str] = ..., id: _Optional[str] = ..., options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ProcessorWorkflow(_message.Message):
    __slots__ = ("id", "steps")
    ID_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    id: str
    steps: _containers.RepeatedCompositeFieldContainer[WorkflowStep]
    def __init__(self, id: _Optional[str] = ..., steps: _Optional[_Iterable[_Union[WorkflowStep, _Mapping]]] = ...) -> None: ...

class WorkflowStep(_message.Message):
    __slots__ = ("processor", "parallel", "map")
    PROCESSOR_FIELD_NUMBER: _ClassVar[int]
    PARALLEL_FIELD_NUMBER: _ClassVar[int]
    MAP_FIELD_NUMBER: _ClassVar[int]
    processor: ProcessorSpec
    parallel: ParallelStep
    map: MapStep
    def __init__(self, processor: _Optional[_Union[ProcessorSpec, _Mapping]] = ..., parallel: _Optional[_Union[ParallelStep, _Mapping]] = ..., map: _Optional[_Union[MapStep, _Mapping]] = ...) -> None: ...

class ParallelStep(_message.Message):
    __slots__ = ("branches",)
    BRANCHES_FIELD_NUMBER: _ClassVar[int]
    branches: _containers.RepeatedCompositeFieldContainer[ProcessorSpec]
    def __init__(self, branches: _Optional[_Iterable[_Union[ProcessorSpec, _Mapping]]] = ...) -> None: ...

class MapStep(_message.Message):
    __slots__ = ("select",)
    SELECT_FIELD_NUMBER: _ClassVar[int]
    select: str
    def __init__(self, select: _Optional[str] = ...) -> None: ...
