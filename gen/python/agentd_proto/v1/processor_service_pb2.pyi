from agentd_proto.v1 import chunk_pb2 as _chunk_pb2
from agentd_proto.v1 import message_pb2 as _message_pb2
from agentd_proto.v1 import options_pb2 as _options_pb2
from agentd_proto.v1 import signal_pb2 as _signal_pb2
from agentd_proto.v1 import usage_pb2 as _usage_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Hook(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOOK_UNSPECIFIED: _ClassVar[Hook]
    HOOK_PROCESS_INPUT: _ClassVar[Hook]
    HOOK_PROCESS_INPUT_STEP: _ClassVar[Hook]
    HOOK_PROCESS_LLM_REQUEST: _ClassVar[Hook]
    HOOK_PROCESS_LLM_RESPONSE: _ClassVar[Hook]
    HOOK_PROCESS_OUTPUT_STREAM: _ClassVar[Hook]
    HOOK_PROCESS_OUTPUT_STEP: _ClassVar[Hook]
    HOOK_PROCESS_OUTPUT_RESULT: _ClassVar[Hook]
    HOOK_PROCESS_TOOL_RESULT: _ClassVar[Hook]
    HOOK_PROCESS_API_ERROR: _ClassVar[Hook]
HOOK_UNSPECIFIED: Hook
HOOK_PROCESS_INPUT: Hook
HOOK_PROCESS_INPUT_STEP: Hook
HOOK_PROCESS_LLM_REQUEST: Hook
HOOK_PROCESS_LLM_RESPONSE: Hook
HOOK_PROCESS_OUTPUT_STREAM: Hook
HOOK_PROCESS_OUTPUT_STEP: Hook
HOOK_PROCESS_OUTPUT_RESULT: Hook
HOOK_PROCESS_TOOL_RESULT: Hook
HOOK_PROCESS_API_ERROR: Hook

class ProcessRequest(_message.Message):
    __slots__ = ("open", "call")
    OPEN_FIELD_NUMBER: _ClassVar[int]
    CALL_FIELD_NUMBER: _ClassVar[int]
    open: ProcessOpen
    call: HookCall
    def __init__(self, open: _Optional[_Union[ProcessOpen, _Mapping]] = ..., call: _Optional[_Union[HookCall, _Mapping]] = ...) -> None: ...

class ProcessResponse(_message.Message):
    __slots__ = ("hello", "answer")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    hello: ProcessorHello
    answer: HookAnswer
    def __init__(self, hello: _Optional[_Union[ProcessorHello, _Mapping]] = ..., answer: _Optional[_Union[HookAnswer, _Mapping]] = ...) -> None: ...

class ProcessOpen(_message.Message):
    __slots__ = ("run_id", "agent_id", "processor_id", "thread_id", "resource_id", "request_context", "config")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    REQUEST_CONTEXT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    agent_id: str
    processor_id: str
    thread_id: str
    resource_id: str
    request_context: _struct_pb2.Struct
    config: _struct_pb2.Struct
    def __init__(self, run_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., processor_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., request_context: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., config: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ProcessorHello(_message.Message):
    __slots__ = ("hooks", "process_data_parts", "name")
    HOOKS_FIELD_NUMBER: _ClassVar[int]
    PROCESS_DATA_PARTS_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    hooks: _containers.RepeatedScalarFieldContainer[Hook]
    process_data_parts: bool
    name: str
    def __init__(self, hooks: _Optional[_Iterable[_Union[Hook, str]]] = ..., process_data_parts: _Optional[bool] = ..., name: _Optional[str] = ...) -> None: ...

class HookCall(_message.Message):
    __slots__ = ("call_id", "retry_count", "process_input", "process_input_step", "process_llm_request", "process_llm_response", "process_output_stream", "process_output_step", "process_output_result", "process_tool_result", "process_api_error")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RETRY_COUNT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_INPUT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_INPUT_STEP_FIELD_NUMBER: _ClassVar[int]
    PROCESS_LLM_REQUEST_FIELD_NUMBER: _ClassVar[int]
    PROCESS_LLM_RESPONSE_FIELD_NUMBER: _ClassVar[int]
    PROCESS_OUTPUT_STREAM_FIELD_NUMBER: _ClassVar[int]
    PROCESS_OUTPUT_STEP_FIELD_NUMBER: _ClassVar[int]
    PROCESS_OUTPUT_RESULT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    PROCESS_API_ERROR_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    retry_count: int
    process_input: ProcessInputCall
    process_input_step: ProcessInputStepCall
    process_llm_request: ProcessLLMRequestCall
    process_llm_response: ProcessLLMResponseCall
    process_output_stream: ProcessOutputStreamCall
    process_output_step: ProcessOutputStepCall
    process_output_result: ProcessOutputResultCall
    process_tool_result: ProcessToolResultCall
    process_api_error: ProcessAPIErrorCall
    def __init__(self, call_id: _Optional[int] = ..., retry_count: _Optional[int] = ..., process_input: _Optional[_Union[ProcessInputCall, _Mapping]] = ..., process_input_step: _Optional[_Union[ProcessInputStepCall, _Mapping]] = ..., process_llm_request: _Optional[_Union[ProcessLLMRequestCall, _Mapping]] = ..., process_llm_response: _Optional[_Union[ProcessLLMResponseCall, _Mapping]] = ..., process_output_stream: _Optional[_Union[ProcessOutputStreamCall, _Mapping]] = ..., process_output_step: _Optional[_Union[ProcessOutputStepCall, _Mapping]] = ..., process_output_result: _Optional[_Union[ProcessOutputResultCall, _Mapping]] = ..., process_tool_result: _Optional[_Union[ProcessToolResultCall, _Mapping]] = ..., process_api_error: _Optional[_Union[ProcessAPIErrorCall, _Mapping]] = ...) -> None: ...

class ProcessInputCall(_message.Message):
    __slots__ = ("messages", "system_messages")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., system_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class ProcessInputStepCall(_message.Message):
    __slots__ = ("messages", "system_messages", "step_number", "model", "tool_names", "active_tools")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAMES_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    step_number: int
    model: str
    tool_names: _containers.RepeatedScalarFieldContainer[str]
    active_tools: _options_pb2.ToolNames
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., system_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., step_number: _Optional[int] = ..., model: _Optional[str] = ..., tool_names: _Optional[_Iterable[str]] = ..., active_tools: _Optional[_Union[_options_pb2.ToolNames, _Mapping]] = ...) -> None: ...

class ProcessLLMRequestCall(_message.Message):
    __slots__ = ("prompt", "model", "step_number")
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    prompt: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    model: str
    step_number: int
    def __init__(self, prompt: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., model: _Optional[str] = ..., step_number: _Optional[int] = ...) -> None: ...

class ProcessLLMResponseCall(_message.Message):
    __slots__ = ("chunks", "model", "step_number", "from_cache")
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FROM_CACHE_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    model: str
    step_number: int
    from_cache: bool
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ..., model: _Optional[str] = ..., step_number: _Optional[int] = ..., from_cache: _Optional[bool] = ...) -> None: ...

