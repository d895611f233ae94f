import datetime

from agentd_proto.v1 import chunk_pb2 as _chunk_pb2
from agentd_proto.v1 import message_pb2 as _message_pb2
from agentd_proto.v1 import options_pb2 as _options_pb2
from agentd_proto.v1 import signal_pb2 as _signal_pb2
from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.rpc import status_pb2 as _status_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SortOrder(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SORT_ORDER_UNSPECIFIED: _ClassVar[SortOrder]
    SORT_ORDER_ASCENDING: _ClassVar[SortOrder]
    SORT_ORDER_DESCENDING: _ClassVar[SortOrder]
SORT_ORDER_UNSPECIFIED: SortOrder
SORT_ORDER_ASCENDING: SortOrder
SORT_ORDER_DESCENDING: SortOrder

class Thread(_message.Message):
    __slots__ = ("id", "resource_id", "title", "metadata", "create_time", "update_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    TITLE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    resource_id: str
    title: str
    metadata: _struct_pb2.Struct
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., resource_id: _Optional[str] = ..., title: _Optional[str] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class CreateThreadRequest(_message.Message):
    __slots__ = ("thread",)
    THREAD_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ...) -> None: ...

class CreateThreadResponse(_message.Message):
    __slots__ = ("thread",)
    THREAD_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ...) -> None: ...

class GetThreadRequest(_message.Message):
    __slots__ = ("thread_id", "resource_id")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ...) -> None: ...

class GetThreadResponse(_message.Message):
    __slots__ = ("thread", "active_run_id")
    THREAD_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    active_run_id: str
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ..., active_run_id: _Optional[str] = ...) -> None: ...

