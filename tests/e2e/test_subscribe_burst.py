"""Subscribes opened all at once (every client reconnecting after a restart)
are all answered: none is CANCELLED by grpc core's queue of calls the server
has not picked up yet."""

from __future__ import annotations

import asyncio
import collections

import grpc

from agentd_proto.v1 import thread_service_pb2 as tpb
from agentd_proto.v1 import thread_service_pb2_grpc

from .serverproc import start_server

#: Past grpc's default soft limit of 1,000 waiting calls, near its hard 3,000.
BURST = 2500


async def test_a_burst_of_subscribes_on_one_channel_is_all_answered() -> None:
    server = start_server(extra_args=["--log-level", "WARNING"])
    try:
        server.wait_serving(timeout=30)
        outcomes: collections.Counter[str] = collections.Counter()
        async with grpc.aio.insecure_channel(server.addr) as channel:
            stub = thread_service_pb2_grpc.ThreadServiceStub(channel)
            calls = [stub.Subscribe(tpb.SubscribeRequest(resource_id="burst", thread_id=f"t{i}")) for i in range(BURST)]

            async def first(call: grpc.aio.UnaryStreamCall) -> None:  # type: ignore[type-arg]
                try:
                    response = await call.read()
                    outcomes["snapshot" if response.HasField("snapshot") else repr(response)] += 1
                except grpc.aio.AioRpcError as exc:
                    outcomes[exc.code().name] += 1

            await asyncio.wait_for(asyncio.gather(*(first(call) for call in calls)), 120)
            for call in calls:
                call.cancel()
        assert outcomes == {"snapshot": BURST}, (outcomes, server.log_tail())
    finally:
        server.stop()
