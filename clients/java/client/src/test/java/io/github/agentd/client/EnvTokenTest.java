package io.github.agentd.client;

import static io.github.agentd.client.TokenTest.authorizations;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Which bearer token the builder sends when $AGENTD_TOKEN is set: surefire's env-token execution
 * runs this class alone, with AGENTD_TOKEN=agentd_env (see client/pom.xml).
 */
class EnvTokenTest {
  @BeforeAll
  static void theEnvironmentHoldsAToken() {
    assertEquals("agentd_env", System.getenv(AgentdClient.TOKEN_ENV),
        "run by surefire's env-token execution, which sets AGENTD_TOKEN");
  }

  @Test
  void givenNoTokenTheClientSendsTheEnvironments() throws Exception {
    assertEquals(List.of("Bearer agentd_env"), authorizations(b -> b));
  }

  @Test
  void aGivenTokenWins() throws Exception {
    assertEquals(List.of("Bearer agentd_given"), authorizations(b -> b.token("agentd_given")));
  }

  @Test
  void anEmptyTokenSendsNone() throws Exception {
    assertEquals(List.of(), authorizations(b -> b.token("")));
    assertEquals(List.of(), authorizations(b -> b.token(null)));
  }

  @Test
  void theCallersAuthorizationMetadataWins() throws Exception {
    assertEquals(List.of("Bearer agentd_md"), authorizations(b -> b.metadata("Authorization", "Bearer agentd_md")));
  }

  @Test
  void theCallersCallCredentialsWin() throws Exception {
    assertEquals(List.of("Bearer agentd_creds"),
        authorizations(b -> b.callCredentials(new BearerToken("agentd_creds", true))));
  }

  @Test
  void theEnvironmentsTokenOverPlaintextGoesOnlyToALoopbackTarget() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AgentdClient.builder("agentd.internal:50051").insecure().build());
    assertTrue(e.getMessage().contains("$AGENTD_TOKEN") && e.getMessage().contains("in clear"), e.getMessage());
    AgentdClient.builder("agentd.internal:50051").insecure().token("").build().close();
  }
}
