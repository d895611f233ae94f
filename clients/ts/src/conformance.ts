// The TypeScript client's conformance runner: runs every scenario of
// tests/conformance/scenarios.json against a server started with
// tests/conformance/agentd.toml and --app tests.conformance.app.
//
//   node dist/conformance.js --addr 127.0.0.1:50051 --scenarios ../../tests/conformance/scenarios.json
//
// A server with [auth] takes --token (default $AGENTD_TOKEN; the scenarios
// need the writer and admin roles); --cacert connects over TLS trusting that
// CA (a PEM file), and --cert/--key add a client certificate (mutual TLS).
//
// Prints one line per scenario, then `conformance: N passed, M failed`;
// exits 1 when a scenario failed (2 on a usage error). Step kinds are those
// of tests/conformance/README.md; an unknown kind, or an unknown expectation,
// fails its scenario.

import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isDeepStrictEqual } from "node:util";

import { agentd } from "@agentd/proto";

import { AgentdClient } from "./client";
import { AgentdError } from "./errors";
import type { Session } from "./session";
import { isTerminal, type Subscription } from "./streams";

const v1 = agentd.v1;
type Chunk = agentd.v1.Chunk;

type Step = { kind: string; expect?: Record<string, unknown> } & Record<string, unknown>;
interface Scenario {
  name: string;
  steps: Step[];
}

class Failure extends Error {}

function fail(message: string): never {
  throw new Failure(message);
}

function check(condition: boolean, message: string): asserts condition {
  if (!condition) fail(message);
}

const show = (value: unknown): string => JSON.stringify(value);

/** "textDelta" → "text_delta": the proto oneof names the scenarios use. */
function snake(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function kindOf(chunk: Chunk): string {
  return chunk.payload ? snake(chunk.payload.$case) : "(none)";
}

function finishReasonName(reason: agentd.v1.FinishReason): string {
  return v1.finishReasonToJSON(reason).replace(/^FINISH_REASON_/, "");
}

function joinedText(chunks: Chunk[]): string {
  let text = "";
  for (const chunk of chunks) {
    if (chunk.payload?.$case === "textDelta") text += chunk.payload.textDelta.text;
  }
  return text;
}

function signalText(signal: agentd.v1.Signal | undefined): string {
  if (!signal) return "";
  if (signal.text) return signal.text;
  for (const part of signal.parts) {
    if (part.part?.$case === "text") return part.part.text.text;
  }
  return "";
}

function firstText(message: agentd.v1.Message): string {
  for (const part of message.parts) {
    if (part.part?.$case === "text") return part.part.text.text;
    if (part.part?.$case === "signal") return signalText(part.part.signal.signal);
  }
  return "";
}

function str(step: Step, field: string): string {
  const value = step[field];
  check(typeof value === "string", `step ${step.kind}: field ${field} must be a string, got ${show(value)}`);
  return value;
}

function num(step: Step, field: string): number {
  const value = step[field];
  check(typeof value === "number", `step ${step.kind}: field ${field} must be a number, got ${show(value)}`);
  return value;
}

function optStr(step: Step, field: string): string | undefined {
  const value = step[field];
  return typeof value === "string" ? value : undefined;
}

/** Checks each expectation it knows; an unknown one fails (the runner would otherwise skip a check). */
function expectations(step: Step, checks: Record<string, (want: unknown) => void>): void {
  for (const [key, want] of Object.entries(step.expect ?? {})) {
    const fn = checks[key];
    check(fn !== undefined, `step ${step.kind}: unknown expectation ${show(key)}`);
    fn(want);
  }
}

function eq(what: string, got: unknown, want: unknown): void {
  check(isDeepStrictEqual(got, want), `${what} = ${show(got)}, want ${show(want)}`);
}

function seqContiguous(chunks: Chunk[]): boolean {
  return chunks.every((chunk, i) => chunk.seq === i + 1);
}

/** Reads an async iterator with per-read timeouts, keeping a read that timed out for the next call. */
class Reader<T> {
  private pending: Promise<IteratorResult<T>> | undefined;

  constructor(private readonly iterator: AsyncIterator<T>) {}

  async next(timeoutMs: number): Promise<IteratorResult<T> | "timeout"> {
    const pending = (this.pending ??= this.iterator.next());
    pending.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    });
    try {
      const result = await Promise.race([pending, timeout]);
      if (result !== "timeout") this.pending = undefined;
      return result;
    } finally {
      clearTimeout(timer);
    }
  }
}

