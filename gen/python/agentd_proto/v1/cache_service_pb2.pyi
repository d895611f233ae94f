import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf import struct_pb2 as _struct_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GetCacheEntryRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class GetCacheEntryResponse(_message.Message):
    __slots__ = ("found", "value")
    FOUND_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    found: bool
    value: _struct_pb2.Value
    def __init__(self, found: _Optional[bool] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ...) -> None: ...

class SetCacheEntryRequest(_message.Message):
    __slots__ = ("key", "value", "ttl", "pinned")
    KEY_FIELD_NUMBER: _ClassVar[int]
    VALUE_FIELD_NUMBER: _ClassVar[int]
    TTL_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    key: str
    value: _struct_pb2.Value
    ttl: _duration_pb2.Duration
    pinned: bool
    def __init__(self, key: _Optional[str] = ..., value: _Optional[_Union[_struct_pb2.Value, _Mapping]] = ..., ttl: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., pinned: _Optional[bool] = ...) -> None: ...

class SetCacheEntryResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DeleteCacheEntryRequest(_message.Message):
    __slots__ = ("key",)
    KEY_FIELD_NUMBER: _ClassVar[int]
    key: str
    def __init__(self, key: _Optional[str] = ...) -> None: ...

class DeleteCacheEntryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class ClearCacheRequest(_message.Message):
    __slots__ = ("prefix",)
    PREFIX_FIELD_NUMBER: _ClassVar[int]
    prefix: str
    def __init__(self, prefix: _Optional[str] = ...) -> None: ...

class ClearCacheResponse(_message.Message):
    __slots__ = ("deleted_count",)
    DELETED_COUNT_FIELD_NUMBER: _ClassVar[int]
    deleted_count: int
    def __init__(self, deleted_count: _Optional[int] = ...) -> None: ...

class GetCacheStatsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetCacheStatsResponse(_message.Message):
    __slots__ = ("hits", "misses", "writes", "errors", "size", "backend")
    HITS_FIELD_NUMBER: _ClassVar[int]
    MISSES_FIELD_NUMBER: _ClassVar[int]
    WRITES_FIELD_NUMBER: _ClassVar[int]
    ERRORS_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    hits: int
    misses: int
    writes: int
    errors: int
    size: int
    backend: str
    def __init__(self, hits: _Optional[int] = ..., misses: _Optional[int] = ..., writes: _Optional[int] = ..., errors: _Optional[int] = ..., size: _Optional[int] = ..., backend: _Optional[str] = ...) -> None: ...

class InvalidateResponseCacheRequest(_message.Message):
    __slots__ = ("agent_id", "scope", "no_scope")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SCOPE_FIELD_NUMBER: _ClassVar[int]
    NO_SCOPE_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    scope: str
    no_scope: _empty_pb2.Empty
    def __init__(self, agent_id: _Optional[str] = ..., scope: _Optional[str] = ..., no_scope: _Optional[_Union[_empty_pb2.Empty, _Mapping]] = ...) -> None: ...

class InvalidateResponseCacheResponse(_message.Message):
    __slots__ = ("deleted_count",)
    DELETED_COUNT_FIELD_NUMBER: _ClassVar[int]
    deleted_count: int
    def __init__(self, deleted_count: _Optional[int] = ...) -> None: ...