class ListThreadsRequest(_message.Message):
    __slots__ = ("resource_id", "page_size", "page_token", "metadata_filter")
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    METADATA_FILTER_FIELD_NUMBER: _ClassVar[int]
    resource_id: str
    page_size: int
    page_token: str
    metadata_filter: _struct_pb2.Struct
    def __init__(self, resource_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., metadata_filter: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class ListThreadsResponse(_message.Message):
    __slots__ = ("threads", "next_page_token")
    THREADS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    threads: _containers.RepeatedCompositeFieldContainer[Thread]
    next_page_token: str
    def __init__(self, threads: _Optional[_Iterable[_Union[Thread, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateThreadRequest(_message.Message):
    __slots__ = ("thread", "update_mask")
    THREAD_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateThreadResponse(_message.Message):
    __slots__ = ("thread",)
    THREAD_FIELD_NUMBER: _ClassVar[int]
    thread: Thread
    def __init__(self, thread: _Optional[_Union[Thread, _Mapping]] = ...) -> None: ...

class DeleteThreadRequest(_message.Message):
    __slots__ = ("thread_id", "resource_id")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ...) -> None: ...

class DeleteThreadResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListMessagesRequest(_message.Message):
    __slots__ = ("thread_id", "resource_id", "page_size", "page_token", "order", "start_time", "end_time", "include_system_reminders")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ORDER_FIELD_NUMBER: _ClassVar[int]
    START_TIME_FIELD_NUMBER: _ClassVar[int]
    END_TIME_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_SYSTEM_REMINDERS_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    page_size: int
    page_token: str
    order: SortOrder
    start_time: _timestamp_pb2.Timestamp
    end_time: _timestamp_pb2.Timestamp
    include_system_reminders: bool
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., order: _Optional[_Union[SortOrder, str]] = ..., start_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., end_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., include_system_reminders: _Optional[bool] = ...) -> None: ...

class ListMessagesResponse(_message.Message):
    __slots__ = ("messages", "next_page_token")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[_message_pb2.Message]
    next_page_token: str
    def __init__(self, messages: _Optional[_Iterable[_Union[_message_pb2.Message, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ResumePoint(_message.Message):
    __slots__ = ("log_epoch", "after_offset")
    LOG_EPOCH_FIELD_NUMBER: _ClassVar[int]
    AFTER_OFFSET_FIELD_NUMBER: _ClassVar[int]
    log_epoch: str
    after_offset: int
    def __init__(self, log_epoch: _Optional[str] = ..., after_offset: _Optional[int] = ...) -> None: ...

class SubscribeRequest(_message.Message):
    __slots__ = ("thread_id", "resource_id", "resume", "hide_signals")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    HIDE_SIGNALS_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    resume: ResumePoint
    hide_signals: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., resume: _Optional[_Union[ResumePoint, _Mapping]] = ..., hide_signals: _Optional[_Iterable[str]] = ...) -> None: ...

class ThreadSnapshot(_message.Message):
    __slots__ = ("thread_id", "resource_id", "active_run_id", "log_epoch", "last_offset")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_RUN_ID_FIELD_NUMBER: _ClassVar[int]
    LOG_EPOCH_FIELD_NUMBER: _ClassVar[int]
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    active_run_id: str
    log_epoch: str
    last_offset: int
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., active_run_id: _Optional[str] = ..., log_epoch: _Optional[str] = ..., last_offset: _Optional[int] = ...) -> None: ...

class ChunkBatch(_message.Message):
    __slots__ = ("chunks",)
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    chunks: _containers.RepeatedCompositeFieldContainer[_chunk_pb2.Chunk]
    def __init__(self, chunks: _Optional[_Iterable[_Union[_chunk_pb2.Chunk, _Mapping]]] = ...) -> None: ...

class FellBehind(_message.Message):
    __slots__ = ("last_offset", "log_epoch")
    LAST_OFFSET_FIELD_NUMBER: _ClassVar[int]
    LOG_EPOCH_FIELD_NUMBER: _ClassVar[int]
    last_offset: int
    log_epoch: str
    def __init__(self, last_offset: _Optional[int] = ..., log_epoch: _Optional[str] = ...) -> None: ...

class SubscribeResponse(_message.Message):
    __slots__ = ("snapshot", "chunks", "fell_behind")
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    FELL_BEHIND_FIELD_NUMBER: _ClassVar[int]
    snapshot: ThreadSnapshot
    chunks: ChunkBatch
    fell_behind: FellBehind
    def __init__(self, snapshot: _Optional[_Union[ThreadSnapshot, _Mapping]] = ..., chunks: _Optional[_Union[ChunkBatch, _Mapping]] = ..., fell_behind: _Optional[_Union[FellBehind, _Mapping]] = ...) -> None: ...

class ConnectRequest(_message.Message):
    __slots__ = ("request_id", "open", "send_message", "queue_message", "send_signal", "send_state_signal", "tool_result", "abort")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    OPEN_FIELD_NUMBER: _ClassVar[int]
    SEND_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    QUEUE_MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SEND_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    SEND_STATE_SIGNAL_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    open: ConnectOpen
    send_message: ConnectSendMessage
    queue_message: ConnectQueueMessage
    send_signal: ConnectSendSignal
    send_state_signal: ConnectSendStateSignal
    tool_result: ConnectToolResult
    abort: ConnectAbort
    def __init__(self, request_id: _Optional[str] = ..., open: _Optional[_Union[ConnectOpen, _Mapping]] = ..., send_message: _Optional[_Union[ConnectSendMessage, _Mapping]] = ..., queue_message: _Optional[_Union[ConnectQueueMessage, _Mapping]] = ..., send_signal: _Optional[_Union[ConnectSendSignal, _Mapping]] = ..., send_state_signal: _Optional[_Union[ConnectSendStateSignal, _Mapping]] = ..., tool_result: _Optional[_Union[ConnectToolResult, _Mapping]] = ..., abort: _Optional[_Union[ConnectAbort, _Mapping]] = ...) -> None: ...

class ConnectOpen(_message.Message):
    __slots__ = ("agent_id", "resource_id", "thread_id", "resume", "hide_signals", "stream_options")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESUME_FIELD_NUMBER: _ClassVar[int]
    HIDE_SIGNALS_FIELD_NUMBER: _ClassVar[int]
    STREAM_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    resource_id: str
    thread_id: str
    resume: ResumePoint
    hide_signals: _containers.RepeatedScalarFieldContainer[str]
    stream_options: _options_pb2.ExecutionOptions
    def __init__(self, agent_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resume: _Optional[_Union[ResumePoint, _Mapping]] = ..., hide_signals: _Optional[_Iterable[str]] = ..., stream_options: _Optional[_Union[_options_pb2.ExecutionOptions, _Mapping]] = ...) -> None: ...

class ConnectSendMessage(_message.Message):
    __slots__ = ("message", "if_active", "if_idle")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    message: _signal_pb2.MessageInput
    if_active: _signal_pb2.IfActive
    if_idle: _signal_pb2.IfIdle
    def __init__(self, message: _Optional[_Union[_signal_pb2.MessageInput, _Mapping]] = ..., if_active: _Optional[_Union[_signal_pb2.IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class ConnectQueueMessage(_message.Message):
    __slots__ = ("message", "if_idle")
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    message: _signal_pb2.MessageInput
    if_idle: _signal_pb2.IfIdle
    def __init__(self, message: _Optional[_Union[_signal_pb2.MessageInput, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class ConnectSendSignal(_message.Message):
    __slots__ = ("signal", "if_active", "if_idle")
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    signal: _signal_pb2.SignalInput
    if_active: _signal_pb2.IfActive
    if_idle: _signal_pb2.IfIdle
    def __init__(self, signal: _Optional[_Union[_signal_pb2.SignalInput, _Mapping]] = ..., if_active: _Optional[_Union[_signal_pb2.IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class ConnectSendStateSignal(_message.Message):
    __slots__ = ("state", "if_active", "if_idle")
    STATE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    state: _signal_pb2.StateSignalInput
    if_active: _signal_pb2.IfActive
    if_idle: _signal_pb2.IfIdle
    def __init__(self, state: _Optional[_Union[_signal_pb2.StateSignalInput, _Mapping]] = ..., if_active: _Optional[_Union[_signal_pb2.IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class ConnectToolResult(_message.Message):
    __slots__ = ("run_id", "tool_call_id", "result", "is_error")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    IS_ERROR_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    tool_call_id: str
    result: _struct_pb2.Value
    is_error: bool
    def __init__(self, run_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ..., result: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., is_error: _Optional[bool] = ...) -> None: ...

class ConnectAbort(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class ConnectResponse(_message.Message):
    __slots__ = ("request_id", "snapshot", "chunks", "routing", "abort", "tool_result_ack", "fell_behind", "error")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    SNAPSHOT_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ROUTING_FIELD_NUMBER: _ClassVar[int]
    ABORT_FIELD_NUMBER: _ClassVar[int]
    TOOL_RESULT_ACK_FIELD_NUMBER: _ClassVar[int]
    FELL_BEHIND_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    request_id: str
    snapshot: ThreadSnapshot
    chunks: ChunkBatch
    routing: ConnectRoutingAnswer
    abort: AbortRunResponse
    tool_result_ack: ToolResultAck
    fell_behind: FellBehind
    error: _status_pb2.Status
    def __init__(self, request_id: _Optional[str] = ..., snapshot: _Optional[_Union[ThreadSnapshot, _Mapping]] = ..., chunks: _Optional[_Union[ChunkBatch, _Mapping]] = ..., routing: _Optional[_Union[ConnectRoutingAnswer, _Mapping]] = ..., abort: _Optional[_Union[AbortRunResponse, _Mapping]] = ..., tool_result_ack: _Optional[_Union[ToolResultAck, _Mapping]] = ..., fell_behind: _Optional[_Union[FellBehind, _Mapping]] = ..., error: _Optional[_Union[_status_pb2.Status, _Mapping]] = ...) -> None: ...

class ConnectRoutingAnswer(_message.Message):
    __slots__ = ("signal", "decision")
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    signal: _message_pb2.Signal
    decision: _signal_pb2.RoutingDecision
    def __init__(self, signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ..., decision: _Optional[_Union[_signal_pb2.RoutingDecision, _Mapping]] = ...) -> None: ...

class ToolResultAck(_message.Message):
    __slots__ = ("run_id", "tool_call_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_CALL_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    tool_call_id: str
    def __init__(self, run_id: _Optional[str] = ..., tool_call_id: _Optional[str] = ...) -> None: ...

class AbortRunRequest(_message.Message):
    __slots__ = ("thread_id", "resource_id", "run_id")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    run_id: str
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., run_id: _Optional[str] = ...) -> None: ...

class AbortRunResponse(_message.Message):
    __slots__ = ("aborted", "run_id")
    ABORTED_FIELD_NUMBER: _ClassVar[int]
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    aborted: bool
    run_id: str
    def __init__(self, aborted: _Optional[bool] = ..., run_id: _Optional[str] = ...) -> None: ...
