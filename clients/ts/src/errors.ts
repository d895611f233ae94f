// Typed errors: every failed call surfaces as an AgentdError carrying the gRPC
// status code and the google.rpc.Status details agentd sends in the
// `grpc-status-details-bin` trailer (one ErrorInfo, and a BadRequest with one
// field violation per problem for invalid requests).

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
  override readonly name = "AgentdError";
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
    return new AgentdError(init);
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
      return new AgentdError(init);
    }
    const message = err instanceof Error ? err.message : String(err);
    return new AgentdError({ code: Status.UNKNOWN, message, cause: err });
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
