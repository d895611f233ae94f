// A bidirectional thread session over ThreadService.Connect: sends whose
// promises resolve with the answer carrying their request_id, the thread's
// chunks as an async iterator, client tools answered automatically, and
// reconnection with resume.

import { randomUUID } from "node:crypto";
import {
  Metadata,
  status as Status,
  type CallOptions as GrpcCallOptions,
  type ClientDuplexStream,
} from "@grpc/grpc-js";
import { agentd } from "@agentd/proto";

import { AgentdError } from "./errors";
import {
  executionOptions,
  hasRunOptions,
  ifActive,
  ifIdle,
  routing,
  toMessageInput,
  type ClientToolSpec,
  type IfIdleOption,
  type JsonObject,
  type JsonValue,
  type MessageInputLike,
  type Routing,
  type RunOptions,
  type SendOptions,
} from "./options";
import { AsyncQueue } from "./queue";
import { backoffDelay, type ReconnectPolicy, type ResumeFrom } from "./streams";

const v1 = agentd.v1;
type Chunk = agentd.v1.Chunk;

/** What a client tool handler is told about the call it answers. */
export interface ToolCallInfo {
  runId: string;
  toolCallId: string;
  toolName: string;
  chunk: Chunk;
}

/** Runs a client tool; the returned JSON value is sent back as its result. */
export type ToolHandler = (args: any, call: ToolCallInfo) => unknown;

/** A client tool with its declaration. */
export interface ToolDefinition {
  description?: string;
  /** JSON Schema of the tool's input. */
  inputSchema?: JsonObject;
  execute: ToolHandler;
}

export interface ConnectOptions {
  resourceId: string;
  threadId: string;
  /**
   * Client tools by name: declared on the runs this session wakes and
   * answered automatically with `tool_result` frames when the model calls them.
   * A handler that throws answers with `is_error` and the error's message.
   */
  tools?: Record<string, ToolHandler | ToolDefinition>;
  /** Options of the runs this session's sends wake (unless a send sets its own). */
  streamOptions?: RunOptions;
  /** Signal categories whose echoes this session does not want. */
  hideSignals?: string[];
  /** Resume the thread's chunk log after this point instead of starting live. */
  after?: ResumeFrom;
  /** Reopen and resume on UNAVAILABLE or fell_behind (default true); unanswered frames are sent again. */
  reconnect?: boolean;
  reconnectPolicy?: ReconnectPolicy;
  /** Extra metadata of the Connect call. */
  metadata?: Record<string, string>;
  /** Ends the session. */
  signal?: AbortSignal;
  /** Told about failures that reject no promise (a tool handler's answer not accepted, ...). */
  onError?: (err: unknown) => void;
}

interface Pending {
  frame: agentd.v1.ConnectRequest;
  resolve: (answer: agentd.v1.ConnectResponse) => void;
  reject: (err: unknown) => void;
}

export type SessionFactory = (
  metadata: Metadata,
  options: Partial<GrpcCallOptions>,
) => ClientDuplexStream<agentd.v1.ConnectRequest, agentd.v1.ConnectResponse>;

/**
 * One Connect stream bound to a thread. Iterate it for the thread's chunks;
 * `sendMessage` and the other sends resolve with their answers.
 */
export class Session implements AsyncIterable<Chunk> {
  /** The latest snapshot (the first one, then each reconnection's). */
  snapshot: agentd.v1.ThreadSnapshot | undefined;
  logEpoch = "";
  lastOffset = 0;
  /** Reconnections made so far. */
  reconnects = 0;

  private call: ClientDuplexStream<agentd.v1.ConnectRequest, agentd.v1.ConnectResponse> | undefined;
  private generation = 0;
  private nextId = 0;
  private readonly prefix = randomUUID().slice(0, 8);
  private readonly pending = new Map<string, Pending>();
  private readonly chunks = new AsyncQueue<Chunk>();
  private readonly answered = new Set<string>();
  private readonly tools = new Map<string, ToolDefinition>();
  private readonly reconnect: boolean;
  private openId = "";
  private halfClosed = false;
  private finished = false;
  private fellBehind = false;
  private attempts = 0;
  private timer: NodeJS.Timeout | undefined;
  private readyResolve!: (s: agentd.v1.ThreadSnapshot) => void;
  private readyReject!: (e: unknown) => void;
  private readonly readyPromise: Promise<agentd.v1.ThreadSnapshot>;
  private closedResolve!: () => void;
  private readonly closedPromise: Promise<void>;

