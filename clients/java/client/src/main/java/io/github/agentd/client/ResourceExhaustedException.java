package io.github.agentd.client;

/** RESOURCE_EXHAUSTED: over a limit (RATE_LIMITED with retryDelay(), TOO_MANY_STREAMS, a reply over the size limit). */
public final class ResourceExhaustedException extends AgentdException {
  private static final long serialVersionUID = 1L;

  ResourceExhaustedException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
