// Helpers shared by the tests: an in-process grpc-js server on a loopback
// port, statuses carrying agentd's details trailer, and the AgentdError a
// promise rejects with.

import assert from "node:assert/strict";

import * as grpc from "@grpc/grpc-js";
import { BinaryWriter } from "@bufbuild/protobuf/wire";

import { AgentdError, google } from "@agentd/client";

// A client given no token reads $AGENTD_TOKEN: keep the caller's out of the
// tests (those that want one set it themselves).
delete process.env["AGENTD_TOKEN"];

export function encodeErrorInfo(reason: string, metadata: Record<string, string>): Uint8Array {
  const w = new BinaryWriter();
  w.uint32(10).string(reason);
  w.uint32(18).string("agentd");
  for (const [k, v] of Object.entries(metadata)) {
    w.uint32(26).fork().uint32(10).string(k).uint32(18).string(v).join();
  }
  return w.finish();
}

export function encodeBadRequest(violations: [string, string][]): Uint8Array {
  const w = new BinaryWriter();
  for (const [field, description] of violations) {
    w.uint32(10).fork().uint32(10).string(field).uint32(18).string(description).join();
  }
  return w.finish();
}

export function statusError(
  code: grpc.status,
  message: string,
  details: google.protobuf.Any[],
): Partial<grpc.StatusObject> {
  const md = new grpc.Metadata();
  md.set("grpc-status-details-bin", Buffer.from(google.rpc.Status.encode({ code, message, details }).finish()));
  return { code, details: message, metadata: md };
}

export async function serve(
  service: grpc.ServiceDefinition,
  impl: grpc.UntypedServiceImplementation,
): Promise<{ server: grpc.Server; addr: string }> {
  const server = new grpc.Server();
  server.addService(service, impl);
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return { server, addr: `127.0.0.1:${port}` };
}

/** The AgentdError `promise` rejects with (fails the test when it resolves or rejects otherwise). */
export async function rejection(promise: Promise<unknown>): Promise<AgentdError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AgentdError, `want an AgentdError, got ${String(err)}`);
    return err;
  }
  assert.fail("want an error");
}