  constructor(
    private readonly factory: SessionFactory,
    private readonly metadata: Metadata,
    private readonly agentId: string,
    private readonly options: ConnectOptions,
  ) {
    this.reconnect = options.reconnect ?? true;
    for (const [name, tool] of Object.entries(options.tools ?? {})) {
      this.tools.set(name, typeof tool === "function" ? { execute: tool } : tool);
    }
    if (options.after) {
      this.logEpoch = options.after.logEpoch;
      this.lastOffset = options.after.afterOffset;
    }
    this.readyPromise = new Promise((resolve, reject) => {
      this.readyResolve = resolve;
      this.readyReject = reject;
    });
    this.readyPromise.catch(() => undefined);
    this.closedPromise = new Promise((resolve) => {
      this.closedResolve = resolve;
    });
    options.signal?.addEventListener("abort", () => this.cancel(), { once: true });
    this.open();
  }

  /** Resolves with the first snapshot once the thread stream is open. */
  ready(): Promise<agentd.v1.ThreadSnapshot> {
    return this.readyPromise;
  }

  /** Resolves when the stream has ended. */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  // ----------------------------------------------------------------- sends

  /** Sends a user message: delivered to the active run or wakes the idle thread. */
  async sendMessage(message: MessageInputLike, opts: SendOptions = {}): Promise<Routing> {
    const input = toMessageInput(message);
    input.id ||= randomUUID(); // idempotent when sent again after a reconnection
    const answer = await this.request({
      $case: "sendMessage",
      sendMessage: {
        message: input,
        ifActive: ifActive(opts.ifActive),
        ifIdle: this.idle(opts.ifIdle, opts.streamOptions),
      },
    });
    return this.routingOf(answer);
  }

  /** Queues a user message for the thread's next turn. */
  async queueMessage(
    message: MessageInputLike,
    opts: { ifIdle?: IfIdleOption; streamOptions?: RunOptions } = {},
  ): Promise<Routing> {
    const input = toMessageInput(message);
    input.id ||= randomUUID();
    const answer = await this.request({
      $case: "queueMessage",
      queueMessage: { message: input, ifIdle: this.idle(opts.ifIdle, opts.streamOptions) },
    });
    return this.routingOf(answer);
  }

  /** Sends a signal of any type ("user", "state", "reactive", "notification"). */
  async sendSignal(
    signal: Partial<agentd.v1.SignalInput> & { type: string },
    opts: SendOptions = {},
  ): Promise<Routing> {
    const input = v1.SignalInput.fromPartial(signal);
    input.id ||= randomUUID();
    const answer = await this.request({
      $case: "sendSignal",
      sendSignal: {
        signal: input,
        ifActive: ifActive(opts.ifActive),
        ifIdle: this.idle(opts.ifIdle, opts.streamOptions),
      },
    });
    return this.routingOf(answer);
  }

  /** Sends named thread state (skipped when unchanged). */
  async sendStateSignal(
    state: Partial<agentd.v1.StateSignalInput> & { id: string },
    opts: SendOptions = {},
  ): Promise<Routing> {
    const input = v1.StateSignalInput.fromPartial(state);
    input.signalId ||= randomUUID();
    const answer = await this.request({
      $case: "sendStateSignal",
      sendStateSignal: {
        state: input,
        ifActive: ifActive(opts.ifActive),
        ifIdle: this.idle(opts.ifIdle, opts.streamOptions),
      },
    });
    return this.routingOf(answer);
  }

  /** Aborts the thread's active run (only `runId` when given). */
  async abort(runId = ""): Promise<agentd.v1.AbortRunResponse> {
    const answer = await this.request({ $case: "abort", abort: { runId } });
    if (answer.event?.$case !== "abort") {
      throw this.unexpected(answer, "abort");
    }
    return answer.event.abort;
  }

  /** Answers a client tool call by hand (tools given to `connect` are answered automatically). */
  async sendToolResult(
    runId: string,
    toolCallId: string,
    result: JsonValue,
    isError = false,
  ): Promise<agentd.v1.ToolResultAck> {
    this.answered.add(toolCallId);
    const answer = await this.request({
      $case: "toolResult",
      toolResult: { runId, toolCallId, result, isError },
    });
    if (answer.event?.$case !== "toolResultAck") {
      throw this.unexpected(answer, "toolResultAck");
    }
    return answer.event.toolResultAck;
  }

