// Write a processor that agentd calls over gRPC (its `remote` processor), in TypeScript.
//
//   const server = await serveProcessor({
//     processOutputStream(run, part) {
//       if (part.payload?.$case === "textDelta") {
//         part.payload.textDelta.text = part.payload.textDelta.text.replace(EMAIL, "[email]");
//       }
//       return part; // the part (changed or not); null drops it
//     },
//   }, "127.0.0.1:50070");
//
// Implement the hooks you want (agentd calls no other: the hello names only
// yours), sync or async. Message hooks return the messages replacing the
// hook's, or undefined for unchanged; processApiError returns true to retry
// the model call; `run.abort(reason, { retry, metadata })` is a tripwire. A
// hook that throws anything else ends the stream, which agentd handles by the
// entry's on_error.

import { Server, ServerCredentials, status, type ServerDuplexStream } from "@grpc/grpc-js";
import { agentd } from "@agentd/proto";

type v1Message = agentd.v1.Message;
type Chunk = agentd.v1.Chunk;
type HookAnswer = agentd.v1.HookAnswer;
type HookCall = agentd.v1.HookCall;
type ProcessRequest = agentd.v1.ProcessRequest;
type ProcessResponse = agentd.v1.ProcessResponse;
const { Hook } = agentd.v1;

type Maybe<T> = T | undefined | null | Promise<T | undefined | null>;

/** Thrown by `run.abort()`: agentd ends the run (or, with retry, the step) as a tripwire. */
export class ProcessorAbort extends Error {
  constructor(
    readonly reason: string,
    readonly retry = false,
    readonly metadata?: Record<string, unknown>,
  ) {
    super(reason);
  }
}

/** One run, as one processor sees it: its hooks share `state`. */
export class ProcessorRun {
  /** Shared by this processor's hooks for the run. */
  readonly state: Record<string, unknown> = {};
  retryCount = 0;
  answer: HookAnswer = agentd.v1.HookAnswer.create();

  constructor(readonly open: agentd.v1.ProcessOpen) {}

  get config(): Record<string, unknown> {
    return this.open.config ?? {};
  }

  abort(reason: string, options: { retry?: boolean; metadata?: Record<string, unknown> } = {}): never {
    throw new ProcessorAbort(reason, options.retry ?? false, options.metadata);
  }

  /** A `data-*` chunk into the run's stream (writer.custom). */
  custom(type: string, data?: unknown, options: { id?: string; transient?: boolean } = {}): void {
    if (!type.startsWith("data-")) throw new Error(`custom chunk types start with 'data-', not ${type}`);
    this.answer.custom.push(
      agentd.v1.DataChunk.create({ type, data, id: options.id ?? "", transient: options.transient ?? false }),
    );
  }

  /** A signal into the run (input step, output step, output result and API error hooks). */
  sendSignal(signal: Partial<agentd.v1.SignalInput>): void {
    this.answer.signals.push(agentd.v1.SignalInput.fromPartial({ type: "reactive", ...signal }));
  }
}

export interface ProcessorHooks {
  name?: string;
  /** Also send data-* and signal chunks to processOutputStream. */
  processDataParts?: boolean;
  processInput?(run: ProcessorRun, call: agentd.v1.ProcessInputCall): Maybe<v1Message[]>;
  processInputStep?(run: ProcessorRun, call: agentd.v1.ProcessInputStepCall): Maybe<agentd.v1.StepOverrides>;
  processLlmRequest?(run: ProcessorRun, call: agentd.v1.ProcessLLMRequestCall): Maybe<v1Message[]>;
  processLlmResponse?(run: ProcessorRun, call: agentd.v1.ProcessLLMResponseCall): void | Promise<void>;
  /** The part, a replacement, or null (or undefined) to drop it. */
  processOutputStream?(run: ProcessorRun, part: Chunk): Maybe<Chunk>;
  processOutputStep?(run: ProcessorRun, call: agentd.v1.ProcessOutputStepCall): Maybe<v1Message[]>;
  processOutputResult?(run: ProcessorRun, call: agentd.v1.ProcessOutputResultCall): Maybe<v1Message[]>;
  processToolResult?(run: ProcessorRun, call: agentd.v1.ProcessToolResultCall): Maybe<v1Message[]>;
  processApiError?(run: ProcessorRun, call: agentd.v1.ProcessAPIErrorCall): Maybe<boolean>;
}

const HOOKS: [keyof ProcessorHooks, agentd.v1.Hook][] = [
  ["processInput", Hook.HOOK_PROCESS_INPUT],
  ["processInputStep", Hook.HOOK_PROCESS_INPUT_STEP],
  ["processLlmRequest", Hook.HOOK_PROCESS_LLM_REQUEST],
  ["processLlmResponse", Hook.HOOK_PROCESS_LLM_RESPONSE],
  ["processOutputStream", Hook.HOOK_PROCESS_OUTPUT_STREAM],
  ["processOutputStep", Hook.HOOK_PROCESS_OUTPUT_STEP],
  ["processOutputResult", Hook.HOOK_PROCESS_OUTPUT_RESULT],
  ["processToolResult", Hook.HOOK_PROCESS_TOOL_RESULT],
  ["processApiError", Hook.HOOK_PROCESS_API_ERROR],
];

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

