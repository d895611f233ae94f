package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Metadata;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Which bearer token the builder sends, with no $AGENTD_TOKEN (EnvTokenTest: with one). */
class TokenTest {
  @Test
  void theUnitTestsSeeNoEnvironmentToken() {
    assertNull(System.getenv(AgentdClient.TOKEN_ENV), "surefire's default-test execution drops $AGENTD_TOKEN");
  }

  @Test
  void aTokenBesideAnAuthorizationMetadataEntryIsRefused() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AgentdClient.builder("127.0.0.1:1").insecure().token("agentd_given")
            .metadata("Authorization", "Bearer agentd_md").build());
    assertTrue(e.getMessage().contains("not both"), e.getMessage());
  }

  @Test
  void anAuthorizationMetadataEntryGoesAlone() throws Exception {
    assertEquals(List.of("Bearer agentd_md"), authorizations(b -> b.metadata("authorization", "Bearer agentd_md")));
    assertEquals(List.of("Bearer agentd_md"),
        authorizations(b -> b.token("").metadata("authorization", "Bearer agentd_md")));
  }

  @Test
  void noTokenSendsNone() throws Exception {
    assertEquals(List.of(), authorizations(b -> b));
    assertEquals(List.of("Bearer agentd_given"), authorizations(b -> b.token("  agentd_given\n")));
  }

  /** Every authorization header of one call through a client built by {@code edit}. */
  static List<String> authorizations(java.util.function.UnaryOperator<AgentdClient.Builder> edit) throws Exception {
    try (FakeServer server = new FakeServer(new ErrorsTest.Agents());
        AgentdClient client = edit.apply(AgentdClient.builder(server.target()).insecure()).build()) {
      client.generate("a", "hi");
      Metadata h = server.headers.poll(5, TimeUnit.SECONDS);
      Iterable<String> all = h.getAll(BearerToken.AUTHORIZATION);
      return all == null ? List.of() : java.util.stream.StreamSupport.stream(all.spliterator(), false).toList();
    }
  }
}
