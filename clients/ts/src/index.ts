// @agentd/client: an idiomatic TypeScript client for agentd.

export { AgentdClient } from "./client";
export type {
  AgentdClientOptions,
  GenerateOptions,
  ListMessagesOptions,
  SignalTargetLike,
  StreamOptions,
  SubscribeOptions,
} from "./client";
export {
  AgentdError,
  PermissionDeniedError,
  ResourceExhaustedError,
  STATUS_DETAILS_KEY,
  UnauthenticatedError,
  decodeBadRequest,
  decodeErrorInfo,
  decodeRetryDelayMs,
  errorCode,
  isServiceError,
  statusName,
} from "./errors";
export {
  TOKEN_ENV,
  channelSecurity,
  isLoopback,
  resolveToken,
  tlsCredentials,
  tokenCredentials,
} from "./credentials";
export type { Security, SecurityOptions, TlsOptions } from "./credentials";
export type { ErrorInfo, FieldViolation } from "./errors";
export { executionOptions } from "./options";
export type {
  CallOptions,
  ClientToolSpec,
  IfActiveOption,
  IfIdleOption,
  JsonObject,
  JsonValue,
  MemoryOption,
  MessageInputLike,
  MessageLike,
  ProcessorOption,
  ResponseCacheOption,
  Routing,
  RoutingAction,
  RunInput,
  RunOptions,
  SendOptions,
  StructuredOutputErrorStrategy,
  StructuredOutputOption,
  ToolChoiceOption,
} from "./options";
export { Session } from "./session";
export type { ConnectOptions, ToolCallInfo, ToolDefinition, ToolHandler } from "./session";
export { Paged, RunStream, Subscription, isTerminal } from "./streams";
export type { ReconnectPolicy, ResumeFrom } from "./streams";
export { activeTraceparent } from "./tracing";

// The generated contract, for message types and enums.
export { agentd, google } from "@agentd/proto";
export { status, credentials, Metadata } from "@grpc/grpc-js";

import type { agentd as proto } from "@agentd/proto";
export type Chunk = proto.v1.Chunk;
/** The payload kinds of a chunk ("textDelta", "finish", ...). */
export type ChunkKind = NonNullable<proto.v1.Chunk["payload"]>["$case"];
export type Message = proto.v1.Message;
export type Agent = proto.v1.Agent;
export type Thread = proto.v1.Thread;
export type ThreadSnapshot = proto.v1.ThreadSnapshot;
export type GenerateResponse = proto.v1.GenerateResponse;
export { ProcessorAbort, ProcessorRun, processorService, serveProcessor } from "./processor";
export type { ProcessorHooks } from "./processor";
