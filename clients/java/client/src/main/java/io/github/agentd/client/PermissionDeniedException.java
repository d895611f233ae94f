package io.github.agentd.client;

/** PERMISSION_DENIED: a known caller whose role is too weak (ROLE_REQUIRED; metadata required_role). */
public final class PermissionDeniedException extends AgentdException {
  private static final long serialVersionUID = 1L;

  PermissionDeniedException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
