// Calling an agentd server that authenticates its callers: a bearer token
// over TLS, or a client certificate (mutual TLS).
//
//   agentd token new --tenant acme --subject example --roles writer   # its lines go in agentd.toml
//   npm run build
//   AGENTD_TOKEN=agentd_... node build/examples/secure.js --addr agentd.internal:50051 --cacert ca.pem
//   node build/examples/secure.js --addr agentd.internal:50051 --cacert ca.pem --cert me.pem --key me-key.pem
//
// Without --cacert the channel is plaintext, which carries a token only to a
// loopback address.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

import {
  AgentdClient,
  PermissionDeniedError,
  ResourceExhaustedError,
  UnauthenticatedError,
  type TlsOptions,
} from "@agentd/client";

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      addr: { type: "string", default: "127.0.0.1:50051" },
      token: { type: "string", default: process.env["AGENTD_TOKEN"] ?? "" },
      cacert: { type: "string" },
      cert: { type: "string" },
      key: { type: "string" },
      agent: { type: "string", default: "echo" },
    },
  });
  let tls: TlsOptions | undefined;
  if (values.cacert) {
    tls = { ca: readFileSync(values.cacert) };
    if (values.cert && values.key) {
      tls.cert = readFileSync(values.cert);
      tls.key = readFileSync(values.key);
    }
  }
  const client = new AgentdClient(values.addr!, { token: values.token, tls, deadlineMs: 30_000 });
  try {
    const result = await client.generate(values.agent!, "hello, securely");
    console.log(result.text);
    return 0;
  } catch (err) {
    if (err instanceof UnauthenticatedError) {
      console.error(`the server does not know this caller (${err.reason}): check --token or the certificate`);
    } else if (err instanceof PermissionDeniedError) {
      console.error(`this caller needs the ${err.metadata["required_role"]} role`);
    } else if (err instanceof ResourceExhaustedError && err.reason === "RATE_LIMITED") {
      console.error(`rate limited: try again in ${err.retryDelayMs} ms`);
    } else {
      throw err;
    }
    return 1;
  } finally {
    client.close();
  }
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
