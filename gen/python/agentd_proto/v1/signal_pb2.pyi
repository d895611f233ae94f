import datetime

from agentd_proto.v1 import message_pb2 as _message_pb2
from agentd_proto.v1 import options_pb2 as _options_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StateMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STATE_MODE_UNSPECIFIED: _ClassVar[StateMode]
    STATE_MODE_SNAPSHOT: _ClassVar[StateMode]
    STATE_MODE_DELTA: _ClassVar[StateMode]

class ActiveBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTIVE_BEHAVIOR_UNSPECIFIED: _ClassVar[ActiveBehavior]
    ACTIVE_BEHAVIOR_DELIVER: _ClassVar[ActiveBehavior]
    ACTIVE_BEHAVIOR_PERSIST: _ClassVar[ActiveBehavior]
    ACTIVE_BEHAVIOR_DISCARD: _ClassVar[ActiveBehavior]

class IdleBehavior(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    IDLE_BEHAVIOR_UNSPECIFIED: _ClassVar[IdleBehavior]
    IDLE_BEHAVIOR_WAKE: _ClassVar[IdleBehavior]
    IDLE_BEHAVIOR_PERSIST: _ClassVar[IdleBehavior]
    IDLE_BEHAVIOR_DISCARD: _ClassVar[IdleBehavior]

class NotificationPriority(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTIFICATION_PRIORITY_UNSPECIFIED: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_LOW: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_MEDIUM: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_HIGH: _ClassVar[NotificationPriority]
    NOTIFICATION_PRIORITY_URGENT: _ClassVar[NotificationPriority]

class NotificationStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    NOTIFICATION_STATUS_UNSPECIFIED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_PENDING: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_DELIVERED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_SEEN: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_DISMISSED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_ARCHIVED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_DISCARDED: _ClassVar[NotificationStatus]
    NOTIFICATION_STATUS_FAILED: _ClassVar[NotificationStatus]

class DeliveryAction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DELIVERY_ACTION_UNSPECIFIED: _ClassVar[DeliveryAction]
    DELIVERY_ACTION_DELIVER: _ClassVar[DeliveryAction]
    DELIVERY_ACTION_QUEUE: _ClassVar[DeliveryAction]
    DELIVERY_ACTION_DEFER: _ClassVar[DeliveryAction]
    DELIVERY_ACTION_SUMMARIZE: _ClassVar[DeliveryAction]
    DELIVERY_ACTION_PERSIST: _ClassVar[DeliveryAction]
    DELIVERY_ACTION_DISCARD: _ClassVar[DeliveryAction]
STATE_MODE_UNSPECIFIED: StateMode
STATE_MODE_SNAPSHOT: StateMode
STATE_MODE_DELTA: StateMode
ACTIVE_BEHAVIOR_UNSPECIFIED: ActiveBehavior
ACTIVE_BEHAVIOR_DELIVER: ActiveBehavior
ACTIVE_BEHAVIOR_PERSIST: ActiveBehavior
ACTIVE_BEHAVIOR_DISCARD: ActiveBehavior
IDLE_BEHAVIOR_UNSPECIFIED: IdleBehavior
IDLE_BEHAVIOR_WAKE: IdleBehavior
IDLE_BEHAVIOR_PERSIST: IdleBehavior
IDLE_BEHAVIOR_DISCARD: IdleBehavior
NOTIFICATION_PRIORITY_UNSPECIFIED: NotificationPriority
NOTIFICATION_PRIORITY_LOW: NotificationPriority
NOTIFICATION_PRIORITY_MEDIUM: NotificationPriority
NOTIFICATION_PRIORITY_HIGH: NotificationPriority
NOTIFICATION_PRIORITY_URGENT: NotificationPriority
NOTIFICATION_STATUS_UNSPECIFIED: NotificationStatus
NOTIFICATION_STATUS_PENDING: NotificationStatus
NOTIFICATION_STATUS_DELIVERED: NotificationStatus
NOTIFICATION_STATUS_SEEN: NotificationStatus
NOTIFICATION_STATUS_DISMISSED: NotificationStatus
NOTIFICATION_STATUS_ARCHIVED: NotificationStatus
NOTIFICATION_STATUS_DISCARDED: NotificationStatus
NOTIFICATION_STATUS_FAILED: NotificationStatus
DELIVERY_ACTION_UNSPECIFIED: DeliveryAction
DELIVERY_ACTION_DELIVER: DeliveryAction
DELIVERY_ACTION_QUEUE: DeliveryAction
DELIVERY_ACTION_DEFER: DeliveryAction
DELIVERY_ACTION_SUMMARIZE: DeliveryAction
DELIVERY_ACTION_PERSIST: DeliveryAction
DELIVERY_ACTION_DISCARD: DeliveryAction

class SignalInput(_message.Message):
    __slots__ = ("id", "type", "tag_name", "text", "parts", "attributes", "metadata", "provider_options", "transient")
    ID_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    TAG_NAME_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TRANSIENT_FIELD_NUMBER: _ClassVar[int]
    id: str
    type: str
    tag_name: str
    text: str
    parts: _containers.RepeatedCompositeFieldContainer[_message_pb2.ContentPart]
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    metadata: _struct_pb2.Struct
    provider_options: _struct_pb2.Struct
    transient: bool
    def __init__(self, id: _Optional[str] = ..., type: _Optional[str] = ..., tag_name: _Optional[str] = ..., text: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[_message_pb2.ContentPart, _Mapping]]] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., transient: _Optional[bool] = ...) -> None: ...

