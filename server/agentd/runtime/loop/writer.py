"""`writer.custom(...)` for hooks and tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentd.runtime.chunks import Data, Payload
from agentd.runtime.messages import DataPart


class Writer:
    """A `data-*` chunk into the live stream (through the output processors),
    kept in the step's response message unless transient."""

    def __init__(self, emit: Callable[[Payload], Awaitable[object]], keep: Callable[[DataPart], None]) -> None:
        self._emit = emit
        self._keep = keep

    async def custom(
        self, type: str | dict[str, Any], data: Any = None, *, id: str | None = None, transient: bool = False
    ) -> None:
        if isinstance(type, dict):  # the reference runtime's object form
            data, id, transient = type.get("data"), type.get("id"), bool(type.get("transient"))
            kind = str(type["type"])
        else:
            kind = type
        if not kind.startswith("data-"):
            raise ValueError(f"custom chunk types start with 'data-', not {kind!r}")
        await self._emit(Data(kind, data, id, transient))
        if not transient:
            self._keep(DataPart(kind, data, id))
