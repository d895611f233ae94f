"""Resolves "provider/model" strings to models."""

from __future__ import annotations

import importlib

from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.models.base import LanguageModel
from agentd.runtime.models.local import MODEL_IDS, LocalModel

#: Provider adapters: their module (with a `create(model_id)` that reads the
#: credentials from the environment) and the SDK package it needs (an extra).
_ADAPTERS = {
    "openai": ("agentd.runtime.models.openai", "openai"),
    "anthropic": ("agentd.runtime.models.anthropic", "anthropic"),
    "google": ("agentd.runtime.models.google", "google"),
}
_PLANNED = set(_ADAPTERS)


def parse_model_spec(spec: str) -> tuple[str, str]:
    provider, sep, model_id = spec.partition("/")
    if not sep or not provider or not model_id:
        raise InvalidArgument.field("model", f"{spec!r} is not a provider/model string", "INVALID_MODEL")
    return provider, model_id


def check_model_spec(spec: str) -> None:
    """Fails fast (at config load) on a model string no run could use."""
    provider, model_id = parse_model_spec(spec)
    if provider == "local":
        if model_id not in MODEL_IDS:
            raise InvalidArgument.field(
                "model", f"unknown local model {model_id!r} (have: {sorted(MODEL_IDS)})", "INVALID_MODEL"
            )
    elif provider not in _PLANNED:
        raise InvalidArgument.field("model", f"unknown provider {provider!r}", "INVALID_MODEL")


def resolve_model(spec: str) -> LanguageModel:
    """A fresh model instance for one run."""
    check_model_spec(spec)
    provider, model_id = parse_model_spec(spec)
    if provider == "local":
        return LocalModel(model_id)
    module_name, sdk = _ADAPTERS[provider]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name not in (module_name, sdk) and not (exc.name or "").startswith(sdk + "."):
            raise
        raise FailedPrecondition(
            f"provider {provider!r} needs its SDK: pip install 'agentd[{provider}]'",
            "PROVIDER_UNAVAILABLE",
            {"provider": provider},
        ) from exc
    model: LanguageModel = module.create(model_id)  # raises CREDENTIALS_MISSING naming the variable
    return model
