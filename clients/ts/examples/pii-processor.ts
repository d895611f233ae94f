// A PII redactor as a remote processor: e-mail addresses and phone numbers
// in the input and the streamed text become placeholders. Serve it, then
// name it in agentd.toml:
//
//   output_processors = [{ name = "remote", options = { id = "pii-ts", target = "127.0.0.1:50072" } }]
//
//   npm run build && node build/examples/pii-processor.js --addr 127.0.0.1:50072

import { agentd } from "@agentd/proto";

import { serveProcessor } from "../src/processor";

const PII: [RegExp, string][] = [
  [/[\w.+-]+@[\w-]+\.[\w.]+/g, "[email]"],
  [/\+?\d[\d -]{7,}\d/g, "[phone]"],
];
const redact = (text: string) => PII.reduce((t, [re, label]) => t.replace(re, label), text);

function redactMessages(messages: agentd.v1.Message[]): agentd.v1.Message[] {
  for (const m of messages) for (const p of m.parts) if (p.part?.$case === "text") p.part.text.text = redact(p.part.text.text);
  return messages;
}

const addr = process.argv[process.argv.indexOf("--addr") + 1] ?? "127.0.0.1:50072";
serveProcessor(
  {
    name: "pii-ts",
    processInput: (_run, call) => redactMessages(call.messages),
    processOutputStream(_run, part) {
      if (part.payload?.$case === "textDelta") part.payload.textDelta.text = redact(part.payload.textDelta.text);
      return part;
    },
  },
  addr,
).then(({ port }) => console.log(`pii-ts listening on port ${port}`));
