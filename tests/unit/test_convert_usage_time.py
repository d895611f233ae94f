"""Usage and timestamps to protobuf (each runtime field lands in its field, a
time is the instant protobuf's own conversion gives), and unset options."""

from __future__ import annotations

from dataclasses import fields
from datetime import UTC, datetime, timedelta, timezone

import pytest
from google.protobuf import timestamp_pb2

from agentd.grpc.authz import CALLER
from agentd.grpc.chunks import fill_usage, usage_to_pb
from agentd.grpc.options import execution_options
from agentd.grpc.values import fill_timestamp, to_timestamp
from agentd.grpc.violations import Violations
from agentd.runtime.chunks import Usage
from agentd.runtime.identity import ANONYMOUS, SUBJECT_KEY, TENANT_KEY, Identity
from agentd_proto.v1 import agent_service_pb2 as apb
from agentd_proto.v1 import options_pb2 as opb


def test_every_usage_counter_is_carried_and_an_unreported_one_stays_unset() -> None:
    names = [f.name for f in fields(Usage)]
    counted = Usage(**{name: 10 + i for i, name in enumerate(names)})
    pb = usage_to_pb(counted)
    assert {name: getattr(pb, name) for name in names} == {name: 10 + i for i, name in enumerate(names)}
    assert [f.name for f in pb.DESCRIPTOR.fields] == names  # nothing the proto has is left out
    unreported = usage_to_pb(Usage(input_tokens=3))
    assert [name for name in names if unreported.HasField(name)] == ["input_tokens"]


def test_a_usage_filled_in_place_is_there_even_with_nothing_reported() -> None:
    reply = apb.GenerateResponse()
    fill_usage(reply.usage, Usage())
    assert reply.HasField("usage") and reply.usage == usage_to_pb(Usage())


@pytest.mark.parametrize(
    "when",
    [
        datetime(2026, 12, 1, 17, 0, 0, 123456, tzinfo=UTC),
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
        datetime(1960, 5, 3, 1, 2, 3, 456789, tzinfo=timezone(timedelta(hours=-5))),
        datetime(2026, 6, 1, 12, 30),  # naive: local time, as astimezone reads it
    ],
)
def test_a_timestamp_is_the_instant_protobuf_gives(when: datetime) -> None:
    expected = timestamp_pb2.Timestamp()
    expected.FromDatetime(when.astimezone(UTC))
    assert to_timestamp(when) == expected
    assert to_timestamp(None) is None
    filled = timestamp_pb2.Timestamp()
    fill_timestamp(filled, when)
    assert filled == expected


@pytest.mark.parametrize("who", [ANONYMOUS, Identity("acme", "billing", frozenset({"writer"}), ("*",), "token")])
def test_options_with_nothing_set_are_what_the_full_reading_gives(who: Identity) -> None:
    """Unset options skip the reading; a set but empty `scorers` takes it, to the same options."""
    token = CALLER.set(who)
    try:
        v = Violations()
        unset = execution_options(opb.ExecutionOptions(), "options", v)
        read = execution_options(opb.ExecutionOptions(scorers=opb.ScorerOptions()), "options", v)
        v.check()
    finally:
        CALLER.reset(token)
    assert unset == read
    if who is not ANONYMOUS:
        assert unset.request_context == {TENANT_KEY: "acme", SUBJECT_KEY: "billing"}