interface SubscriptionState {
  sub: Subscription;
  reader: Reader<Chunk>;
  snapshot: agentd.v1.ThreadSnapshot;
  thread: string;
  resource: string;
  chunks: Chunk[];
}

class ScenarioRun {
  private readonly subscriptions = new Map<string, SubscriptionState>();
  private readonly cacheStats = new Map<string, agentd.v1.GetCacheStatsResponse>();
  private readonly sessions: Session[] = [];

  constructor(
    private readonly client: AgentdClient,
    private readonly timeoutMs: number,
  ) {}

  close(): void {
    for (const state of this.subscriptions.values()) state.sub.close();
    for (const session of this.sessions) session.cancel();
  }

  async step(step: Step): Promise<void> {
    switch (step.kind) {
      case "generate":
        return this.generate(step);
      case "stream":
        return this.stream(step);
      case "stream_slow_reader":
        return this.streamSlowReader(step);
      case "list_messages":
        return this.listMessages(step);
      case "subscribe":
        return this.subscribe(step);
      case "send_message":
        return this.sendMessage(step);
      case "read_subscription":
        return this.readSubscription(step);
      case "resume":
        return this.resume(step);
      case "cache_stats":
        return this.cacheStatsStep(step);
      case "connect_client_tool":
        return this.connectClientTool(step);
      case "list_scores":
        return this.listScores(step);
      case "update_overrides":
        return this.updateOverrides(step);
      case "delete_overrides":
        return this.deleteOverrides(step);
      case "get_agent":
        return this.getAgent(step);
      default:
        fail(`unknown step kind ${show(step.kind)}`);
    }
  }

