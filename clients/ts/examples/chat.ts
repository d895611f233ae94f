// A terminal chat over one agentd thread session.
//
//   npm run build
//   node build/examples/chat.js --addr 127.0.0.1:50051 --agent chat
//
// Each line you type is sent into the thread; the answer streams back as it
// is produced. Client tools run here: the `pick_color` tool answers "blue".
// Works with piped input too:  printf 'hello\nagain\n' | node build/examples/chat.js ...

import { randomUUID } from "node:crypto";
import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";

import { AgentdClient, AgentdError, isTerminal, type Chunk } from "@agentd/client";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      addr: { type: "string", default: "127.0.0.1:50051" },
      agent: { type: "string", default: "chat" },
      resource: { type: "string", default: "example-user" },
      thread: { type: "string" },
    },
  });
  const threadId = values.thread ?? `chat-${randomUUID()}`;
  const client = new AgentdClient(values.addr!, { deadlineMs: 30_000 });
  const session = client.connect(values.agent!, {
    resourceId: values.resource!,
    threadId,
    tools: {
      pick_color: {
        description: "Pick a color from a list",
        inputSchema: { type: "object", properties: { choices: { type: "array", items: { type: "string" } } } },
        execute: async (args: { choices?: string[] }) => {
          console.log(`  [tool pick_color(${JSON.stringify(args)}) -> "blue"]`);
          return "blue";
        },
      },
    },
  });

  try {
    await session.ready();
    console.log(`connected to ${values.agent} on thread ${threadId} (Ctrl-D to quit)`);
    const chunks = session[Symbol.asyncIterator]();
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: process.stdin.isTTY });
    for await (const line of rl) {
      const text = line.trim();
      if (!text) continue;
      const routing = await session.sendMessage(text);
      if (routing.action !== "wake" && routing.action !== "deliver") {
        console.log(`  [message ${routing.action}]`);
        continue;
      }
      process.stdout.write(`${values.agent}> `);
      for (;;) {
        const next = await chunks.next();
        if (next.done) return 0;
        const chunk: Chunk = next.value;
        if (chunk.runId !== routing.runId) continue;
        if (chunk.payload?.$case === "textDelta") process.stdout.write(chunk.payload.textDelta.text);
        if (chunk.payload?.$case === "error")
          process.stdout.write(`\n  [error ${chunk.payload.error.reason}: ${chunk.payload.error.message}]`);
        if (isTerminal(chunk)) break;
      }
      process.stdout.write("\n");
    }
    await session.close();
    return 0;
  } catch (err) {
    if (err instanceof AgentdError) {
      console.error(`agentd error ${err.codeName} ${err.reason}: ${err.details}`, err.violations);
    } else {
      console.error(err);
    }
    return 1;
  } finally {
    session.cancel();
    client.close();
  }
}

main().then((code) => {
  process.exitCode = code;
});
