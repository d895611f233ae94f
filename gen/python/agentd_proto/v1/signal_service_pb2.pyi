from agentd_proto.v1 import message_pb2 as _message_pb2
from agentd_proto.v1 import options_pb2 as _options_pb2
from agentd_proto.v1 import signal_pb2 as _signal_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SendMessageRequest(_message.Message):
    __slots__ = ("agent_id", "target", "message", "if_active", "if_idle")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    target: _signal_pb2.SignalTarget
    message: _signal_pb2.MessageInput
    if_active: _signal_pb2.IfActive
    if_idle: _signal_pb2.IfIdle
    def __init__(self, agent_id: _Optional[str] = ..., target: _Optional[_Union[_signal_pb2.SignalTarget, _Mapping]] = ..., message: _Optional[_Union[_signal_pb2.MessageInput, _Mapping]] = ..., if_active: _Optional[_Union[_signal_pb2.IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class SendMessageResponse(_message.Message):
    __slots__ = ("signal", "decision")
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    signal: _message_pb2.Signal
    decision: _signal_pb2.RoutingDecision
    def __init__(self, signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ..., decision: _Optional[_Union[_signal_pb2.RoutingDecision, _Mapping]] = ...) -> None: ...

class QueueMessageRequest(_message.Message):
    __slots__ = ("agent_id", "target", "message", "if_idle")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    target: _signal_pb2.SignalTarget
    message: _signal_pb2.MessageInput
    if_idle: _signal_pb2.IfIdle
    def __init__(self, agent_id: _Optional[str] = ..., target: _Optional[_Union[_signal_pb2.SignalTarget, _Mapping]] = ..., message: _Optional[_Union[_signal_pb2.MessageInput, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class QueueMessageResponse(_message.Message):
    __slots__ = ("signal", "decision")
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    signal: _message_pb2.Signal
    decision: _signal_pb2.RoutingDecision
    def __init__(self, signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ..., decision: _Optional[_Union[_signal_pb2.RoutingDecision, _Mapping]] = ...) -> None: ...

class SendSignalRequest(_message.Message):
    __slots__ = ("agent_id", "target", "signal", "if_active", "if_idle")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    target: _signal_pb2.SignalTarget
    signal: _signal_pb2.SignalInput
    if_active: _signal_pb2.IfActive
    if_idle: _signal_pb2.IfIdle
    def __init__(self, agent_id: _Optional[str] = ..., target: _Optional[_Union[_signal_pb2.SignalTarget, _Mapping]] = ..., signal: _Optional[_Union[_signal_pb2.SignalInput, _Mapping]] = ..., if_active: _Optional[_Union[_signal_pb2.IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class SendSignalResponse(_message.Message):
    __slots__ = ("signal", "decision")
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    signal: _message_pb2.Signal
    decision: _signal_pb2.RoutingDecision
    def __init__(self, signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ..., decision: _Optional[_Union[_signal_pb2.RoutingDecision, _Mapping]] = ...) -> None: ...

class SendStateSignalRequest(_message.Message):
    __slots__ = ("agent_id", "target", "state", "if_active", "if_idle")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    IF_ACTIVE_FIELD_NUMBER: _ClassVar[int]
    IF_IDLE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    target: _signal_pb2.SignalTarget
    state: _signal_pb2.StateSignalInput
    if_active: _signal_pb2.IfActive
    if_idle: _signal_pb2.IfIdle
    def __init__(self, agent_id: _Optional[str] = ..., target: _Optional[_Union[_signal_pb2.SignalTarget, _Mapping]] = ..., state: _Optional[_Union[_signal_pb2.StateSignalInput, _Mapping]] = ..., if_active: _Optional[_Union[_signal_pb2.IfActive, _Mapping]] = ..., if_idle: _Optional[_Union[_signal_pb2.IfIdle, _Mapping]] = ...) -> None: ...

class SendStateSignalResponse(_message.Message):
    __slots__ = ("signal", "decision", "version")
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    signal: _message_pb2.Signal
    decision: _signal_pb2.RoutingDecision
    version: int
    def __init__(self, signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ..., decision: _Optional[_Union[_signal_pb2.RoutingDecision, _Mapping]] = ..., version: _Optional[int] = ...) -> None: ...

class SendNotificationRequest(_message.Message):
    __slots__ = ("agent_id", "resource_id", "thread_id", "notification", "idle_stream_options")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    IDLE_STREAM_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    resource_id: str
    thread_id: str
    notification: _signal_pb2.NotificationInput
    idle_stream_options: _options_pb2.ExecutionOptions
    def __init__(self, agent_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ..., notification: _Optional[_Union[_signal_pb2.NotificationInput, _Mapping]] = ..., idle_stream_options: _Optional[_Union[_options_pb2.ExecutionOptions, _Mapping]] = ...) -> None: ...

class SendNotificationResponse(_message.Message):
    __slots__ = ("notification", "decision", "signal", "routing")
    NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    SIGNAL_FIELD_NUMBER: _ClassVar[int]
    ROUTING_FIELD_NUMBER: _ClassVar[int]
    notification: _signal_pb2.Notification
    decision: _signal_pb2.DeliveryDecision
    signal: _message_pb2.Signal
    routing: _signal_pb2.RoutingDecision
    def __init__(self, notification: _Optional[_Union[_signal_pb2.Notification, _Mapping]] = ..., decision: _Optional[_Union[_signal_pb2.DeliveryDecision, _Mapping]] = ..., signal: _Optional[_Union[_message_pb2.Signal, _Mapping]] = ..., routing: _Optional[_Union[_signal_pb2.RoutingDecision, _Mapping]] = ...) -> None: ...

class ListNotificationsRequest(_message.Message):
    __slots__ = ("thread_id", "resource_id", "agent_id", "statuses", "priorities", "source", "search", "page_size", "page_token")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    STATUSES_FIELD_NUMBER: _ClassVar[int]
    PRIORITIES_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SEARCH_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    resource_id: str
    agent_id: str
    statuses: _containers.RepeatedScalarFieldContainer[_signal_pb2.NotificationStatus]
    priorities: _containers.RepeatedScalarFieldContainer[_signal_pb2.NotificationPriority]
    source: str
    search: str
    page_size: int
    page_token: str
    def __init__(self, thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., statuses: _Optional[_Iterable[_Union[_signal_pb2.NotificationStatus, str]]] = ..., priorities: _Optional[_Iterable[_Union[_signal_pb2.NotificationPriority, str]]] = ..., source: _Optional[str] = ..., search: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListNotificationsResponse(_message.Message):
    __slots__ = ("notifications", "next_page_token")
    NOTIFICATIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    notifications: _containers.RepeatedCompositeFieldContainer[_signal_pb2.Notification]
    next_page_token: str
    def __init__(self, notifications: _Optional[_Iterable[_Union[_signal_pb2.Notification, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class UpdateNotificationStatusRequest(_message.Message):
    __slots__ = ("thread_id", "notification_id", "status")
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    NOTIFICATION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    thread_id: str
    notification_id: str
    status: _signal_pb2.NotificationStatus
    def __init__(self, thread_id: _Optional[str] = ..., notification_id: _Optional[str] = ..., status: _Optional[_Union[_signal_pb2.NotificationStatus, str]] = ...) -> None: ...

class UpdateNotificationStatusResponse(_message.Message):
    __slots__ = ("notification",)
    NOTIFICATION_FIELD_NUMBER: _ClassVar[int]
    notification: _signal_pb2.Notification
    def __init__(self, notification: _Optional[_Union[_signal_pb2.Notification, _Mapping]] = ...) -> None: ...
