package io.github.agentd.client;

import io.github.agentd.proto.v1.StructuredOutputErrorStrategy;
import java.util.Map;

/**
 * A run's structured output described in full ({@link RunOptions.Builder#structuredOutput(StructuredOutput)}):
 * the JSON Schema the answer must match, and what the run does when it does not.
 *
 * <pre>{@code
 * StructuredOutput city = StructuredOutput.builder(Map.of(
 *         "type", "object", "properties", Map.of("city", Map.of("type", "string"))))
 *     .name("city")
 *     .errorStrategy(StructuredOutput.ErrorStrategy.FALLBACK)
 *     .fallbackValue(Map.of("city", "unknown"))
 *     .build();
 * GenerateResponse resp = client.generate("chat", "where?", RunOptions.builder().structuredOutput(city).build());
 * Object object = Values.toJava(resp.getObject());
 * }</pre>
 */
public final class StructuredOutput {
  /** What a run does when its answer is not JSON matching the schema (or was cut short). */
  public enum ErrorStrategy {
    /**
     * The default: the run ends with an error chunk, reason {@code STRUCTURED_OUTPUT_INVALID}
     * ({@code generate} throws a {@link FailedPreconditionException}).
     */
    STRICT(StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT),
    /** The run ends normally with no object and a warning. */
    WARN(StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN),
    /** The run ends normally with the fallback value as its object, and a warning. */
    FALLBACK(StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK);

    private final StructuredOutputErrorStrategy proto;

    ErrorStrategy(StructuredOutputErrorStrategy proto) {
      this.proto = proto;
    }

    /** The contract's value. */
    public StructuredOutputErrorStrategy proto() {
      return proto;
    }
  }

  private final io.github.agentd.proto.v1.StructuredOutput proto;

  private StructuredOutput(io.github.agentd.proto.v1.StructuredOutput proto) {
    this.proto = proto;
  }

  /**
   * Structured output against a JSON Schema (a Map with String keys; see {@link Values#value}).
   *
   * @throws IllegalArgumentException when the schema is null or not JSON-like
   */
  public static Builder builder(Map<String, ?> schema) {
    return new Builder(schema);
  }

  /** The contract's message, as {@code ExecutionOptions.structured_output}. */
  public io.github.agentd.proto.v1.StructuredOutput proto() {
    return proto;
  }

  @Override
  public String toString() {
    return "StructuredOutput{" + proto.toString().strip().replace("\n", ", ") + "}";
  }

  /** Builds a StructuredOutput; only the schema is required. */
  public static final class Builder {
    private final io.github.agentd.proto.v1.StructuredOutput.Builder proto =
        io.github.agentd.proto.v1.StructuredOutput.newBuilder();

    private Builder(Map<String, ?> schema) {
      if (schema == null) {
        throw new IllegalArgumentException("agentd: structured output needs a schema");
      }
      proto.setSchema(Values.struct(schema));
      proto.setErrorStrategy(ErrorStrategy.STRICT.proto());
    }

    /** The schema's name, as the model is told it. */
    public Builder name(String name) {
      proto.setName(orEmpty(name));
      return this;
    }

    /** What the object is, as the model is told it. */
    public Builder description(String description) {
      proto.setDescription(orEmpty(description));
      return this;
    }

    /** What the run does with an answer that does not match (default {@link ErrorStrategy#STRICT}). */
    public Builder errorStrategy(ErrorStrategy strategy) {
      if (strategy == null) {
        throw new IllegalArgumentException("agentd: structured output error strategy is STRICT, WARN or FALLBACK, not null");
      }
      proto.setErrorStrategy(strategy.proto());
      return this;
    }

    /**
     * The object a {@link ErrorStrategy#FALLBACK} run answers with instead: a JSON-like Java
     * value (Map, List, String, Number, Boolean, or null for a JSON null; see {@link
     * Values#value}). Required with FALLBACK, refused by the server with the other strategies.
     *
     * @throws IllegalArgumentException when the value is not JSON-like
     */
    public Builder fallbackValue(Object value) {
      proto.setFallbackValue(Values.value(value));
      return this;
    }

    /**
     * A separate structuring model ({@code "provider/model"}): the agent's model answers in text,
     * then this one turns the answer into the object.
     */
    public Builder model(String model) {
      proto.setModel(orEmpty(model));
      return this;
    }

    /** The structuring model's system prompt, in place of the default (needs {@link #model}). */
    public Builder instructions(String instructions) {
      proto.setInstructions(orEmpty(instructions));
      return this;
    }

    public StructuredOutput build() {
      return new StructuredOutput(proto.build());
    }

    private static String orEmpty(String s) {
      return s == null ? "" : s;
    }
  }
}
