// @agentd/client against a real agentd with [auth] mode "token" over TLS
// (the conformance config). Skipped unless AGENTD_SECURE_ADDR names the
// server; AGENTD_SECURE_CA is the CA's PEM file, AGENTD_SECURE_TOKEN a writer
// and admin token, AGENTD_SECURE_READER_TOKEN a reader's
// (tests/e2e/test_conformance_ts.py sets them all).

import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, it } from "node:test";

import {
  AgentdClient,
  PermissionDeniedError,
  UnauthenticatedError,
  isTerminal,
  type Chunk,
} from "@agentd/client";

import { rejection } from "./support";

const addr = process.env["AGENTD_SECURE_ADDR"];

const skip = addr ? false : "AGENTD_SECURE_ADDR is not set";

describe("live agentd with a token over TLS", { skip, timeout: 60_000 }, () => {
  const tls = (): { ca: Buffer } => ({ ca: readFileSync(process.env["AGENTD_SECURE_CA"] ?? "") });
  const client = (token: string | undefined): AgentdClient =>
    new AgentdClient(addr ?? "", { token, tls: tls(), deadlineMs: 20_000 });

  it("generates, streams and subscribes with the token", async () => {
    const c = client(process.env["AGENTD_SECURE_TOKEN"]);
    try {
      assert.equal((await c.generate("echo", "over tls")).text, "over tls");
      const kinds: string[] = [];
      for await (const chunk of c.stream("echo", "one two")) kinds.push(chunk.payload?.$case ?? "");
      assert.equal(kinds.at(-1), "finish");
      const target = { resourceId: `res-${randomUUID().slice(0, 8)}`, threadId: `thr-${randomUUID().slice(0, 8)}` };
      const sub = c.subscribe(target.threadId, { resourceId: target.resourceId });
      await sub.ready();
      const routing = await c.sendMessage("chat", target, "remember me");
      const chunks: Chunk[] = [];
      for await (const chunk of sub) {
        if (chunk.runId !== routing.runId) continue;
        chunks.push(chunk);
        if (isTerminal(chunk)) break;
      }
      sub.close();
      assert.equal(chunks.at(-1)?.payload?.$case, "finish");
      await c.getCacheStats();
    } finally {
      c.close();
    }
  });

  it("says who is missing and whose role is too weak", async () => {
    const anonymous = client("");
    const reader = client(process.env["AGENTD_SECURE_READER_TOKEN"]);
    try {
      const missing = await rejection(anonymous.getAgent("echo"));
      assert.ok(missing instanceof UnauthenticatedError);
      assert.equal(missing.reason, "TOKEN_MISSING");
      assert.ok((await reader.listAgents().all()).some((agent) => agent.id === "echo"));
      const weak = await rejection(reader.generate("echo", "x"));
      assert.ok(weak instanceof PermissionDeniedError);
      assert.equal(weak.reason, "ROLE_REQUIRED");
      assert.equal(weak.metadata["required_role"], "writer");
    } finally {
      anonymous.close();
      reader.close();
    }
  });

  it("sends $AGENTD_TOKEN when given no token, and none for token: \"\"", async () => {
    process.env["AGENTD_TOKEN"] = process.env["AGENTD_SECURE_TOKEN"];
    const fromEnv = client(undefined);
    const anonymous = client("");
    try {
      assert.equal((await fromEnv.generate("echo", "from the environment")).text, "from the environment");
      const missing = await rejection(anonymous.listAgents().all());
      assert.ok(missing instanceof UnauthenticatedError);
    } finally {
      delete process.env["AGENTD_TOKEN"];
      fromEnv.close();
      anonymous.close();
    }
  });
});