class MessageInput(_message.Message):
    __slots__ = ("id", "text", "parts", "attributes", "metadata", "provider_options")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    parts: _containers.RepeatedCompositeFieldContainer[_message_pb2.ContentPart]
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    metadata: _struct_pb2.Struct
    provider_options: _struct_pb2.Struct
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[_message_pb2.ContentPart, _Mapping]]] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class StateSignalInput(_message.Message):
    __slots__ = ("signal_id", "id", "cache_key", "mode", "text", "parts", "value", "delta", "attributes", "metadata", "provider_options", "tag_name")
    SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    CACHE_KEY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    DELTA_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    PROVIDER_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TAG_NAME_FIELD_NUMBER: _ClassVar[int]
    signal_id: str
    id: str
    cache_key: str
    mode: StateMode
    text: str
    parts: _containers.RepeatedCompositeFieldContainer[_message_pb2.ContentPart]
    value: _struct_pb2.Value
    delta: _struct_pb2.Value
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    metadata: _struct_pb2.Struct
    provider_options: _struct_pb2.Struct
    tag_name: str
    def __init__(self, signal_id: _Optional[str] = ..., id: _Optional[str] = ..., cache_key: _Optional[str] = ..., mode: _Optional[_Union[StateMode, str]] = ..., text: _Optional[str] = ..., parts: _Optional[_Iterable[_Union[_message_pb2.ContentPart, _Mapping]]] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., delta: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., provider_options: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., tag_name: _Optional[str] = ...) -> None: ...

class SignalTarget(_message.Message):
    __slots__ = ("run_id", "resource_id", "thread_id")
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    resource_id: str
    thread_id: str
    def __init__(self, run_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., thread_id: _Optional[str] = ...) -> None: ...

class IfActive(_message.Message):
    __slots__ = ("behavior", "attributes")
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    behavior: ActiveBehavior
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    def __init__(self, behavior: _Optional[_Union[ActiveBehavior, str]] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ...) -> None: ...

class IfIdle(_message.Message):
    __slots__ = ("behavior", "attributes", "stream_options")
    BEHAVIOR_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    STREAM_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    behavior: IdleBehavior
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    stream_options: _options_pb2.ExecutionOptions
    def __init__(self, behavior: _Optional[_Union[IdleBehavior, str]] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ..., stream_options: _Optional[_Union[_options_pb2.ExecutionOptions, _Mapping]] = ...) -> None: ...

class RoutingDecision(_message.Message):
    __slots__ = ("wake", "deliver", "persist", "discard", "skipped_unchanged")
    WAKE_FIELD_NUMBER: _ClassVar[int]
    DELIVER_FIELD_NUMBER: _ClassVar[int]
    PERSIST_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    wake: RoutingWake
    deliver: RoutingDeliver
    persist: RoutingPersist
    discard: RoutingDiscard
    skipped_unchanged: RoutingSkippedUnchanged
    def __init__(self, wake: _Optional[_Union[RoutingWake, _Mapping]] = ..., deliver: _Optional[_Union[RoutingDeliver, _Mapping]] = ..., persist: _Optional[_Union[RoutingPersist, _Mapping]] = ..., discard: _Optional[_Union[RoutingDiscard, _Mapping]] = ..., skipped_unchanged: _Optional[_Union[RoutingSkippedUnchanged, _Mapping]] = ...) -> None: ...

