// Typed errors: every failed call surfaces as an AgentdError carrying the gRPC
// status code and the google.rpc.Status details agentd sends in the
// `grpc-status-details-bin` trailer (one ErrorInfo, and a BadRequest with one
// field violation per problem for invalid requests; a RetryInfo delay when the
// call may be tried again later). UNAUTHENTICATED, PERMISSION_DENIED and
// RESOURCE_EXHAUSTED are subclasses, to catch on their own.

import { Metadata, status as Status, type ServiceError } from "@grpc/grpc-js";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { google } from "@agentd/proto";

/** The trailer that carries a serialized google.rpc.Status. */
export const STATUS_DETAILS_KEY = "grpc-status-details-bin";

/** One `google.rpc.BadRequest.FieldViolation`. */
export interface FieldViolation {
  /** The field path as written in the proto, e.g. `options.memory.resource`. */
  field: string;
  description: string;
  reason: string;
}

/** The `google.rpc.ErrorInfo` detail. */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

export interface AgentdErrorInit {
  code: Status;
  message: string;
  reason?: string;
  domain?: string;
  metadata?: Record<string, string>;
  fieldViolations?: FieldViolation[];
  retryDelayMs?: number;
  trailers?: Metadata;
  cause?: unknown;
}

/** The name of a gRPC status code ("NOT_FOUND") for a number. */
export function statusName(code: number): string {
  return Status[code] ?? `CODE_${code}`;
}

/**
 * A failed agentd call.
 *
 * `code` is the gRPC status code (compare with `status.NOT_FOUND` from
 * `@grpc/grpc-js`, or use `codeName`), `reason` the contract's UPPER_SNAKE
 * reason from the ErrorInfo detail (`AGENT_NOT_FOUND`, `INVALID_REQUEST`,
 * ...), `metadata` the ErrorInfo metadata naming the object, and
 * `violations` maps each invalid field to its description.
 */
export class AgentdError extends Error {
  override readonly name: string = "AgentdError";
  readonly code: Status;
  /** The server's status message (without the "5 NOT_FOUND: " prefix). */
  readonly details: string;
  /** ErrorInfo reason; empty when the status carried no ErrorInfo. */
  readonly reason: string;
  /** ErrorInfo domain ("agentd"). */
  readonly domain: string;
  /** ErrorInfo metadata. */
  readonly metadata: Record<string, string>;
  /** BadRequest field violations in the server's order. */
  readonly fieldViolations: FieldViolation[];
  /** field → description (several descriptions of one field are joined with "; "). */
  readonly violations: Record<string, string>;
  /** How long to wait before trying again (the RetryInfo detail), in milliseconds; undefined when none was sent. */
  readonly retryDelayMs: number | undefined;
  /** The response trailers, when the error came from a call. */
  readonly trailers: Metadata | undefined;

  constructor(init: AgentdErrorInit) {
    const reason = init.reason ?? "";
    super(`${statusName(init.code)}${reason ? ` (${reason})` : ""}: ${init.message}`, { cause: init.cause });
    this.code = init.code;
    this.details = init.message;
    this.reason = reason;
    this.domain = init.domain ?? "";
    this.metadata = init.metadata ?? {};
    this.fieldViolations = init.fieldViolations ?? [];
    const violations: Record<string, string> = {};
    for (const v of this.fieldViolations) {
      violations[v.field] = v.field in violations ? `${violations[v.field]}; ${v.description}` : v.description;
    }
    this.violations = violations;
    this.retryDelayMs = init.retryDelayMs;
    this.trailers = init.trailers;
  }

  /** The status code's name, e.g. "NOT_FOUND". */
  get codeName(): string {
    return statusName(this.code);
  }

  /**
   * True for failures worth retrying as they are: UNAVAILABLE, or a
   * MODEL_ERROR whose metadata says `retryable`.
   */
  get retryable(): boolean {
    return this.code === Status.UNAVAILABLE || this.metadata["retryable"] === "true";
  }

  /** A decoded google.rpc.Status (e.g. a Connect `error` answer). */
  static fromStatus(rpcStatus: google.rpc.Status, trailers?: Metadata): AgentdError {
    const init: AgentdErrorInit = { code: rpcStatus.code as Status, message: rpcStatus.message, trailers };
    applyDetails(init, rpcStatus.details);
    return errorFor(init);
  }

  /** Wraps anything a grpc-js call rejected with; AgentdErrors pass through. */
  static from(err: unknown): AgentdError {
    if (err instanceof AgentdError) {
      return err;
    }
    if (isServiceError(err)) {
      const init: AgentdErrorInit = {
        code: err.code,
        message: err.details ?? err.message,
        trailers: err.metadata,
        cause: err,
      };
      const raw = err.metadata?.get(STATUS_DETAILS_KEY) ?? [];
      for (const value of raw) {
        if (typeof value === "string") {
          continue;
        }
        try {
          const decoded = google.rpc.Status.decode(value);
          if (decoded.message && !init.message) {
            init.message = decoded.message;
          }
          applyDetails(init, decoded.details);
        } catch {
          // An undecodable trailer leaves the plain status.
        }
      }
      return errorFor(init);
    }
    const message = err instanceof Error ? err.message : String(err);
    return new AgentdError({ code: Status.UNKNOWN, message, cause: err });
  }
}