function messages(out: v1Message[] | undefined | null): HookAnswer["result"] {
  return out == null ? undefined : { $case: "messages", messages: { messages: out } };
}

async function dispatch(p: ProcessorHooks, run: ProcessorRun, call: HookCall): Promise<HookAnswer["result"]> {
  const hook = call.hook;
  switch (hook?.$case) {
    case "processInput":
      return messages(await p.processInput?.(run, hook.processInput));
    case "processInputStep": {
      const step = await p.processInputStep?.(run, hook.processInputStep);
      return step == null ? undefined : { $case: "step", step };
    }
    case "processLlmRequest": {
      const prompt = await p.processLlmRequest?.(run, hook.processLlmRequest);
      return prompt == null ? undefined : { $case: "prompt", prompt: { messages: prompt } };
    }
    case "processLlmResponse":
      await p.processLlmResponse?.(run, hook.processLlmResponse);
      return undefined;
    case "processOutputStream":
      return { $case: "chunks", chunks: { answers: [] } }; // filled part by part in `answer`
    case "processOutputStep":
      return messages(await p.processOutputStep?.(run, hook.processOutputStep));
    case "processOutputResult":
      return messages(await p.processOutputResult?.(run, hook.processOutputResult));
    case "processToolResult":
      return messages(await p.processToolResult?.(run, hook.processToolResult));
    case "processApiError":
      return (await p.processApiError?.(run, hook.processApiError))
        ? { $case: "apiError", apiError: { retry: true } }
        : undefined;
  }
  return undefined;
}

async function answer(p: ProcessorHooks, run: ProcessorRun, call: HookCall): Promise<HookAnswer> {
  const out = (run.answer = agentd.v1.HookAnswer.create({ callId: call.callId }));
  run.retryCount = call.retryCount;
  try {
    out.result = await dispatch(p, run, call);
    if (call.hook?.$case === "processOutputStream" && out.result?.$case === "chunks") {
      const answers = out.result.chunks.answers;
      for (const part of call.hook.processOutputStream.parts) {
        const before = agentd.v1.Chunk.encode(part).finish();
        const result = await p.processOutputStream?.(run, part); // an abort leaves the rest unanswered
        if (result == null) answers.push({ result: { $case: "drop", drop: {} }, emitAfter: [] });
        else if (sameBytes(agentd.v1.Chunk.encode(result).finish(), before))
          answers.push({ result: { $case: "pass", pass: {} }, emitAfter: [] });
        else answers.push({ result: { $case: "replace", replace: result }, emitAfter: [] });
      }
    }
  } catch (err) {
    if (!(err instanceof ProcessorAbort)) throw err;
    out.abort = { reason: err.reason, retry: err.retry, metadata: err.metadata };
  }
  return out;
}

/** The service definition and implementation, to add to a grpc-js Server of your own. */
export function processorService(p: ProcessorHooks) {
  const hooks = HOOKS.filter(([name]) => typeof p[name] === "function").map(([, hook]) => hook);
  const implementation = {
    process(call: ServerDuplexStream<ProcessRequest, ProcessResponse>): void {
      let run: ProcessorRun | undefined;
      let chain = Promise.resolve();
      const handle = async (request: ProcessRequest): Promise<void> => {
        const kind = request.kind;
        if (kind?.$case === "open" && run === undefined) {
          run = new ProcessorRun(kind.open);
          const hello = { hooks, processDataParts: p.processDataParts ?? false, name: p.name ?? "" };
          call.write({ kind: { $case: "hello", hello } });
        } else if (kind?.$case === "call" && run !== undefined) {
          call.write({ kind: { $case: "answer", answer: await answer(p, run, kind.call) } });
        } else if (run === undefined) {
          throw Object.assign(new Error("the first message must be open"), { code: status.INVALID_ARGUMENT });
        }
      };
      call.on("data", (request: ProcessRequest) => {
        chain = chain.then(() => handle(request)).catch((err: unknown) => {
          const code = (err as { code?: number }).code ?? status.INTERNAL;
          call.emit("error", { code, details: err instanceof Error ? err.message : String(err) });
        });
      });
      call.on("end", () => void chain.then(() => call.end()));
    },
  };
  return { service: agentd.v1.ProcessorServiceService, implementation };
}

/** Serves `p` on `address` ("host:port"; port 0 picks one) and resolves once it listens. */
export function serveProcessor(
  p: ProcessorHooks,
  address: string,
  credentials: ServerCredentials = ServerCredentials.createInsecure(),
): Promise<{ server: Server; port: number }> {
  const server = new Server();
  const { service, implementation } = processorService(p);
  server.addService(service, implementation);
  return new Promise((resolve, reject) => {
    server.bindAsync(address, credentials, (err, port) => (err ? reject(err) : resolve({ server, port })));
  });
}
