package io.github.agentd.client.processor;

import java.util.Map;

/** A tripwire a hook throws: agentd ends the run (or, with retry, retries the step with the reason). */
public final class AbortException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final boolean retry;
  private final transient Map<String, ?> metadata;

  public AbortException(String reason, boolean retry, Map<String, ?> metadata) {
    super(reason);
    this.retry = retry;
    this.metadata = metadata == null ? Map.of() : Map.copyOf(metadata);
  }

  public String reason() {
    return getMessage();
  }

  public boolean retry() {
    return retry;
  }

  public Map<String, ?> metadata() {
    return metadata;
  }
}
