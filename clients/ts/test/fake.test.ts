// Unit tests of @agentd/client against in-process fake servers (grpc-js):
// typed errors from the status details trailer, subscription reconnection and
// resume, session answers, client tools and resend after a reconnection, and
// W3C traceparent injection.

import assert from "node:assert/strict";
import { AsyncLocalStorage } from "node:async_hooks";
import { after, before, describe, it } from "node:test";

import * as grpc from "@grpc/grpc-js";
import { ROOT_CONTEXT, context, trace, type Context, type ContextManager } from "@opentelemetry/api";

import { AgentdClient, AgentdError, agentd, google, status } from "@agentd/client";

import { encodeBadRequest, encodeErrorInfo, serve, statusError } from "./support";

const v1 = agentd.v1;

function chunk(offset: number, seq: number, payload: agentd.v1.Chunk["payload"], runId = "run-1"): agentd.v1.Chunk {
  return v1.Chunk.fromPartial({ runId, seq, offset, payload });
}

const delta = (text: string): agentd.v1.Chunk["payload"] => ({ $case: "textDelta", textDelta: { id: "t", text } });
const finish: agentd.v1.Chunk["payload"] = { $case: "finish", finish: v1.FinishChunk.fromPartial({}) };

/** A minimal AsyncLocalStorage context manager so a span can be active. */
class AlsContextManager implements ContextManager {
  private readonly als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    ctx: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return this.als.run(ctx, () => fn.call(thisArg, ...args));
  }
  bind<T>(_ctx: Context, target: T): T {
    return target;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    return this;
  }
}

