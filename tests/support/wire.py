"""Talking to agentd over gRPC in the service tests: ExecutionOptions as
callers send them (the scripted local model's steps, processor lanes), and
the chunks a Stream call answers."""

from __future__ import annotations

from typing import Any

import grpc

from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import options_pb2 as opb


def scripted(*steps: dict[str, Any], **fields: Any) -> opb.ExecutionOptions:
    """Options (with `fields`) that make `local/scripted` answer one step a model call."""
    options = opb.ExecutionOptions(**fields)
    options.provider_options.update({"local": {"script": list(steps)}})
    return options


def lane(*processors: str | tuple[str, dict[str, Any]]) -> opb.ProcessorList:
    """A processor lane, in order: each a name, or (name, options)."""
    refs = []
    for processor in processors:
        name, options = (processor, {}) if isinstance(processor, str) else processor
        spec = opb.ProcessorSpec(name=name)
        spec.options.update(options)
        refs.append(opb.ProcessorRef(processor=spec))
    return opb.ProcessorList(processors=refs)


async def drain(call: Any) -> list[cpb.Chunk]:
    """The chunks an AgentService.Stream call answers from here to its end."""
    chunks: list[cpb.Chunk] = []
    while (message := await call.read()) is not grpc.aio.EOF:
        chunks.extend(message.chunks)
    return chunks
