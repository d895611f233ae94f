// AgentdClient: the four agentd services behind one channel, with promises,
// async iterators and typed errors.

import {
  Metadata,
  type CallOptions as GrpcCallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientUnaryCall,
  type ServiceError,
} from "@grpc/grpc-js";
import { agentd, google } from "@agentd/proto";

import { TOKEN_ENV, channelSecurity, resolveToken, type Security, type TlsOptions } from "./credentials";
import { AgentdError } from "./errors";
import {
  executionOptions,
  hasRunOptions,
  ifActive,
  ifIdle,
  routing,
  toMessage,
  toMessageInput,
  type CallOptions,
  type IfIdleOption,
  type JsonObject,
  type JsonValue,
  type MessageInputLike,
  type Routing,
  type RunInput,
  type RunOptions,
  type SendOptions,
} from "./options";
import { Session, type ConnectOptions } from "./session";
import { Paged, RunStream, Subscription, type ReconnectPolicy, type ResumeFrom } from "./streams";
import { injectTraceContext } from "./tracing";

const v1 = agentd.v1;

export interface AgentdClientOptions {
  /**
   * A bearer token sent as `authorization: Bearer <token>` with every call
   * (a server with `[auth]`). Over TLS it rides as call credentials; over
   * plaintext only to a loopback target unless `allowInsecureToken`.
   * Undefined: `$AGENTD_TOKEN`, unless `metadata` has an `authorization`
   * entry; `""`: no token.
   */
  token?: string;
  /** TLS: `{ ca, cert, key }` PEM contents (`cert` and `key`: mutual TLS), or `true` for the system's roots. */
  tls?: TlsOptions | true;
  /** Send `token` over a plaintext channel beyond loopback too (a sidecar). */
  allowInsecureToken?: boolean;
  /** Channel credentials (default: plaintext, or `tls`); a `token` is combined onto secure ones. */
  credentials?: ChannelCredentials;
  /** Default deadline of unary calls in milliseconds (default: none). */
  deadlineMs?: number;
  /**
   * Sends an HTTP/2 keepalive ping after this many milliseconds without
   * activity while calls are open. gRPC servers refuse pings more frequent
   * than their policy (5 minutes by default) with GOAWAY; grpc-js then
   * doubles the interval.
   */
  keepaliveMs?: number;
  /** Metadata added to every call. */
  metadata?: Record<string, string>;
  /** Raw grpc-js channel options. */
  channelOptions?: Partial<ChannelOptions>;
  /** Reconnection backoff of subscriptions and sessions. */
  reconnect?: ReconnectPolicy;
}

/** Options of Generate and Stream. */
export interface GenerateOptions extends RunOptions, CallOptions {}

export interface StreamOptions extends GenerateOptions {
  /** Keep the (thread-bound) run going when this call is cancelled. */
  keepRunning?: boolean;
}

/** The target of a send: a thread (resource and thread ids) or a run. */
export type SignalTargetLike = { resourceId: string; threadId: string } | { runId: string };

export interface SubscribeOptions extends Omit<CallOptions, "deadlineMs"> {
  /** The owner of the thread. */
  resourceId: string;
  /** Resume after this point (epoch and offset) instead of starting live. */
  after?: ResumeFrom;
  /** Resume after the last offset on UNAVAILABLE and fell_behind (default true). */
  reconnect?: boolean;
  /** Signal categories whose echoes this subscriber does not want. */
  hideSignals?: string[];
}

export interface ListMessagesOptions extends CallOptions {
  resourceId?: string;
  pageSize?: number;
  order?: "asc" | "desc";
  /** Inclusive bounds on creation time. */
  start?: Date;
  end?: Date;
  includeSystemReminders?: boolean;
}

type Unary<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<GrpcCallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

function timestamp(date: Date): google.protobuf.Timestamp {
  const ms = date.getTime();
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1_000_000 };
}

