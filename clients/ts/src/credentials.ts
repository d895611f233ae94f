// Who the client is and how it reaches the server: a bearer token
// (`authorization: Bearer <token>` on every call) and TLS or mutual TLS.
//
// Over TLS the token is call credentials combined onto the channel
// credentials. grpc-js sends call credentials only on a secure channel, so
// over plaintext the header goes as plain metadata, and only to a loopback
// target (a local or sidecar server) unless `allowInsecureToken` says
// otherwise: a token sent in clear over a network is a token given away.
//
// A client given no token reads $AGENTD_TOKEN (`token: ""` reads nothing).

import { isIP } from "node:net";

import { credentials, Metadata, type ChannelCredentials, type ChannelOptions } from "@grpc/grpc-js";

/** TLS for the channel, as PEM contents (read them with `readFileSync`). */
export interface TlsOptions {
  /** The CA that signed the server's certificate (default: the system's roots). */
  ca?: Buffer | string;
  /** This client's certificate chain, for mutual TLS (with `key`). */
  cert?: Buffer | string;
  /** The client certificate's private key. */
  key?: Buffer | string;
  /** The name to check the server's certificate against, when it is not the target's host. */
  serverName?: string;
}

export interface SecurityOptions {
  /** Ready channel credentials (wins over `tls`). */
  credentials?: ChannelCredentials;
  /** TLS options, or `true` for TLS with the system's roots. */
  tls?: TlsOptions | true;
  /** A bearer token sent with every call (already resolved: see `resolveToken`). */
  token?: string;
  /** Send the token over plaintext to a target beyond loopback too. */
  allowInsecureToken?: boolean;
}

/** What a channel to one target carries. */
export interface Security {
  credentials: ChannelCredentials;
  /** Metadata every call adds (the token, over plaintext). */
  metadata: Record<string, string>;
  channelOptions: Partial<ChannelOptions>;
}

/** Read for the token when the client is given none (`token: ""` reads nothing). */
export const TOKEN_ENV = "AGENTD_TOKEN";

/** `token`, or `$AGENTD_TOKEN` when it is undefined; undefined when neither is set. */
export function resolveToken(token: string | undefined): string | undefined {
  const value = (token ?? process.env[TOKEN_ENV] ?? "").trim();
  return value === "" ? undefined : value;
}

function pem(value: Buffer | string | undefined): Buffer | null {
  if (value === undefined) return null;
  return typeof value === "string" ? Buffer.from(value) : value;
}

/** TLS channel credentials (mutual TLS when `cert` and `key` are given). */
export function tlsCredentials(tls: TlsOptions | true = {}): ChannelCredentials {
  const options = tls === true ? {} : tls;
  if ((options.cert === undefined) !== (options.key === undefined)) {
    throw new TypeError("tls: cert and key go together (mutual TLS)");
  }
  return credentials.createSsl(pem(options.ca), pem(options.key), pem(options.cert));
}

/** Call credentials sending `authorization: Bearer <token>`. */
export function tokenCredentials(token: string) {
  return credentials.createFromMetadataGenerator((_params, callback) => {
    const md = new Metadata();
    md.set("authorization", `Bearer ${token}`);
    callback(null, md);
  });
}

function host(address: string): string {
  if (address.startsWith("[")) return address.slice(1, address.indexOf("]"));
  if ((address.match(/:/g) ?? []).length > 1) return address; // a bare IPv6 address
  const colon = address.lastIndexOf(":");
  return colon < 0 ? address : address.slice(0, colon);
}

function loopbackHost(name: string): boolean {
  const lower = name.toLowerCase();
  if (lower === "localhost" || lower === "ip6-localhost") return true;
  if (isIP(name) === 4) return name.startsWith("127.");
  if (isIP(name) === 6) return name === "::1" || name === "0:0:0:0:0:0:0:1";
  return false;
}

/**
 * Whether every address `target` names is on this machine: localhost,
 * 127.0.0.0/8, ::1 or a unix socket (with or without a gRPC scheme, and for
 * `ipv4:a,b` lists, every one).
 */
export function isLoopback(target: string): boolean {
  if (target.startsWith("unix:") || target.startsWith("unix-abstract:")) return true;
  let rest = target;
  for (const scheme of ["dns:///", "dns:", "ipv4:", "ipv6:", "passthrough:///"]) {
    if (rest.startsWith(scheme)) {
      rest = rest.slice(scheme.length);
      break;
    }
  }
  const hosts = rest
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map(host);
  return hosts.length > 0 && hosts.every(loopbackHost);
}

/** The credentials, metadata and channel options of a channel to `target`. */
export function channelSecurity(target: string, options: SecurityOptions): Security {
  const channelOptions: Partial<ChannelOptions> = {};
  let channel: ChannelCredentials;
  if (options.credentials !== undefined) {
    channel = options.credentials;
  } else if (options.tls !== undefined) {
    channel = tlsCredentials(options.tls);
    if (options.tls !== true && options.tls.serverName !== undefined) {
      channelOptions["grpc.ssl_target_name_override"] = options.tls.serverName;
    }
  } else {
    channel = credentials.createInsecure();
  }
  const token = options.token?.trim();
  if (!token) {
    return { credentials: channel, metadata: {}, channelOptions };
  }
  if (channel._isSecure()) {
    return {
      credentials: credentials.combineChannelCredentials(channel, tokenCredentials(token)),
      metadata: {},
      channelOptions,
    };
  }
  if (!options.allowInsecureToken && !isLoopback(target)) {
    throw new TypeError(
      `a token over plaintext to ${target} would cross the network in clear: ` +
        "connect with tls: { ca, cert, key }, or set allowInsecureToken",
    );
  }
  return { credentials: channel, metadata: { authorization: `Bearer ${token}` }, channelOptions };
}
