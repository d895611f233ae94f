"""The standard gRPC health service, with `List`.

grpc_health's asyncio servicer answers Check and Watch but not List (it
raises NotImplementedError, so every List logged an error traceback and
answered UNIMPLEMENTED). This one records each status it is given and lists
them all, as the health protocol describes."""

from __future__ import annotations

from typing import Any

from grpc_health.v1 import health, health_pb2

__all__ = ["HealthService"]


class HealthService(health.aio.HealthServicer):  # type: ignore[misc,name-defined]  # untyped module
    def __init__(self) -> None:
        super().__init__()
        self._listed: dict[str, int] = {"": health_pb2.HealthCheckResponse.SERVING}
        self._stopping = False

    async def set(self, service: str, status: int) -> None:
        if not self._stopping:  # as the base: a status set after shutdown began is ignored
            self._listed[service] = status
        await super().set(service, status)

    async def enter_graceful_shutdown(self) -> None:
        self._stopping = True
        self._listed = dict.fromkeys(self._listed, health_pb2.HealthCheckResponse.NOT_SERVING)
        await super().enter_graceful_shutdown()

    async def List(self, request: health_pb2.HealthListRequest, context: Any) -> health_pb2.HealthListResponse:
        return health_pb2.HealthListResponse(
            statuses={name: health_pb2.HealthCheckResponse(status=status) for name, status in self._listed.items()}
        )
