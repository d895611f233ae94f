"""The look at a request's bytes that spares most requests the walk for NaN
and infinite numbers: every non-finite double, whatever its sign and NaN
payload, leaves a byte it looks for; and the walk goes only into fields that
can hold a Value."""

from __future__ import annotations

import struct

import pytest
from google.protobuf import struct_pb2

from agentd.grpc.values import holds_values, may_hold_non_finite, non_finite
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb
from agentd_proto.v1 import usage_pb2 as upb

# Exponent all ones: infinities (mantissa 0) and NaNs (any other mantissa, quiet or signalling).
NON_FINITE_BITS = [
    0x7FF0000000000000,
    0xFFF0000000000000,
    0x7FF8000000000000,
    0xFFF8000000000000,
    0x7FF0000000000001,
    0xFFF0000000000001,
    0x7FFFFFFFFFFFFFFF,
    0x7FF4000000000000,
    0xFFF00000DEADBEEF,
]


@pytest.mark.parametrize("bits", NON_FINITE_BITS)
def test_every_non_finite_double_is_seen_in_the_bytes(bits: int) -> None:
    (x,) = struct.unpack("<d", struct.pack("<Q", bits))
    options = opb.ExecutionOptions()
    options.request_context.update({"a": 1})
    options.request_context.fields["a"].number_value = x
    request = apb.GenerateRequest(agent_id="echo", text="hi", options=options)
    data = request.SerializeToString()
    assert may_hold_non_finite(data)
    assert [v.field for v in non_finite(apb.GenerateRequest.FromString(data))] == ["options.request_context.a"]


def test_plain_requests_need_no_walk() -> None:
    options = opb.ExecutionOptions()
    options.request_context.update({"page": {"scores": [1, 2.5, -3e300, 0.1]}})
    request = apb.GenerateRequest(agent_id="echo", text="one two", options=options)
    assert not may_hold_non_finite(request.SerializeToString())


def test_the_walk_goes_only_where_a_value_can_be() -> None:
    assert holds_values(apb.GenerateRequest.DESCRIPTOR)  # messages' metadata, options' request_context
    assert holds_values(struct_pb2.Value.DESCRIPTOR)  # which holds itself, through Struct and ListValue
    assert not holds_values(apb.GetAgentRequest.DESCRIPTOR)
    assert not holds_values(upb.Usage.DESCRIPTOR)
