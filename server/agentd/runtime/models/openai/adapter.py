"""The `openai/...` model: one streamed Chat Completions call per `stream()`,
over the official `openai` SDK (the request from `request`, the events from
`events`, the errors from `errors`)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any, cast

import openai

from agentd.runtime.models.base import ModelEvent, ModelRequest
from agentd.runtime.models.common import ConvertedErrors, JSONObject, ProviderModel, missing_credentials
from agentd.runtime.models.openai.errors import converted
from agentd.runtime.models.openai.events import StreamState
from agentd.runtime.models.openai.request import PROVIDER, build_params, openai_options

API_KEY_VARIABLE = "OPENAI_API_KEY"
BASE_URL_VARIABLE = "OPENAI_BASE_URL"
DEFAULT_BASE_URL = "https://api.openai.com/v1"


def create(model_id: str, env: Mapping[str, str] | None = None, *, timeout: float | None = None) -> OpenAIModel:
    """An `openai/<model_id>` model configured from `env` (default: the process
    environment). `timeout` (seconds) replaces the SDK's default request timeout."""
    source = os.environ if env is None else env
    api_key = source.get(API_KEY_VARIABLE) or ""
    if not api_key.strip():
        raise missing_credentials(
            PROVIDER, f"the openai provider needs an API key: set {API_KEY_VARIABLE}", API_KEY_VARIABLE
        )
    base_url = (source.get(BASE_URL_VARIABLE) or "").strip() or DEFAULT_BASE_URL
    return OpenAIModel(
        model_id,
        api_key=api_key,
        base_url=base_url,
        organization=source.get("OPENAI_ORG_ID") or None,
        project=source.get("OPENAI_PROJECT_ID") or None,
        timeout=timeout,
    )


class OpenAIModel(ProviderModel):
    PROVIDER = PROVIDER

    def __init__(
        self,
        model_id: str,
        *,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        organization: str | None = None,
        project: str | None = None,
        timeout: float | None = None,
    ) -> None:
        super().__init__(model_id, base_url.rstrip("/"))
        self._api_key = api_key
        self._organization = organization
        self._project = project
        self._timeout = timeout

    @property
    def is_official_endpoint(self) -> bool:
        """True for OpenAI's own API, False for a compatible server."""
        return self._base_url == DEFAULT_BASE_URL.rstrip("/")

    def build_params(self, request: ModelRequest) -> tuple[JSONObject, JSONObject]:
        """The typed request parameters and the provider options (extra body) of a call."""
        return build_params(request, official_endpoint=self.is_official_endpoint)

    def _client(self) -> openai.AsyncOpenAI:
        kwargs: JSONObject = {
            "api_key": self._api_key,
            "base_url": self._base_url,
            "organization": self._organization,
            "project": self._project,
            "max_retries": 0,  # retrying is the error processors' job
        }
        if self._timeout is not None:
            kwargs["timeout"] = self._timeout
        return openai.AsyncOpenAI(**kwargs)

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        # Caller mistakes fail here, before the stream, as set-up errors.
        openai_options(request.provider_options, "options.provider_options.openai")
        return self._stream(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        params, extra = self.build_params(request)  # may raise ModelAPIError (unsupported file)
        client = self._client()
        try:
            completions = cast(Any, client.chat.completions)  # the request is assembled as plain JSON
            try:
                sdk_stream = await completions.create(
                    model=self._model_id,
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_body=extra or None,
                    **params,
                )
            except Exception as exc:
                raise converted(exc) from exc
            async with sdk_stream:
                state = StreamState()
                async for chunk in ConvertedErrors(sdk_stream, converted):
                    for event in state.feed(_as_dict(chunk)):
                        yield event
                for event in state.finish():
                    yield event
        finally:
            await client.close()


def _as_dict(chunk: Any) -> JSONObject:
    if isinstance(chunk, dict):
        return chunk
    return cast(JSONObject, chunk.to_dict())
