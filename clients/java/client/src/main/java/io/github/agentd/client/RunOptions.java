package io.github.agentd.client;

import io.github.agentd.proto.v1.ClientTool;
import io.github.agentd.proto.v1.ExecutionOptions;
import io.github.agentd.proto.v1.MemoryOptions;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.ModelSettings;
import io.github.agentd.proto.v1.ResponseCacheOptions;
import io.github.agentd.proto.v1.ScorerOptions;
import io.github.agentd.proto.v1.ScoringMode;
import io.github.agentd.proto.v1.ThreadInput;
import io.github.agentd.proto.v1.ToolNames;
import io.grpc.Metadata;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Options of one run ({@code generate}, {@code stream}, and the runs a send wakes): the
 * request's {@code ExecutionOptions}, input messages, {@code keep_running}, and this call's
 * metadata and deadline.
 *
 * <pre>{@code
 * client.generate("chat", "what did I say?", RunOptions.builder()
 *     .memory("user-42", "thread-1")
 *     .requestContext(Map.of("locale", "en"))
 *     .cacheScope("tenant-a")
 *     .maxSteps(3)
 *     .build());
 * }</pre>
 */
public final class RunOptions {
  /** No options: the agent's defaults. */
  public static final RunOptions NONE = builder().build();

  final ExecutionOptions execution;
  final List<Message> messages;
  final boolean keepRunning;
  final Metadata metadata;
  final Duration timeout;

  private RunOptions(Builder b) {
    this.execution = b.execution.build();
    this.messages = List.copyOf(b.messages);
    this.keepRunning = b.keepRunning;
    this.metadata = b.metadata;
    this.timeout = b.timeout;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The execution options these set. */
  public ExecutionOptions executionOptions() {
    return execution;
  }

  /** Builds RunOptions. */
  public static final class Builder {
    private final ExecutionOptions.Builder execution = ExecutionOptions.newBuilder();
    private final List<Message> messages = new ArrayList<>();
    private boolean keepRunning;
    private final Metadata metadata = new Metadata();
    private Duration timeout;

    private Builder() {}

    /** Binds the run to a thread of a resource (options.memory). */
    public Builder memory(String resource, String thread) {
      execution.setMemory(MemoryOptions.newBuilder().setResource(resource).setThreadId(thread));
      return this;
    }

    /** Binds the run to a thread created with these fields when missing. */
    public Builder memory(String resource, ThreadInput thread) {
      execution.setMemory(MemoryOptions.newBuilder().setResource(resource).setThreadObject(thread));
      return this;
    }

    /** The response cache key (options.response_cache.key). */
    public Builder cacheKey(String key) {
      execution.setResponseCache(execution.getResponseCacheBuilder().setKey(key));
      return this;
    }

    /** The response cache scope. */
    public Builder cacheScope(String scope) {
      execution.setResponseCache(execution.getResponseCacheBuilder().setScope(scope));
      return this;
    }

    /** Caches without a scope (shared by every caller of the agent). */
    public Builder noCacheScope() {
      execution.setResponseCache(
          execution.getResponseCacheBuilder().setNoScope(com.google.protobuf.Empty.getDefaultInstance()));
      return this;
    }

    /** Skips the cached answer and refreshes it. */
    public Builder cacheBust() {
      ResponseCacheOptions.Builder cache = execution.getResponseCacheBuilder().setBust(true);
      execution.setResponseCache(cache);
      return this;
    }

    /** The request context the processors and tools see (options.request_context). */
    public Builder requestContext(Map<String, ?> values) {
      execution.setRequestContext(Values.struct(values));
      return this;
    }

    /**
     * The agent's live scorers for this run: {@code SCORING_MODE_OFF} (none scores it) or
     * {@code SCORING_MODE_FORCE} (every one does, whatever its sampling rate).
     */
    public Builder scoring(ScoringMode mode) {
      execution.setScorers(ScorerOptions.newBuilder().setMode(mode));
      return this;
    }

    /** An aborted thread-bound run saves its input and the text it streamed so far. */
    public Builder persistPartialOnAbort() {
      execution.setPersistPartialOnAbort(true);
      return this;
    }

    public Builder maxSteps(int n) {
      execution.setMaxSteps(n);
      return this;
    }

    /** Provider-namespaced options of the model call, passed through. */
    public Builder providerOptions(Map<String, ?> options) {
      execution.setProviderOptions(Values.struct(options));
      return this;
    }

    /** Declares a tool the caller answers (with {@link Session} client tools). */
    public Builder clientTool(String name, String description, Map<String, ?> inputSchema) {
      ClientTool.Builder tool = ClientTool.newBuilder().setName(name).setDescription(description);
      if (inputSchema != null) {
        tool.setInputSchema(Values.struct(inputSchema));
      }
      execution.addClientTools(tool);
      return this;
    }

    public Builder clientTools(List<ClientTool> tools) {
      execution.addAllClientTools(tools);
      return this;
    }

    public Builder activeTools(String... names) {
      execution.setActiveTools(ToolNames.newBuilder().addAllNames(List.of(names)));
      return this;
    }

    public Builder temperature(double t) {
      execution.setModelSettings(modelSettings().setTemperature(t));
      return this;
    }

    public Builder maxOutputTokens(int n) {
      execution.setModelSettings(modelSettings().setMaxOutputTokens(n));
      return this;
    }

    private ModelSettings.Builder modelSettings() {
      return execution.getModelSettingsBuilder();
    }

    /**
     * Structured output against a JSON schema: the parsed object is {@code
     * GenerateResponse.getObject()} (and the finish chunk's). An answer that does not match fails
     * the run ({@link StructuredOutput.ErrorStrategy#STRICT}); see {@link
     * #structuredOutput(StructuredOutput)} for the other strategies and a structuring model.
     *
     * @throws IllegalArgumentException when the schema is null or not JSON-like
     */
    public Builder structuredOutput(String name, Map<String, ?> schema) {
      return structuredOutput(StructuredOutput.builder(schema).name(name).build());
    }

    /**
     * Structured output described in full: description, error strategy, fallback value, a
     * structuring model and its instructions.
     */
    public Builder structuredOutput(StructuredOutput output) {
      if (output == null) {
        throw new IllegalArgumentException("agentd: structuredOutput takes a StructuredOutput, not null");
      }
      execution.setStructuredOutput(output.proto());
      return this;
    }

    /** Anything else of the execution options (processor lists, tool choice, ...). */
    public Builder executionOptions(Consumer<ExecutionOptions.Builder> edit) {
      edit.accept(execution);
      return this;
    }

    /** The input as messages; the text argument, when not empty, is added as a last user message. */
    public Builder messages(Message... input) {
      messages.addAll(List.of(input));
      return this;
    }

    /** {@code keep_running} of Stream: the run goes on when the caller goes away. */
    public Builder keepRunning() {
      keepRunning = true;
      return this;
    }

    /** Metadata sent with this call only. */
    public Builder callMetadata(String key, String value) {
      metadata.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);
      return this;
    }

    /** This call's deadline (unary calls default to the client's timeout). */
    public Builder timeout(Duration d) {
      timeout = d;
      return this;
    }

    public RunOptions build() {
      return new RunOptions(this);
    }
  }
}
