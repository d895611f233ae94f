// serveProcessor as agentd drives it: open, a hello naming only the hooks
// implemented, a batch of parts answered pass / drop / replace, an abort at
// the part it concerns, and the stream's state across calls.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import { credentials, type ClientDuplexStream, type Server } from "@grpc/grpc-js";
import { agentd } from "@agentd/client";

import { serveProcessor } from "../src/processor";

const v1 = agentd.v1;
type Request = agentd.v1.ProcessRequest;
type Response = agentd.v1.ProcessResponse;

const delta = (text: string): agentd.v1.Chunk =>
  v1.Chunk.fromPartial({ payload: { $case: "textDelta", textDelta: { id: "t", text } } });

function reader(stream: ClientDuplexStream<Request, Response>): () => Promise<Response> {
  const waiting: Response[] = [];
  const wanted: ((r: Response) => void)[] = [];
  stream.on("data", (r: Response) => (wanted.length ? wanted.shift()!(r) : waiting.push(r)));
  return () => (waiting.length ? Promise.resolve(waiting.shift()!) : new Promise((resolve) => wanted.push(resolve)));
}

describe("serveProcessor", () => {
  let server: Server;
  let client: agentd.v1.ProcessorServiceClient;

  before(async () => {
    const served = await serveProcessor(
      {
        processOutputStream(run, part) {
          run.state.parts = ((run.state.parts as number | undefined) ?? 0) + 1;
          if (part.payload?.$case !== "textDelta") return part;
          const text = part.payload.textDelta.text;
          if (text === "drop") return null;
          if (text === "stop") run.abort("blocked", { retry: true, metadata: { score: 0.1 } });
          if (text === "secret") part.payload.textDelta.text = "[redacted]";
          return part;
        },
        processOutputResult(run, call) {
          for (const m of call.messages) m.metadata = { parts: run.state.parts };
          return call.messages;
        },
      },
      "127.0.0.1:0",
    );
    server = served.server;
    client = new v1.ProcessorServiceClient(`127.0.0.1:${served.port}`, credentials.createInsecure());
  });

  after(() => {
    client.close();
    server.forceShutdown();
  });

  it("answers a batch, then keeps the run's state for the next hook", async () => {
    const stream = client.process();
    const next = reader(stream);
    stream.write({ kind: { $case: "open", open: v1.ProcessOpen.fromPartial({ runId: "r1" }) } });
    const hello = await next();
    assert.equal(hello.kind?.$case, "hello");
    if (hello.kind?.$case === "hello") {
      assert.deepEqual(hello.kind.hello.hooks, [v1.Hook.HOOK_PROCESS_OUTPUT_STREAM, v1.Hook.HOOK_PROCESS_OUTPUT_RESULT]);
    }
    const parts = ["a", "drop", "secret", "stop", "after"].map(delta);
    stream.write({
      kind: {
        $case: "call",
        call: v1.HookCall.fromPartial({ callId: 1, hook: { $case: "processOutputStream", processOutputStream: { parts } } }),
      },
    });
    const reply = await next();
    assert.equal(reply.kind?.$case, "answer");
    if (reply.kind?.$case !== "answer") return;
    const answer = reply.kind.answer;
    assert.equal(answer.callId, 1);
    assert.equal(answer.result?.$case, "chunks");
    if (answer.result?.$case !== "chunks") return;
    assert.deepEqual(
      answer.result.chunks.answers.map((a) => a.result?.$case),
      ["pass", "drop", "replace"],
    );
    assert.deepEqual(answer.abort, { reason: "blocked", retry: true, metadata: { score: 0.1 } });

    stream.write({
      kind: {
        $case: "call",
        call: v1.HookCall.fromPartial({
          callId: 2,
          hook: { $case: "processOutputResult", processOutputResult: { messages: [{ id: "m1" }] } },
        }),
      },
    });
    const result = await next();
    assert.equal(result.kind?.$case, "answer");
    if (result.kind?.$case === "answer" && result.kind.answer.result?.$case === "messages") {
      assert.deepEqual(result.kind.answer.result.messages.messages[0]?.metadata, { parts: 4 });
    } else {
      assert.fail("no messages result");
    }
    const ended = new Promise<number>((resolve) => stream.on("status", (s: { code: number }) => resolve(s.code)));
    stream.end();
    assert.equal(await ended, 0); // the processor ends the stream once agentd half-closes it
  });
});
