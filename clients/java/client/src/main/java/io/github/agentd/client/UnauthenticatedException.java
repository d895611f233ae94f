package io.github.agentd.client;

/** UNAUTHENTICATED: no credentials, or none the server accepts (TOKEN_MISSING, TOKEN_INVALID, TOKEN_EXPIRED, CERTIFICATE_UNKNOWN). */
public final class UnauthenticatedException extends AgentdException {
  private static final long serialVersionUID = 1L;

  UnauthenticatedException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
