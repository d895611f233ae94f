// @agentd/client against a real agentd started with the conformance config
// (tests/conformance/agentd.toml, --app tests.conformance.app). Skipped unless
// AGENTD_ADDR names the server (tests/e2e/test_conformance_ts.py sets it).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, it } from "node:test";

import { AgentdClient, agentd, isTerminal, status, type Chunk } from "@agentd/client";

import { rejection } from "./support";

const addr = process.env["AGENTD_ADDR"];
const v1 = agentd.v1;

async function readRun(source: AsyncIterable<Chunk>, runId: string): Promise<Chunk[]> {
  const out: Chunk[] = [];
  for await (const chunk of source) {
    if (chunk.runId !== runId) continue;
    out.push(chunk);
    if (isTerminal(chunk)) break;
  }
  return out;
}

const text = (chunks: Chunk[]): string =>
  chunks.map((c) => (c.payload?.$case === "textDelta" ? c.payload.textDelta.text : "")).join("");

describe("live agentd", { skip: addr ? false : "AGENTD_ADDR is not set", timeout: 60_000 }, () => {
  let client: AgentdClient;
  const resource = `live-${randomUUID().slice(0, 8)}`;
  const to = (threadId: string): { resourceId: string; threadId: string } => ({ resourceId: resource, threadId });

  before(() => {
    client = new AgentdClient(addr!, {
      deadlineMs: 15_000,
      keepaliveMs: 30_000,
      metadata: { "x-client": "live-test" },
    });
  });
  after(() => client.close());

  it("lists and describes agents", async () => {
    const ids = (await client.listAgents().all()).map((a) => a.id);
    assert.ok(ids.includes("echo") && ids.includes("chat"), `agents ${ids.join(",")}`);
    assert.equal((await client.getAgent("chat")).id, "chat");
    const err = await rejection(client.getAgent("no-such-agent"));
    assert.equal(err.code, status.NOT_FOUND);
    assert.equal(err.reason, "AGENT_NOT_FOUND");
  });

  it("reports field violations of an invalid request", async () => {
    const err = await rejection(
      client.generate("echo", "x", { modelSettings: { temperature: -1 }, requestContext: { "agentd.threadId": "t" } }),
    );
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.ok(err.violations["options.model_settings.temperature"], JSON.stringify(err.violations));
    assert.ok(err.violations["options.request_context.agentd.threadId"], JSON.stringify(err.violations));
    assert.equal(
      (await rejection(client.generate("echo", "x", { clientTools: [{ name: "t" }] }))).reason,
      "CLIENT_TOOLS_REQUIRE_THREAD",
    );
    const keep = await rejection(client.stream("echo", "x", { keepRunning: true }).text());
    assert.equal(keep.reason, "KEEP_RUNNING_REQUIRES_THREAD");
  });

  it("generates with options and streams with early exit", async () => {
    const res = await client.generate("echo", [{ role: "user", text: "hello options" }], {
      maxSteps: 2,
      requestContext: { user: "u1" },
      providerOptions: { local: { note: "ignored" } },
    });
    assert.equal(res.text, "hello options");
    assert.equal(res.finishReason, v1.FinishReason.FINISH_REASON_STOP);
    const run = client.stream("echo", Array.from({ length: 500 }, (_, i) => `w${i}`).join(" "));
    let n = 0;
    for await (const _ of run) {
      if (++n === 3) break;
    }
    assert.equal(n, 3);
    assert.ok(run.runId);
    assert.equal(await client.stream("echo", "a b").text(), "a b");
  });

  it("answers with the fallback value when the answer does not match the schema", async () => {
    // The local model answers "Paris": no JSON, let alone a city object.
    const res = await client.generate("echo", "where?", {
      providerOptions: { local: { script: [{ text: "Paris" }] } },
      structuredOutput: {
        name: "city",
        schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        errorStrategy: "fallback",
        fallbackValue: { city: "unknown" },
      },
    });
    assert.deepEqual(res.object, { city: "unknown" });
    assert.ok(res.warnings.some((w) => w.endsWith("the fallback value was used")), res.warnings.join("; "));
  });

  it("applies response-cache overrides", async () => {
    const key = `live-key-${randomUUID()}`;
    assert.equal((await client.generate("cached-echo", "first", { responseCache: { key } })).text, "first");
    assert.equal((await client.generate("cached-echo", "second", { responseCache: { key } })).text, "first");
    assert.equal((await client.generate("cached-echo", "third", { responseCache: { key, bust: true } })).text, "third");
    const q = `scoped ${randomUUID()}`;
    await client.generate("cached-echo", q, { responseCache: { scope: "live-a" } });
    const before = (await client.getCacheStats()).hits;
    await client.generate("cached-echo", q, { responseCache: { scope: "live-b" } });
    assert.equal((await client.getCacheStats()).hits, before, "another scope must miss");
    await client.generate("cached-echo", q, { responseCache: { scope: "live-a" } });
    assert.equal((await client.getCacheStats()).hits, before + 1, "the same scope must hit");
    assert.ok((await client.invalidateResponseCache("cached-echo", { scope: "live-a" })) >= 1);
    assert.equal(typeof (await client.invalidateResponseCache("cached-echo", { noScope: true })), "number");
  });

  it("operates the cache", async () => {
    const key = `live:${randomUUID()}`;
    await client.setCacheEntry(key, { a: [1, "x", true, null] }, { ttlMs: 60_000 });
    assert.deepEqual(await client.getCacheEntry(key), { found: true, value: { a: [1, "x", true, null] } });
    assert.equal(await client.deleteCacheEntry(key), true);
    assert.equal((await client.getCacheEntry(key)).found, false);
    await client.setCacheEntry(`${key}:1`, 1);
    await client.setCacheEntry(`${key}:2`, 2, { pinned: true });
    assert.equal(await client.clearCache(`${key}:`), 2);
    const stats = await client.getCacheStats();
    assert.equal(stats.backend, "memory");
  });

  it("manages threads and pages through messages", async () => {
    const created = await client.createThread({ resourceId: resource, title: "hello", metadata: { team: "a" } });
    assert.ok(created.id);
    const dup = await rejection(client.createThread({ resourceId: resource, id: created.id }));
    assert.equal(dup.reason, "THREAD_ALREADY_EXISTS");
    assert.equal((await client.updateThread(created.id, { title: "renamed", resourceId: resource })).title, "renamed");
    const got = await client.getThread(created.id, { resourceId: resource });
    assert.equal(got.title, "renamed");
    assert.deepEqual(got.metadata, { team: "a" });
    assert.equal(got.activeRunId, "");
    for (const word of ["one", "two", "three"]) {
      await client.generate("chat", word, { memory: { resource, thread: created.id } });
    }
    const pages: number[] = [];
    for await (const page of client.listMessages(created.id, { pageSize: 4 }).pages()) pages.push(page.length);
    assert.deepEqual(pages, [4, 2]);
    const texts: string[] = [];
    for await (const m of client.listMessages(created.id, { order: "desc", pageSize: 2 })) {
      const part = m.parts[0]?.part;
      texts.push(part?.$case === "text" ? part.text.text : "");
    }
    assert.deepEqual(texts, ["three", "three", "two", "two", "one", "one"]);
    const filtered = await client.listThreads(resource, { metadataFilter: { team: "a" } }).all();
    assert.ok(filtered.some((t) => t.id === created.id));
    await client.deleteThread(created.id, { resourceId: resource });
    assert.equal((await rejection(client.getThread(created.id))).reason, "THREAD_NOT_FOUND");
  });

  it("sends signals, state and notifications", async () => {
    const threadId = `live-signals-${randomUUID()}`;
    await client.createThread({ resourceId: resource, id: threadId });
    const first = await client.sendStateSignal(
      "chat",
      to(threadId),
      { id: "browser", text: "page A", cacheKey: "a" },
      { ifIdle: "persist" },
    );
    assert.equal(first.action, "persist");
    const again = await client.sendStateSignal(
      "chat",
      to(threadId),
      { id: "browser", text: "page A", cacheKey: "a" },
      { ifIdle: "persist" },
    );
    assert.equal(again.action, "skipped_unchanged");
    assert.equal(again.version, first.version);
    const reactive = await client.sendSignal(
      "chat",
      to(threadId),
      { type: "reactive", text: "remember" },
      { ifIdle: "persist" },
    );
    assert.equal(reactive.action, "persist");
    assert.equal(reactive.signal?.type, "reactive");
    const discarded = await client.sendMessage("chat", to(threadId), "dropped", { ifIdle: "discard" });
    assert.equal(discarded.action, "discard");
    const bad = await rejection(client.sendSignal("chat", to(threadId), { type: "bogus", text: "x" }));
    assert.equal(bad.reason, "UNKNOWN_SIGNAL_TYPE");

    const sub = client.subscribe(threadId, { resourceId: resource });
    await sub.ready();
    const queued = await client.queueMessage("chat", to(threadId), "queued hello");
    assert.equal(queued.action, "wake");
    const run = await readRun(sub, queued.runId);
    assert.equal(text(run), "queued hello");
    sub.close();
    assert.deepEqual(await client.abortRun(threadId, { resourceId: resource }), { aborted: false, runId: "" });

    const sent = await client.sendNotification("chat", to(threadId), {
      source: "ci",
      kind: "build",
      summary: "build failed",
      priority: v1.NotificationPriority.NOTIFICATION_PRIORITY_LOW,
    });
    assert.ok(sent.notification?.id);
    const listed = await client.listNotifications(threadId, { resourceId: resource }).all();
    assert.ok(listed.some((n) => n.id === sent.notification!.id));
    const seen = await client.updateNotificationStatus(threadId, sent.notification!.id, "seen");
    assert.equal(seen.status, v1.NotificationStatus.NOTIFICATION_STATUS_SEEN);
  });

  it("subscribes with resume and fails an expired resume", async () => {
    const threadId = `live-sub-${randomUUID()}`;
    const sub = client.subscribe(threadId, { resourceId: resource });
    const snap = await sub.ready();
    const wake = await client.sendMessage("chat", to(threadId), "x y z");
    const run = await readRun(sub, wake.runId);
    sub.close();
    const replay = client.subscribe(threadId, {
      resourceId: resource,
      after: { logEpoch: snap.logEpoch, afterOffset: run[0].offset },
      reconnect: false,
    });
    const again = await readRun(replay, wake.runId);
    replay.close();
    assert.deepEqual(
      again.map((c) => c.offset),
      run.slice(1).map((c) => c.offset),
    );
    const expired = client.subscribe(threadId, {
      resourceId: resource,
      after: { logEpoch: "not-the-epoch", afterOffset: 1 },
    });
    const err = await rejection(expired.ready());
    assert.equal(err.code, status.OUT_OF_RANGE);
    assert.equal(err.reason, "RESUME_OFFSET_EXPIRED");
  });

  it("runs a session: sends, state, abort, client tools", async () => {
    const threadId = `live-session-${randomUUID()}`;
    const failed = client.connect("no-such-agent", { resourceId: resource, threadId });
    assert.equal((await rejection(failed.ready())).reason, "AGENT_NOT_FOUND");

    const calls: unknown[] = [];
    const session = client.connect("tools", {
      resourceId: resource,
      threadId,
      tools: {
        pick_color: (args: unknown) => {
          calls.push(args);
          return "blue";
        },
      },
    });
    await session.ready();
    const wake = await session.sendMessage("choose a color");
    assert.equal(wake.action, "wake");
    const run = await readRun(session, wake.runId);
    assert.equal(text(run), "You picked blue.");
    assert.deepEqual(calls, [{ choices: ["red", "blue"] }]);
    const state = await session.sendStateSignal({ id: "ui", text: "tab 1", cacheKey: "1" }, { ifIdle: "persist" });
    assert.equal(state.action, "persist");
    const signal = await session.sendSignal({ type: "reactive", text: "note" }, { ifIdle: "persist" });
    assert.equal(signal.action, "persist");
    assert.deepEqual(await session.abort(), { aborted: false, runId: "" });
    const missing = await rejection(session.sendToolResult(wake.runId, "no-such-call", "x"));
    assert.equal(missing.code, status.NOT_FOUND);
    await session.close();
    assert.equal((await rejection(session.sendMessage("late"))).reason, "SESSION_CLOSED");
  });
});
