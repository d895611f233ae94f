// Friendly option shapes and their conversion to the contract's messages.

import { agentd } from "@agentd/proto";

const v1 = agentd.v1;

/** JSON values as carried by google.protobuf.Value / Struct. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** Options every call takes. */
export interface CallOptions {
  /** Deadline of this call in milliseconds (overrides the client's `deadlineMs`). */
  deadlineMs?: number;
  /** Extra metadata for this call. */
  metadata?: Record<string, string>;
  /** Cancels the call (a cancelled Stream aborts its run unless `keepRunning`). */
  signal?: AbortSignal;
}

/** Which thread a run reads and writes (`ExecutionOptions.memory`). */
export interface MemoryOption {
  /** The owner of the thread (user, org, project). */
  resource: string;
  /** A thread id, or a thread created when missing. */
  thread?: string | { id: string; title?: string; metadata?: JsonObject };
}

/**
 * Per-call response-cache overrides. `scope` and `noScope` are exclusive;
 * `bust` skips the read and still writes the fresh result.
 */
export interface ResponseCacheOption {
  key?: string;
  scope?: string;
  noScope?: boolean;
  bust?: boolean;
}

/** A tool the caller declares and executes itself (answered over `connect`). */
export interface ClientToolSpec {
  name: string;
  description?: string;
  /** JSON Schema of the tool's input. */
  inputSchema?: JsonObject;
}

/**
 * What a run does when its structured-output answer is not JSON matching
 * the schema: "strict" (the default) fails it with STRUCTURED_OUTPUT_INVALID,
 * "warn" ends it with no object and a warning, "fallback" answers with
 * `fallbackValue`.
 */
export type StructuredOutputErrorStrategy = "strict" | "warn" | "fallback";

/** Structured output (`ExecutionOptions.structured_output`). */
export interface StructuredOutputOption {
  /** The JSON Schema the answer must match. */
  schema: JsonObject;
  name?: string;
  description?: string;
  /** Default "strict". */
  errorStrategy?: StructuredOutputErrorStrategy;
  /** The object of a "fallback" run whose answer does not match: required with "fallback", refused otherwise. */
  fallbackValue?: JsonValue;
  /** A separate structuring model ("provider/model") that turns the agent's text answer into the object. */
  model?: string;
  /** The structuring model's system prompt, in place of the default (needs `model`). */
  instructions?: string;
}

const ERROR_STRATEGIES: Record<StructuredOutputErrorStrategy, agentd.v1.StructuredOutputErrorStrategy> = {
  strict: v1.StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT,
  warn: v1.StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN,
  fallback: v1.StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK,
};

function structuredOutput(opt: StructuredOutputOption): agentd.v1.StructuredOutput {
  if (typeof opt.schema !== "object" || opt.schema === null || Array.isArray(opt.schema)) {
    throw new TypeError("structuredOutput: schema is a JSON Schema object");
  }
  const strategy = opt.errorStrategy ?? "strict";
  if (!Object.hasOwn(ERROR_STRATEGIES, strategy)) {
    throw new TypeError('structuredOutput: errorStrategy is "strict", "warn" or "fallback"');
  }
  return v1.StructuredOutput.fromPartial({
    schema: opt.schema,
    name: opt.name ?? "",
    description: opt.description ?? "",
    errorStrategy: ERROR_STRATEGIES[strategy],
    fallbackValue: opt.fallbackValue,
    model: opt.model ?? "",
    instructions: opt.instructions ?? "",
  });
}

/** A processor by registered name, or a full ProcessorRef (workflow). */
export type ProcessorOption = string | { name: string; id?: string; options?: JsonObject } | agentd.v1.ProcessorRef;

export type ToolChoiceOption = "auto" | "none" | "required" | { tool: string };

