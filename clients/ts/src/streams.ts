// Async iterators over agentd's streams: a run's chunks (Stream), a thread's
// chunks with automatic reconnection and resume (Subscribe), and paginated
// lists.

import { status as Status, type ClientReadableStream } from "@grpc/grpc-js";
import { agentd } from "@agentd/proto";

import { AgentdError } from "./errors";
import { sleep } from "./queue";

type Chunk = agentd.v1.Chunk;

/** Reconnection policy of subscriptions and sessions. */
export interface ReconnectPolicy {
  /** First backoff delay (default 100 ms), doubled per failed attempt. */
  initialDelayMs?: number;
  /** Backoff cap (default 5000 ms). */
  maxDelayMs?: number;
  /** Attempts in a row without a message in between before giving up (default 10). */
  maxAttempts?: number;
}

export function backoffDelay(policy: ReconnectPolicy, attempt: number): number {
  const initial = policy.initialDelayMs ?? 100;
  const max = policy.maxDelayMs ?? 5000;
  const base = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + (Math.random() * base) / 2); // "equal jitter"
}

/** True when the chunk ends a run (finish, error or abort). */
export function isTerminal(chunk: Chunk): boolean {
  const kind = chunk.payload?.$case;
  return kind === "finish" || kind === "error" || kind === "abort";
}

/**
 * The chunks of one run (AgentService.Stream), flattened from the response
 * batches. The call starts on the first iteration; leaving the loop early
 * (break, throw) or `cancel()` cancels the call, which aborts the run unless
 * it was started with `keepRunning`.
 */
export class RunStream implements AsyncIterable<Chunk> {
  /** StreamResponse messages received so far (one message may carry many chunks). */
  responses = 0;
  /** Chunks received so far. */
  chunks = 0;
  /** The run id (from the first chunk). */
  runId = "";
  private call: ClientReadableStream<agentd.v1.StreamResponse> | undefined;
  private cancelled = false;
  private started = false;

  constructor(private readonly start: () => ClientReadableStream<agentd.v1.StreamResponse>) {}

  /** Cancels the call (and so the run, unless `keepRunning`). */
  cancel(): void {
    this.cancelled = true;
    this.call?.cancel();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Chunk, void, undefined> {
    if (this.started) {
      throw new Error("a RunStream can be iterated once");
    }
    this.started = true;
    if (this.cancelled) {
      return;
    }
    const call = (this.call = this.start());
    const iterator = call[Symbol.asyncIterator]() as AsyncIterator<agentd.v1.StreamResponse>;
    let ended = false;
    try {
      for (;;) {
        let result: IteratorResult<agentd.v1.StreamResponse>;
        try {
          result = await iterator.next();
        } catch (err) {
          ended = true;
          const error = AgentdError.from(err);
          if (this.cancelled && error.code === Status.CANCELLED) {
            return;
          }
          throw error;
        }
        if (result.done) {
          ended = true;
          return;
        }
        this.responses++;
        for (const chunk of result.value.chunks) {
          this.chunks++;
          if (!this.runId) {
            this.runId = chunk.runId;
          }
          yield chunk;
        }
      }
    } finally {
      if (!ended) {
        this.cancelled = true;
        call.cancel();
      }
    }
  }

  /** Reads the run to its end and returns the joined text deltas. */
  async text(): Promise<string> {
    let text = "";
    for await (const chunk of this) {
      if (chunk.payload?.$case === "textDelta") {
        text += chunk.payload.textDelta.text;
      }
    }
    return text;
  }
}

/** A paginated list: iterate the items, `pages()` or `all()`. */
export class Paged<T> implements AsyncIterable<T> {
  constructor(private readonly fetchPage: (pageToken: string) => Promise<{ items: T[]; nextPageToken: string }>) {}

