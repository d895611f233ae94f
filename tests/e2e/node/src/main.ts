// End-to-end check of a running agentd server through the generated
// TypeScript client (@agentd/proto on @grpc/grpc-js).
//
// Usage: node dist/main.js --addr 127.0.0.1:50051
//
// Prints "node client: ok" and exits 0 when every check passes; otherwise
// prints the first mismatch to stderr and exits 1.

import { parseArgs } from "node:util";
import { credentials, Metadata, status, type ServiceError } from "@grpc/grpc-js";
import { agentd } from "@agentd/proto";

const v1 = agentd.v1;
type Chunk = agentd.v1.Chunk;
type ChunkCase = NonNullable<Chunk["payload"]>["$case"];

const CALL_TIMEOUT_MS = 15_000;

class CheckError extends Error {}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new CheckError(message);
  }
}

function deadline(): Date {
  return new Date(Date.now() + CALL_TIMEOUT_MS);
}

function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === "number";
}

function generate(
  client: agentd.v1.AgentServiceClient,
  request: agentd.v1.GenerateRequest,
): Promise<agentd.v1.GenerateResponse> {
  return new Promise((resolve, reject) => {
    client.generate(request, new Metadata(), { deadline: deadline() }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

function getAgent(
  client: agentd.v1.AgentServiceClient,
  request: agentd.v1.GetAgentRequest,
): Promise<agentd.v1.GetAgentResponse> {
  return new Promise((resolve, reject) => {
    client.getAgent(request, new Metadata(), { deadline: deadline() }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

async function checkGenerate(client: agentd.v1.AgentServiceClient): Promise<void> {
  const input = "hello from node";
  const response = await generate(client, v1.GenerateRequest.fromPartial({ agentId: "echo", text: input }));
  check(response.text === input, `Generate: text = ${JSON.stringify(response.text)}, want ${JSON.stringify(input)}`);
  check(
    response.finishReason === v1.FinishReason.FINISH_REASON_STOP,
    `Generate: finish_reason = ${v1.finishReasonToJSON(response.finishReason)}, want FINISH_REASON_STOP`,
  );
  const inputTokens = response.usage?.inputTokens ?? 0;
  check(inputTokens > 0, `Generate: usage.input_tokens = ${inputTokens}, want > 0`);
  check(response.runId !== "", "Generate: run_id is empty");
}

// Collapses consecutive text deltas so the shape of a one-step text run can
// be compared with a fixed list.
function chunkShape(kinds: ChunkCase[]): ChunkCase[] {
  return kinds.filter((kind, i) => !(kind === "textDelta" && kinds[i - 1] === "textDelta"));
}

async function checkStream(client: agentd.v1.AgentServiceClient): Promise<void> {
  const input = "alpha beta gamma";
  const call = client.stream(v1.StreamRequest.fromPartial({ agentId: "echo", text: input }), {
    deadline: deadline(),
  });

  const chunks: Chunk[] = [];
  let messages = 0;
  for await (const msg of call as AsyncIterable<agentd.v1.StreamResponse>) {
    messages++;
    check(msg.chunks.length > 0, `Stream: response message ${messages} carries no chunk`);
    chunks.push(...msg.chunks);
  }
  check(chunks.length > 0, "Stream: no chunk received");

  const kinds: ChunkCase[] = [];
  for (const [i, chunk] of chunks.entries()) {
    const kind = chunk.payload?.$case;
    check(kind !== undefined, `Stream: chunk ${i} has no payload`);
    kinds.push(kind);
    check(chunk.seq === i + 1, `Stream: chunk ${i} (${kind}) has seq ${chunk.seq}, want ${i + 1}`);
    check(chunk.runId !== "", `Stream: chunk ${i} (${kind}) has an empty run_id`);
    check(
      chunk.runId === chunks[0].runId,
      `Stream: chunk ${i} (${kind}) has run_id ${chunk.runId}, want ${chunks[0].runId}`,
    );
  }

  const want: ChunkCase[] = ["start", "stepStart", "textStart", "textDelta", "textEnd", "stepFinish", "finish"];
  const got = chunkShape(kinds);
  check(
    got.length === want.length && got.every((kind, i) => kind === want[i]),
    `Stream: chunk order ${JSON.stringify(kinds)}, want ${JSON.stringify(want)} with one or more textDelta`,
  );

  let text = "";
  for (const chunk of chunks) {
    if (chunk.payload?.$case === "textDelta") {
      text += chunk.payload.textDelta.text;
    }
  }
  check(text === input, `Stream: text deltas join to ${JSON.stringify(text)}, want ${JSON.stringify(input)}`);

  const last = chunks[chunks.length - 1].payload;
  check(last?.$case === "finish", "Stream: last chunk is not finish");
  check(
    last.finish.finishReason === v1.FinishReason.FINISH_REASON_STOP,
    `Stream: finish.finish_reason = ${v1.finishReasonToJSON(last.finish.finishReason)}, want FINISH_REASON_STOP`,
  );
}

async function checkGetAgentNotFound(client: agentd.v1.AgentServiceClient): Promise<void> {
  let response: agentd.v1.GetAgentResponse;
  try {
    response = await getAgent(client, v1.GetAgentRequest.fromPartial({ agentId: "nope" }));
  } catch (err) {
    check(isServiceError(err), `GetAgent("nope"): unexpected error ${String(err)}`);
    check(
      err.code === status.NOT_FOUND,
      `GetAgent("nope"): status ${status[err.code] ?? err.code} (${err.details}), want NOT_FOUND`,
    );
    return;
  }
  throw new CheckError(`GetAgent("nope"): got agent ${JSON.stringify(response.agent?.id)}, want NOT_FOUND`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { addr: { type: "string" } } });
  const addr = values.addr;
  if (!addr) {
    console.error("usage: main.js --addr host:port");
    return 2;
  }

  const client = new v1.AgentServiceClient(addr, credentials.createInsecure());
  try {
    await checkGenerate(client);
    await checkStream(client);
    await checkGetAgentNotFound(client);
  } catch (err) {
    if (err instanceof CheckError) {
      console.error(`node client: ${err.message}`);
    } else if (isServiceError(err)) {
      console.error(`node client: rpc failed: ${status[err.code] ?? err.code}: ${err.details}`);
    } else {
      console.error(`node client: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    }
    return 1;
  } finally {
    client.close();
  }
  console.log("node client: ok");
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`node client: ${String(err)}`);
    process.exitCode = 1;
  },
);