class RoutingWake(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class RoutingDeliver(_message.Message):
    __slots__ = ("run_id",)
    RUN_ID_FIELD_NUMBER: _ClassVar[int]
    run_id: str
    def __init__(self, run_id: _Optional[str] = ...) -> None: ...

class RoutingPersist(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RoutingDiscard(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class RoutingSkippedUnchanged(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class NotificationInput(_message.Message):
    __slots__ = ("source", "kind", "summary", "priority", "payload", "source_id", "dedupe_key", "coalesce_key", "attributes", "metadata")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    DEDUPE_KEY_FIELD_NUMBER: _ClassVar[int]
    COALESCE_KEY_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    source: str
    kind: str
    summary: str
    priority: NotificationPriority
    payload: _struct_pb2.Value
    source_id: str
    dedupe_key: str
    coalesce_key: str
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    metadata: _struct_pb2.Struct
    def __init__(self, source: _Optional[str] = ..., kind: _Optional[str] = ..., summary: _Optional[str] = ..., priority: _Optional[_Union[NotificationPriority, str]] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., source_id: _Optional[str] = ..., dedupe_key: _Optional[str] = ..., coalesce_key: _Optional[str] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ...) -> None: ...

class Notification(_message.Message):
    __slots__ = ("id", "thread_id", "resource_id", "agent_id", "source", "kind", "summary", "priority", "status", "payload", "source_id", "dedupe_key", "coalesce_key", "coalesced_count", "attributes", "metadata", "create_time", "update_time", "delivered_time", "seen_time", "dismissed_time", "archived_time", "discarded_time", "deliver_time", "summary_time", "delivery_reason", "delivery_attempts", "last_delivery_attempt_time", "last_delivery_error", "delivered_signal_id", "summary_signal_id")
    ID_FIELD_NUMBER: _ClassVar[int]
    THREAD_ID_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    PRIORITY_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    PAYLOAD_FIELD_NUMBER: _ClassVar[int]
    SOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    DEDUPE_KEY_FIELD_NUMBER: _ClassVar[int]
    COALESCE_KEY_FIELD_NUMBER: _ClassVar[int]
    COALESCED_COUNT_FIELD_NUMBER: _ClassVar[int]
    ATTRIBUTES_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_TIME_FIELD_NUMBER: _ClassVar[int]
    SEEN_TIME_FIELD_NUMBER: _ClassVar[int]
    DISMISSED_TIME_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_TIME_FIELD_NUMBER: _ClassVar[int]
    DISCARDED_TIME_FIELD_NUMBER: _ClassVar[int]
    DELIVER_TIME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TIME_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_REASON_FIELD_NUMBER: _ClassVar[int]
    DELIVERY_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    LAST_DELIVERY_ATTEMPT_TIME_FIELD_NUMBER: _ClassVar[int]
    LAST_DELIVERY_ERROR_FIELD_NUMBER: _ClassVar[int]
    DELIVERED_SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_SIGNAL_ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    thread_id: str
    resource_id: str
    agent_id: str
    source: str
    kind: str
    summary: str
    priority: NotificationPriority
    status: NotificationStatus
    payload: _struct_pb2.Value
    source_id: str
    dedupe_key: str
    coalesce_key: str
    coalesced_count: int
    attributes: _containers.RepeatedCompositeFieldContainer[_message_pb2.Attribute]
    metadata: _struct_pb2.Struct
    create_time: _timestamp_pb2.Timestamp
    update_time: _timestamp_pb2.Timestamp
    delivered_time: _timestamp_pb2.Timestamp
    seen_time: _timestamp_pb2.Timestamp
    dismissed_time: _timestamp_pb2.Timestamp
    archived_time: _timestamp_pb2.Timestamp
    discarded_time: _timestamp_pb2.Timestamp
    deliver_time: _timestamp_pb2.Timestamp
    summary_time: _timestamp_pb2.Timestamp
    delivery_reason: str
    delivery_attempts: int
    last_delivery_attempt_time: _timestamp_pb2.Timestamp
    last_delivery_error: str
    delivered_signal_id: str
    summary_signal_id: str
    def __init__(self, id: _Optional[str] = ..., thread_id: _Optional[str] = ..., resource_id: _Optional[str] = ..., agent_id: _Optional[str] = ..., source: _Optional[str] = ..., kind: _Optional[str] = ..., summary: _Optional[str] = ..., priority: _Optional[_Union[NotificationPriority, str]] = ..., status: _Optional[_Union[NotificationStatus, str]] = ..., payload: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., source_id: _Optional[str] = ..., dedupe_key: _Optional[str] = ..., coalesce_key: _Optional[str] = ..., coalesced_count: _Optional[int] = ..., attributes: _Optional[_Iterable[_Union[_message_pb2.Attribute, _Mapping]]] = ..., metadata: _Optional[_Union[_struct_pb2.Struct, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delivered_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., seen_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., dismissed_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., archived_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., discarded_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., deliver_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., summary_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., delivery_reason: _Optional[str] = ..., delivery_attempts: _Optional[int] = ..., last_delivery_attempt_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., last_delivery_error: _Optional[str] = ..., delivered_signal_id: _Optional[str] = ..., summary_signal_id: _Optional[str] = ...) -> None: ...

class DeliveryDecision(_message.Message):
    __slots__ = ("action", "deliver_time", "summary_time", "reason")
    ACTION_FIELD_NUMBER: _ClassVar[int]
    DELIVER_TIME_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_TIME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    action: DeliveryAction
    deliver_time: _timestamp_pb2.Timestamp
    summary_time: _timestamp_pb2.Timestamp
    reason: str
    def __init__(self, action: _Optional[_Union[DeliveryAction, str]] = ..., deliver_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., summary_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., reason: _Optional[str] = ...) -> None: ...
