from agentd_proto.v1 import agent_overrides_pb2 as _agent_overrides_pb2
from agentd_proto.v1 import chunk_pb2 as _chunk_pb2
from agentd_proto.v1 import message_pb2 as _message_pb2
from agentd_proto.v1 import options_pb2 as _options_pb2
from agentd_proto.v1 import score_pb2 as _score_pb2
from agentd_proto.v1 import usage_pb2 as _usage_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListAgentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token", "metadata_filter")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FILTER_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    metadata_filter: _struct_pb2.Struct
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., metadata_filter: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents", "next_page_token")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[Agent]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[Agent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetAgentResponse(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class Agent(_message.Message):
    __slots__ = ("id", "name", "description", "metadata", "model", "input_processor_ids", "output_processor_ids", "error_processor_ids", "tools", "sub_agent_ids", "memory_enabled", "instructions", "overridden_fields", "overrides_version")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    INPUT_PROCESSOR_IDS_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_PROCESSOR_IDS_FIELD_NUMBER: _ClassVar[int]
    ERROR_PROCESSOR_IDS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    SUB_AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ENABLED_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    OVERRIDDEN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    OVERRIDES_VERSION_FIELD_NUMBER: _ClassVar[int]
    id: str
    name: str
    description: str
    metadata: _struct_pb2.Struct
    model: str
    input_processor_ids: _containers.RepeatedScalarFieldContainer[str]
    output_processor_ids: _containers.RepeatedScalarFieldContainer[str]
    error_processor_ids: _containers.RepeatedScalarFieldContainer[str]
    tools: _containers.RepeatedCompositeFieldContainer[ToolInfo]
    sub_agent_ids: _containers.RepeatedScalarFieldContainer[str]
    memory_enabled: bool
    instructions: str
    overridden_fields: _containers.RepeatedScalarFieldContainer[str]
    overrides_version: int
    def __init__(self, id: _Optional[str] = ..., name: _Optional[str] = ..., description: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[str] = ..., input_processor_ids: _Optional[_Iterable[str]] = ..., output_processor_ids: _Optional[_Iterable[str]] = ..., error_processor_ids: _Optional[_Iterable[str]] = ..., tools: _Optional[_Iterable[_Union[ToolInfo, _Mapping]]] = ..., sub_agent_ids: _Optional[_Iterable[str]] = ..., memory_enabled: _Optional[bool] = ..., instructions: _Optional[str] = ..., overridden_fields: _Optional[_Iterable[str]] = ..., overrides_version: _Optional[int] = ...) -> None: ...

class ToolInfo(_message.Message):
    __slots__ = ("name", "description", "input_schema", "source")
    NAME_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    INPUT_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    name: str
    description: str
    input_schema: _struct_pb2.Struct
    source: str
    def __init__(self, name: _Optional[str] = ..., description: _Optional[str] = ..., input_schema: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., source: _Optional[str] = ...) -> None: ...

class GenerateRequest(_message.Message):
    __slots__ = ("agent_id", "messages", "text", "options")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    text: str
    options: _options_pb2.ExecutionOptions
    def __init__(self, agent_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., text: _Optional[str] = ..., options: _Optional[_Union[_options_pb2.ExecutionOptions, _Mapping]] = ...) -> None: ...

class StepResult(_message.Message):
    __slots__ = ("step_number", "text", "reasoning_text", "finish_reason", "usage", "tool_calls", "tool_results", "model", "tripwire", "warnings")
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASONING_TEXT_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULTS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    step_number: int
    text: str
    reasoning_text: str
    finish_reason: _usage_pb2.FinishReason
    usage: _usage_pb2.Usage
    tool_calls: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolCall]
    tool_results: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolResult]
    model: str
    tripwire: _chunk_pb2.Tripwire
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, step_number: _Optional[int] = ..., text: _Optional[str] = ..., reasoning_text: _Optional[str] = ..., finish_reason: _Optional[_Union[_usage_pb2.FinishReason, str]] = ..., usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., tool_calls: _Optional[_Iterable[_Union[_message_pb2.ToolCall, _Mapping]]] = ..., tool_results: _Optional[_Iterable[_Union[_message_pb2.ToolResult, _Mapping]]] = ..., model: _Optional[str] = ..., tripwire: _Optional[_Union[_chunk_pb2.Tripwire, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class GenerateResponse(_message.Message):
    __slots__ = ("run_id", "text", "reasoning_text", "finish_reason", "raw_finish_reason", "usage", "total_usage", "steps", "tool_calls", "tool_results", "response_messages", "object", "tripwire", "model", "warnings", "thread_id", "resource_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    REASONING_TEXT_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    RAW_FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_USAGE_FIELD_NUMBER: _ClassVar[int]
    STEPS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULTS_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    text: str
    reasoning_text: str
    finish_reason: _usage_pb2.FinishReason
    raw_finish_reason: str
    usage: _usage_pb2.Usage
    total_usage: _usage_pb2.Usage
    steps: _containers.RepeatedCompositeFieldContainer[StepResult]
    tool_calls: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolCall]
    tool_results: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolResult]
    response_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    object: _struct_pb2.Value
    tripwire: _chunk_pb2.Tripwire
    model: str
    warnings: _containers.RepeatedScalarFieldContainer[str]
    thread_id: str
    resource_id: str
    def __init__(self, run_id: _Optional[str] = ..., text: _Optional[str] = ..., reasoning_text: _Optional[str] = ..., finish_reason: _Optional[_Union[_usage_pb2.FinishReason, str]] = ..., raw_finish_reason: _Optional[str] = ..., usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., total_usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., steps: _Optional[_Iterable[_Union[StepResult, _Mapping]]] = ..., tool_calls: _Optional[_Iterable[_Union[_message_pb2.ToolCall, _Mapping]]] = ..., tool_results: _Optional[_Iterable[_Union[_message_pb2.ToolResult, _Mapping]]] = ..., response_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., object: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., tripwire: _Optional[_Union[_chunk_pb2.Tripwire, _Mapping]] = ..., model: _Optional[str] = ..., warnings: _Optional[_Iterable[str]] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ...) -> None: ...

class StreamRequest(_message.Message):
    __slots__ = ("agent_id", "messages", "text", "options", "keep_running")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    KEEP_RUNNING_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    text: str
    options: _options_pb2.ExecutionOptions
    keep_running: bool
    def __init__(self, agent_id: _Optional[str] = ..., messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., text: _Optional[str] = ..., options: _Optional[_Union[_options_pb2.ExecutionOptions, _Mapping]] = ..., keep_running: _Optional[bool] = ...) -> None: ...

class StreamResponse(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...
