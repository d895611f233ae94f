"""The built-in processors, by registered name: each class's `id`.

`response-cache` and `token-cost-control` are not here: they need the
server's caches, so the host registers them (`host.with_response_cache`).
"""

from __future__ import annotations

from typing import Final

from agentd.runtime.processors.base import Processor
from agentd.runtime.processors.builtins.batch_parts import BatchPartsProcessor
from agentd.runtime.processors.builtins.language_detector import LanguageDetector
from agentd.runtime.processors.builtins.moderation import ModerationProcessor
from agentd.runtime.processors.builtins.pii_detector import PIIDetector
from agentd.runtime.processors.builtins.prefill_error_handler import PrefillErrorHandler
from agentd.runtime.processors.builtins.prompt_injection import PromptInjectionDetector
from agentd.runtime.processors.builtins.provider_history_compat import ProviderHistoryCompat
from agentd.runtime.processors.builtins.stream_error_retry import StreamErrorRetryProcessor
from agentd.runtime.processors.builtins.system_prompt_scrubber import SystemPromptScrubber
from agentd.runtime.processors.builtins.token_limiter import TokenLimiter
from agentd.runtime.processors.builtins.tool_call_filter import ToolCallFilter
from agentd.runtime.processors.builtins.tool_search import ToolSearchProcessor
from agentd.runtime.processors.builtins.unicode_normalizer import UnicodeNormalizer
from agentd.runtime.processors.builtins.unsupported_file_handler import UnsupportedFileHandler
from agentd.runtime.processors.factory import Factory, from_options
from agentd.runtime.processors.registry import ProcessorRegistry

BUILTINS: Final[tuple[type[Processor], ...]] = (
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
