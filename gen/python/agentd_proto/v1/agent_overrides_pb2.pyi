import datetime

from google.protobuf import field_mask_pb2 as _field_mask_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentOverrides(_message.Message):
    __slots__ = ("agent_id", "instructions", "tools", "tool_descriptions", "version", "updated_by", "update_time", "overridden_fields")
    class ToolDescriptionsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTIONS_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    TOOL_DESCRIPTIONS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    UPDATED_BY_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    OVERRIDDEN_FIELDS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    instructions: str
    tools: ToolSelection
    tool_descriptions: _containers.ScalarMap[str, str]
    version: int
    updated_by: str
    update_time: _timestamp_pb2.Timestamp
    overridden_fields: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, agent_id: _Optional[str] = ..., instructions: _Optional[str] = ..., tools: _Optional[_Union[ToolSelection, _Mapping]] = ..., tool_descriptions: _Optional[_Mapping[str, str]] = ..., version: _Optional[int] = ..., updated_by: _Optional[str] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., overridden_fields: _Optional[_Iterable[str]] = ...) -> None: ...

class ToolSelection(_message.Message):
    __slots__ = ("names",)
    NAMES_FIELD_NUMBER: _ClassVar[int]
    names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, names: _Optional[_Iterable[str]] = ...) -> None: ...

class GetAgentOverridesRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class GetAgentOverridesResponse(_message.Message):
    __slots__ = ("overrides",)
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    overrides: AgentOverrides
    def __init__(self, overrides: _Optional[_Union[AgentOverrides, _Mapping]] = ...) -> None: ...

class UpdateAgentOverridesRequest(_message.Message):
    __slots__ = ("overrides", "update_mask")
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    UPDATE_MASK_FIELD_NUMBER: _ClassVar[int]
    overrides: AgentOverrides
    update_mask: _field_mask_pb2.FieldMask
    def __init__(self, overrides: _Optional[_Union[AgentOverrides, _Mapping]] = ..., update_mask: _Optional[_Union[_field_mask_pb2.FieldMask, _Mapping]] = ...) -> None: ...

class UpdateAgentOverridesResponse(_message.Message):
    __slots__ = ("overrides",)
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    overrides: AgentOverrides
    def __init__(self, overrides: _Optional[_Union[AgentOverrides, _Mapping]] = ...) -> None: ...

class DeleteAgentOverridesRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class DeleteAgentOverridesResponse(_message.Message):
    __slots__ = ("overrides",)
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    overrides: AgentOverrides
    def __init__(self, overrides: _Optional[_Union[AgentOverrides, _Mapping]] = ...) -> None: ...

class ListAgentOverrideVersionsRequest(_message.Message):
    __slots__ = ("agent_id", "page_size", "page_token")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    page_size: int
    page_token: str
    def __init__(self, agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentOverrideVersionsResponse(_message.Message):
    __slots__ = ("versions", "next_page_token")
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    versions: _containers.RepeatedCompositeFieldContainer[AgentOverrides]
    next_page_token: str
    def __init__(self, versions: _Optional[_Iterable[_Union[AgentOverrides, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class RestoreAgentOverridesRequest(_message.Message):
    __slots__ = ("agent_id", "version")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: int
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[int] = ...) -> None: ...

class RestoreAgentOverridesResponse(_message.Message):
    __slots__ = ("overrides",)
    OVERRIDES_FIELD_NUMBER: _ClassVar[int]
    overrides: AgentOverrides
    def __init__(self, overrides: _Optional[_Union[AgentOverrides, _Mapping]] = ...) -> None: ...