class ProcessOutputStreamCall(_message.Message):
    __slots__ = ("parts",)
    PARTS_FIELD_NUMBER: _ClassVar[int]
    parts: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, parts: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...

class ProcessOutputStepCall(_message.Message):
    __slots__ = ("messages", "system_messages", "step_number", "finish_reason", "text", "usage", "tool_calls")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALLS_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    step_number: int
    finish_reason: _usage_pb2.FinishReason
    text: str
    usage: _usage_pb2.Usage
    tool_calls: _containers.RepeatedCompositeFieldContainer[_message_pb2.ToolCall]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., system_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., step_number: _Optional[int] = ..., finish_reason: _Optional[_Union[_usage_pb2.FinishReason, str]] = ..., text: _Optional[str] = ..., usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., tool_calls: _Optional[_Iterable[_Union[_message_pb2.ToolCall, _Mapping]]] = ...) -> None: ...

class ProcessOutputResultCall(_message.Message):
    __slots__ = ("messages", "system_messages", "text", "usage", "finish_reason")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    text: str
    usage: _usage_pb2.Usage
    finish_reason: _usage_pb2.FinishReason
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., system_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., text: _Optional[str] = ..., usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., finish_reason: _Optional[_Union[_usage_pb2.FinishReason, str]] = ...) -> None: ...

class ProcessToolResultCall(_message.Message):
    __slots__ = ("messages", "step_number", "tool_name", "tool_call_id", "args", "result", "provider_executed")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    step_number: int
    tool_name: str
    tool_call_id: str
    args: _struct_pb2.Value
    result: _struct_pb2.Value
    provider_executed: bool
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., step_number: _Optional[int] = ..., tool_name: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., args: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., provider_executed: _Optional[bool] = ...) -> None: ...

