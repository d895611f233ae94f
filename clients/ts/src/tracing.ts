// W3C trace context: when @opentelemetry/api is installed and a span is
// active, every call carries `traceparent` (and `tracestate`) metadata so the
// server's spans join the caller's trace. The dependency is optional: without
// it nothing is added.

import type { Metadata } from "@grpc/grpc-js";

// The few members of @opentelemetry/api this module uses (declared here so
// the package compiles and runs without it).
interface SpanContextLike {
  traceId: string;
  spanId: string;
  traceFlags: number;
  traceState?: { serialize(): string };
}
interface SpanLike {
  spanContext(): SpanContextLike;
}
interface OtelApiLike {
  trace: { getActiveSpan(): SpanLike | undefined };
}

let api: OtelApiLike | null | undefined;

function loadApi(): OtelApiLike | null {
  if (api === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      api = require("@opentelemetry/api") as OtelApiLike;
    } catch {
      api = null;
    }
  }
  return api;
}

const INVALID_TRACE = /^0+$/;

/** The `traceparent` of the active span, or undefined (no API, no span, invalid context). */
export function activeTraceparent(): { traceparent: string; tracestate?: string } | undefined {
  const otel = loadApi();
  if (!otel) {
    return undefined;
  }
  let ctx: SpanContextLike | undefined;
  try {
    ctx = otel.trace.getActiveSpan()?.spanContext();
  } catch {
    return undefined;
  }
  if (
    !ctx ||
    !/^[0-9a-f]{32}$/.test(ctx.traceId) ||
    !/^[0-9a-f]{16}$/.test(ctx.spanId) ||
    INVALID_TRACE.test(ctx.traceId) ||
    INVALID_TRACE.test(ctx.spanId)
  ) {
    return undefined;
  }
  const flags = (ctx.traceFlags & 0xff).toString(16).padStart(2, "0");
  const out: { traceparent: string; tracestate?: string } = {
    traceparent: `00-${ctx.traceId}-${ctx.spanId}-${flags}`,
  };
  const state = ctx.traceState?.serialize();
  if (state) {
    out.tracestate = state;
  }
  return out;
}

/** Adds the active span's trace context to `md` unless it already has one. */
export function injectTraceContext(md: Metadata): void {
  if (md.get("traceparent").length > 0) {
    return;
  }
  const trace = activeTraceparent();
  if (trace) {
    md.set("traceparent", trace.traceparent);
    if (trace.tracestate) {
      md.set("tracestate", trace.tracestate);
    }
  }
}
