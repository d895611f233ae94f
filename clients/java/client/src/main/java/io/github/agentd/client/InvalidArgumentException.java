package io.github.agentd.client;

/** INVALID_ARGUMENT: the request is invalid; see fieldViolations() (INVALID_REQUEST, MALFORMED_REQUEST, ...). */
public final class InvalidArgumentException extends AgentdException {
  private static final long serialVersionUID = 1L;

  InvalidArgumentException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
