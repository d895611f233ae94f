// Calls Stream inside a trace: the client sends the active span's context as
// W3C traceparent, so the server's spans join the caller's trace.
//
//   npm run build
//   node build/examples/traced.js --addr 127.0.0.1:50051 \
//     --trace 4bf92f3577b34da6a3ce929d0e0e4736 --span 00f067aa0ba902b7
//
// A service would have the span from its own tracer (or the request it is
// serving); here its context is given on the command line.

import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { context, trace, TraceFlags } from "@opentelemetry/api";
import { parseArgs } from "node:util";

import { AgentdClient } from "@agentd/client";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      addr: { type: "string", default: "127.0.0.1:50051" },
      agent: { type: "string", default: "echo" },
      trace: { type: "string" },
      span: { type: "string" },
    },
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  const caller = trace.wrapSpanContext({
    traceId: values.trace!,
    spanId: values.span!,
    traceFlags: TraceFlags.SAMPLED,
    isRemote: true,
  });
  const client = new AgentdClient(values.addr!);
  try {
    await context.with(trace.setSpan(context.active(), caller), async () => {
      let text = "";
      for await (const chunk of client.stream(values.agent!, "traced hello")) {
        if (chunk.payload?.$case === "textDelta") text += chunk.payload.textDelta.text;
      }
      console.log(text);
    });
  } finally {
    client.close();
  }
}

main().catch((err: unknown) => {
  console.error("traced:", err);
  process.exit(1);
});