function target(t: SignalTargetLike): agentd.v1.SignalTarget {
  return "runId" in t
    ? { runId: t.runId, resourceId: "", threadId: "" }
    : { runId: "", resourceId: t.resourceId, threadId: t.threadId };
}

const NOTIFICATION_STATUS = {
  seen: v1.NotificationStatus.NOTIFICATION_STATUS_SEEN,
  dismissed: v1.NotificationStatus.NOTIFICATION_STATUS_DISMISSED,
  archived: v1.NotificationStatus.NOTIFICATION_STATUS_ARCHIVED,
} as const;

/**
 * A client of one agentd server.
 *
 * ```ts
 * const client = new AgentdClient("127.0.0.1:50051");
 * const result = await client.generate("echo", "hello");
 * for await (const chunk of client.stream("echo", "hello")) { ... }
 * ```
 */
export class AgentdClient {
  /** The generated stubs, for anything this class does not wrap. */
  readonly agents: agentd.v1.AgentServiceClient;
  readonly threads: agentd.v1.ThreadServiceClient;
  readonly signals: agentd.v1.SignalServiceClient;
  readonly cache: agentd.v1.CacheServiceClient;
  private readonly deadlineMs: number | undefined;
  private readonly baseMetadata: Record<string, string>;
  private readonly reconnectPolicy: ReconnectPolicy;

  constructor(target: string, options: AgentdClientOptions = {}) {
    const explicit = Object.keys(options.metadata ?? {}).some((key) => key.toLowerCase() === "authorization");
    if (options.token?.trim() && explicit) {
      throw new TypeError("give token or an authorization metadata entry, not both");
    }
    // An authorization entry given as metadata wins over $AGENTD_TOKEN (not over token).
    const fromEnv = options.token === undefined;
    const token = fromEnv && explicit ? undefined : resolveToken(options.token);
    let security: Security;
    try {
      security = channelSecurity(target, { ...options, token });
    } catch (err) {
      if (fromEnv && token !== undefined && err instanceof TypeError) {
        throw new TypeError(`$${TOKEN_ENV}: ${err.message}; or token: "" to send none`);
      }
      throw err;
    }
    const creds = security.credentials;
    const channelOptions: Partial<ChannelOptions> = { ...security.channelOptions, ...options.channelOptions };
    if (options.keepaliveMs !== undefined) {
      // Pings only while calls are open (long subscriptions and sessions).
      channelOptions["grpc.keepalive_time_ms"] = options.keepaliveMs;
    }
    this.agents = new v1.AgentServiceClient(target, creds, channelOptions);
    const shared = { ...channelOptions, channelOverride: this.agents.getChannel() };
    this.threads = new v1.ThreadServiceClient(target, creds, shared);
    this.signals = new v1.SignalServiceClient(target, creds, shared);
    this.cache = new v1.CacheServiceClient(target, creds, shared);
    this.deadlineMs = options.deadlineMs;
    this.baseMetadata = { ...security.metadata, ...options.metadata };
    this.reconnectPolicy = options.reconnect ?? {};
  }

  /** Closes the channel; calls in flight fail. */
  close(): void {
    this.agents.close();
  }