  // ------------------------------------------------------------- lifecycle

  /**
   * Half-closes the session: the server answers the frames already sent,
   * then ends the stream; a running run goes on. Resolves when it has ended.
   */
  close(): Promise<void> {
    if (!this.halfClosed && !this.finished) {
      this.halfClosed = true;
      this.call?.end();
      if (!this.call) {
        this.finish(undefined);
      }
    }
    return this.closedPromise;
  }

  /** Ends the session at once (pending sends reject with CANCELLED). */
  cancel(): void {
    if (this.finished) return;
    const call = this.call;
    this.call = undefined;
    this.generation++;
    call?.cancel();
    this.finish(new AgentdError({ code: Status.CANCELLED, message: "the session was cancelled" }), true);
  }

  [Symbol.asyncIterator](): AsyncIterator<Chunk> {
    return this.chunks[Symbol.asyncIterator]();
  }

  // -------------------------------------------------------------- internals

  private idle(opt: IfIdleOption | undefined, streamOptions: RunOptions | undefined): agentd.v1.IfIdle | undefined {
    if (!hasRunOptions(streamOptions)) {
      return ifIdle(opt);
    }
    return ifIdle(opt, this.withTools(streamOptions!));
  }

  private withTools(opts: RunOptions): RunOptions {
    if (this.tools.size === 0) {
      return opts;
    }
    const declared = new Set((opts.clientTools ?? []).map((t) => t.name));
    const extra: ClientToolSpec[] = [];
    for (const [name, tool] of this.tools) {
      if (!declared.has(name)) {
        extra.push({ name, description: tool.description, inputSchema: tool.inputSchema });
      }
    }
    return { ...opts, clientTools: [...(opts.clientTools ?? []), ...extra] };
  }

  private routingOf(answer: agentd.v1.ConnectResponse): Routing {
    if (answer.event?.$case !== "routing") {
      throw this.unexpected(answer, "routing");
    }
    return routing(answer.event.routing.signal, answer.event.routing.decision);
  }

  private unexpected(answer: agentd.v1.ConnectResponse, want: string): AgentdError {
    return new AgentdError({
      code: Status.INTERNAL,
      reason: "PROTOCOL_ERROR",
      message: `request ${answer.requestId} was answered with ${answer.event?.$case ?? "nothing"}, not ${want}`,
    });
  }

  private request(frame: NonNullable<agentd.v1.ConnectRequest["frame"]>): Promise<agentd.v1.ConnectResponse> {
    if (this.finished || this.halfClosed) {
      return Promise.reject(
        new AgentdError({
          code: Status.FAILED_PRECONDITION,
          reason: "SESSION_CLOSED",
          message: "the session is closed",
        }),
      );
    }
    const requestId = `${this.prefix}-${++this.nextId}`;
    const request: agentd.v1.ConnectRequest = { requestId, frame };
    return new Promise((resolve, reject) => {
      this.pending.set(requestId, { frame: request, resolve, reject });
      this.call?.write(request); // without a call (reconnecting), the frame goes out on the next one
    });
  }

  private open(): void {
    const generation = ++this.generation;
    this.fellBehind = false;
    const call = this.factory(this.metadata, {});
    this.call = call;
    const resume = this.logEpoch ? { logEpoch: this.logEpoch, afterOffset: this.lastOffset } : undefined;
    let streamOptions: agentd.v1.ExecutionOptions | undefined;
    const base = this.options.streamOptions ?? {};
    if (hasRunOptions(base) || this.tools.size > 0) {
      streamOptions = executionOptions(this.withTools(base));
    }
    this.openId = `${this.prefix}-open-${generation}`;
    call.on("data", (response: agentd.v1.ConnectResponse) => {
      if (generation === this.generation) this.onResponse(response);
    });
    call.on("error", (err: Error) => {
      if (generation === this.generation) this.onEnd(AgentdError.from(err));
    });
    call.on("end", () => {
      if (generation === this.generation) this.onEnd(undefined);
    });
    call.write({
      requestId: this.openId,
      frame: {
        $case: "open",
        open: v1.ConnectOpen.fromPartial({
          agentId: this.agentId,
          resourceId: this.options.resourceId,
          threadId: this.options.threadId,
          resume,
          hideSignals: this.options.hideSignals ?? [],
          streamOptions,
        }),
      },
    });
    for (const pending of this.pending.values()) {
      call.write(pending.frame); // unanswered frames of a previous stream: sends are idempotent by id
    }
    if (this.halfClosed) {
      call.end();
    }
  }

