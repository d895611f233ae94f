"""Editor overrides of agentd's code-defined agents: `AgentdClient`'s
`get_agent_overrides`, `update_agent_overrides`, `delete_agent_overrides`,
`agent_override_versions` and `restore_agent_overrides`."""

# `timeout=` is the gRPC idiom: a per-call deadline (seconds), as on the unary calls.
# ruff: noqa: ASYNC109

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from google.protobuf import field_mask_pb2

from agentd_proto.v1 import agent_overrides_pb2

from .connection import Connection
from .types import Pager

__all__ = ["KEEP", "OverridesMixin"]


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


#: "Leave this field as it is" (the default of every `update_agent_overrides` field).
KEEP: Final[Any] = _Keep()


class OverridesMixin(Connection):
    async def get_agent_overrides(
        self, agent_id: str, *, timeout: float | None = None
    ) -> agent_overrides_pb2.AgentOverrides:
        """The overrides in effect (`version` 0: none ever written)."""
        request = agent_overrides_pb2.GetAgentOverridesRequest(agent_id=agent_id)
        response = await self._unary("agents", "GetAgentOverrides", request, timeout)
        return response.overrides  # type: ignore[no-any-return]

    async def update_agent_overrides(
        self,
        agent_id: str,
        *,
        instructions: str | None = KEEP,
        tools: Sequence[str] | None = KEEP,
        tool_descriptions: Mapping[str, str | None] | None = KEEP,
        timeout: float | None = None,
    ) -> agent_overrides_pb2.AgentOverrides:
        """Writes the fields given and leaves the others: None removes that
        override (back to the code's); a `tool_descriptions` entry of None removes
        that tool's description, `tool_descriptions=None` all of them. Needs `admin`;
        a field the agent's `editor` policy locks is PermissionDeniedError
        (EDITOR_FIELD_LOCKED). Returns the new version."""
        overrides = agent_overrides_pb2.AgentOverrides(agent_id=agent_id)
        paths: list[str] = []
        if instructions is not KEEP:
            paths.append("instructions")
            if instructions is not None:
                overrides.instructions = instructions
        if tools is not KEEP:
            paths.append("tools")
            if tools is not None:
                overrides.tools.SetInParent()
                overrides.tools.names.extend(tools)
        if tool_descriptions is None:
            paths.append("tool_descriptions")
        elif tool_descriptions is not KEEP:
            for name, description in tool_descriptions.items():
                paths.append(f"tool_descriptions.{name}")
                if description is not None:
                    overrides.tool_descriptions[name] = description
        request = agent_overrides_pb2.UpdateAgentOverridesRequest(
            overrides=overrides, update_mask=field_mask_pb2.FieldMask(paths=paths)
        )
        response = await self._unary("agents", "UpdateAgentOverrides", request, timeout)
        return response.overrides  # type: ignore[no-any-return]

    async def delete_agent_overrides(
        self, agent_id: str, *, timeout: float | None = None
    ) -> agent_overrides_pb2.AgentOverrides:
        """Removes every override; returns the version that records it."""
        request = agent_overrides_pb2.DeleteAgentOverridesRequest(agent_id=agent_id)
        response = await self._unary("agents", "DeleteAgentOverrides", request, timeout)
        return response.overrides  # type: ignore[no-any-return]

    def agent_override_versions(
        self, agent_id: str, *, page_size: int = 0, timeout: float | None = None
    ) -> Pager[agent_overrides_pb2.AgentOverrides]:
        """Every version, newest first: `async for v in ...`, or `await (...).all()`."""

        async def fetch(token: str) -> tuple[list[agent_overrides_pb2.AgentOverrides], str]:
            request = agent_overrides_pb2.ListAgentOverrideVersionsRequest(
                agent_id=agent_id, page_size=page_size, page_token=token
            )
            response = await self._unary("agents", "ListAgentOverrideVersions", request, timeout)
            return list(response.versions), response.next_page_token

        return Pager(fetch)

    async def restore_agent_overrides(
        self, agent_id: str, version: int, *, timeout: float | None = None
    ) -> agent_overrides_pb2.AgentOverrides:
        """Makes `version`'s fields current again, as a new version (returned)."""
        request = agent_overrides_pb2.RestoreAgentOverridesRequest(agent_id=agent_id, version=version)
        response = await self._unary("agents", "RestoreAgentOverrides", request, timeout)
        return response.overrides  # type: ignore[no-any-return]
