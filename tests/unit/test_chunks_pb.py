"""Chunks to protobuf, each filled in place in its message: every payload type
lands in its own oneof field, empty ones too, with what it carries."""

from __future__ import annotations

import pytest

from agentd.grpc.chunks import add_chunks, chunk_to_pb
from agentd.runtime import chunks
from agentd.runtime.chunks import Chunk, Payload
from agentd_proto.v1 import agent_service_pb2 as apb
from support.samples import every_payload

#: The oneof field each payload type goes in, where it is not the payload's `type` in snake case.
FIELDS = {
    chunks.ToolCallStart: "tool_call_start",
    chunks.ToolCallEnd: "tool_call_end",
    chunks.Data: "data",
    chunks.Source: "source_ref",
}


def field_of(payload: Payload) -> str:
    return FIELDS.get(type(payload), payload.type.replace("-", "_"))


EMPTY = [
    chunks.TextStart(""),
    chunks.TextDelta("", ""),
    chunks.TextEnd(""),
    chunks.ToolCallEnd(""),
    chunks.Abort("", ""),
]


@pytest.mark.parametrize("payload", every_payload() + EMPTY, ids=lambda p: p.type)
def test_each_payload_lands_in_its_own_field(payload: Payload) -> None:
    pb = chunk_to_pb(Chunk(payload, "run-1", 3, parent_run_id="parent", offset=9, source="user", metadata={"k": 1}))
    assert pb.WhichOneof("payload") == field_of(payload)  # chosen even when every field is empty
    assert (pb.run_id, pb.seq, pb.parent_run_id, pb.offset, pb.metadata["k"]) == ("run-1", 3, "parent", 9, 1)


def test_a_batch_built_in_place_is_the_batch_of_its_chunks() -> None:
    batch = [Chunk(p, "run-1", i + 1) for i, p in enumerate(every_payload())]
    built = apb.StreamResponse()
    add_chunks(built.chunks, batch)
    assert built == apb.StreamResponse(chunks=[chunk_to_pb(c) for c in batch])
    delta = next(c for c in built.chunks if c.WhichOneof("payload") == "text_delta")
    assert delta.text_delta.text == "héllo \U0001f600" and not delta.text_delta.HasField("provider_metadata")
    start = next(c for c in built.chunks if c.WhichOneof("payload") == "text_start")
    assert start.text_start.provider_metadata["p"]["x"] == 1