  private within<T>(promise: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Failure(`${what}: no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  private async generate(step: Step): Promise<void> {
    const agent = str(step, "agent");
    const thread = optStr(step, "thread");
    const resource = optStr(step, "resource");
    const memory = thread !== undefined || resource !== undefined ? { resource: resource ?? "", thread } : undefined;
    const expect = step.expect ?? {};
    const wantsError = "error_code" in expect || "error_reason" in expect;
    let response: agentd.v1.GenerateResponse | undefined;
    let error: AgentdError | undefined;
    try {
      response = await this.client.generate(agent, str(step, "text"), { memory, deadlineMs: this.timeoutMs });
    } catch (err) {
      error = AgentdError.from(err);
      if (!wantsError) fail(`generate(${agent}): ${error.message}`);
    }
    if (wantsError) {
      check(error !== undefined, `generate(${agent}): succeeded, want an error ${show(expect)}`);
    }
    expectations(step, {
      text: (want) => eq("text", response?.text, want),
      finish_reason: (want) => eq("finish_reason", finishReasonName(response!.finishReason), want),
      usage_input_tokens_at_least: (want) => {
        const got = response?.usage?.inputTokens ?? 0;
        check(got >= (want as number), `usage.input_tokens = ${got}, want at least ${show(want)}`);
      },
      error_code: (want) => eq("error code", error?.codeName, want),
      error_reason: (want) => eq("error reason", error?.reason, want),
    });
  }

  private async stream(step: Step): Promise<void> {
    const agent = str(step, "agent");
    const chunks: Chunk[] = [];
    const run = this.client.stream(agent, str(step, "text"), { deadlineMs: this.timeoutMs });
    for await (const chunk of run) chunks.push(chunk);
    const kinds = chunks.map(kindOf);
    const finish = chunks.find((c) => c.payload?.$case === "finish");
    expectations(step, {
      kinds: (want) => eq("kinds", kinds, want),
      seq_contiguous: (want) => eq("seq contiguous", seqContiguous(chunks), want),
      text: (want) => eq("text", joinedText(chunks), want),
      last_kinds: (want) => {
        const n = (want as unknown[]).length;
        eq("last kinds", kinds.slice(-n), want);
      },
      tripwire_processor: (want) => {
        const tripwire = chunks.find((c) => c.payload?.$case === "tripwire");
        check(tripwire !== undefined, `no tripwire chunk in ${show(kinds)}`);
        const payload = tripwire.payload as { $case: "tripwire"; tripwire: agentd.v1.TripwireChunk };
        eq("tripwire processor", payload.tripwire.tripwire?.processorId, want);
      },
      finish_reason: (want) => {
        check(finish !== undefined, `no finish chunk in ${show(kinds)}`);
        const payload = finish.payload as { $case: "finish"; finish: agentd.v1.FinishChunk };
        eq("finish_reason", finishReasonName(payload.finish.finishReason), want);
      },
      data_types: (want) => {
        const types = chunks.flatMap((c) => (c.payload?.$case === "data" ? [c.payload.data.type] : []));
        eq("data types", types, want);
      },
    });
  }

  private async streamSlowReader(step: Step): Promise<void> {
    const words = num(step, "words");
    const pauseMs = num(step, "pause_ms");
    const text = Array.from({ length: words }, (_, i) => `w${i + 1}`).join(" ");
    const run = this.client.stream(str(step, "agent"), text, { deadlineMs: this.timeoutMs + pauseMs });
    const chunks: Chunk[] = [];
    for await (const chunk of run) {
      chunks.push(chunk);
      if (chunks.length === 1) {
        // Read slower than the run produces: the server batches what is ready.
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
      }
    }
    expectations(step, {
      chunks: (want) => eq("chunks", chunks.length, want),
      fewer_messages_than_chunks: (want) =>
        check(
          run.responses < chunks.length === want,
          `${run.responses} messages for ${chunks.length} chunks, want fewer_messages_than_chunks=${show(want)}`,
        ),
      seq_contiguous: (want) => eq("seq contiguous", seqContiguous(chunks), want),
    });
  }

  private async updateOverrides(step: Step): Promise<void> {
    const agentId = str(step, "agent");
    const instructions = typeof step.instructions === "string" ? step.instructions : undefined;
    const expect = step.expect ?? {};
    const wantsError = "error_code" in expect || "error_reason" in expect;
    let written: agentd.v1.AgentOverrides | undefined;
    let error: AgentdError | undefined;
    try {
      written = await this.client.updateAgentOverrides({ agentId, instructions }, ["instructions"], {
        deadlineMs: this.timeoutMs,
      });
    } catch (err) {
      error = AgentdError.from(err);
      if (!wantsError) fail(`update_overrides(${agentId}): ${error.message}`);
    }
    if (wantsError) check(error !== undefined, `update_overrides(${agentId}): succeeded, want ${show(expect)}`);
    expectations(step, {
      overridden_fields: (want) => eq("overridden_fields", written?.overriddenFields, want),
      error_code: (want) => eq("error code", error?.codeName, want),
      error_reason: (want) => eq("error reason", error?.reason, want),
    });
  }

  private async deleteOverrides(step: Step): Promise<void> {
    const deleted = await this.client.deleteAgentOverrides(str(step, "agent"), { deadlineMs: this.timeoutMs });
    expectations(step, { overridden_fields: (want) => eq("overridden_fields", deleted.overriddenFields, want) });
  }

  private async getAgent(step: Step): Promise<void> {
    const agent = await this.client.getAgent(str(step, "agent"), { deadlineMs: this.timeoutMs });
    expectations(step, {
      instructions: (want) => eq("instructions", agent.instructions, want),
      overridden_fields: (want) => eq("overridden_fields", agent.overriddenFields, want),
    });
  }

  private async listMessages(step: Step): Promise<void> {
    const messages = await this.client.listMessages(str(step, "thread"), { deadlineMs: this.timeoutMs }).all();
    expectations(step, {
      texts: (want) => eq("texts", messages.map(firstText), want),
    });
  }

  private async subscribe(step: Step): Promise<void> {
    const name = str(step, "name");
    check(!this.subscriptions.has(name), `subscription ${show(name)} already exists`);
    const thread = str(step, "thread");
    const resource = str(step, "resource");
    const sub = this.client.subscribe(thread, { resourceId: resource, reconnect: true });
    // ready() resolves only when the first message is a snapshot (it rejects otherwise).
    const snapshot = await this.within(sub.ready(), "subscribe");
    check(snapshot.logEpoch !== "", "the snapshot carries no log_epoch");
    this.subscriptions.set(name, {
      sub,
      reader: new Reader(sub[Symbol.asyncIterator]()),
      snapshot,
      thread,
      resource,
      chunks: [],
    });
    expectations(step, {});
  }

  private async sendMessage(step: Step): Promise<void> {
    const answer = await this.client.sendMessage(
      str(step, "agent"),
      { resourceId: str(step, "resource"), threadId: str(step, "thread") },
      str(step, "text"),
      { deadlineMs: this.timeoutMs },
    );
    expectations(step, {
      action: (want) => eq("action", answer.action, want),
    });
  }

  private subscription(step: Step): SubscriptionState {
    const name = str(step, "name");
    const state = this.subscriptions.get(name);
    check(state !== undefined, `no subscription named ${show(name)}`);
    return state;
  }

  private async readSubscription(step: Step): Promise<void> {
    const state = this.subscription(step);
    const until = str(step, "until");
    check(until === "finish", `read_subscription: unknown until ${show(until)}`);
    const read: Chunk[] = [];
    for (;;) {
      const result = await state.reader.next(this.timeoutMs);
      check(
        result !== "timeout",
        `read_subscription: no ${until} chunk within ${this.timeoutMs} ms (read ${show(read.map(kindOf))})`,
      );
      check(!result.done, `read_subscription: the subscription ended before ${until} (read ${show(read.map(kindOf))})`);
      read.push(result.value);
      state.chunks.push(result.value);
      if (isTerminal(result.value)) {
        check(
          kindOf(result.value) === until,
          `the run ended with ${kindOf(result.value)}: ${show(result.value.payload)}`,
        );
        break;
      }
    }
    expectations(step, {
      echo_texts: (want) =>
        eq(
          "echo texts",
          read.flatMap((c) => (c.payload?.$case === "signal" ? [signalText(c.payload.signal.signal)] : [])),
          want,
        ),
      text: (want) => eq("text", joinedText(read), want),
    });
  }

  private async resume(step: Step): Promise<void> {
    const state = this.subscription(step);
    const index = num(step, "after_chunk_index");
    check(
      index >= 0 && index < state.chunks.length,
      `after_chunk_index ${index}: the subscription read ${state.chunks.length} chunks`,
    );
    const from = state.chunks[index];
    check(from.offset > 0, `chunk ${index} carries no offset`);
    const rest = state.chunks.slice(index + 1);
    const sub = this.client.subscribe(state.thread, {
      resourceId: state.resource,
      after: { logEpoch: state.snapshot.logEpoch, afterOffset: from.offset },
      reconnect: false,
    });
    try {
      await this.within(sub.ready(), "resume");
      const reader = new Reader(sub[Symbol.asyncIterator]());
      const replayed: Chunk[] = [];
      while (replayed.length < rest.length) {
        const result = await reader.next(this.timeoutMs);
        check(
          result !== "timeout",
          `resume: replayed ${replayed.length} of ${rest.length} chunks within ${this.timeoutMs} ms`,
        );
        check(!result.done, `resume: the stream ended after ${replayed.length} of ${rest.length} chunks`);
        replayed.push(result.value);
      }
      // Nothing more: the thread is idle, so any further chunk is a duplicate.
      const extra = await reader.next(300);
      check(
        extra === "timeout" || extra.done === true,
        `resume: an extra chunk after the replay: ${show(extra !== "timeout" && extra.value)}`,
      );
      const key = (c: Chunk): string => `${c.offset}/${c.runId}/${c.seq}/${kindOf(c)}`;
      expectations(step, {
        replays_rest_without_gap: (want) =>
          check(
            isDeepStrictEqual(replayed.map(key), rest.map(key)) === want,
            `replayed ${show(replayed.map(key))}, want ${show(rest.map(key))}`,
          ),
      });
    } finally {
      sub.close();
    }
  }

  private async cacheStatsStep(step: Step): Promise<void> {
    const stats = await this.client.getCacheStats({ deadlineMs: this.timeoutMs });
    const name = optStr(step, "name");
    if (name !== undefined) this.cacheStats.set(name, stats);
    expectations(step, {
      hits_increased_since: (want) => {
        const before = this.cacheStats.get(want as string);
        check(before !== undefined, `no cache stats named ${show(want)}`);
        check(stats.hits > before.hits, `cache hits ${stats.hits}, want more than ${before.hits} (at ${show(want)})`);
      },
    });
  }

  /** A thread's scorers, polled for up to five seconds (scoring runs after the run has answered). */
  private async listScores(step: Step): Promise<void> {
    const want = step.expect?.["scorers"];
    const deadline = Date.now() + 5000;
    let names: string[] = [];
    for (;;) {
      const scores = await this.client.listScores({ threadId: str(step, "thread"), deadlineMs: this.timeoutMs }).all();
      names = scores.map((s) => s.scorer).sort();
      if (want === undefined || isDeepStrictEqual(names, want) || Date.now() > deadline) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expectations(step, { scorers: (w) => eq("scorers", names, w) });
  }

  private async connectClientTool(step: Step): Promise<void> {
    const tool = str(step, "tool");
    const answer = step["answer"];
    let calls = 0;
    const session = this.client.connect(str(step, "agent"), {
      resourceId: str(step, "resource"),
      threadId: str(step, "thread"),
      tools: {
        [tool]: async () => {
          calls++;
          return answer;
        },
      },
    });
    this.sessions.push(session);
    await this.within(session.ready(), "connect");
    const routing = await this.within(session.sendMessage(str(step, "text")), "send_message");
    check(routing.action === "wake", `send_message was routed to ${show(routing.action)}, want wake`);
    const reader = new Reader(session[Symbol.asyncIterator]());
    const read: Chunk[] = [];
    for (;;) {
      const result = await reader.next(this.timeoutMs);
      check(
        result !== "timeout",
        `connect: the run did not end within ${this.timeoutMs} ms (read ${show(read.map(kindOf))})`,
      );
      check(!result.done, `connect: the session ended before the run did (read ${show(read.map(kindOf))})`);
      if (result.value.runId !== routing.runId) continue;
      read.push(result.value);
      if (isTerminal(result.value)) {
        check(
          kindOf(result.value) === "finish",
          `the run ended with ${kindOf(result.value)}: ${show(result.value.payload)}`,
        );
        break;
      }
    }
    await this.within(session.close(), "close");
    check(calls === 1, `the ${tool} handler ran ${calls} times, want once`);
    expectations(step, {
      tool_result: (want) => {
        const results = read.flatMap((c) =>
          c.payload?.$case === "toolResult" && c.payload.toolResult.toolName === tool ? [c.payload.toolResult] : [],
        );
        check(results.length === 1, `${results.length} tool-result chunks for ${tool}, want 1`);
        eq("tool result", results[0].result, want);
      },
      text: (want) => eq("text", joinedText(read), want),
    });
  }
}

/** Replaces `$thread` and `$resource` in every string with this scenario's fresh ids. */
function substitute<T>(value: T, ids: { thread: string; resource: string }): T {
  if (typeof value === "string") {
    return value.replaceAll("$thread", ids.thread).replaceAll("$resource", ids.resource) as T;
  }
  if (Array.isArray(value)) {
    return value.map((v) => substitute(v, ids)) as T;
  }
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, ids)])) as T;
  }
  return value;
}

async function runScenario(client: AgentdClient, scenario: Scenario, timeoutMs: number): Promise<string | undefined> {
  const suffix = randomUUID().slice(0, 12);
  const ids = { thread: `conf-thread-${suffix}`, resource: `conf-resource-${suffix}` };
  const run = new ScenarioRun(client, timeoutMs);
  try {
    for (const [i, raw] of scenario.steps.entries()) {
      const step = substitute(raw, ids);
      try {
        await run.step(step);
      } catch (err) {
        const message = err instanceof Failure ? err.message : err instanceof Error ? err.message : String(err);
        return `step ${i + 1} (${step.kind}): ${message}`;
      }
    }
    return undefined;
  } finally {
    run.close();
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      addr: { type: "string" },
      scenarios: { type: "string" },
      only: { type: "string", multiple: true },
      "timeout-ms": { type: "string" },
      token: { type: "string", default: process.env["AGENTD_TOKEN"] ?? "" },
      cacert: { type: "string" },
      cert: { type: "string" },
      key: { type: "string" },
    },
  });
  const certificate = values.cert !== undefined || values.key !== undefined;
  if (!values.addr || !values.scenarios || (certificate && (!values.cert || !values.key || !values.cacert))) {
    console.error(
      "usage: conformance.js --addr HOST:PORT --scenarios PATH [--only NAME ...] [--timeout-ms N] " +
        "[--token T] [--cacert ca.pem [--cert client.pem --key client-key.pem]]",
    );
    return 2;
  }
  const tls = values.cacert
    ? {
        ca: readFileSync(values.cacert),
        cert: values.cert ? readFileSync(values.cert) : undefined,
        key: values.key ? readFileSync(values.key) : undefined,
      }
    : undefined;
  let scenarios: Scenario[];
  try {
    const parsed = JSON.parse(readFileSync(values.scenarios, "utf8")) as { scenarios?: Scenario[] };
    if (!Array.isArray(parsed.scenarios)) throw new Error("no `scenarios` list");
    scenarios = parsed.scenarios;
  } catch (err) {
    console.error(
      `cannot read scenarios from ${values.scenarios}: ${err instanceof Error ? err.message : String(err)}`,
    );
    return 2;
  }
  if (values.only?.length) {
    scenarios = scenarios.filter((s) => values.only!.includes(s.name));
  }
  const timeoutMs = Number(values["timeout-ms"] ?? 30_000);
  const client = new AgentdClient(values.addr, { token: values.token, tls });
  let passed = 0;
  let failed = 0;
  try {
    try {
      await client.waitForReady(timeoutMs);
    } catch (err) {
      console.error(`cannot reach agentd at ${values.addr}: ${err instanceof Error ? err.message : String(err)}`);
    }
    for (const scenario of scenarios) {
      const started = Date.now();
      const problem = await runScenario(client, scenario, timeoutMs);
      const ms = Date.now() - started;
      if (problem === undefined) {
        passed++;
        console.log(`PASS ${scenario.name} (${ms} ms)`);
      } else {
        failed++;
        console.log(`FAIL ${scenario.name} (${ms} ms): ${problem}`);
      }
    }
  } finally {
    client.close();
  }
  console.log(`conformance: ${passed} passed, ${failed} failed`);
  return failed > 0 ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  },
);
