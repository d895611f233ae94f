import datetime

from agentd_proto.v1 import message_pb2 as _message_pb2
from agentd_proto.v1 import usage_pb2 as _usage_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChunkSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CHUNK_SOURCE_UNSPECIFIED: _ClassVar[ChunkSource]
    CHUNK_SOURCE_AGENT: _ClassVar[ChunkSource]
    CHUNK_SOURCE_USER: _ClassVar[ChunkSource]
    CHUNK_SOURCE_SYSTEM: _ClassVar[ChunkSource]
    CHUNK_SOURCE_WORKFLOW: _ClassVar[ChunkSource]
CHUNK_SOURCE_UNSPECIFIED: ChunkSource
CHUNK_SOURCE_AGENT: ChunkSource
CHUNK_SOURCE_USER: ChunkSource
CHUNK_SOURCE_SYSTEM: ChunkSource
CHUNK_SOURCE_WORKFLOW: ChunkSource

class Chunk(_message.Message):
    __slots__ = ("run_id", "seq", "parent_run_id", "offset", "source", "metadata", "start", "step_start", "text_start", "text_delta", "text_end", "reasoning_start", "reasoning_delta", "reasoning_end", "tool_call_start", "tool_call_delta", "tool_call_end", "tool_call", "tool_result", "step_finish", "finish", "error", "abort", "tripwire", "data", "signal", "file", "source_ref", "object", "response_metadata")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    PARENT_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    OFFSET_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    START_FIELD_NUMBER: _ClassVar[int]
    STEP_START_FIELD_NUMBER: _ClassVar[int]
    TEXT_START_FIELD_NUMBER: _ClassVar[int]
    TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    TEXT_END_FIELD_NUMBER: _ClassVar[int]
    REASONING_START_FIELD_NUMBER: _ClassVar[int]
    REASONING_DELTA_FIELD_NUMBER: _ClassVar[int]
    REASONING_END_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_START_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_END_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    STEP_FINISH_FIELD_NUMBER: _ClassVar[int]
    FINISH_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    SOURCE_REF_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_METADATA_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    seq: int
    parent_run_id: str
    offset: int
    source: ChunkSource
    metadata: _struct_pb2.Struct
    start: StartChunk
    step_start: StepStartChunk
    text_start: TextStartChunk
    text_delta: TextDeltaChunk
    text_end: TextEndChunk
    reasoning_start: ReasoningStartChunk
    reasoning_delta: ReasoningDeltaChunk
    reasoning_end: ReasoningEndChunk
    tool_call_start: ToolCallStartChunk
    tool_call_delta: ToolCallDeltaChunk
    tool_call_end: ToolCallEndChunk
    tool_call: _message_pb2.ToolCall
    tool_result: _message_pb2.ToolResult
    step_finish: StepFinishChunk
    finish: FinishChunk
    error: ErrorChunk
    abort: AbortChunk
    tripwire: TripwireChunk
    data: DataChunk
    signal: SignalEchoChunk
    file: FileChunk
    source_ref: SourceChunk
    object: ObjectChunk
    response_metadata: ResponseMetadataChunk
    def __init__(self, run_id: _Optional[str] = ..., seq: _Optional[int] = ..., parent_run_id: _Optional[str] = ..., offset: _Optional[int] = ..., source: _Optional[_Union[ChunkSource, str]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., start: _Optional[_Union[StartChunk, _Mapping]] = ..., step_start: _Optional[_Union[StepStartChunk, _Mapping]] = ..., text_start: _Optional[_Union[TextStartChunk, _Mapping]] = ..., text_delta: _Optional[_Union[TextDeltaChunk, _Mapping]] = ..., text_end: _Optional[_Union[TextEndChunk, _Mapping]] = ..., reasoning_start: _Optional[_Union[ReasoningStartChunk, _Mapping]] = ..., reasoning_delta: _Optional[_Union[ReasoningDeltaChunk, _Mapping]] = ..., reasoning_end: _Optional[_Union[ReasoningEndChunk, _Mapping]] = ..., tool_call_start: _Optional[_Union[ToolCallStartChunk, _Mapping]] = ..., tool_call_delta: _Optional[_Union[ToolCallDeltaChunk, _Mapping]] = ..., tool_call_end: _Optional[_Union[ToolCallEndChunk, _Mapping]] = ..., tool_call: _Optional[_Union[_message_pb2.ToolCall, _Mapping]] = ..., tool_result: _Optional[_Union[_message_pb2.ToolResult, _Mapping]] = ..., step_finish: _Optional[_Union[StepFinishChunk, _Mapping]] = ..., finish: _Optional[_Union[FinishChunk, _Mapping]] = ..., error: _Optional[_Union[ErrorChunk, _Mapping]] = ..., abort: _Optional[_Union[AbortChunk, _Mapping]] = ..., tripwire: _Optional[_Union[TripwireChunk, _Mapping]] = ..., data: _Optional[_Union[DataChunk, _Mapping]] = ..., signal: _Optional[_Union[SignalEchoChunk, _Mapping]] = ..., file: _Optional[_Union[FileChunk, _Mapping]] = ..., source_ref: _Optional[_Union[SourceChunk, _Mapping]] = ..., object: _Optional[_Union[ObjectChunk, _Mapping]] = ..., response_metadata: _Optional[_Union[ResponseMetadataChunk, _Mapping]] = ...) -> None: ...

class StartChunk(_message.Message):
    __slots__ = ("agent_id", "thread_id", "resource_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    thread_id: str
    resource_id: str
    def __init__(self, agent_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ...) -> None: ...

class StepStartChunk(_message.Message):
    __slots__ = ("step_number", "message_id", "model", "start_time", "warnings")
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    step_number: int
    message_id: str
    model: str
    start_time: _timestamp_pb2.Timestamp
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, step_number: _Optional[int] = ..., message_id: _Optional[str] = ..., model: _Optional[str] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class TextStartChunk(_message.Message):
    __slots__ = ("id", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TextDeltaChunk(_message.Message):
    __slots__ = ("id", "text", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class TextEndChunk(_message.Message):
    __slots__ = ("id", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReasoningStartChunk(_message.Message):
    __slots__ = ("id", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReasoningDeltaChunk(_message.Message):
    __slots__ = ("id", "text", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ReasoningEndChunk(_message.Message):
    __slots__ = ("id", "signature", "redacted_data", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    REDACTED_DATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    signature: str
    redacted_data: bytes
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., signature: _Optional[str] = ..., redacted_data: _Optional[bytes] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ToolCallStartChunk(_message.Message):
    __slots__ = ("tool_call_id", "tool_name", "provider_executed", "provider_metadata")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_EXECUTED_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    tool_name: str
    provider_executed: bool
    provider_metadata: _struct_pb2.Struct
    def __init__(self, tool_call_id: _Optional[str] = ..., tool_name: _Optional[str] = ..., provider_executed: _Optional[bool] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ToolCallDeltaChunk(_message.Message):
    __slots__ = ("tool_call_id", "args_text_delta", "tool_name")
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_TEXT_DELTA_FIELD_NUMBER: _ClassVar[int]
    TOOL_NAME_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    args_text_delta: str
    tool_name: str
    def __init__(self, tool_call_id: _Optional[str] = ..., args_text_delta: _Optional[str] = ..., tool_name: _Optional[str] = ...) -> None: ...

class ToolCallEndChunk(_message.Message):
    __slots__ = ("tool_call_id",)
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    tool_call_id: str
    def __init__(self, tool_call_id: _Optional[str] = ...) -> None: ...

class Tripwire(_message.Message):
    __slots__ = ("reason", "retry", "metadata", "processor_id")
    REASON_FIELD_NUMBER: _ClassVar[int]
    RETRY_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROCESSOR_ID_FIELD_NUMBER: _ClassVar[int]
    reason: str
    retry: bool
    metadata: _struct_pb2.Struct
    processor_id: str
    def __init__(self, reason: _Optional[str] = ..., retry: _Optional[bool] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., processor_id: _Optional[str] = ...) -> None: ...

class StepFinishChunk(_message.Message):
    __slots__ = ("step_number", "message_id", "finish_reason", "raw_finish_reason", "usage", "is_continued", "provider_metadata", "model", "tripwire", "warnings")
    STEP_NUMBER_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_ID_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    RAW_FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    IS_CONTINUED_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    step_number: int
    message_id: str
    finish_reason: _usage_pb2.FinishReason
    raw_finish_reason: str
    usage: _usage_pb2.Usage
    is_continued: bool
    provider_metadata: _struct_pb2.Struct
    model: str
    tripwire: Tripwire
    warnings: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, step_number: _Optional[int] = ..., message_id: _Optional[str] = ..., finish_reason: _Optional[_Union[_usage_pb2.FinishReason, str]] = ..., raw_finish_reason: _Optional[str] = ..., usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., is_continued: _Optional[bool] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[str] = ..., tripwire: _Optional[_Union[Tripwire, _Mapping]] = ..., warnings: _Optional[_Iterable[str]] = ...) -> None: ...

class FinishChunk(_message.Message):
    __slots__ = ("finish_reason", "raw_finish_reason", "usage", "total_usage", "response_messages", "provider_metadata", "model", "object", "tripwire")
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    RAW_FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    USAGE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_USAGE_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_MESSAGES_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    finish_reason: _usage_pb2.FinishReason
    raw_finish_reason: str
    usage: _usage_pb2.Usage
    total_usage: _usage_pb2.Usage
    response_messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    provider_metadata: _struct_pb2.Struct
    model: str
    object: _struct_pb2.Value
    tripwire: Tripwire
    def __init__(self, finish_reason: _Optional[_Union[_usage_pb2.FinishReason, str]] = ..., raw_finish_reason: _Optional[str] = ..., usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., total_usage: _Optional[_Union[_usage_pb2.Usage, _Mapping]] = ..., response_messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., model: _Optional[str] = ..., object: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., tripwire: _Optional[_Union[Tripwire, _Mapping]] = ...) -> None: ...

class ErrorChunk(_message.Message):
    __slots__ = ("message", "reason", "status_code", "provider_code", "retryable", "details")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STATUS_CODE_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_CODE_FIELD_NUMBER: _ClassVar[int]
    RETRYABLE_FIELD_NUMBER: _ClassVar[int]
    DETAILS_FIELD_NUMBER: _ClassVar[int]
    message: str
    reason: str
    status_code: int
    provider_code: str
    retryable: bool
    details: _struct_pb2.Struct
    def __init__(self, message: _Optional[str] = ..., reason: _Optional[str] = ..., status_code: _Optional[int] = ..., provider_code: _Optional[str] = ..., retryable: _Optional[bool] = ..., details: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class AbortChunk(_message.Message):
    __slots__ = ("reason", "message")
    REASON_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    reason: str
    message: str
    def __init__(self, reason: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class TripwireChunk(_message.Message):
    __slots__ = ("tripwire",)
    TRIPWIRE_FIELD_NUMBER: _ClassVar[int]
    tripwire: Tripwire
    def __init__(self, tripwire: _Optional[_Union[Tripwire, _Mapping]] = ...) -> None: ...

class DataChunk(_message.Message):
    __slots__ = ("type", "id", "data", "transient")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    TRANSIENT_FIELD_NUMBER: _ClassVar[int]
    type: str
    id: str
    data: _struct_pb2.Value
    transient: bool
    def __init__(self, type: _Optional[str] = ..., id: _Optional[str] = ..., data: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., transient: _Optional[bool] = ...) -> None: ...

class SignalEchoChunk(_message.Message):
    __slots__ = ("signal",)
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    signal: _message_pb2.Signal
    def __init__(self, signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ...) -> None: ...

class FileChunk(_message.Message):
    __slots__ = ("file",)
    FILE_FIELD_NUMBER: _ClassVar[int]
    file: _message_pb2.FilePart
    def __init__(self, file: _Optional[_Union[_message_pb2.FilePart, _Mapping]] = ...) -> None: ...

class SourceChunk(_message.Message):
    __slots__ = ("id", "source_type", "title", "url", "media_type", "filename", "provider_metadata")
    ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    URL_FIELD_NUMBER: _ClassVar[int]
    MEDIA_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_METADATA_FIELD_NUMBER: _ClassVar[int]
    id: str
    source_type: str
    title: str
    url: str
    media_type: str
    filename: str
    provider_metadata: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., source_type: _Optional[str] = ..., title: _Optional[str] = ..., url: _Optional[str] = ..., media_type: _Optional[str] = ..., filename: _Optional[str] = ..., provider_metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ObjectChunk(_message.Message):
    __slots__ = ("object",)
    OBJECT_FIELD_NUMBER: _ClassVar[int]
    object: _struct_pb2.Value
    def __init__(self, object: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class ResponseMetadataChunk(_message.Message):
    __slots__ = ("response_id", "model_id", "time")
    RESPONSE_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_ID_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    response_id: str
    model_id: str
    time: _timestamp_pb2.Timestamp
    def __init__(self, response_id: _Optional[str] = ..., model_id: _Optional[str] = ..., time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...
