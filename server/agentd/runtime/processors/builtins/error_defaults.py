"""The built-in processors of the default error lane, registered with the runtime.

Which defaults an error lane gets, in which order, and how they merge into a
caller's list is the runtime's (agentd.runtime.lanes); this module names the
built-in processor behind each default id. agentd.runtime imports it, so the
defaults are registered whenever the runtime is; each is registered by its
"module:name" and imported when the first error lane is built (agentd.runtime.lazy),
so a server loads the four with its first run rather than at start-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentd.runtime.lanes import register_default_error_processor
from agentd.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from agentd.runtime.processors.builtins.prefill_error_handler import PrefillErrorHandler
    from agentd.runtime.processors.builtins.provider_history_compat import CompatRule, ProviderHistoryCompat
    from agentd.runtime.processors.builtins.stream_error_retry import RetryMatcher, StreamErrorRetryProcessor
    from agentd.runtime.processors.builtins.unsupported_file_handler import UnsupportedFileHandler

__all__ = [
    "CompatRule",
    "PrefillErrorHandler",
    "ProviderHistoryCompat",
    "RetryMatcher",
    "StreamErrorRetryProcessor",
    "UnsupportedFileHandler",
]

_BUILTINS = "agentd.runtime.processors.builtins"
_EXPORTS = {
    "CompatRule": f"{_BUILTINS}.provider_history_compat",
    "ProviderHistoryCompat": f"{_BUILTINS}.provider_history_compat",
    "PrefillErrorHandler": f"{_BUILTINS}.prefill_error_handler",
    "RetryMatcher": f"{_BUILTINS}.stream_error_retry",
    "StreamErrorRetryProcessor": f"{_BUILTINS}.stream_error_retry",
    "UnsupportedFileHandler": f"{_BUILTINS}.unsupported_file_handler",
}
__getattr__ = lazy_exports(__name__, _EXPORTS)

# The ids are the runtime's (DEFAULT_ERROR_PROCESSOR_IDS); each class checks its own.
register_default_error_processor(
    "provider-history-compat", f"{_EXPORTS['ProviderHistoryCompat']}:ProviderHistoryCompat"
)
register_default_error_processor("prefill-error-handler", f"{_EXPORTS['PrefillErrorHandler']}:PrefillErrorHandler")
register_default_error_processor(
    "unsupported-file-handler", f"{_EXPORTS['UnsupportedFileHandler']}:UnsupportedFileHandler"
)
register_default_error_processor(
    "stream-error-retry-processor", f"{_EXPORTS['StreamErrorRetryProcessor']}:StreamErrorRetryProcessor"
)