  /** Waits until the channel is connected (or the deadline passes). */
  waitForReady(timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      this.agents.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(AgentdError.from(err)) : resolve()));
    });
  }

  // ---------------------------------------------------------------- agents

  /** The agents defined on the server (all pages), optionally filtered by metadata. */
  listAgents(opts: CallOptions & { metadataFilter?: JsonObject; pageSize?: number } = {}): Paged<agentd.v1.Agent> {
    return new Paged(async (pageToken) => {
      const res = await this.unary(
        this.agents.listAgents.bind(this.agents),
        v1.ListAgentsRequest.fromPartial({
          pageSize: opts.pageSize ?? 0,
          pageToken,
          metadataFilter: opts.metadataFilter,
        }),
        opts,
      );
      return { items: res.agents, nextPageToken: res.nextPageToken };
    });
  }

  /** One agent; AgentdError NOT_FOUND (AGENT_NOT_FOUND) for an unknown id. */
  async getAgent(agentId: string, opts: CallOptions = {}): Promise<agentd.v1.Agent> {
    const res = await this.unary(this.agents.getAgent.bind(this.agents), { agentId }, opts);
    return res.agent ?? v1.Agent.fromPartial({ id: agentId });
  }

  /** The live scorers' scores, newest first, filtered by agent, thread, run, scorer and creation time. */
  listScores(
    opts: CallOptions & Partial<Omit<agentd.v1.ListScoresRequest, "pageToken">> = {},
  ): Paged<agentd.v1.Score> {
    return new Paged(async (pageToken) => {
      const res = await this.unary(
        this.agents.listScores.bind(this.agents),
        v1.ListScoresRequest.fromPartial({
          agentId: opts.agentId,
          threadId: opts.threadId,
          runId: opts.runId,
          scorer: opts.scorer,
          startTime: opts.startTime,
          endTime: opts.endTime,
          pageSize: opts.pageSize ?? 0,
          pageToken,
        }),
        opts,
      );
      return { items: res.scores, nextPageToken: res.nextPageToken };
    });
  }

  // ---------------------------------------------------------------- editor overrides

  /** The editor overrides in effect for an agent (`version` 0: none ever written). */
  async getAgentOverrides(agentId: string, opts: CallOptions = {}): Promise<agentd.v1.AgentOverrides> {
    const res = await this.unary(this.agents.getAgentOverrides.bind(this.agents), { agentId }, opts);
    return res.overrides ?? v1.AgentOverrides.fromPartial({ agentId });
  }

  /**
   * Writes the fields `updateMask` names (AIP-134: `instructions`, `tools`,
   * `tool_descriptions`, `tool_descriptions.<tool>`); a path named with no
   * value removes that override. Needs `admin`; a field the agent's `editor`
   * policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED). Returns the new version.
   */
  async updateAgentOverrides(
    overrides: Partial<agentd.v1.AgentOverrides> & { agentId: string },
    updateMask: string[],
    opts: CallOptions = {},
  ): Promise<agentd.v1.AgentOverrides> {
    const request = v1.UpdateAgentOverridesRequest.fromPartial({ overrides, updateMask });
    const res = await this.unary(this.agents.updateAgentOverrides.bind(this.agents), request, opts);
    return res.overrides ?? v1.AgentOverrides.fromPartial({ agentId: overrides.agentId });
  }

  /** Removes every override; returns the version that records it. */
  async deleteAgentOverrides(agentId: string, opts: CallOptions = {}): Promise<agentd.v1.AgentOverrides> {
    const res = await this.unary(this.agents.deleteAgentOverrides.bind(this.agents), { agentId }, opts);
    return res.overrides ?? v1.AgentOverrides.fromPartial({ agentId });
  }

  /** Every override version of an agent, newest first (all pages). */
  agentOverrideVersions(agentId: string, opts: CallOptions & { pageSize?: number } = {}): Paged<agentd.v1.AgentOverrides> {
    return new Paged(async (pageToken) => {
      const res = await this.unary(
        this.agents.listAgentOverrideVersions.bind(this.agents),
        v1.ListAgentOverrideVersionsRequest.fromPartial({ agentId, pageSize: opts.pageSize ?? 0, pageToken }),
        opts,
      );
      return { items: res.versions, nextPageToken: res.nextPageToken };
    });
  }

  /** Makes an earlier version's fields current again, as a new version (returned). */
  async restoreAgentOverrides(agentId: string, version: number, opts: CallOptions = {}): Promise<agentd.v1.AgentOverrides> {
    const res = await this.unary(this.agents.restoreAgentOverrides.bind(this.agents), { agentId, version }, opts);
    return res.overrides ?? v1.AgentOverrides.fromPartial({ agentId });
  }

  /** Runs an agent to completion. A tripwire is not an error: see `tripwire` and finish reason OTHER. */
  generate(agentId: string, input: RunInput, opts: GenerateOptions = {}): Promise<agentd.v1.GenerateResponse> {
    const request = v1.GenerateRequest.fromPartial({ agentId, ...this.input(input), options: this.runOptions(opts) });
    return this.unary(this.agents.generate.bind(this.agents), request, opts);
  }

  /**
   * Runs an agent and iterates its chunks (flattened from the response
   * batches). Leaving the loop early cancels the call, which aborts the run
   * unless `keepRunning` is set on a thread-bound run.
   */
  stream(agentId: string, input: RunInput, opts: StreamOptions = {}): RunStream {
    const request = v1.StreamRequest.fromPartial({
      agentId,
      ...this.input(input),
      options: this.runOptions(opts),
      keepRunning: opts.keepRunning ?? false,
    });
    const stream: RunStream = new RunStream(() => {
      const call = this.agents.stream(request, this.metadata(opts), this.callOptions(opts, false));
      opts.signal?.addEventListener("abort", () => stream.cancel(), { once: true });
      return call;
    });
    if (opts.signal?.aborted) {
      stream.cancel();
    }
    return stream;
  }

  // --------------------------------------------------------------- threads

  async createThread(
    thread: { resourceId: string; id?: string; title?: string; metadata?: JsonObject },
    opts: CallOptions = {},
  ): Promise<agentd.v1.Thread> {
    const res = await this.unary(
      this.threads.createThread.bind(this.threads),
      { thread: v1.Thread.fromPartial(thread) },
      opts,
    );
    return res.thread!;
  }

  /** The thread and its active run id ("" when idle). */
  async getThread(
    threadId: string,
    opts: CallOptions & { resourceId?: string } = {},
  ): Promise<agentd.v1.Thread & { activeRunId: string }> {
    const res = await this.unary(
      this.threads.getThread.bind(this.threads),
      { threadId, resourceId: opts.resourceId ?? "" },
      opts,
    );
    return { ...v1.Thread.fromPartial(res.thread ?? {}), activeRunId: res.activeRunId };
  }

  /** Threads of a resource, newest first. */
  listThreads(
    resourceId: string,
    opts: CallOptions & { metadataFilter?: JsonObject; pageSize?: number } = {},
  ): Paged<agentd.v1.Thread> {
    return new Paged(async (pageToken) => {
      const res = await this.unary(
        this.threads.listThreads.bind(this.threads),
        v1.ListThreadsRequest.fromPartial({
          resourceId,
          pageSize: opts.pageSize ?? 0,
          pageToken,
          metadataFilter: opts.metadataFilter,
        }),
        opts,
      );
      return { items: res.threads, nextPageToken: res.nextPageToken };
    });
  }

  /** Updates the title and/or metadata given (the update mask names exactly those). */
  async updateThread(
    threadId: string,
    update: { title?: string; metadata?: JsonObject; resourceId?: string },
    opts: CallOptions = {},
  ): Promise<agentd.v1.Thread> {
    const paths: string[] = [];
    if (update.title !== undefined) paths.push("title");
    if (update.metadata !== undefined) paths.push("metadata");
    if (paths.length === 0) {
      throw new TypeError("updateThread: set title and/or metadata");
    }
    const res = await this.unary(
      this.threads.updateThread.bind(this.threads),
      {
        thread: v1.Thread.fromPartial({
          id: threadId,
          resourceId: update.resourceId ?? "",
          title: update.title ?? "",
          metadata: update.metadata,
        }),
        updateMask: paths,
      },
      opts,
    );
    return res.thread!;
  }

  async deleteThread(threadId: string, opts: CallOptions & { resourceId?: string } = {}): Promise<void> {
    await this.unary(
      this.threads.deleteThread.bind(this.threads),
      { threadId, resourceId: opts.resourceId ?? "" },
      opts,
    );
  }

  /** A thread's messages across pages: `for await (const m of client.listMessages(id))`. */
  listMessages(threadId: string, opts: ListMessagesOptions = {}): Paged<agentd.v1.Message> {
    return new Paged(async (pageToken) => {
      const res = await this.unary(
        this.threads.listMessages.bind(this.threads),
        v1.ListMessagesRequest.fromPartial({
          threadId,
          resourceId: opts.resourceId ?? "",
          pageSize: opts.pageSize ?? 0,
          pageToken,
          order:
            opts.order === "desc"
              ? v1.SortOrder.SORT_ORDER_DESCENDING
              : opts.order === "asc"
                ? v1.SortOrder.SORT_ORDER_ASCENDING
                : v1.SortOrder.SORT_ORDER_UNSPECIFIED,
          startTime: opts.start ? timestamp(opts.start) : undefined,
          endTime: opts.end ? timestamp(opts.end) : undefined,
          includeSystemReminders: opts.includeSystemReminders ?? false,
        }),
        opts,
      );
      return { items: res.messages, nextPageToken: res.nextPageToken };
    });
  }

  /**
   * Aborts the thread's active run (only `runId` when given). An empty
   * `threadId` with `runId` aborts a run without a thread (Generate or
   * Stream without memory).
   */
  abortRun(
    threadId: string,
    opts: CallOptions & { resourceId?: string; runId?: string } = {},
  ): Promise<agentd.v1.AbortRunResponse> {
    return this.unary(
      this.threads.abortRun.bind(this.threads),
      { threadId, resourceId: opts.resourceId ?? "", runId: opts.runId ?? "" },
      opts,
    );
  }

  /**
   * Subscribes to a thread's chunks across runs. Await `ready()` for the
   * snapshot before sending into the thread to be sure to see the run.
   */
  subscribe(threadId: string, opts: SubscribeOptions): Subscription {
    const md = this.metadata(opts);
    const sub: Subscription = new Subscription(
      (request) => this.threads.subscribe(request, md.clone(), {}),
      { threadId, resourceId: opts.resourceId, hideSignals: opts.hideSignals ?? [] },
      opts.after,
      opts.reconnect ?? true,
      this.reconnectPolicy,
    );
    opts.signal?.addEventListener("abort", () => sub.close(), { once: true });
    return sub;
  }

  /**
   * Opens a bidirectional thread session (ThreadService.Connect): sends
   * resolve with their routing answers, client tools are answered
   * automatically, and iterating the session yields the thread's chunks.
   */
  connect(agentId: string, opts: ConnectOptions): Session {
    const md = this.metadata({ metadata: opts.metadata });
    return new Session((metadata, options) => this.threads.connect(metadata.clone(), options), md, agentId, {
      ...opts,
      reconnectPolicy: opts.reconnectPolicy ?? this.reconnectPolicy,
    });
  }

  // --------------------------------------------------------------- signals

  /** Sends a user message into a thread (or run): delivered, or wakes the idle thread. */
  async sendMessage(
    agentId: string,
    to: SignalTargetLike,
    message: MessageInputLike,
    opts: SendOptions = {},
  ): Promise<Routing> {
    const res = await this.unary(
      this.signals.sendMessage.bind(this.signals),
      {
        agentId,
        target: target(to),
        message: toMessageInput(message),
        ifActive: ifActive(opts.ifActive),
        ifIdle: ifIdle(opts.ifIdle, opts.streamOptions),
      },
      opts,
    );
    return routing(res.signal, res.decision);
  }

  /** Queues a user message for the thread's next turn. */
  async queueMessage(
    agentId: string,
    to: SignalTargetLike,
    message: MessageInputLike,
    opts: CallOptions & { ifIdle?: IfIdleOption; streamOptions?: RunOptions } = {},
  ): Promise<Routing> {
    const res = await this.unary(
      this.signals.queueMessage.bind(this.signals),
      {
        agentId,
        target: target(to),
        message: toMessageInput(message),
        ifIdle: ifIdle(opts.ifIdle, opts.streamOptions),
      },
      opts,
    );
    return routing(res.signal, res.decision);
  }

  /** Sends a signal of any type ("user", "state", "reactive", "notification"). */
  async sendSignal(
    agentId: string,
    to: SignalTargetLike,
    signal: Partial<agentd.v1.SignalInput> & { type: string },
    opts: SendOptions = {},
  ): Promise<Routing> {
    const res = await this.unary(
      this.signals.sendSignal.bind(this.signals),
      {
        agentId,
        target: target(to),
        signal: v1.SignalInput.fromPartial(signal),
        ifActive: ifActive(opts.ifActive),
        ifIdle: ifIdle(opts.ifIdle, opts.streamOptions),
      },
      opts,
    );
    return routing(res.signal, res.decision);
  }

  /** Sends named thread state; `action` is "skipped_unchanged" when it equals the lane's current state. */
  async sendStateSignal(
    agentId: string,
    to: SignalTargetLike,
    state: Partial<agentd.v1.StateSignalInput> & { id: string },
    opts: SendOptions = {},
  ): Promise<Routing & { version: number }> {
    const res = await this.unary(
      this.signals.sendStateSignal.bind(this.signals),
      {
        agentId,
        target: target(to),
        state: v1.StateSignalInput.fromPartial(state),
        ifActive: ifActive(opts.ifActive),
        ifIdle: ifIdle(opts.ifIdle, opts.streamOptions),
      },
      opts,
    );
    return { ...routing(res.signal, res.decision), version: res.version };
  }

  /** Creates (or merges) a notification and applies the agent's delivery policy. */
  sendNotification(
    agentId: string,
    to: { resourceId: string; threadId: string },
    notification: Partial<agentd.v1.NotificationInput>,
    opts: CallOptions & { idleStreamOptions?: RunOptions } = {},
  ): Promise<agentd.v1.SendNotificationResponse> {
    return this.unary(
      this.signals.sendNotification.bind(this.signals),
      v1.SendNotificationRequest.fromPartial({
        agentId,
        resourceId: to.resourceId,
        threadId: to.threadId,
        notification: v1.NotificationInput.fromPartial(notification),
        idleStreamOptions: hasRunOptions(opts.idleStreamOptions) ? executionOptions(opts.idleStreamOptions) : undefined,
      }),
      opts,
    );
  }

  /** A thread's notifications, newest update first. */
  listNotifications(
    threadId: string,
    opts: CallOptions & Partial<Omit<agentd.v1.ListNotificationsRequest, "threadId" | "pageToken">> = {},
  ): Paged<agentd.v1.Notification> {
    return new Paged(async (pageToken) => {
      const res = await this.unary(
        this.signals.listNotifications.bind(this.signals),
        v1.ListNotificationsRequest.fromPartial({
          threadId,
          pageToken,
          resourceId: opts.resourceId,
          agentId: opts.agentId,
          statuses: opts.statuses,
          priorities: opts.priorities,
          source: opts.source,
          search: opts.search,
          pageSize: opts.pageSize,
        }),
        opts,
      );
      return { items: res.notifications, nextPageToken: res.nextPageToken };
    });
  }

  /** Marks a notification seen, dismissed or archived. */
  async updateNotificationStatus(
    threadId: string,
    notificationId: string,
    status: "seen" | "dismissed" | "archived" | agentd.v1.NotificationStatus,
    opts: CallOptions = {},
  ): Promise<agentd.v1.Notification> {
    const res = await this.unary(
      this.signals.updateNotificationStatus.bind(this.signals),
      { threadId, notificationId, status: typeof status === "string" ? NOTIFICATION_STATUS[status] : status },
      opts,
    );
    return res.notification!;
  }

  // ----------------------------------------------------------------- cache

  /** A cache entry's value, or undefined when absent. */
  async getCacheEntry(key: string, opts: CallOptions = {}): Promise<{ found: boolean; value: JsonValue | undefined }> {
    const res = await this.unary(this.cache.getCacheEntry.bind(this.cache), { key }, opts);
    return { found: res.found, value: res.value as JsonValue | undefined };
  }

  async setCacheEntry(
    key: string,
    value: JsonValue,
    opts: CallOptions & { ttlMs?: number; pinned?: boolean } = {},
  ): Promise<void> {
    const ttl =
      opts.ttlMs === undefined
        ? undefined
        : { seconds: Math.floor(opts.ttlMs / 1000), nanos: Math.round((opts.ttlMs % 1000) * 1_000_000) };
    await this.unary(
      this.cache.setCacheEntry.bind(this.cache),
      { key, value, ttl, pinned: opts.pinned ?? false },
      opts,
    );
  }

  /** Deletes one entry; true when it existed. */
  async deleteCacheEntry(key: string, opts: CallOptions = {}): Promise<boolean> {
    const res = await this.unary(this.cache.deleteCacheEntry.bind(this.cache), { key }, opts);
    return res.deleted;
  }

  /** Deletes every key starting with `prefix`; answers how many. */
  async clearCache(prefix: string, opts: CallOptions = {}): Promise<number> {
    const res = await this.unary(this.cache.clearCache.bind(this.cache), { prefix }, opts);
    return res.deletedCount;
  }

  getCacheStats(opts: CallOptions = {}): Promise<agentd.v1.GetCacheStatsResponse> {
    return this.unary(this.cache.getCacheStats.bind(this.cache), {}, opts);
  }

  /** Deletes an agent's response-cache entries, of one scope or only the unscoped ones when asked. */
  async invalidateResponseCache(
    agentId: string,
    opts: CallOptions & { scope?: string; noScope?: boolean } = {},
  ): Promise<number> {
    if (opts.scope !== undefined && opts.noScope) {
      throw new TypeError("invalidateResponseCache: set at most one of scope and noScope");
    }
    const request: agentd.v1.InvalidateResponseCacheRequest = { agentId };
    if (opts.scope !== undefined) request.scopeFilter = { $case: "scope", scope: opts.scope };
    else if (opts.noScope) request.scopeFilter = { $case: "noScope", noScope: {} };
    const res = await this.unary(this.cache.invalidateResponseCache.bind(this.cache), request, opts);
    return res.deletedCount;
  }

  // ------------------------------------------------------------- internals

  private input(input: RunInput): { text: string; messages: agentd.v1.Message[] } {
    return typeof input === "string" ? { text: input, messages: [] } : { text: "", messages: input.map(toMessage) };
  }

  private runOptions(opts: RunOptions): agentd.v1.ExecutionOptions | undefined {
    return hasRunOptions(opts) ? executionOptions(opts) : undefined;
  }

  /** The call's metadata: client defaults, per-call entries, W3C trace context. */
  private metadata(opts: { metadata?: Record<string, string> }): Metadata {
    const md = new Metadata();
    for (const [key, value] of Object.entries({ ...this.baseMetadata, ...opts.metadata })) {
      md.set(key, value);
    }
    injectTraceContext(md);
    return md;
  }

  private callOptions(opts: CallOptions, unary: boolean): Partial<GrpcCallOptions> {
    const ms = opts.deadlineMs ?? (unary ? this.deadlineMs : undefined);
    return ms === undefined ? {} : { deadline: Date.now() + ms };
  }

  private unary<Req, Res>(method: Unary<Req, Res>, request: Req, opts: CallOptions): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      if (opts.signal?.aborted) {
        reject(new AgentdError({ code: 1, message: "the call was cancelled before it started" }));
        return;
      }
      const onAbort = (): void => call.cancel();
      const call = method(request, this.metadata(opts), this.callOptions(opts, true), (err, response) => {
        opts.signal?.removeEventListener("abort", onAbort);
        if (err) reject(AgentdError.from(err));
        else resolve(response);
      });
      opts.signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

export type { MessageInputLike, JsonValue };
