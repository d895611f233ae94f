package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.github.agentd.proto.v1.GenerateResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The client against a real agentd (the conformance config), run alone by {@code mvn test -Plive}:
 * AGENTD_ADDR names a plaintext server, AGENTD_SECURE_ADDR one with a token over TLS
 * (AGENTD_SECURE_CA its CA's PEM file), and AGENTD_TOKEN holds a writer's token for it.
 * tests/e2e/test_conformance_java.py starts the servers and sets them all.
 */
class LiveTest {
  private static String env(String name) {
    String value = System.getenv(name);
    if (value == null || value.isEmpty()) {
      fail(name + " is not set: LiveTest runs against the servers tests/e2e/test_conformance_java.py starts");
    }
    return value;
  }

  @Test
  void theTokenComesFromAgentdTokenWhenNoneIsGiven() {
    String addr = env("AGENTD_SECURE_ADDR");
    String ca = env("AGENTD_SECURE_CA");
    env(AgentdClient.TOKEN_ENV);
    try (AgentdClient client = AgentdClient.builder(addr).tls(Tls.ca(ca)).build()) {
      assertEquals("from the environment", client.generate("echo", "from the environment").getText());
    }
    try (AgentdClient anonymous = AgentdClient.builder(addr).tls(Tls.ca(ca)).token("").build()) {
      UnauthenticatedException e =
          assertThrows(UnauthenticatedException.class, () -> anonymous.generate("echo", "no token"));
      assertEquals(Reasons.TOKEN_MISSING, e.reason());
    }
    // The caller's own authorization entry replaces the environment's token: this one is unknown.
    try (AgentdClient other = AgentdClient.builder(addr).tls(Tls.ca(ca))
        .metadata("authorization", "Bearer agentd_unknown").build()) {
      UnauthenticatedException e = assertThrows(UnauthenticatedException.class, () -> other.generate("echo", "x"));
      assertEquals(Reasons.TOKEN_INVALID, e.reason());
    }
  }

  @Test
  void aFallbackStrategyAnswersWithTheFallbackValue() {
    try (AgentdClient client = AgentdClient.builder(env("AGENTD_ADDR")).insecure().token("").build()) {
      // The local model answers "Paris": not JSON, let alone a city object.
      GenerateResponse resp = client.generate("echo", "where?", RunOptions.builder()
          .providerOptions(Map.of("local", Map.of("script", List.of(Map.of("text", "Paris")))))
          .structuredOutput(StructuredOutput.builder(Map.of(
                  "type", "object",
                  "properties", Map.of("city", Map.of("type", "string")),
                  "required", List.of("city")))
              .name("city")
              .errorStrategy(StructuredOutput.ErrorStrategy.FALLBACK)
              .fallbackValue(Map.of("city", "unknown"))
              .build())
          .build());
      assertEquals(Map.of("city", "unknown"), Values.toJava(resp.getObject()));
      assertTrue(resp.getWarningsList().stream().anyMatch(w -> w.endsWith("the fallback value was used")),
          resp.getWarningsList().toString());

      // The same answer with the default strategy fails the run.
      FailedPreconditionException e = assertThrows(FailedPreconditionException.class, () ->
          client.generate("echo", "where?", RunOptions.builder()
              .providerOptions(Map.of("local", Map.of("script", List.of(Map.of("text", "Paris")))))
              .structuredOutput("city", Map.of("type", "object", "required", List.of("city")))
              .build()));
      assertEquals(Reasons.STRUCTURED_OUTPUT_INVALID, e.reason());
      assertFalse(e.getMessage().contains("Paris"), e.getMessage());

      // FALLBACK without a fallback value: the server names the field.
      InvalidArgumentException invalid = assertThrows(InvalidArgumentException.class, () ->
          client.generate("echo", "where?", RunOptions.builder()
              .structuredOutput(StructuredOutput.builder(Map.of("type", "object"))
                  .errorStrategy(StructuredOutput.ErrorStrategy.FALLBACK).build())
              .build()));
      assertTrue(invalid.violations().containsKey("options.structured_output.fallback_value"),
          invalid.violations().toString());
    }
  }
}