/** The options of one run (ExecutionOptions), in friendly form. */
export interface RunOptions {
  /** Maximum number of model steps (server default 5). */
  maxSteps?: number;
  toolChoice?: ToolChoiceOption;
  /** Restricts which tools are offered; an empty list offers none. */
  activeTools?: string[];
  modelSettings?: Partial<agentd.v1.ModelSettings>;
  /** Provider-namespaced options, e.g. `{ openai: { reasoningEffort: "low" } }`. */
  providerOptions?: JsonObject;
  /** Asks for a JSON object matching a schema (the result's `object`). */
  structuredOutput?: StructuredOutputOption;
  /** Tools the caller executes (thread-bound runs only). */
  clientTools?: ClientToolSpec[];
  /** Free JSON context; keys starting with "agentd." are reserved. */
  requestContext?: JsonObject;
  memory?: MemoryOption;
  responseCache?: ResponseCacheOption;
  /** Per-call processor lists: unset uses the agent's, `[]` runs none. */
  inputProcessors?: ProcessorOption[];
  outputProcessors?: ProcessorOption[];
  errorProcessors?: ProcessorOption[];
  maxProcessorRetries?: number;
  errorProcessorDefaults?: boolean;
  /** A server-registered step function name. */
  prepareStep?: string;
  /** An aborted thread-bound run saves the text it streamed so far. */
  persistPartialOnAbort?: boolean;
  /** "off": no live scorer scores the run; "force": every one does, whatever its rate. */
  scorers?: "off" | "force";
  /** The raw ExecutionOptions, merged under the fields above. */
  raw?: Partial<agentd.v1.ExecutionOptions>;
}

function processorList(list: ProcessorOption[] | undefined): agentd.v1.ProcessorList | undefined {
  if (list === undefined) {
    return undefined;
  }
  return v1.ProcessorList.fromPartial({
    processors: list.map((p): agentd.v1.ProcessorRef => {
      if (typeof p === "string") {
        return { kind: { $case: "processor", processor: v1.ProcessorSpec.fromPartial({ name: p }) } };
      }
      if (!("name" in p)) {
        return p;
      }
      return {
        kind: {
          $case: "processor",
          processor: v1.ProcessorSpec.fromPartial({ name: p.name, id: p.id ?? "", options: p.options }),
        },
      };
    }),
  });
}

function toolChoice(choice: ToolChoiceOption | undefined): agentd.v1.ToolChoice | undefined {
  if (choice === undefined) {
    return undefined;
  }
  if (typeof choice === "object") {
    return { choice: { $case: "toolName", toolName: choice.tool } };
  }
  const mode = {
    auto: v1.ToolChoiceMode.TOOL_CHOICE_MODE_AUTO,
    none: v1.ToolChoiceMode.TOOL_CHOICE_MODE_NONE,
    required: v1.ToolChoiceMode.TOOL_CHOICE_MODE_REQUIRED,
  }[choice];
  return { choice: { $case: "mode", mode } };
}

export function memoryOptions(memory: MemoryOption): agentd.v1.MemoryOptions {
  const out: agentd.v1.MemoryOptions = { resource: memory.resource };
  if (typeof memory.thread === "string") {
    out.thread = { $case: "threadId", threadId: memory.thread };
  } else if (memory.thread !== undefined) {
    out.thread = {
      $case: "threadObject",
      threadObject: v1.ThreadInput.fromPartial({
        id: memory.thread.id,
        title: memory.thread.title ?? "",
        metadata: memory.thread.metadata,
      }),
    };
  }
  return out;
}

export function responseCacheOptions(rc: ResponseCacheOption): agentd.v1.ResponseCacheOptions {
  if (rc.scope !== undefined && rc.noScope) {
    throw new TypeError("responseCache: set at most one of scope and noScope");
  }
  const out: agentd.v1.ResponseCacheOptions = { bust: rc.bust ?? false };
  if (rc.key !== undefined) {
    out.key = rc.key;
  }
  if (rc.scope !== undefined) {
    out.scopeOverride = { $case: "scope", scope: rc.scope };
  } else if (rc.noScope) {
    out.scopeOverride = { $case: "noScope", noScope: {} };
  }
  return out;
}

