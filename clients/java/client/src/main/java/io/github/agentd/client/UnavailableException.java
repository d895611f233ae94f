package io.github.agentd.client;

/** UNAVAILABLE: the server or a backend is down or shutting down; worth a retry (retryDelay() when the server said). */
public final class UnavailableException extends AgentdException {
  private static final long serialVersionUID = 1L;

  UnavailableException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
