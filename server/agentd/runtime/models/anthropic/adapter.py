"""The `anthropic/<model>` model: one streamed Messages API call per `stream()`,
over the official `anthropic` SDK (the request from `request`, the events from
`events`, the errors from `errors`).

SDK clients are shared per event loop and settings, so calls reuse pooled
connections; `close_clients()` closes those of the running loop (at shutdown).
Cancellation propagates: cancelling the run closes the stream and its HTTP
connection.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anthropic

from agentd.runtime.models.anthropic.errors import api_error, read_error
from agentd.runtime.models.anthropic.events import StreamDecoder
from agentd.runtime.models.anthropic.request import PROVIDER, build_call
from agentd.runtime.models.base import ModelEvent, ModelRequest
from agentd.runtime.models.common import ConvertedErrors, ProviderModel, missing_credentials

API_KEY_VARIABLE = "ANTHROPIC_API_KEY"
BASE_URL_VARIABLE = "ANTHROPIC_BASE_URL"
DEFAULT_BASE_URL = "https://api.anthropic.com"
#: SDK clients by event loop, then by (api key, base URL, timeout): connections are
#: pooled per loop, and a loop's clients go when the loop does.
_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, float | None], anthropic.AsyncAnthropic]
] = weakref.WeakKeyDictionary()


def create(model_id: str, env: Mapping[str, str] | None = None, *, timeout: float | None = None) -> AnthropicModel:
    """The adapter for `anthropic/<model_id>`, configured from `env` (the process
    environment when None). `timeout` (seconds) overrides the SDK's default."""
    env = os.environ if env is None else env
    api_key = (env.get(API_KEY_VARIABLE) or "").strip()
    if not api_key:
        raise missing_credentials(
            PROVIDER,
            f"the {PROVIDER} provider needs {API_KEY_VARIABLE}: set it in agentd's environment",
            API_KEY_VARIABLE,
        )
    base_url = (env.get(BASE_URL_VARIABLE) or "").strip() or DEFAULT_BASE_URL
    return AnthropicModel(model_id, api_key=api_key, base_url=base_url, timeout=timeout)


class AnthropicModel(ProviderModel):
    """One `anthropic/<model>`; `stream()` makes one Messages API call."""

    PROVIDER = PROVIDER

    def __init__(self, model_id: str, *, api_key: str, base_url: str, timeout: float | None = None) -> None:
        super().__init__(model_id, base_url)
        self._api_key = api_key
        self._timeout = timeout

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        return self._stream(request)

    def _client(self) -> anthropic.AsyncAnthropic:
        """The SDK client for these settings on the running loop (shared: its pool
        keeps connections for the next call)."""
        per_loop = _CLIENTS.setdefault(asyncio.get_running_loop(), {})
        key = (self._api_key, self._base_url, self._timeout)
        client = per_loop.get(key)
        if client is None or client.is_closed():
            if self._timeout is None:
                client = anthropic.AsyncAnthropic(api_key=self._api_key, base_url=self._base_url, max_retries=0)
            else:
                client = anthropic.AsyncAnthropic(
                    api_key=self._api_key, base_url=self._base_url, max_retries=0, timeout=self._timeout
                )
            per_loop[key] = client
        return client

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        call = build_call(self._model_id, request)
        decoder = StreamDecoder(call.structured)
        client = self._client()
        stream: Any = None
        try:
            body = dict(call.body)
            try:
                stream = await client.messages.create(
                    model=body.pop("model"),
                    max_tokens=body.pop("max_tokens"),
                    messages=body.pop("messages"),
                    stream=True,
                    extra_body=body,
                    extra_headers=call.headers or None,
                )
            except anthropic.APIError as exc:
                raise api_error(exc) from exc
            async for event in ConvertedErrors(stream, read_error):
                for out in decoder.feed(event):
                    yield out
            yield decoder.finish()
        finally:
            # On completion, error and cancellation alike. A response closed before
            # its end closes its connection: a cancelled run ends its HTTP request.
            if stream is not None:
                await stream.close()


async def close_clients() -> None:
    """Closes the SDK clients made on the running loop, and their pooled
    connections (for shutdown; a later call makes a new client)."""
    clients = _CLIENTS.pop(asyncio.get_running_loop(), {})
    for client in clients.values():
        await client.close()
