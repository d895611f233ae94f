package io.github.agentd.client;

/** The ErrorInfo reasons of agentd's contract (see protos/agentd/v1/README.md). */
public final class Reasons {
  private Reasons() {}

  public static final String INVALID_REQUEST = "INVALID_REQUEST";
  public static final String MALFORMED_REQUEST = "MALFORMED_REQUEST";
  public static final String RESERVED_CONTEXT_KEY = "RESERVED_CONTEXT_KEY";
  public static final String CLIENT_TOOLS_REQUIRE_THREAD = "CLIENT_TOOLS_REQUIRE_THREAD";
  public static final String KEEP_RUNNING_REQUIRES_THREAD = "KEEP_RUNNING_REQUIRES_THREAD";
  public static final String MEMORY_IDS_REQUIRED = "MEMORY_IDS_REQUIRED";
  public static final String UNKNOWN_PROCESSOR = "UNKNOWN_PROCESSOR";
  public static final String UNKNOWN_STEP_FUNCTION = "UNKNOWN_STEP_FUNCTION";
  public static final String INVALID_MODEL = "INVALID_MODEL";
  public static final String THREAD_RESOURCE_MISMATCH = "THREAD_RESOURCE_MISMATCH";
  public static final String REQUEST_CONTEXT_INVALID = "REQUEST_CONTEXT_INVALID";
  public static final String UNKNOWN_SIGNAL_TYPE = "UNKNOWN_SIGNAL_TYPE";
  public static final String AGENT_NOT_FOUND = "AGENT_NOT_FOUND";
  public static final String THREAD_NOT_FOUND = "THREAD_NOT_FOUND";
  public static final String RUN_NOT_FOUND = "RUN_NOT_FOUND";
  public static final String NOTIFICATION_NOT_FOUND = "NOTIFICATION_NOT_FOUND";
  public static final String THREAD_ALREADY_EXISTS = "THREAD_ALREADY_EXISTS";
  public static final String RESUME_OFFSET_EXPIRED = "RESUME_OFFSET_EXPIRED";
  public static final String MODEL_ERROR = "MODEL_ERROR";
  public static final String STRUCTURED_OUTPUT_INVALID = "STRUCTURED_OUTPUT_INVALID";
  public static final String CREDENTIALS_MISSING = "CREDENTIALS_MISSING";
  public static final String PROVIDER_UNAVAILABLE = "PROVIDER_UNAVAILABLE";
  public static final String ABORTED = "ABORTED";
  public static final String CACHE_UNAVAILABLE = "CACHE_UNAVAILABLE";
  public static final String STORAGE_UNAVAILABLE = "STORAGE_UNAVAILABLE";
  public static final String SERVER_SHUTDOWN = "SERVER_SHUTDOWN";
  public static final String NOT_IMPLEMENTED = "NOT_IMPLEMENTED";
  public static final String UNAUTHENTICATED = "UNAUTHENTICATED";
  public static final String PERMISSION_DENIED = "PERMISSION_DENIED";
  public static final String INTERNAL = "INTERNAL";
  public static final String TOKEN_MISSING = "TOKEN_MISSING";
  public static final String TOKEN_INVALID = "TOKEN_INVALID";
  public static final String TOKEN_EXPIRED = "TOKEN_EXPIRED";
  public static final String CERTIFICATE_UNKNOWN = "CERTIFICATE_UNKNOWN";
  public static final String ROLE_REQUIRED = "ROLE_REQUIRED";
  public static final String RATE_LIMITED = "RATE_LIMITED";
  public static final String TOO_MANY_STREAMS = "TOO_MANY_STREAMS";
  public static final String CACHE_ENTRY_TOO_LARGE = "CACHE_ENTRY_TOO_LARGE";
  public static final String CLUSTER_UNAVAILABLE = "CLUSTER_UNAVAILABLE";
  public static final String COORDINATION_UNAVAILABLE = "COORDINATION_UNAVAILABLE";
  public static final String EDITOR_FIELD_LOCKED = "EDITOR_FIELD_LOCKED";
  public static final String NOTIFICATIONS_UNAVAILABLE = "NOTIFICATIONS_UNAVAILABLE";
  public static final String NOTIFICATION_ALREADY_EXISTS = "NOTIFICATION_ALREADY_EXISTS";
  public static final String OVERRIDES_VERSION_NOT_FOUND = "OVERRIDES_VERSION_NOT_FOUND";
  public static final String PROCESSOR_UNAVAILABLE = "PROCESSOR_UNAVAILABLE";
  public static final String PROCESSOR_UNKNOWN_HOOK = "PROCESSOR_UNKNOWN_HOOK";
  public static final String REMOTE_TARGET_NOT_ALLOWED = "REMOTE_TARGET_NOT_ALLOWED";
  public static final String REPLICA_UNREACHABLE = "REPLICA_UNREACHABLE";
  public static final String RESPONSE_TOO_LARGE = "RESPONSE_TOO_LARGE";
  public static final String STREAM_NOT_OPEN = "STREAM_NOT_OPEN";
  public static final String THREAD_BUSY = "THREAD_BUSY";
  public static final String TOOL_CALL_NOT_FOUND = "TOOL_CALL_NOT_FOUND";
  public static final String DEFAULT_DEADLINE_EXCEEDED = "DEFAULT_DEADLINE_EXCEEDED";
  public static final String WORKFLOW_INVALID = "WORKFLOW_INVALID";
}
