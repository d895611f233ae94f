package io.github.agentd.client;

import com.google.protobuf.Value;
import io.github.agentd.proto.v1.ClientTool;
import io.github.agentd.proto.v1.ResumePoint;
import io.github.agentd.proto.v1.ThreadSnapshot;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/** Options of {@code connect}: client tools, the options of the runs it wakes, resume, reconnection. */
public final class SessionOptions {
  public static final SessionOptions DEFAULT = builder().build();

  /** A client tool's implementation: the call's arguments in, a JSON-like result out. */
  @FunctionalInterface
  public interface ToolHandler {
    /** The tool's result (see {@link Values#value}); a thrown exception is an error result. */
    Object call(Value args) throws Exception;
  }

  final Map<String, ToolHandler> tools;
  final List<ClientTool> toolSpecs;
  final RunOptions runOptions;
  final ResumePoint resume;
  final List<String> hideSignals;
  final SubscribeOptions.Reconnect reconnect;
  final Consumer<ThreadSnapshot> onSnapshot;
  final BiConsumer<String, Throwable> onToolError;

  private SessionOptions(Builder b) {
    tools = Map.copyOf(b.tools);
    toolSpecs = List.copyOf(b.toolSpecs);
    runOptions = b.runOptions;
    resume = b.resume;
    hideSignals = List.copyOf(b.hideSignals);
    reconnect = b.reconnect;
    onSnapshot = b.onSnapshot;
    onToolError = b.onToolError;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builds SessionOptions. */
  public static final class Builder {
    private final Map<String, ToolHandler> tools = new LinkedHashMap<>();
    private final List<ClientTool> toolSpecs = new ArrayList<>();
    private RunOptions runOptions = RunOptions.NONE;
    private ResumePoint resume;
    private List<String> hideSignals = List.of();
    private SubscribeOptions.Reconnect reconnect = SubscribeOptions.Reconnect.DEFAULT;
    private Consumer<ThreadSnapshot> onSnapshot;
    private BiConsumer<String, Throwable> onToolError;

    private Builder() {}

    /**
     * Declares the client tool {@code name} (no description or schema) for the runs the session
     * wakes, answered by a local function.
     */
    public Builder tool(String name, ToolHandler handler) {
      return tool(ClientTool.newBuilder().setName(name).build(), handler);
    }

    /** Declares a client tool for the runs the session wakes, answered by a local function. */
    public Builder tool(ClientTool spec, ToolHandler handler) {
      toolSpecs.add(spec);
      tools.put(spec.getName(), handler);
      return this;
    }

    /** The options of the runs the session's sends wake. */
    public Builder runOptions(RunOptions options) {
      runOptions = options;
      return this;
    }

    public Builder resume(String logEpoch, long afterOffset) {
      resume = ResumePoint.newBuilder().setLogEpoch(logEpoch).setAfterOffset(afterOffset).build();
      return this;
    }

    public Builder hideSignals(String... types) {
      hideSignals = List.of(types);
      return this;
    }

    public Builder reconnect(int attempts, Duration minBackoff, Duration maxBackoff) {
      reconnect = new SubscribeOptions.Reconnect(attempts, minBackoff, maxBackoff);
      return this;
    }

    public Builder noReconnect() {
      reconnect = new SubscribeOptions.Reconnect(0, Duration.ZERO, Duration.ZERO);
      return this;
    }

    public Builder onSnapshot(Consumer<ThreadSnapshot> handler) {
      onSnapshot = handler;
      return this;
    }

    /** Told when a tool's result could not be sent (the tool's name, the error). */
    public Builder onToolError(BiConsumer<String, Throwable> handler) {
      onToolError = handler;
      return this;
    }

    public SessionOptions build() {
      return new SessionOptions(this);
    }
  }
}
