"""The `google/<model>` model: one generate_content_stream call per `stream()`,
over the official `google-genai` SDK (the request from `request`, the events
from `events`, the errors from `errors`).

One SDK client per API key and endpoint, shared by runs (the SDK pools
connections per event loop, over whichever HTTP client library it picks);
`aclose_clients()` closes them at shutdown. Cancellation propagates and
closes the HTTP response.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from agentd.runtime.models.base import ModelEvent, ModelRequest
from agentd.runtime.models.common import ProviderModel, missing_credentials
from agentd.runtime.models.google.errors import api_error, is_transport_error, transport_error, unreadable_stream
from agentd.runtime.models.google.events import StreamState
from agentd.runtime.models.google.request import PROVIDER, build_request

#: Read in this order; the first one set wins.
API_KEY_VARIABLES = ("GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY")
BASE_URL_VARIABLE = "GOOGLE_GEMINI_BASE_URL"
DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/"
API_VERSION = "v1beta"

#: One SDK client per key and endpoint, shared by runs (it pools connections
#: per event loop); `aclose_clients()` closes them at shutdown.
_clients: dict[tuple[str, str], genai.Client] = {}


def _client(api_key: str, base_url: str) -> genai.Client:
    client = _clients.get((api_key, base_url))
    if client is None:
        client = genai.Client(
            api_key=api_key,
            vertexai=False,
            http_options=types.HttpOptions(
                base_url=base_url,
                api_version=API_VERSION,
                retry_options=types.HttpRetryOptions(attempts=1),
            ),
        )
        _clients[(api_key, base_url)] = client
    return client


async def aclose_clients() -> None:
    """Closes the shared SDK clients (their connection pools on this loop)."""
    clients = list(_clients.values())
    _clients.clear()
    for client in clients:
        await client.aio.aclose()


class GoogleModel(ProviderModel):
    PROVIDER = PROVIDER

    def __init__(self, model_id: str, *, api_key: str, base_url: str = DEFAULT_BASE_URL) -> None:
        super().__init__(model_id, base_url)
        self._api_key = api_key

    @classmethod
    def create(cls, model_id: str, env: Mapping[str, str] | None = None) -> GoogleModel:
        """A model for `google/<model_id>`, configured from `env` (os.environ by default)."""
        env = os.environ if env is None else env
        api_key = next((env[name].strip() for name in API_KEY_VARIABLES if env.get(name, "").strip()), "")
        if not api_key:
            names = " or ".join(API_KEY_VARIABLES)
            raise missing_credentials(PROVIDER, f"google/{model_id} needs an API key: set {names}", *API_KEY_VARIABLES)
        base_url = env.get(BASE_URL_VARIABLE, "").strip() or DEFAULT_BASE_URL
        return cls(model_id, api_key=api_key, base_url=base_url)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # Built eagerly: a request that cannot be sent fails the call, not the stream.
        contents, config = build_request(request)
        return self._stream(contents, config)

    async def _stream(
        self, contents: list[types.Content], config: types.GenerateContentConfig
    ) -> AsyncIterator[ModelEvent]:
        client = _client(self._api_key, self._base_url)
        state = StreamState()
        responses: AsyncIterator[types.GenerateContentResponse] | None = None
        try:
            responses = await client.aio.models.generate_content_stream(
                model=self._model_id, contents=cast(Any, contents), config=config
            )
            async for response in responses:
                for event in state.feed(response):
                    yield event
            for event in state.finish():
                yield event
        except genai_errors.APIError as exc:
            raise api_error(exc) from exc
        except genai_errors.UnknownApiResponseError as exc:
            raise unreadable_stream(exc) from exc
        except Exception as exc:
            if not is_transport_error(exc):
                raise
            raise transport_error(exc) from exc
        finally:
            close = getattr(responses, "aclose", None)
            if close is not None:  # on cancellation too: releases the HTTP response
                await close()


def create(model_id: str, env: Mapping[str, str] | None = None) -> GoogleModel:
    """The router's entry point: `GoogleModel.create`."""
    return GoogleModel.create(model_id, env)