class ProcessAPIErrorCall(_message.Message):
    __slots__ = ("messages", "step_number", "error")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    step_number: int
    error: _chunk_pb2.ErrorChunk
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., step_number: _Optional[int] = ..., error: _Optional[_Union[_chunk_pb2.ErrorChunk, _Mapping]] = ...) -> None: ...

class HookAnswer(_message.Message):
    __slots__ = ("call_id", "abort", "custom", "signals", "messages", "chunks", "step", "prompt", "api_error")
    CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    CUSTOM_FIELD_NUMBER: _ClassVar[int]
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    PROMPT_FIELD_NUMBER: _ClassVar[int]
    API_ERROR_FIELD_NUMBER: _ClassVar[int]
    call_id: int
    abort: ProcessorAbort
    custom: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.DataChunk]
    signals: _containers.RepeatedCompositeFieldContainer[_signal_pb2.SignalInput]
    messages: MessagesResult
    chunks: ChunkAnswers
    step: StepOverrides
    prompt: MessagesResult
    api_error: APIErrorAnswer
    def __init__(self, call_id: _Optional[int] = ..., abort: _Optional[_Union[ProcessorAbort, _Mapping]] = ..., custom: _Optional[_Iterable[_Union[_chunk_pb2.DataChunk, _Mapping]]] = ..., signals: _Optional[_Iterable[_Union[_signal_pb2.SignalInput, _Mapping]]] = ..., messages: _Optional[_Union[MessagesResult, _Mapping]] = ..., chunks: _Optional[_Union[ChunkAnswers, _Mapping]] = ..., step: _Optional[_Union[StepOverrides, _Mapping]] = ..., prompt: _Optional[_Union[MessagesResult, _Mapping]] = ..., api_error: _Optional[_Union[APIErrorAnswer, _Mapping]] = ...) -> None: ...

class ProcessorAbort(_message.Message):
    __slots__ = ("reason", "retry", "metadata")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    reason: str
    retry: bool
    metadata: _struct_pb2.Struct
    def __init__(self, reason: _Optional[str] = ..., retry: _Optional[bool] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class MessagesResult(_message.Message):
    __slots__ = ("messages", "system_messages")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    SYSTEM_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    system_messages: SystemMessages
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., system_messages: _Optional[_Union[SystemMessages, _Mapping]] = ...) -> None: ...

class SystemMessages(_message.Message):
    __slots__ = ("messages",)
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ...) -> None: ...

class StepOverrides(_message.Message):
    __slots__ = ("messages", "model", "active_tools", "tool_choice", "model_settings", "provider_options")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_CHOICE_FIELD_NUMBER: _ClassVar[int]
    MODEL_SETTINGS_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    messages: MessagesResult
    model: str
    active_tools: _options_pb2.ToolNames
    tool_choice: _options_pb2.ToolChoice
    model_settings: _options_pb2.ModelSettings
    provider_options: _struct_pb2.Struct
    def __init__(self, messages: _Optional[_Union[MessagesResult, _Mapping]] = ..., model: _Optional[str] = ..., active_tools: _Optional[_Union[_options_pb2.ToolNames, _Mapping]] = ..., tool_choice: _Optional[_Union[_options_pb2.ToolChoice, _Mapping]] = ..., model_settings: _Optional[_Union[_options_pb2.ModelSettings, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ChunkAnswers(_message.Message):
    __slots__ = ("answers",)
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[ChunkAnswer]
    def __init__(self, answers: _Optional[_Iterable[_Union[ChunkAnswer, _Mapping]]] = ...) -> None: ...

class ChunkAnswer(_message.Message):
    __slots__ = ("drop", "replace", "emit_after")
    PASS_FIELD_NUMBER: _ClassVar[int]
    DROP_FIELD_NUMBER: _ClassVar[int]
    REPLACE_FIELD_NUMBER: _ClassVar[int]
    EMIT_AFTER_FIELD_NUMBER: _ClassVar[int]
    drop: ChunkDrop
    replace: _chunk_pb2.Chunk
    emit_after: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, drop: _Optional[_Union[ChunkDrop, _Mapping]] = ..., replace: _Optional[_Union[_chunk_pb2.Chunk, _Mapping]] = ..., emit_after: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ..., **kwargs) -> None: ...

class ChunkPass(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ChunkDrop(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class APIErrorAnswer(_message.Message):
    __slots__ = ("retry",)
    RETRY_FIELD_NUMBER: _ClassVar[int]
    retry: bool
    def __init__(self, retry: _Optional[bool] = ...) -> None: ...
