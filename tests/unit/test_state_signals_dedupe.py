"""A state signal is routed with the routing fields of its request, copied by
name (state_signals.ROUTE_FIELDS): every one of them must be a field of
StateSignalRequest, and none of RouteRequest's may be left out unnoticed."""

from __future__ import annotations

from dataclasses import fields

from agentd.runtime.state_signals import ROUTE_FIELDS, StateSignalRequest
from agentd.runtime.threads import RouteRequest


def test_every_routing_field_is_a_request_field() -> None:
    request_fields = {f.name for f in fields(StateSignalRequest)}
    assert set(ROUTE_FIELDS) <= request_fields


def test_the_routing_fields_are_all_of_route_requests_but_the_signal_and_queue() -> None:
    assert set(ROUTE_FIELDS) | {"signal", "queue"} == {f.name for f in fields(RouteRequest)}
    assert ROUTE_FIELDS == (
        "agent_id",
        "resource_id",
        "thread_id",
        "if_active",
        "if_idle",
        "active_attributes",
        "idle_attributes",
        "stream_options",
        "run_id",
        "tenant",
    )
