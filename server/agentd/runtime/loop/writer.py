"""`writer.custom(...)` for hooks and tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentd.runtime.chunks import Data, Payload
from agentd.runtime.messages import DataPart


class Writer:
    """A `data-*` chunk into the live stream (through the output processors).
    What the write put on the stream is kept in the step's response message,
    except a transient chunk (written so, or marked so by a processor) and one
    a processor dropped."""

    def __init__(self, emit: Callable[[Payload], Awaitable[list[Payload]]], keep: Callable[[DataPart], None]) -> None:
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
        for payload in await self._emit(Data(kind, data, id, transient)):
            if isinstance(payload, Data) and not payload.transient:
                self._keep(DataPart(payload.type, payload.data, payload.id))
