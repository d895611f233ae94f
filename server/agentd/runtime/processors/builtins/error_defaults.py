"""The built-in processors of the default error lane, registered with the runtime.

Which defaults an error lane gets, in which order, and how they merge into a
caller's list is the runtime's (agentd.runtime.lanes); this module names the
built-in processor behind each default id. agentd.runtime imports it, so the
defaults are registered whenever the runtime is.
"""

from __future__ import annotations

from agentd.runtime.lanes import register_default_error_processor
from agentd.runtime.processors.builtins.prefill_error_handler import (
    PREFILL_ERROR_HANDLER_ID,
    PrefillErrorHandler,
)
from agentd.runtime.processors.builtins.provider_history_compat import (
    PROVIDER_HISTORY_COMPAT_ID,
    CompatRule,
    ProviderHistoryCompat,
)
from agentd.runtime.processors.builtins.stream_error_retry import (
    STREAM_ERROR_RETRY_ID,
    RetryMatcher,
    StreamErrorRetryProcessor,
)
from agentd.runtime.processors.builtins.unsupported_file_handler import (
    UNSUPPORTED_FILE_HANDLER_ID,
    UnsupportedFileHandler,
)

__all__ = [
    "CompatRule",
    "PrefillErrorHandler",
    "ProviderHistoryCompat",
    "RetryMatcher",
    "StreamErrorRetryProcessor",
    "UnsupportedFileHandler",
]

register_default_error_processor(PROVIDER_HISTORY_COMPAT_ID, ProviderHistoryCompat)
register_default_error_processor(PREFILL_ERROR_HANDLER_ID, PrefillErrorHandler)
register_default_error_processor(UNSUPPORTED_FILE_HANDLER_ID, UnsupportedFileHandler)
register_default_error_processor(STREAM_ERROR_RETRY_ID, StreamErrorRetryProcessor)