/** True when the options set anything (an all-unset options message is left out). */
export function hasRunOptions(opts: RunOptions | undefined): boolean {
  if (!opts) {
    return false;
  }
  return RUN_OPTION_KEYS.some((k) => opts[k] !== undefined);
}

const RUN_OPTION_KEYS: (keyof RunOptions)[] = [
  "maxSteps",
  "toolChoice",
  "activeTools",
  "modelSettings",
  "providerOptions",
  "structuredOutput",
  "clientTools",
  "requestContext",
  "memory",
  "responseCache",
  "inputProcessors",
  "outputProcessors",
  "errorProcessors",
  "maxProcessorRetries",
  "errorProcessorDefaults",
  "prepareStep",
  "persistPartialOnAbort",
  "scorers",
  "raw",
];

/** Converts friendly run options to `agentd.v1.ExecutionOptions`. */
export function executionOptions(opts: RunOptions = {}): agentd.v1.ExecutionOptions {
  const out = v1.ExecutionOptions.fromPartial(opts.raw ?? {});
  if (opts.maxSteps !== undefined) out.maxSteps = opts.maxSteps;
  if (opts.toolChoice !== undefined) out.toolChoice = toolChoice(opts.toolChoice);
  if (opts.activeTools !== undefined) out.activeTools = { names: [...opts.activeTools] };
  if (opts.modelSettings !== undefined) out.modelSettings = v1.ModelSettings.fromPartial(opts.modelSettings);
  if (opts.providerOptions !== undefined) out.providerOptions = opts.providerOptions;
  if (opts.structuredOutput !== undefined) out.structuredOutput = structuredOutput(opts.structuredOutput);
  if (opts.clientTools !== undefined) {
    out.clientTools = opts.clientTools.map((t) =>
      v1.ClientTool.fromPartial({ name: t.name, description: t.description ?? "", inputSchema: t.inputSchema }),
    );
  }
  if (opts.requestContext !== undefined) out.requestContext = opts.requestContext;
  if (opts.memory !== undefined) out.memory = memoryOptions(opts.memory);
  if (opts.responseCache !== undefined) out.responseCache = responseCacheOptions(opts.responseCache);
  if (opts.inputProcessors !== undefined) out.inputProcessors = processorList(opts.inputProcessors);
  if (opts.outputProcessors !== undefined) out.outputProcessors = processorList(opts.outputProcessors);
  if (opts.errorProcessors !== undefined) out.errorProcessors = processorList(opts.errorProcessors);
  if (opts.maxProcessorRetries !== undefined) out.maxProcessorRetries = opts.maxProcessorRetries;
  if (opts.errorProcessorDefaults !== undefined) out.errorProcessorDefaults = opts.errorProcessorDefaults;
  if (opts.prepareStep !== undefined) out.prepareStep = opts.prepareStep;
  if (opts.persistPartialOnAbort !== undefined) out.persistPartialOnAbort = opts.persistPartialOnAbort;
  if (opts.scorers !== undefined) {
    out.scorers = { mode: opts.scorers === "off" ? v1.ScoringMode.SCORING_MODE_OFF : v1.ScoringMode.SCORING_MODE_FORCE };
  }
  return out;
}

/** A run input: plain text, or messages. */
export type RunInput = string | MessageLike[];

/** A message: the contract's shape, or `{ role, text }` shorthand. */
export type MessageLike = Partial<agentd.v1.Message> | { role: "user" | "assistant" | "system"; text: string };

const ROLES = {
  user: v1.Role.ROLE_USER,
  assistant: v1.Role.ROLE_ASSISTANT,
  system: v1.Role.ROLE_SYSTEM,
} as const;

export function toMessage(m: MessageLike): agentd.v1.Message {
  if ("text" in m && typeof m.role === "string") {
    return v1.Message.fromPartial({
      role: ROLES[m.role],
      parts: [{ part: { $case: "text", text: { text: m.text } } }],
    });
  }
  return v1.Message.fromPartial(m as Partial<agentd.v1.Message>);
}

