"""Editor overrides between protobuf and the runtime: the request's values
and mask in, a stored version out."""

from __future__ import annotations

from agentd.grpc.values import to_timestamp
from agentd.runtime.overrides import OverridesUpdate, OverrideValues, OverrideVersion
from agentd_proto.v1 import agent_overrides_pb2 as opb

__all__ = ["overrides_to_pb", "update_from_pb"]


def update_from_pb(request: opb.UpdateAgentOverridesRequest) -> OverridesUpdate:
    given = request.overrides
    values = OverrideValues(
        instructions=given.instructions if given.HasField("instructions") else None,
        tools=tuple(given.tools.names) if given.HasField("tools") else None,
        tool_descriptions=dict(given.tool_descriptions),
    )
    paths = tuple(request.update_mask.paths) if request.HasField("update_mask") else None
    return OverridesUpdate(given.agent_id, values, paths)


def overrides_to_pb(agent_id: str, version: OverrideVersion | None) -> opb.AgentOverrides:
    """A version as the contract shows it (`None`: nothing ever written)."""
    if version is None:
        return opb.AgentOverrides(agent_id=agent_id)
    values = version.values
    out = opb.AgentOverrides(
        agent_id=agent_id,
        tool_descriptions=values.tool_descriptions,
        version=version.version,
        updated_by=version.updated_by,
        update_time=to_timestamp(version.updated_at),
        overridden_fields=values.fields,
    )
    if values.instructions is not None:
        out.instructions = values.instructions
    if values.tools is not None:
        out.tools.SetInParent()  # an empty selection (no tools) is still an override
        out.tools.names.extend(values.tools)
    return out