  /** The pages in order (AIP-158: the last page has an empty next token). */
  async *pages(): AsyncGenerator<T[], void, undefined> {
    let token = "";
    for (;;) {
      const page = await this.fetchPage(token);
      yield page.items;
      if (!page.nextPageToken) {
        return;
      }
      token = page.nextPageToken;
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T, void, undefined> {
    for await (const page of this.pages()) {
      yield* page;
    }
  }

  /** Every item of every page. */
  async all(): Promise<T[]> {
    const out: T[] = [];
    for await (const item of this) {
      out.push(item);
    }
    return out;
  }
}

/** Where to resume a thread's chunk log: the epoch and the last offset seen. */
export interface ResumeFrom {
  logEpoch: string;
  afterOffset: number;
}

export interface SubscriptionState {
  /** The latest snapshot (the first one, then each reconnection's). */
  snapshot: agentd.v1.ThreadSnapshot | undefined;
  logEpoch: string;
  /** The offset of the last chunk delivered (or the snapshot's last offset). */
  lastOffset: number;
}

/**
 * A thread subscription (ThreadService.Subscribe) as an async iterator over
 * its chunks. With `reconnect` (the default) it resumes after the last offset
 * it delivered when the stream fails with UNAVAILABLE (e.g. the server
 * restarts) or ends with a `fell_behind` marker, so the chunks it yields have
 * no gap and no duplicate. `ready()` resolves with the first snapshot once the
 * subscription is established. Ending the iteration or `close()` ends the
 * call; it never aborts a run.
 */
export class Subscription implements AsyncIterable<Chunk>, SubscriptionState {
  snapshot: agentd.v1.ThreadSnapshot | undefined;
  logEpoch = "";
  lastOffset = 0;
  /** Reconnections made so far. */
  reconnects = 0;
  /** fell_behind markers received so far. */
  fellBehind = 0;

  private call: ClientReadableStream<agentd.v1.SubscribeResponse> | undefined;
  private iterator: AsyncIterator<agentd.v1.SubscribeResponse> | undefined;
  private closed = false;
  private opening: Promise<agentd.v1.ThreadSnapshot> | undefined;
  private attempts = 0;
  private readonly abort = new AbortController();

  constructor(
    private readonly start: (request: agentd.v1.SubscribeRequest) => ClientReadableStream<agentd.v1.SubscribeResponse>,
    private readonly request: Omit<agentd.v1.SubscribeRequest, "resume">,
    after: ResumeFrom | undefined,
    private readonly reconnect: boolean,
    private readonly policy: ReconnectPolicy,
  ) {
    if (after) {
      this.logEpoch = after.logEpoch;
      this.lastOffset = after.afterOffset;
    }
  }

  /** Establishes the subscription (if not yet) and resolves with its snapshot. */
  ready(): Promise<agentd.v1.ThreadSnapshot> {
    if (this.closed) {
      return Promise.reject(new AgentdError({ code: Status.CANCELLED, message: "the subscription is closed" }));
    }
    if (this.snapshot && this.iterator) {
      return Promise.resolve(this.snapshot);
    }
    this.opening ??= this.open().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  /** Ends the subscription. */
  close(): void {
    this.closed = true;
    this.abort.abort();
    this.drop();
  }

  private drop(): void {
    const call = this.call;
    this.call = undefined;
    this.iterator = undefined;
    call?.cancel();
  }

  private async open(): Promise<agentd.v1.ThreadSnapshot> {
    const resume = this.logEpoch ? { logEpoch: this.logEpoch, afterOffset: this.lastOffset } : undefined;
    const call = this.start({ ...this.request, resume });
    // Swallow the CANCELLED error a dropped call emits after we stopped reading.
    call.on("error", () => undefined);
    this.call = call;
    const iterator = call[Symbol.asyncIterator]() as AsyncIterator<agentd.v1.SubscribeResponse>;
    let first: IteratorResult<agentd.v1.SubscribeResponse>;
    try {
      first = await iterator.next();
    } catch (err) {
      if (this.call === call) this.drop();
      throw AgentdError.from(err);
    }
    if (first.done || first.value.event?.$case !== "snapshot") {
      this.drop();
      throw new AgentdError({
        code: Status.INTERNAL,
        reason: "PROTOCOL_ERROR",
        message: first.done
          ? "the subscription ended before its snapshot"
          : `the subscription's first message is ${first.value.event?.$case ?? "empty"}, not a snapshot`,
      });
    }
    const snapshot = first.value.event.snapshot;
    this.snapshot = snapshot;
    if (!resume) {
      this.logEpoch = snapshot.logEpoch;
      this.lastOffset = snapshot.lastOffset;
    }
    this.iterator = iterator;
    return snapshot;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Chunk, void, undefined> {
    try {
      for (;;) {
        if (this.closed) {
          return;
        }
        let message: agentd.v1.SubscribeResponse;
        try {
          if (!this.iterator) {
            await this.ready();
          }
          const result = await this.iterator!.next();
          if (result.done) {
            // Ended OK: after fell_behind, resume; otherwise the stream is over.
            this.iterator = undefined;
            this.call = undefined;
            if (this.pendingResume && this.reconnect && !this.closed) {
              this.pendingResume = false;
              this.reconnects++;
              continue;
            }
            return;
          }
          message = result.value;
        } catch (err) {
          this.drop();
          if (this.closed) {
            return;
          }
          const error = AgentdError.from(err);
          const maxAttempts = this.policy.maxAttempts ?? 10;
          if (this.reconnect && error.code === Status.UNAVAILABLE && this.attempts < maxAttempts) {
            this.attempts++;
            this.reconnects++;
            await sleep(backoffDelay(this.policy, this.attempts), this.abort.signal);
            continue;
          }
          throw error;
        }
        this.attempts = 0;
        const event = message.event;
        switch (event?.$case) {
          case "chunks":
            for (const chunk of event.chunks.chunks) {
              if (chunk.offset !== 0 && chunk.offset <= this.lastOffset) {
                continue; // already delivered (never expected: resumes have no duplicate)
              }
              if (chunk.offset !== 0) {
                this.lastOffset = chunk.offset;
              }
              yield chunk;
              if (this.closed) {
                return;
              }
            }
            break;
          case "fellBehind":
            this.fellBehind++;
            this.lastOffset = Math.max(this.lastOffset, event.fellBehind.lastOffset);
            if (event.fellBehind.logEpoch) {
              this.logEpoch = event.fellBehind.logEpoch;
            }
            this.pendingResume = true;
            break;
          case "snapshot":
            this.snapshot = event.snapshot;
            break;
          default:
            break;
        }
      }
    } finally {
      this.closed = true;
      this.drop();
    }
  }

  private pendingResume = false;
}
