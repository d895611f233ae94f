"""Resolves "provider/model" strings to models.

`local/...` is built in; the provider adapters are imported only when a model
of theirs is used (each SDK is an optional extra, and importing one costs
start-up time); an application adds its own providers with
`register_provider` (an `agentd serve --app` module calls it when imported).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from agentd.runtime.errors import FailedPrecondition, InvalidArgument
from agentd.runtime.models.base import LanguageModel
from agentd.runtime.models.local import MODEL_IDS, LocalModel

#: Makes the model for one run from the model id (what follows "provider/").
ModelFactory = Callable[[str], LanguageModel]

#: Provider adapters: their module (with a `create(model_id)` that reads the
#: credentials from the environment) and the SDK package it needs (an extra).
_ADAPTERS = {
    "openai": ("agentd.runtime.models.openai", "openai"),
    "anthropic": ("agentd.runtime.models.anthropic", "anthropic"),
    "google": ("agentd.runtime.models.google", "google"),
}
#: Providers an application registered, by name.
_REGISTERED: dict[str, ModelFactory] = {}
#: Model strings that passed check_model_spec's rules (they pass for good: no
#: provider is ever unregistered), split; bounded, as a function of the
#: request context may make strings without end.
_CHECKED: dict[str, tuple[str, str]] = {}
_CHECKED_KEPT = 1024


def register_provider(name: str, factory: ModelFactory) -> None:
    """Makes `name/<model id>` model strings resolve to `factory(model_id)`, a
    fresh model per run (a model may keep per-run state, such as a call count).

    Register before the configuration is loaded (model strings are checked
    then): at import of an `--app` module, or before building a Host. A name
    registered again is replaced; the built-in providers cannot be."""
    if not name or "/" in name:
        raise ValueError(f"a provider name is a non-empty string without '/': {name!r}")
    if name == "local" or name in _ADAPTERS:
        raise ValueError(f"{name!r} is a built-in provider")
    _REGISTERED[name] = factory


def parse_model_spec(spec: str) -> tuple[str, str]:
    provider, sep, model_id = spec.partition("/")
    if not sep or not provider or not model_id:
        raise InvalidArgument.field("model", f"{spec!r} is not a provider/model string", "INVALID_MODEL")
    return provider, model_id


def check_model_spec(spec: str) -> None:
    """Fails fast (at config load) on a model string no run could use."""
    _checked(spec)


def _checked(spec: str) -> tuple[str, str]:
    """The spec's provider and model id, once check_model_spec's rules pass."""
    checked = _CHECKED.get(spec)
    if checked is not None:
        return checked
    provider, model_id = parse_model_spec(spec)
    if provider == "local":
        if model_id not in MODEL_IDS:
            raise InvalidArgument.field(
                "model", f"unknown local model {model_id!r} (have: {sorted(MODEL_IDS)})", "INVALID_MODEL"
            )
    elif provider not in _ADAPTERS and provider not in _REGISTERED:
        raise InvalidArgument.field("model", f"unknown provider {provider!r}", "INVALID_MODEL")
    if len(_CHECKED) < _CHECKED_KEPT:
        _CHECKED[spec] = (provider, model_id)
    return provider, model_id


def resolve_model(spec: str) -> LanguageModel:
    """A fresh model instance for one run."""
    provider, model_id = _checked(spec)
    if provider == "local":
        return LocalModel(model_id)
    if provider in _REGISTERED:
        return _REGISTERED[provider](model_id)
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
