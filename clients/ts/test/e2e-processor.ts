// The TypeScript processor of the remote-processor e2e tests
// (tests/e2e/test_remote_processors.py), the twin of tests/e2e/goprocessor:
// the same behaviour per hook, so one test drives both. Prints
// "listening <addr>" once it serves.

import { agentd } from "@agentd/proto";

import { serveProcessor, type ProcessorRun } from "../src/processor";

type Message = agentd.v1.Message;

function note(run: ProcessorRun, hook: string): void {
  run.state.hooks = [...((run.state.hooks as string[] | undefined) ?? []), hook];
}

function config(run: ProcessorRun, key: string): number {
  const value = run.config[key];
  return typeof value === "number" ? value : 0;
}

function lower(messages: Message[]): Message[] {
  for (const m of messages) {
    for (const p of m.parts) {
      if (p.part?.$case === "text") p.part.text.text = p.part.text.text.toLowerCase();
    }
  }
  return messages;
}

async function main(): Promise<void> {
  const addrFlag = process.argv.indexOf("--addr");
  const addr = addrFlag >= 0 ? process.argv[addrFlag + 1] : "127.0.0.1:0";
  const { port } = await serveProcessor(
    {
      name: "ts-e2e",
      async processInput(run, call) {
        note(run, "process_input");
        const ms = config(run, "sleepMs");
        if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
        return lower(call.messages);
      },
      processInputStep(run) {
        note(run, "process_input_step");
        return undefined;
      },
      processLlmRequest(run) {
        note(run, "process_llm_request");
        return undefined;
      },
      processLlmResponse(run) {
        note(run, "process_llm_response");
      },
      processOutputStream(run, part) {
        const n = ((run.state.parts as number | undefined) ?? 0) + 1;
        run.state.parts = n;
        const at = config(run, "crashAtPart");
        if (at > 0 && n >= at) {
          process.stderr.write("crashing on purpose\n");
          process.exit(3);
        }
        if (part.payload?.$case !== "textDelta") return part;
        const delta = part.payload.textDelta;
        if (delta.text.trim() === "drop") return null;
        if (!run.state.noted) {
          run.state.noted = true;
          run.custom("data-processor-note", { by: "ts" });
        }
        delta.text = delta.text.replaceAll("secret", "[redacted]");
        return part;
      },
      processOutputStep(run, call) {
        note(run, "process_output_step");
        if (call.text.includes("meh")) run.abort("Be more detailed.", { retry: true, metadata: { score: 0.1 } });
        return undefined;
      },
      processToolResult(run) {
        note(run, "process_tool_result");
        return undefined;
      },
      processOutputResult(run, call) {
        note(run, "process_output_result");
        for (const m of call.messages) {
          m.metadata = { ...(m.metadata ?? {}), partsSeen: run.state.parts ?? 0, hooks: run.state.hooks };
        }
        return call.messages;
      },
      processApiError(run) {
        note(run, "process_api_error");
        return run.retryCount === 0;
      },
    },
    addr,
  );
  const host = addr.slice(0, addr.lastIndexOf(":"));
  process.stdout.write(`listening ${host}:${port}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
