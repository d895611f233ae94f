// Generate and Stream on agentd's echo agent with the raw generated stubs
// (@agentd/proto from gen/ts, over @grpc/grpc-js).
//
//   node dist/stream.js [--addr 127.0.0.1:50051]

import { parseArgs } from "node:util";
import { credentials } from "@grpc/grpc-js";
import { agentd } from "@agentd/proto";

const { AgentServiceClient, GenerateRequest, StreamRequest } = agentd.v1;

function generate(agents: agentd.v1.AgentServiceClient, request: agentd.v1.GenerateRequest) {
  return new Promise<agentd.v1.GenerateResponse>((resolve, reject) =>
    agents.generate(request, (err, reply) => (err ? reject(err) : resolve(reply))),
  );
}

async function main(addr: string): Promise<void> {
  const agents = new AgentServiceClient(addr, credentials.createInsecure());
  try {
    const reply = await generate(agents, GenerateRequest.fromPartial({ agentId: "echo", text: "hi" }));
    console.log(reply.text, reply.usage?.outputTokens);
    const stream = agents.stream(StreamRequest.fromPartial({ agentId: "echo", text: "one two three" }));
    for await (const message of stream as AsyncIterable<agentd.v1.StreamResponse>) {
      for (const chunk of message.chunks) {
        if (chunk.payload?.$case === "textDelta") process.stdout.write(chunk.payload.textDelta.text);
      }
    }
    process.stdout.write("\n");
  } finally {
    agents.close();
  }
}

const { values } = parseArgs({ options: { addr: { type: "string", default: "127.0.0.1:50051" } } });
main(values.addr).catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