  private onResponse(response: agentd.v1.ConnectResponse): void {
    const event = response.event;
    if (!event) return;
    switch (event.$case) {
      case "snapshot": {
        this.attempts = 0;
        this.snapshot = event.snapshot;
        if (!this.logEpoch) {
          this.logEpoch = event.snapshot.logEpoch;
          this.lastOffset = event.snapshot.lastOffset;
        }
        this.readyResolve(event.snapshot);
        return;
      }
      case "chunks":
        this.attempts = 0;
        for (const chunk of event.chunks.chunks) {
          if (chunk.offset !== 0 && chunk.offset <= this.lastOffset) continue;
          if (chunk.offset !== 0) this.lastOffset = chunk.offset;
          this.maybeAnswerTool(chunk);
          this.chunks.push(chunk);
        }
        return;
      case "fellBehind":
        this.fellBehind = true;
        this.lastOffset = Math.max(this.lastOffset, event.fellBehind.lastOffset);
        if (event.fellBehind.logEpoch) this.logEpoch = event.fellBehind.logEpoch;
        return;
      case "error": {
        const err = AgentdError.fromStatus(event.error);
        if (response.requestId === this.openId) {
          // The open itself failed (unknown agent, bad ids, expired resume): the session is over.
          this.readyReject(err);
          const call = this.call;
          this.call = undefined;
          this.generation++;
          call?.cancel();
          this.finish(err);
          return;
        }
        const pending = this.pending.get(response.requestId);
        if (pending) {
          this.pending.delete(response.requestId);
          pending.reject(err);
        } else {
          this.options.onError?.(err);
        }
        return;
      }
      default: {
        const pending = this.pending.get(response.requestId);
        if (pending) {
          this.pending.delete(response.requestId);
          pending.resolve(response);
        }
      }
    }
  }

  private maybeAnswerTool(chunk: Chunk): void {
    if (chunk.payload?.$case !== "toolCall") return;
    const call = chunk.payload.toolCall;
    const tool = this.tools.get(call.toolName);
    if (!tool || !call.clientTool || this.answered.has(call.toolCallId)) return;
    this.answered.add(call.toolCallId);
    const info: ToolCallInfo = { runId: chunk.runId, toolCallId: call.toolCallId, toolName: call.toolName, chunk };
    void (async () => {
      let result: unknown;
      let isError = false;
      try {
        result = await tool.execute(call.args, info);
      } catch (err) {
        isError = true;
        result = err instanceof Error ? err.message : String(err);
      }
      try {
        await this.sendToolResult(chunk.runId, call.toolCallId, (result ?? null) as JsonValue, isError);
      } catch (err) {
        this.options.onError?.(err);
      }
    })();
  }

  private onEnd(err: AgentdError | undefined): void {
    this.call = undefined;
    this.generation++;
    if (this.finished) return;
    const maxAttempts = this.options.reconnectPolicy?.maxAttempts ?? 10;
    const retry =
      this.reconnect &&
      !this.halfClosed &&
      ((err === undefined && this.fellBehind) || (err?.code === Status.UNAVAILABLE && this.attempts < maxAttempts));
    if (retry) {
      this.attempts++;
      this.reconnects++;
      const delay = err === undefined ? 0 : backoffDelay(this.options.reconnectPolicy ?? {}, this.attempts);
      this.timer = setTimeout(() => {
        this.timer = undefined;
        if (!this.finished) this.open();
      }, delay);
      return;
    }
    this.finish(err);
  }

  private finish(err: AgentdError | undefined, cancelled = false): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    const rejection =
      err ??
      new AgentdError({
        code: Status.UNAVAILABLE,
        reason: "STREAM_ENDED",
        message: "the session ended before this frame was answered",
      });
    for (const pending of this.pending.values()) pending.reject(rejection);
    this.pending.clear();
    this.readyReject(rejection);
    if (err && !cancelled) {
      this.chunks.fail(err);
    } else {
      this.chunks.end();
    }
    this.closedResolve();
  }
}
