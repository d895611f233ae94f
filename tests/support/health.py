"""Asking a server's standard gRPC health service, for the tests that watch
health follow storage (in-process servers and agentd processes alike)."""

from __future__ import annotations

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
#: What reports NOT_SERVING while storage is silent (the overall "" too).
STORAGE_SERVICES = ("", "agentd.v1.ThreadService", "agentd.v1.SignalService")


async def health(addr: str, service: str = "") -> int:
    """The health status of `service` on `addr` (-1 when the call fails)."""
    async with grpc.aio.insecure_channel(addr) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=2
            )
        except grpc.aio.AioRpcError:
            return -1
    return int(reply.status)


async def all_health(addr: str, status: int, services: tuple[str, ...] = STORAGE_SERVICES) -> bool:
    return all([await health(addr, s) == status for s in services])
