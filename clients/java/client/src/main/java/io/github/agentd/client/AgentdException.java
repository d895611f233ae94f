package io.github.agentd.client;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.ErrorInfo;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * A failed agentd call: the gRPC status with the details agentd attaches (one {@code ErrorInfo},
 * a {@code BadRequest} for invalid requests, a {@code RetryInfo} when waiting helps). Every failed
 * call of this client throws one; the codes a caller handles on their own have a subclass:
 *
 * <pre>{@code
 * try {
 *   client.generate("no-such-agent", "x");
 * } catch (NotFoundException e) {
 *   e.reason();                 // "AGENT_NOT_FOUND"
 *   e.metadata().get("agent_id");
 * } catch (ResourceExhaustedException e) {
 *   e.retryDelay().ifPresent(...);  // RATE_LIMITED
 * }
 * }</pre>
 */
public class AgentdException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** The ErrorInfo domain of agentd's errors. */
  public static final String DOMAIN = "agentd";

  /** One google.rpc.BadRequest field violation. */
  public record FieldViolation(String field, String description) {}

  private final Status.Code code;
  private final String reason;
  private final String domain;
  private final Map<String, String> metadata;
  private final List<FieldViolation> fieldViolations;
  private final Duration retryDelay;

  protected AgentdException(Parts parts, Throwable cause) {
    super(parts.code + (parts.reason.isEmpty() ? "" : " " + parts.reason) + ": " + parts.message, cause);
    this.code = parts.code;
    this.reason = parts.reason;
    this.domain = parts.domain;
    this.metadata = Collections.unmodifiableMap(parts.metadata);
    this.fieldViolations = List.copyOf(parts.violations);
    this.retryDelay = parts.retryDelay;
  }

  /** The gRPC status code. */
  public Status.Code code() {
    return code;
  }

  /** The gRPC code's name, e.g. {@code "NOT_FOUND"}. */
  public String codeName() {
    return code.name();
  }

  /** The ErrorInfo reason (UPPER_SNAKE), empty when the status carried none (a transport failure). */
  public String reason() {
    return reason;
  }

  /** The ErrorInfo domain ({@code "agentd"}). */
  public String domain() {
    return domain;
  }

  /** The ErrorInfo metadata: what the error is about (agent_id, thread_id, required_role, ...). */
  public Map<String, String> metadata() {
    return metadata;
  }

  /** The BadRequest field violations, in the server's order. */
  public List<FieldViolation> fieldViolations() {
    return fieldViolations;
  }

  /** Each invalid field path mapped to its description (several joined with "; "). */
  public Map<String, String> violations() {
    Map<String, String> out = new LinkedHashMap<>();
    for (FieldViolation v : fieldViolations) {
      out.merge(v.field(), v.description(), (a, b) -> a + "; " + b);
    }
    return out;
  }

  /** How long to wait before trying again (the RetryInfo detail), if the server said. */
  public java.util.Optional<Duration> retryDelay() {
    return java.util.Optional.ofNullable(retryDelay);
  }

  /** UNAVAILABLE, or a MODEL_ERROR whose metadata says retryable. */
  public boolean retryable() {
    return code == Status.Code.UNAVAILABLE
        || (Reasons.MODEL_ERROR.equals(reason) && "true".equalsIgnoreCase(metadata.get("retryable")));
  }

  /** The status message without the code and reason. */
  public String statusMessage() {
    String m = getMessage();
    return m.substring(m.indexOf(": ") + 2);
  }

  /**
   * This client's exception for any failure: a gRPC status exception (with its details), a
   * failed future's cause, or an AgentdException itself.
   */
  public static AgentdException from(Throwable error) {
    Throwable t = error;
    while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
      t = t.getCause();
    }
    if (t instanceof AgentdException e) {
      return e;
    }
    if (t instanceof StatusRuntimeException || t instanceof StatusException) {
      Status status = Status.fromThrowable(t);
      com.google.rpc.Status details = StatusProto.fromThrowable(t);
      return of(status.getCode(), status.getDescription(), details, t);
    }
    if (t instanceof CancellationException) {
      return of(Status.Code.CANCELLED, t.getMessage(), null, t);
    }
    if (t instanceof InterruptedException) {
      Thread.currentThread().interrupt();
      return of(Status.Code.CANCELLED, "interrupted", null, t);
    }
    return of(Status.Code.UNKNOWN, String.valueOf(t), null, t);
  }

  /** The exception of a google.rpc.Status (as Connect answers a send), or null for OK / none. */
  public static AgentdException fromStatus(com.google.rpc.Status status) {
    if (status == null || status.getCode() == 0) {
      return null;
    }
    return of(Status.fromCodeValue(status.getCode()).getCode(), status.getMessage(), status, null);
  }

  static AgentdException of(Status.Code code, String message, com.google.rpc.Status details, Throwable cause) {
    Parts parts = new Parts(code, message == null ? "" : message);
    if (details != null) {
      for (Any any : details.getDetailsList()) {
        try {
          if (any.is(ErrorInfo.class)) {
            ErrorInfo info = any.unpack(ErrorInfo.class);
            parts.reason = info.getReason();
            parts.domain = info.getDomain();
            parts.metadata.putAll(info.getMetadataMap());
          } else if (any.is(BadRequest.class)) {
            for (BadRequest.FieldViolation v : any.unpack(BadRequest.class).getFieldViolationsList()) {
              parts.violations.add(new FieldViolation(v.getField(), v.getDescription()));
            }
          } else if (any.is(RetryInfo.class)) {
            com.google.protobuf.Duration d = any.unpack(RetryInfo.class).getRetryDelay();
            parts.retryDelay = Duration.ofSeconds(d.getSeconds(), d.getNanos());
          }
        } catch (InvalidProtocolBufferException ignored) {
          // a detail that does not parse is left out; the code and message still tell
        }
      }
    }
    return switch (code) {
      case INVALID_ARGUMENT -> new InvalidArgumentException(parts, cause);
      case NOT_FOUND -> new NotFoundException(parts, cause);
      case FAILED_PRECONDITION -> new FailedPreconditionException(parts, cause);
      case UNAUTHENTICATED -> new UnauthenticatedException(parts, cause);
      case PERMISSION_DENIED -> new PermissionDeniedException(parts, cause);
      case RESOURCE_EXHAUSTED -> new ResourceExhaustedException(parts, cause);
      case UNAVAILABLE -> new UnavailableException(parts, cause);
      default -> new AgentdException(parts, cause);
    };
  }

  /** The fields of an exception, gathered before it is built. */
  protected static final class Parts {
    final Status.Code code;
    final String message;
    String reason = "";
    String domain = "";
    final Map<String, String> metadata = new LinkedHashMap<>();
    final List<FieldViolation> violations = new ArrayList<>();
    Duration retryDelay;

    Parts(Status.Code code, String message) {
      this.code = code;
      this.message = message;
    }
  }
}
