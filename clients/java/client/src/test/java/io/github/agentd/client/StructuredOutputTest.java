package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.NullValue;
import io.github.agentd.proto.v1.AgentServiceGrpc;
import io.github.agentd.proto.v1.GenerateRequest;
import io.github.agentd.proto.v1.GenerateResponse;
import io.github.agentd.proto.v1.StructuredOutputErrorStrategy;
import io.grpc.stub.StreamObserver;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** StructuredOutput carries every field of the contract's message, checked before any call. */
class StructuredOutputTest {
  private static final Map<String, Object> CITY = Map.of(
      "type", "object", "properties", Map.of("city", Map.of("type", "string")), "required", List.of("city"));

  /** Records each Generate request and answers with an empty response. */
  static final class Recorder extends AgentServiceGrpc.AgentServiceImplBase {
    final LinkedBlockingQueue<GenerateRequest> requests = new LinkedBlockingQueue<>();

    @Override
    public void generate(GenerateRequest req, StreamObserver<GenerateResponse> out) {
      requests.add(req);
      out.onNext(GenerateResponse.getDefaultInstance());
      out.onCompleted();
    }
  }

  @Test
  void everyFieldReachesTheServer() throws Exception {
    Recorder agents = new Recorder();
    try (FakeServer server = new FakeServer(agents); AgentdClient client = server.client()) {
      client.generate("a", "where?", RunOptions.builder().structuredOutput(StructuredOutput.builder(CITY)
          .name("city")
          .description("where the user is")
          .errorStrategy(StructuredOutput.ErrorStrategy.FALLBACK)
          .fallbackValue(Map.of("city", "unknown", "tries", 2, "sure", false, "aliases", List.of("?")))
          .model("openai/gpt-4o-mini")
          .instructions("Use the city's official name.")
          .build()).build());
      var got = agents.requests.poll(5, TimeUnit.SECONDS).getOptions().getStructuredOutput();
      assertEquals(Values.struct(CITY), got.getSchema());
      assertEquals("city", got.getName());
      assertEquals("where the user is", got.getDescription());
      assertEquals(StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK, got.getErrorStrategy());
      assertEquals(Map.of("city", "unknown", "tries", 2.0, "sure", false, "aliases", List.of("?")),
          Values.toJava(got.getFallbackValue()));
      assertEquals("openai/gpt-4o-mini", got.getModel());
      assertEquals("Use the city's official name.", got.getInstructions());
    }
  }

  @Test
  void theStrategyDefaultsToStrictAndNoFallbackValueIsSent() {
    var got = RunOptions.builder().structuredOutput("city", CITY).build().executionOptions().getStructuredOutput();
    assertEquals(StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_STRICT, got.getErrorStrategy());
    assertEquals("city", got.getName());
    assertFalse(got.hasFallbackValue());
    assertEquals("", got.getModel());

    var warn = StructuredOutput.builder(CITY).errorStrategy(StructuredOutput.ErrorStrategy.WARN).build().proto();
    assertEquals(StructuredOutputErrorStrategy.STRUCTURED_OUTPUT_ERROR_STRATEGY_WARN, warn.getErrorStrategy());
    assertEquals(List.of("STRICT", "WARN", "FALLBACK"),
        Arrays.stream(StructuredOutput.ErrorStrategy.values()).map(Enum::name).toList());
  }

  @Test
  void aNullFallbackValueIsAJsonNull() {
    var got = StructuredOutput.builder(CITY).errorStrategy(StructuredOutput.ErrorStrategy.FALLBACK)
        .fallbackValue(null).build().proto();
    assertTrue(got.hasFallbackValue());
    assertEquals(NullValue.NULL_VALUE, got.getFallbackValue().getNullValue());
    Map<String, Object> cityNull = new HashMap<>();
    cityNull.put("city", null);
    assertEquals(cityNull, Values.toJava(StructuredOutput.builder(CITY).fallbackValue(cityNull).build()
        .proto().getFallbackValue()));
  }

  @Test
  void aMissingSchemaOrAValueThatIsNotJsonIsRefusedBeforeAnyCall() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> StructuredOutput.builder(null));
    assertTrue(e.getMessage().contains("needs a schema"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> RunOptions.builder().structuredOutput("city", null));
    assertThrows(IllegalArgumentException.class, () -> RunOptions.builder().structuredOutput(null));
    assertThrows(IllegalArgumentException.class, () -> StructuredOutput.builder(CITY).errorStrategy(null));
    e = assertThrows(IllegalArgumentException.class, () -> StructuredOutput.builder(CITY).fallbackValue(new Object()));
    assertTrue(e.getMessage().contains("not a JSON value"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> StructuredOutput.builder(Map.of("type", new Object())));
  }
}