/**
 * UNAUTHENTICATED: no credentials, or none the server accepts (`reason`
 * TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED or CERTIFICATE_UNKNOWN).
 */
export class UnauthenticatedError extends AgentdError {
  override readonly name: string = "UnauthenticatedError";
}

/** PERMISSION_DENIED: a known caller whose role is too weak (ROLE_REQUIRED, `metadata.required_role`). */
export class PermissionDeniedError extends AgentdError {
  override readonly name: string = "PermissionDeniedError";
}

/**
 * RESOURCE_EXHAUSTED: over a limit: RATE_LIMITED (try again after
 * `retryDelayMs`), TOO_MANY_STREAMS, or a reply over the server's message size.
 */
export class ResourceExhaustedError extends AgentdError {
  override readonly name: string = "ResourceExhaustedError";
}

/** The AgentdError (or subclass, by code) of a status. */
function errorFor(init: AgentdErrorInit): AgentdError {
  switch (init.code) {
    case Status.UNAUTHENTICATED:
      return new UnauthenticatedError(init);
    case Status.PERMISSION_DENIED:
      return new PermissionDeniedError(init);
    case Status.RESOURCE_EXHAUSTED:
      return new ResourceExhaustedError(init);
    default:
      return new AgentdError(init);
  }
}

/** A grpc-js ServiceError (an Error with a numeric `code`). */
export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof Error && typeof (err as Partial<ServiceError>).code === "number";
}

/** The gRPC status code of any error (UNKNOWN when it has none). */
export function errorCode(err: unknown): Status {
  if (err instanceof AgentdError || isServiceError(err)) {
    return err.code;
  }
  return Status.UNKNOWN;
}

function typeName(typeUrl: string): string {
  return typeUrl.slice(typeUrl.lastIndexOf("/") + 1);
}

function applyDetails(init: AgentdErrorInit, details: google.protobuf.Any[]): void {
  for (const any of details) {
    switch (typeName(any.typeUrl)) {
      case "google.rpc.ErrorInfo": {
        const info = decodeErrorInfo(any.value);
        init.reason = info.reason;
        init.domain = info.domain;
        init.metadata = { ...init.metadata, ...info.metadata };
        break;
      }
      case "google.rpc.BadRequest":
        init.fieldViolations = [...(init.fieldViolations ?? []), ...decodeBadRequest(any.value)];
        break;
      case "google.rpc.RetryInfo":
        init.retryDelayMs = decodeRetryDelayMs(any.value);
        break;
      default:
        break;
    }
  }
}

/** Decodes a google.rpc.ErrorInfo {reason = 1, domain = 2, map<string,string> metadata = 3}. */
export function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const reader = new BinaryReader(bytes);
  const info: ErrorInfo = { reason: "", domain: "", metadata: {} };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 2) {
      info.reason = reader.string();
    } else if (field === 2 && wireType === 2) {
      info.domain = reader.string();
    } else if (field === 3 && wireType === 2) {
      const entry = new BinaryReader(reader.bytes());
      let key = "";
      let value = "";
      while (entry.pos < entry.len) {
        const [f, w] = entry.tag();
        if (f === 1 && w === 2) {
          key = entry.string();
        } else if (f === 2 && w === 2) {
          value = entry.string();
        } else {
          entry.skip(w);
        }
      }
      info.metadata[key] = value;
    } else {
      reader.skip(wireType);
    }
  }
  return info;
}

/** Decodes a google.rpc.BadRequest {repeated FieldViolation field_violations = 1}. */
export function decodeBadRequest(bytes: Uint8Array): FieldViolation[] {
  const reader = new BinaryReader(bytes);
  const out: FieldViolation[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 2) {
      const v = new BinaryReader(reader.bytes());
      const violation: FieldViolation = { field: "", description: "", reason: "" };
      while (v.pos < v.len) {
        const [f, w] = v.tag();
        if (f === 1 && w === 2) {
          violation.field = v.string();
        } else if (f === 2 && w === 2) {
          violation.description = v.string();
        } else if (f === 3 && w === 2) {
          violation.reason = v.string();
        } else {
          v.skip(w);
        }
      }
      out.push(violation);
    } else {
      reader.skip(wireType);
    }
  }
  return out;
}

/** Decodes a google.rpc.RetryInfo {google.protobuf.Duration retry_delay = 1} into milliseconds. */
export function decodeRetryDelayMs(bytes: Uint8Array): number {
  const reader = new BinaryReader(bytes);
  let ms = 0;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === 2) {
      const delay = google.protobuf.Duration.decode(reader.bytes());
      ms = delay.seconds * 1000 + delay.nanos / 1e6;
    } else {
      reader.skip(wireType);
    }
  }
  return ms;
}
