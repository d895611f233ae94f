"""The built-in processors, by registered name: each class's `id`.

`response-cache` and `token-cost-control` need the server's caches, so the
host binds them to its caches (`with_response_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from agentd.runtime.cache import ServerCache
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.processors.base import Processor
from agentd.runtime.processors.builtins.background_work_signal import BackgroundWorkSignal
from agentd.runtime.processors.builtins.batch_parts import BatchPartsProcessor
from agentd.runtime.processors.builtins.language_detector import LanguageDetector
from agentd.runtime.processors.builtins.moderation import ModerationProcessor
from agentd.runtime.processors.builtins.pii_detector import PIIDetector
from agentd.runtime.processors.builtins.prefill_error_handler import PrefillErrorHandler
from agentd.runtime.processors.builtins.prompt_injection import PromptInjectionDetector
from agentd.runtime.processors.builtins.provider_history_compat import ProviderHistoryCompat
from agentd.runtime.processors.builtins.response_cache import response_cache_factory
from agentd.runtime.processors.builtins.stream_error_retry import StreamErrorRetryProcessor
from agentd.runtime.processors.builtins.system_prompt_scrubber import SystemPromptScrubber
from agentd.runtime.processors.builtins.token_cost_control import token_cost_control_factory
from agentd.runtime.processors.builtins.token_limiter import TokenLimiter
from agentd.runtime.processors.builtins.tool_call_filter import ToolCallFilter
from agentd.runtime.processors.builtins.tool_search import ToolSearchProcessor
from agentd.runtime.processors.builtins.unicode_normalizer import UnicodeNormalizer
from agentd.runtime.processors.builtins.unsupported_file_handler import UnsupportedFileHandler
from agentd.runtime.processors.factory import Factory, from_options
from agentd.runtime.processors.registry import ProcessorRegistry

BUILTINS: Final[tuple[type[Processor], ...]] = (
    BackgroundWorkSignal,
    BatchPartsProcessor,
    LanguageDetector,
    ModerationProcessor,
    PIIDetector,
    PrefillErrorHandler,
    PromptInjectionDetector,
    ProviderHistoryCompat,
    StreamErrorRetryProcessor,
    SystemPromptScrubber,
    TokenLimiter,
    ToolCallFilter,
    ToolSearchProcessor,
    UnicodeNormalizer,
    UnsupportedFileHandler,
)

#: Name -> factory taking camelCase options.
BUILTIN_FACTORIES: Final[dict[str, Factory]] = {cls.id: from_options(cls) for cls in BUILTINS}


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
            "response-cache": checked(response_cache_factory(caches, default_backend)),
            "token-cost-control": checked(token_cost_control_factory(caches, prices, default_backend)),
        }
    )