/** A message sent into a thread: its text, or a MessageInput. */
export type MessageInputLike = string | Partial<agentd.v1.MessageInput>;

export function toMessageInput(m: MessageInputLike): agentd.v1.MessageInput {
  return v1.MessageInput.fromPartial(typeof m === "string" ? { text: m } : m);
}

/** What to do when the thread has an active run. */
export type IfActiveOption = "deliver" | "persist" | "discard" | Partial<agentd.v1.IfActive>;
/** What to do when the thread is idle. */
export type IfIdleOption = "wake" | "persist" | "discard" | Partial<agentd.v1.IfIdle>;

export function ifActive(opt: IfActiveOption | undefined): agentd.v1.IfActive | undefined {
  if (opt === undefined) return undefined;
  if (typeof opt === "string") {
    const behavior = {
      deliver: v1.ActiveBehavior.ACTIVE_BEHAVIOR_DELIVER,
      persist: v1.ActiveBehavior.ACTIVE_BEHAVIOR_PERSIST,
      discard: v1.ActiveBehavior.ACTIVE_BEHAVIOR_DISCARD,
    }[opt];
    return v1.IfActive.fromPartial({ behavior });
  }
  return v1.IfActive.fromPartial(opt);
}

/**
 * The idle behaviour; `streamOptions` (friendly run options) become the
 * options of the run a wake starts.
 */
export function ifIdle(opt: IfIdleOption | undefined, streamOptions?: RunOptions): agentd.v1.IfIdle | undefined {
  if (opt === undefined && !hasRunOptions(streamOptions)) return undefined;
  let out: agentd.v1.IfIdle;
  if (opt === undefined) {
    out = v1.IfIdle.fromPartial({});
  } else if (typeof opt === "string") {
    const behavior = {
      wake: v1.IdleBehavior.IDLE_BEHAVIOR_WAKE,
      persist: v1.IdleBehavior.IDLE_BEHAVIOR_PERSIST,
      discard: v1.IdleBehavior.IDLE_BEHAVIOR_DISCARD,
    }[opt];
    out = v1.IfIdle.fromPartial({ behavior });
  } else {
    out = v1.IfIdle.fromPartial(opt);
  }
  if (hasRunOptions(streamOptions)) {
    out.streamOptions = executionOptions(streamOptions);
  }
  return out;
}

/** Options of the sends (message, signal, state) into a thread. */
export interface SendOptions extends CallOptions {
  ifActive?: IfActiveOption;
  ifIdle?: IfIdleOption;
  /** Options of the run a wake starts. */
  streamOptions?: RunOptions;
}

/** The routing action of a decision, in the contract's snake_case. */
export type RoutingAction = "wake" | "deliver" | "persist" | "discard" | "skipped_unchanged";

/** A routing answer with its action and run id spelled out. */
export interface Routing {
  /** The created signal (unset for a skipped state signal). */
  signal: agentd.v1.Signal | undefined;
  decision: agentd.v1.RoutingDecision | undefined;
  /** What the server did with the signal; undefined when the server sent no decision. */
  action: RoutingAction | undefined;
  /** The run that was woken or delivered to ("" otherwise). */
  runId: string;
}

export function routing(
  signal: agentd.v1.Signal | undefined,
  decision: agentd.v1.RoutingDecision | undefined,
): Routing {
  const action = decision?.action;
  let name: RoutingAction | undefined;
  let runId = "";
  switch (action?.$case) {
    case "wake":
      name = "wake";
      runId = action.wake.runId;
      break;
    case "deliver":
      name = "deliver";
      runId = action.deliver.runId;
      break;
    case "persist":
      name = "persist";
      break;
    case "discard":
      name = "discard";
      break;
    case "skippedUnchanged":
      name = "skipped_unchanged";
      break;
    default:
      name = undefined;
  }
  return { signal, decision, action: name, runId };
}