describe("errors", { timeout: 15000 }, () => {
  let server: grpc.Server;
  let client: AgentdClient;
  before(async () => {
    const s = await serve(v1.AgentServiceService, {
      getAgent: (_call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) =>
        cb(
          statusError(grpc.status.INVALID_ARGUMENT, "invalid request", [
            {
              typeUrl: "type.googleapis.com/google.rpc.ErrorInfo",
              value: Buffer.from(encodeErrorInfo("INVALID_REQUEST", { agent_id: "" })),
            },
            {
              typeUrl: "type.googleapis.com/google.rpc.BadRequest",
              value: Buffer.from(
                encodeBadRequest([
                  ["agent_id", "is required"],
                  ["options.model_settings.temperature", "must be between 0 and 2"],
                ]),
              ),
            },
          ]) as grpc.ServiceError,
        ),
      listAgents: (_call: unknown, cb: grpc.sendUnaryData<unknown>) =>
        cb({ code: grpc.status.UNAVAILABLE, details: "plain" } as grpc.ServiceError),
    });
    server = s.server;
    client = new AgentdClient(s.addr, { deadlineMs: 5000 });
  });
  after(() => {
    client.close();
    server.forceShutdown();
  });

  it("decodes ErrorInfo and BadRequest from the trailer", async () => {
    const err = await client.getAgent("").then(
      () => assert.fail("want an error"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof AgentdError);
    assert.ok(err instanceof Error);
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.equal(err.codeName, "INVALID_ARGUMENT");
    assert.equal(err.reason, "INVALID_REQUEST");
    assert.equal(err.domain, "agentd");
    assert.deepEqual(err.metadata, { agent_id: "" });
    assert.deepEqual(err.violations, {
      agent_id: "is required",
      "options.model_settings.temperature": "must be between 0 and 2",
    });
    assert.equal(err.details, "invalid request");
  });

  it("keeps the plain status without details", async () => {
    const err = await client
      .listAgents()
      .all()
      .then(
        () => assert.fail("want an error"),
        (e: unknown) => e,
      );
    assert.ok(err instanceof AgentdError);
    assert.equal(err.code, status.UNAVAILABLE);
    assert.equal(err.reason, "");
    assert.deepEqual(err.violations, {});
    assert.equal(err.retryable, true);
  });
});

describe("subscribe", { timeout: 15000 }, () => {
  it("resumes after the last offset on UNAVAILABLE and on fell_behind", async () => {
    const requests: agentd.v1.SubscribeRequest[] = [];
    const s = await serve(v1.ThreadServiceService, {
      subscribe: (call: grpc.ServerWritableStream<agentd.v1.SubscribeRequest, agentd.v1.SubscribeResponse>) => {
        requests.push(call.request);
        const n = requests.length;
        const snapshot = (last: number): agentd.v1.SubscribeResponse => ({
          event: { $case: "snapshot", snapshot: v1.ThreadSnapshot.fromPartial({ logEpoch: "E1", lastOffset: last }) },
        });
        const batch = (...chunks: agentd.v1.Chunk[]): agentd.v1.SubscribeResponse => ({
          event: { $case: "chunks", chunks: { chunks } },
        });
        if (n === 1) {
          call.write(snapshot(10));
          call.write(batch(chunk(11, 1, delta("a")), chunk(12, 2, delta("b"))));
          setTimeout(() => call.emit("error", { code: grpc.status.UNAVAILABLE, details: "restarting" }), 20);
        } else if (n === 2) {
          call.write(snapshot(12));
          call.write(batch(chunk(13, 3, delta("c"))));
          call.write({ event: { $case: "fellBehind", fellBehind: { lastOffset: 13, logEpoch: "E1" } } });
          call.end();
        } else {
          call.write(snapshot(14));
          call.write(batch(chunk(14, 4, finish)));
          call.end();
        }
      },
    });
    const client = new AgentdClient(s.addr, { reconnect: { initialDelayMs: 10 } });
    try {
      const sub = client.subscribe("t1", { resourceId: "r1", reconnect: true });
      const snap = await sub.ready();
      assert.equal(snap.logEpoch, "E1");
      const offsets: number[] = [];
      for await (const c of sub) {
        offsets.push(c.offset);
        if (c.payload?.$case === "finish") break;
      }
      assert.deepEqual(offsets, [11, 12, 13, 14]);
      assert.equal(requests.length, 3);
      assert.equal(requests[0].resume, undefined);
      assert.deepEqual(requests[1].resume, { logEpoch: "E1", afterOffset: 12 });
      assert.deepEqual(requests[2].resume, { logEpoch: "E1", afterOffset: 13 });
      assert.equal(requests[1].threadId, "t1");
      assert.equal(requests[1].resourceId, "r1");
      assert.equal(sub.reconnects, 2);
      assert.equal(sub.fellBehind, 1);
    } finally {
      client.close();
      s.server.forceShutdown();
    }
  });

  it("without reconnect, ends at fell_behind and fails on UNAVAILABLE", async () => {
    let calls = 0;
    const s = await serve(v1.ThreadServiceService, {
      subscribe: (call: grpc.ServerWritableStream<agentd.v1.SubscribeRequest, agentd.v1.SubscribeResponse>) => {
        calls++;
        call.write({
          event: { $case: "snapshot", snapshot: v1.ThreadSnapshot.fromPartial({ logEpoch: "E", lastOffset: 0 }) },
        });
        if (call.request.threadId === "behind") {
          call.write({ event: { $case: "fellBehind", fellBehind: { lastOffset: 7, logEpoch: "E" } } });
          call.end();
        } else {
          call.emit("error", { code: grpc.status.UNAVAILABLE, details: "down" });
        }
      },
    });
    const client = new AgentdClient(s.addr);
    try {
      const behind = client.subscribe("behind", { resourceId: "r", reconnect: false });
      const got: agentd.v1.Chunk[] = [];
      for await (const c of behind) got.push(c);
      assert.equal(got.length, 0);
      assert.equal(behind.fellBehind, 1);
      assert.equal(behind.lastOffset, 7);
      const down = client.subscribe("down", { resourceId: "r", reconnect: false });
      await assert.rejects(
        (async () => {
          for await (const _ of down) void _;
        })(),
        (e: unknown) => e instanceof AgentdError && e.code === status.UNAVAILABLE,
      );
      assert.equal(calls, 2);
    } finally {
      client.close();
      s.server.forceShutdown();
    }
  });
});

describe("connect", { timeout: 15000 }, () => {
  it("answers client tools and resends unanswered frames after a reconnection", async () => {
    const streams: agentd.v1.ConnectRequest[][] = [];
    const toolResults: agentd.v1.ConnectToolResult[] = [];
    const s = await serve(v1.ThreadServiceService, {
      connect: (call: grpc.ServerDuplexStream<agentd.v1.ConnectRequest, agentd.v1.ConnectResponse>) => {
        const frames: agentd.v1.ConnectRequest[] = [];
        streams.push(frames);
        const n = streams.length;
        call.on("data", (frame: agentd.v1.ConnectRequest) => {
          frames.push(frame);
          const f = frame.frame;
          if (f?.$case === "open") {
            call.write({
              requestId: frame.requestId,
              event: { $case: "snapshot", snapshot: v1.ThreadSnapshot.fromPartial({ logEpoch: "E", lastOffset: 100 }) },
            });
          } else if (f?.$case === "sendMessage") {
            if (n === 1) {
              // The stream dies before the answer: the client must send the frame again.
              call.emit("error", { code: grpc.status.UNAVAILABLE, details: "restart" });
              return;
            }
            call.write({
              requestId: frame.requestId,
              event: {
                $case: "routing",
                routing: { decision: { action: { $case: "wake", wake: { runId: "run-9" } } }, signal: undefined },
              },
            });
            call.write({
              requestId: "",
              event: {
                $case: "chunks",
                chunks: {
                  chunks: [
                    chunk(101, 1, { $case: "start", start: v1.StartChunk.fromPartial({}) }, "run-9"),
                    chunk(
                      102,
                      2,
                      {
                        $case: "toolCall",
                        toolCall: v1.ToolCall.fromPartial({
                          toolCallId: "call-1",
                          toolName: "pick_color",
                          args: { choices: ["red", "blue"] },
                          clientTool: true,
                        }),
                      },
                      "run-9",
                    ),
                  ],
                },
              },
            });
          } else if (f?.$case === "toolResult") {
            toolResults.push(f.toolResult);
            call.write({
              requestId: frame.requestId,
              event: {
                $case: "toolResultAck",
                toolResultAck: { runId: f.toolResult.runId, toolCallId: f.toolResult.toolCallId },
              },
            });
            call.write({
              requestId: "",
              event: {
                $case: "chunks",
                chunks: { chunks: [chunk(103, 3, delta("You picked blue."), "run-9"), chunk(104, 4, finish, "run-9")] },
              },
            });
          } else if (f?.$case === "abort") {
            call.write({
              requestId: frame.requestId,
              event: {
                $case: "error",
                error: google.rpc.Status.fromPartial({
                  code: grpc.status.NOT_FOUND,
                  message: "no run",
                  details: [
                    {
                      typeUrl: "type.googleapis.com/google.rpc.ErrorInfo",
                      value: Buffer.from(encodeErrorInfo("RUN_NOT_FOUND", {})),
                    },
                  ],
                }),
              },
            });
          }
        });
        call.on("end", () => call.end());
      },
    });
    const client = new AgentdClient(s.addr, { reconnect: { initialDelayMs: 10 } });
    try {
      const seenArgs: unknown[] = [];
      const session = client.connect("tools", {
        resourceId: "r",
        threadId: "t",
        tools: {
          pick_color: {
            description: "Pick a color",
            execute: async (args: unknown) => {
              seenArgs.push(args);
              return "blue";
            },
          },
        },
      });
      assert.equal((await session.ready()).lastOffset, 100);
      const routing = await session.sendMessage("choose a color");
      assert.equal(routing.action, "wake");
      assert.equal(routing.runId, "run-9");
      const kinds: string[] = [];
      for await (const c of session) {
        kinds.push(c.payload!.$case);
        if (c.payload?.$case === "finish") break;
      }
      assert.deepEqual(kinds, ["start", "toolCall", "textDelta", "finish"]);
      assert.deepEqual(seenArgs, [{ choices: ["red", "blue"] }]);
      assert.equal(toolResults.length, 1);
      assert.deepEqual(toolResults[0], { runId: "run-9", toolCallId: "call-1", result: "blue", isError: false });

      const err = await session.abort().then(
        () => assert.fail("want an error"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof AgentdError);
      assert.equal(err.reason, "RUN_NOT_FOUND");
      assert.equal(err.code, status.NOT_FOUND);
      await session.close();

      // Two streams: the first died before answering the send, the second
      // opened with a resume and carried the same send again (same message id).
      assert.equal(streams.length, 2);
      const open1 = streams[0][0].frame;
      const open2 = streams[1][0].frame;
      assert.equal(open1?.$case, "open");
      assert.equal(open2?.$case, "open");
      if (open1?.$case === "open" && open2?.$case === "open") {
        assert.equal(open1.open.resume, undefined);
        assert.deepEqual(open2.open.resume, { logEpoch: "E", afterOffset: 100 });
        assert.deepEqual(
          open1.open.streamOptions?.clientTools.map((t) => [t.name, t.description]),
          [["pick_color", "Pick a color"]],
        );
      }
      const send1 = streams[0][1];
      const send2 = streams[1][1];
      assert.equal(send1.frame?.$case, "sendMessage");
      assert.equal(send2.requestId, send1.requestId);
      if (send1.frame?.$case === "sendMessage" && send2.frame?.$case === "sendMessage") {
        assert.ok(send1.frame.sendMessage.message?.id);
        assert.equal(send2.frame.sendMessage.message?.id, send1.frame.sendMessage.message?.id);
      }
    } finally {
      client.close();
      s.server.forceShutdown();
    }
  });
});

describe("traceparent", { timeout: 15000 }, () => {
  it("is injected from the active span, and only then", async () => {
    const seen: (string | undefined)[] = [];
    const s = await serve(v1.AgentServiceService, {
      getAgent: (call: grpc.ServerUnaryCall<agentd.v1.GetAgentRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        seen.push(call.metadata.get("traceparent")[0] as string | undefined);
        cb(null, { agent: v1.Agent.fromPartial({ id: call.request.agentId }) });
      },
    });
    const manager = new AlsContextManager();
    assert.ok(context.setGlobalContextManager(manager));
    const client = new AgentdClient(s.addr);
    try {
      await client.getAgent("a");
      const span = trace.wrapSpanContext({
        traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
        spanId: "00f067aa0ba902b7",
        traceFlags: 1,
      });
      await context.with(trace.setSpan(context.active(), span), () => client.getAgent("b"));
      await client.getAgent("c", {
        metadata: { traceparent: "00-11111111111111111111111111111111-2222222222222222-00" },
      });
      assert.deepEqual(seen, [
        undefined,
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "00-11111111111111111111111111111111-2222222222222222-00",
      ]);
    } finally {
      context.disable();
      client.close();
      s.server.forceShutdown();
    }
  });
});
