package io.github.agentd.client;

/** FAILED_PRECONDITION: the thread is not in the state the call needs (THREAD_RESOURCE_MISMATCH, RESUME_OFFSET_EXPIRED, ...). */
public final class FailedPreconditionException extends AgentdException {
  private static final long serialVersionUID = 1L;

  FailedPreconditionException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
