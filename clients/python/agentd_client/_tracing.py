"""W3C trace context: when opentelemetry is installed and a span is current,
calls carry its `traceparent` (and `tracestate`). opentelemetry is optional."""

from __future__ import annotations

from typing import Any

try:  # optional dependency
    from opentelemetry import trace as _trace
except ImportError:  # pragma: no cover - depends on the environment
    _trace: Any = None  # type: ignore[no-redef]


def trace_metadata() -> list[tuple[str, str]]:
    """`[("traceparent", ...), ("tracestate", ...)]` for the current span, or []."""
    if _trace is None:
        return []
    ctx = _trace.get_current_span().get_span_context()
    if not ctx.is_valid:
        return []
    out = [("traceparent", f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{int(ctx.trace_flags):02x}")]
    state = ctx.trace_state.to_header() if ctx.trace_state else ""
    if state:
        out.append(("tracestate", state))
    return out
