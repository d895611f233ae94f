"""The built-in processors, by registered name: each class's `id`.

`response-cache` and `token-cost-control` need the server's caches, so the
host binds them to its caches (`with_response_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from agentd.runtime.cache import ServerCache
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.lazy import resolve
from agentd.runtime.processors.base import Processor
from agentd.runtime.processors.factory import Factory, from_options
from agentd.runtime.processors.registry import ProcessorRegistry

#: Each built-in by its registered name (its class's `id`): "module:Class",
#: imported when a processor of that name is first built, so a server loads
#: only the built-ins its configuration and its calls name. The names are all
#: here, for agentd.toml's checks and the messages naming what is registered.
BUILTINS: Final[dict[str, str]] = {
    "background-work-signal": "background_work_signal:BackgroundWorkSignal",
    "batch-parts": "batch_parts:BatchPartsProcessor",
    "language-detector": "language_detector:LanguageDetector",
    "moderation": "moderation:ModerationProcessor",
    "pii-detector": "pii_detector:PIIDetector",
    "prefill-error-handler": "prefill_error_handler:PrefillErrorHandler",
    "prompt-injection-detector": "prompt_injection:PromptInjectionDetector",
    "provider-history-compat": "provider_history_compat:ProviderHistoryCompat",
    "stream-error-retry-processor": "stream_error_retry:StreamErrorRetryProcessor",
    "system-prompt-scrubber": "system_prompt_scrubber:SystemPromptScrubber",
    "token-limiter": "token_limiter:TokenLimiter",
    "tool-call-filter": "tool_call_filter:ToolCallFilter",
    "tool-search": "tool_search:ToolSearchProcessor",
    "unicode-normalizer": "unicode_normalizer:UnicodeNormalizer",
    "unsupported-file-handler": "unsupported_file_handler:UnsupportedFileHandler",
}
_PACKAGE: Final = "agentd.runtime.processors.builtins"


def builtin_class(name: str) -> type[Processor]:
    """The class of the built-in registered as `name` (loading its module)."""
    found: type[Processor] = resolve(f"{_PACKAGE}.{BUILTINS[name]}")
    return found


def _on_first_build(make: Callable[[], Factory]) -> Factory:
    """A factory that makes the real one (loading its module) when first called."""
    made: list[Factory] = []

    def build(options: dict[str, Any]) -> Any:
        if not made:
            made.append(make())
        return made[0](options)

    return build


def _builtin_factory(name: str) -> Factory:
    return _on_first_build(lambda: from_options(builtin_class(name)))


#: Name -> factory taking camelCase options.
BUILTIN_FACTORIES: Final[dict[str, Factory]] = {name: _builtin_factory(name) for name in BUILTINS}


def default_registry() -> ProcessorRegistry:
    """The built-in processors, by name."""
    return ProcessorRegistry(BUILTIN_FACTORIES)


def with_response_cache(
    registry: ProcessorRegistry,
    caches: dict[str, ServerCache],
    prices: Mapping[str, Any] | None = None,
    default_backend: str = "memory",
) -> ProcessorRegistry:
    """Binds the processors that need the server's caches: `response-cache`, and
    `token-cost-control` (also bound to the `[pricing]` table). Both use
    `default_backend` (the server's `[cache] backend`) unless told otherwise."""

    def checked(factory: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
        def build(options: dict[str, Any]) -> Any:
            try:
                return factory(options)
            except ValueError as exc:
                raise InvalidArgument.field("options", str(exc)) from None

        return build

    return registry.extended(
        {
            "response-cache": checked(
                _on_first_build(
                    lambda: resolve(f"{_PACKAGE}.response_cache:response_cache_factory")(caches, default_backend)
                )
            ),
            "token-cost-control": checked(
                _on_first_build(
                    lambda: resolve(f"{_PACKAGE}.token_cost_control:token_cost_control_factory")(
                        caches, prices, default_backend
                    )
                )
            ),
        }
    )
