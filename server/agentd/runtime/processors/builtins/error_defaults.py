"""The default error processors and how they merge into a caller's list.

Every agent's error lane gets whichever of the four defaults its list lacks
(matched by id), unless defaults are turned off:

1. `provider-history-compat`       ProviderHistoryCompat
2. `prefill-error-handler`         PrefillErrorHandler
3. `unsupported-file-handler`      UnsupportedFileHandler
4. `stream-error-retry-processor`  StreamErrorRetryProcessor

Repair processors come before the retry processor because the first
`retry=True` ends the chain: a blind resend must not pre-empt a repair.

Merge rule (`resolve_error_processors`): the caller's list is never reordered
(custom-id processors keep their place; caller processors with a default id
take part in the default ordering). Each missing default is inserted right
before the first entry carrying a later default id, or appended when there is
none. An empty list gets all four. Fresh default instances are built on every
call. This applies to the agent's list (static, or as returned by a function of
the request context); a per-call list replaces the resolved list as given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

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
    "DEFAULT_ERROR_PROCESSOR_IDS",
    "DEFAULT_MAX_PROCESSOR_RETRIES",
    "CompatRule",
    "PrefillErrorHandler",
    "ProviderHistoryCompat",
    "RetryMatcher",
    "StreamErrorRetryProcessor",
    "UnsupportedFileHandler",
    "build_default_error_processor",
    "resolve_error_processors",
    "resolve_max_processor_retries",
]

#: The default error processors' ids, in their order.
DEFAULT_ERROR_PROCESSOR_IDS: tuple[str, ...] = (
    PROVIDER_HISTORY_COMPAT_ID,
    PREFILL_ERROR_HANDLER_ID,
    UNSUPPORTED_FILE_HANDLER_ID,
    STREAM_ERROR_RETRY_ID,
)
#: Error-lane retry cap when error processors exist and `max_processor_retries`
#: is unset (up to 4 model calls per turn).
DEFAULT_MAX_PROCESSOR_RETRIES = 3

_DEFAULT_CLASSES: dict[str, Callable[[], Any]] = {
    PROVIDER_HISTORY_COMPAT_ID: ProviderHistoryCompat,
    PREFILL_ERROR_HANDLER_ID: PrefillErrorHandler,
    UNSUPPORTED_FILE_HANDLER_ID: UnsupportedFileHandler,
    STREAM_ERROR_RETRY_ID: StreamErrorRetryProcessor,
}

#: Builds a fresh default error processor from its id.
DefaultFactory = Callable[[str], Any]


def build_default_error_processor(default_id: str) -> Any:
    """A fresh instance of the default error processor `default_id`, with default options."""
    try:
        cls = _DEFAULT_CLASSES[default_id]
    except KeyError:
        raise ValueError(f"{default_id!r} is not a default error processor id") from None
    return cls()


def _id_of(entry: Any) -> Any:
    return getattr(entry, "id", None)


def resolve_error_processors(
    caller: Sequence[Any],
    *,
    defaults_enabled: bool = True,
    factory: DefaultFactory | None = None,
) -> list[Any]:
    """The error lane for an agent: `caller` in its own order plus the missing
    defaults (see the module docstring). `defaults_enabled=False` returns the
    caller's list only. `factory(default_id)` builds each added default (fresh
    per call; `build_default_error_processor` when None) and must return a
    processor with that id."""
    resolved = list(caller)
    if not defaults_enabled:
        return resolved
    build = factory or build_default_error_processor
    rank = {default_id: i for i, default_id in enumerate(DEFAULT_ERROR_PROCESSOR_IDS)}
    present = {_id_of(entry) for entry in resolved}
    for default_id in DEFAULT_ERROR_PROCESSOR_IDS:
        if default_id in present:
            continue
        processor = build(default_id)
        if _id_of(processor) != default_id:
            raise ValueError(f"the default error processor factory built {processor!r} for {default_id!r}: ids differ")
        position = next(
            (
                i
                for i, entry in enumerate(resolved)
                if isinstance(_id_of(entry), str) and rank.get(_id_of(entry), -1) > rank[default_id]
            ),
            len(resolved),
        )
        resolved.insert(position, processor)
        present.add(default_id)
    return resolved


def resolve_max_processor_retries(explicit: int | None, error_processors: Sequence[Any]) -> int | None:
    """The error-lane retry cap: an explicit value wins; else none is needed
    without error processors; else DEFAULT_MAX_PROCESSOR_RETRIES."""
    if explicit is not None:
        return explicit
    return DEFAULT_MAX_PROCESSOR_RETRIES if error_processors else None
