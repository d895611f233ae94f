"""An undecodable request names the field at fault (agentd.grpc.wire)."""

from __future__ import annotations

import random

from agentd.grpc.wire import locate_malformed
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import options_pb2 as opb


def test_invalid_utf8_deep_in_a_request_is_named() -> None:
    good = apb.GenerateRequest(
        agent_id="echo", messages=[mpb.Message(id="okay"), mpb.Message(id="ab12", thread_id="ab12")]
    ).SerializeToString()
    bad = good.replace(b"ab12", b"\xff\xfe12")  # both ids of the second message garbled: the first is named
    assert locate_malformed(apb.GenerateRequest.DESCRIPTOR, bad) == ("messages[1].id", "is not valid UTF-8")


def test_a_truncated_sub_message_and_a_wrong_wire_type_are_named() -> None:
    req = apb.GenerateRequest(agent_id="a", options=opb.ExecutionOptions(memory=opb.MemoryOptions(thread_id="t1")))
    data = req.SerializeToString()
    path, reason = locate_malformed(apb.GenerateRequest.DESCRIPTOR, data[:-2]) or ("", "")
    assert path.startswith("options") and "bytes" in reason
    # agent_id (field 1, a string) sent as a varint
    assert locate_malformed(apb.GenerateRequest.DESCRIPTOR, b"\x08\x01") == (
        "agent_id",
        "arrived as wire type 0, which a string field cannot be",
    )


def test_what_decodes_is_not_blamed_and_random_bytes_never_crash_the_walk() -> None:
    data = apb.GenerateRequest(agent_id="echo", text="hi").SerializeToString()
    assert locate_malformed(apb.GenerateRequest.DESCRIPTOR, data) is None
    rng = random.Random(7)
    for _ in range(5_000):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        found = locate_malformed(apb.GenerateRequest.DESCRIPTOR, blob)
        assert found is None or (isinstance(found[0], str) and found[1])
