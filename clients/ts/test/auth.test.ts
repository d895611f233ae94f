// Unit tests of the client's credentials and of the typed errors of callers
// the server refuses: a token over plaintext goes as metadata to loopback
// only; UNAUTHENTICATED, PERMISSION_DENIED and RESOURCE_EXHAUSTED are
// subclasses of AgentdError carrying the reason and the RetryInfo delay.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";

import * as grpc from "@grpc/grpc-js";
import { BinaryWriter } from "@bufbuild/protobuf/wire";

import {
  AgentdClient,
  type AgentdClientOptions,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  agentd,
  google,
  isLoopback,
  resolveToken,
  tlsCredentials,
} from "@agentd/client";

import { encodeErrorInfo, rejection, serve, statusError } from "./support";

const v1 = agentd.v1;

function encodeRetryInfo(seconds: number, nanos: number): Uint8Array {
  const w = new BinaryWriter();
  w.uint32(10).bytes(google.protobuf.Duration.encode({ seconds, nanos }).finish());
  return w.finish();
}

function refusal(code: grpc.status, reason: string, retry?: [number, number]): grpc.ServiceError {
  const details: google.protobuf.Any[] = [
    { typeUrl: "type.googleapis.com/google.rpc.ErrorInfo", value: Buffer.from(encodeErrorInfo(reason, {})) },
  ];
  if (retry) {
    details.push({ typeUrl: "type.googleapis.com/google.rpc.RetryInfo", value: Buffer.from(encodeRetryInfo(...retry)) });
  }
  return statusError(code, reason.toLowerCase(), details) as grpc.ServiceError;
}

describe("credentials", { timeout: 15000 }, () => {
  let server: grpc.Server;
  let addr: string;
  const seen: string[] = [];
  before(async () => {
    const s = await serve(v1.AgentServiceService, {
      getAgent: (call: grpc.ServerUnaryCall<agentd.v1.GetAgentRequest, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        seen.push(String(call.metadata.get("authorization")[0] ?? ""));
        const id = call.request.agentId;
        if (id === "who") cb(refusal(grpc.status.UNAUTHENTICATED, "TOKEN_MISSING"));
        else if (id === "weak") cb(refusal(grpc.status.PERMISSION_DENIED, "ROLE_REQUIRED"));
        else if (id === "fast") cb(refusal(grpc.status.RESOURCE_EXHAUSTED, "RATE_LIMITED", [1, 250_000_000]));
        else cb(null, v1.GetAgentResponse.fromPartial({ agent: { id } }));
      },
    });
    server = s.server;
    addr = s.addr;
  });
  after(() => server.forceShutdown());

  it("sends a token over plaintext to a loopback target as metadata", async () => {
    const client = new AgentdClient(addr, { token: "agentd_secret", deadlineMs: 5000 });
    try {
      await client.getAgent("echo");
      assert.equal(seen.at(-1), "Bearer agentd_secret");
    } finally {
      client.close();
    }
  });

  it("refuses a token over plaintext beyond loopback unless told", () => {
    assert.throws(() => new AgentdClient("agentd.example.com:50051", { token: "agentd_x" }), /in clear/);
    new AgentdClient("agentd.example.com:50051", { token: "agentd_x", allowInsecureToken: true }).close();
    assert.throws(
      () => new AgentdClient(addr, { token: "agentd_x", metadata: { Authorization: "Bearer agentd_y" } }),
      /not both/,
    );
    assert.throws(() => tlsCredentials({ cert: "x" }), /together/);
  });

  it("reads $AGENTD_TOKEN when given no token, and token: \"\" sends none", async () => {
    process.env["AGENTD_TOKEN"] = " agentd_env ";
    try {
      const cases: [AgentdClientOptions, string][] = [
        [{}, "Bearer agentd_env"],
        [{ token: "" }, ""],
        [{ token: "agentd_explicit" }, "Bearer agentd_explicit"],
        [{ metadata: { Authorization: "Bearer agentd_md" } }, "Bearer agentd_md"],
        [{ token: "", metadata: { authorization: "Bearer agentd_md" } }, "Bearer agentd_md"],
      ];
      for (const [options, want] of cases) {
        const client = new AgentdClient(addr, { ...options, deadlineMs: 5000 });
        try {
          await client.getAgent("echo");
          assert.equal(seen.at(-1), want, JSON.stringify(options));
        } finally {
          client.close();
        }
      }
      // The environment's token stays off plaintext beyond loopback, as an explicit one does.
      assert.throws(() => new AgentdClient("agentd.example.com:50051"), /\$AGENTD_TOKEN: .*in clear/);
      new AgentdClient("agentd.example.com:50051", { token: "" }).close();
      assert.throws(
        () => new AgentdClient(addr, { token: "agentd_x", metadata: { authorization: "Bearer agentd_y" } }),
        /not both/,
      );
      assert.equal(resolveToken(undefined), "agentd_env");
      assert.equal(resolveToken(""), undefined);
      delete process.env["AGENTD_TOKEN"];
      const anonymous = new AgentdClient(addr, { deadlineMs: 5000 });
      try {
        await anonymous.getAgent("echo");
        assert.equal(seen.at(-1), "");
      } finally {
        anonymous.close();
      }
    } finally {
      delete process.env["AGENTD_TOKEN"];
    }
  });

  it("knows which targets are loopback", () => {
    for (const target of ["127.0.0.1:1", "localhost:50051", "[::1]:2", "ipv4:127.0.0.1:1,127.0.0.2:2", "unix:/s"]) {
      assert.ok(isLoopback(target), target);
    }
    for (const target of ["10.0.0.1:1", "agentd.internal:443", "ipv4:127.0.0.1:1,10.0.0.1:2", "dns:///a.b:1"]) {
      assert.ok(!isLoopback(target), target);
    }
  });

  it("raises the refusals of callers as subclasses with their reason and retry delay", async () => {
    const client = new AgentdClient(addr, { deadlineMs: 5000 });
    try {
      const missing = await rejection(client.getAgent("who"));
      assert.ok(missing instanceof UnauthenticatedError);
      assert.equal(missing.reason, "TOKEN_MISSING");
      assert.equal(missing.name, "UnauthenticatedError");
      assert.equal(missing.retryDelayMs, undefined);
      const weak = await rejection(client.getAgent("weak"));
      assert.ok(weak instanceof PermissionDeniedError);
      assert.equal(weak.reason, "ROLE_REQUIRED");
      const limited = await rejection(client.getAgent("fast"));
      assert.ok(limited instanceof ResourceExhaustedError);
      assert.equal(limited.reason, "RATE_LIMITED");
      assert.equal(limited.retryDelayMs, 1250);
    } finally {
      client.close();
    }
  });
});
