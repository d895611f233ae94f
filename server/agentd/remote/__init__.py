"""Processors that are services: the `remote` processor and its channels.

`remote_factory()` is what `agentd serve` registers under the name `remote`
(beside the built-ins), so an entry in agentd.toml or a per-call spec names it
like any registered processor. The runtime never sees grpc: it gets a
`Processor` from a factory.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Final

import grpc

from agentd.remote.processor import RemoteProcessor
from agentd.remote.session import ProcessorStreamError
from agentd.remote.settings import RemoteSettings, channel, parse
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.processors.factory import Factory

__all__ = ["ChannelPool", "ProcessorStreamError", "RemoteProcessor", "RemoteSettings", "remote_factory"]

#: Distinct processor services one process keeps channels to (per-call specs may name many).
MAX_CHANNELS: Final = 64


class ChannelPool:
    """One channel per target and TLS settings, shared by every run, bounded
    (the least recently used is closed). A channel belongs to the event loop
    that made it, so one made under another loop is made again."""

    def __init__(self, limit: int = MAX_CHANNELS) -> None:
        self._limit = limit
        self._channels: OrderedDict[Any, tuple[asyncio.AbstractEventLoop, grpc.aio.Channel]] = OrderedDict()
        self._closing: set[asyncio.Task[None]] = set()

    def get(self, settings: RemoteSettings) -> grpc.aio.Channel:
        loop = asyncio.get_running_loop()
        key = settings.channel_key
        held = self._channels.get(key)
        if held is not None and held[0] is loop:
            self._channels.move_to_end(key)
            return held[1]
        made = channel(settings)
        self._channels[key] = (loop, made)
        while len(self._channels) > self._limit:
            _, (old_loop, old) = self._channels.popitem(last=False)
            if old_loop is loop:
                task = loop.create_task(old.close(grace=None))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
        return made

    async def close(self) -> None:
        loop = asyncio.get_running_loop()
        channels, self._channels = self._channels, OrderedDict()
        for owner, held in channels.values():
            if owner is loop:
                await held.close(grace=None)


def remote_factory(pool: ChannelPool | None = None) -> Factory:
    """The factory registered as `remote`: options as in settings.py."""
    channels = pool or ChannelPool()

    def build(options: dict[str, Any]) -> RemoteProcessor:
        try:
            settings = parse(options)
        except (TypeError, ValueError) as exc:
            raise InvalidArgument.field("options", str(exc)) from None
        return RemoteProcessor(settings, lambda: channels.get(settings))

    return build
