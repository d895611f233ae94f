"""Processors that are services: the `remote` processor and its channels.

`remote_factory()` is what `agentd serve` registers under the name `remote`
(beside the built-ins), so an entry in agentd.toml or a per-call spec names it
like any registered processor. The runtime never sees grpc: it gets a
`Processor` from a factory.
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

import grpc

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.lazy import lazy, lazy_exports
from agentd.runtime.processors.factory import Factory

if TYPE_CHECKING:
    from agentd.remote import processor as _processor
    from agentd.remote import settings as _settings
    from agentd.remote.processor import RemoteProcessor
    from agentd.remote.session import ProcessorStreamError
    from agentd.remote.settings import RemoteSettings
else:
    # Loaded with the first `remote` entry: the processor, its conversions and the
    # ProcessorService stubs are for servers that configure one.
    _processor = lazy("agentd.remote.processor")
    _settings = lazy("agentd.remote.settings")
    __getattr__ = lazy_exports(
        "agentd.remote",
        {
            "RemoteProcessor": "agentd.remote.processor",
            "ProcessorStreamError": "agentd.remote.session",
            "RemoteSettings": "agentd.remote.settings",
        },
    )

__all__ = [
    "ChannelPool",
    "ProcessorStreamError",
    "RemoteProcessor",
    "RemoteSettings",
    "TargetPolicy",
    "remote_factory",
]

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
        made = _settings.channel(settings)
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


class TargetPolicy:
    """Which targets an entry may name. Open until sealed: agentd serve builds
    agentd.toml's entries first (the operator's, any target), then seals it
    with `[remote_processors] allowed_targets`, which a call's own entries
    must match."""

    def __init__(self) -> None:
        self._patterns: tuple[str, ...] | None = None

    def seal(self, patterns: Sequence[str]) -> None:
        self._patterns = tuple(patterns)

    def check(self, target: str) -> None:
        patterns = self._patterns
        if patterns is None or any(fnmatch.fnmatchcase(target, p) for p in patterns):
            return
        raise InvalidArgument.field(
            "options.target",
            f"remote: target {target!r} is not in [remote_processors] allowed_targets",
            "REMOTE_TARGET_NOT_ALLOWED",
        )


def remote_factory(pool: ChannelPool | None = None, policy: TargetPolicy | None = None) -> Factory:
    """The factory registered as `remote`: options as in settings.py."""
    channels = pool or ChannelPool()
    targets = policy or TargetPolicy()

    def build(options: dict[str, Any]) -> RemoteProcessor:
        try:
            settings = _settings.parse(options)
        except (TypeError, ValueError) as exc:
            raise InvalidArgument.field("options", str(exc)) from None
        targets.check(settings.target)
        return _processor.RemoteProcessor(settings, lambda: channels.get(settings))

    return build
