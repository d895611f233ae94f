package io.github.agentd.client;

/** NOT_FOUND: the agent, thread, run or notification does not exist (AGENT_NOT_FOUND, THREAD_NOT_FOUND, ...). */
public final class NotFoundException extends AgentdException {
  private static final long serialVersionUID = 1L;

  NotFoundException(Parts parts, Throwable cause) {
    super(parts, cause);
  }
}
