package io.github.agentd.examples;

import io.github.agentd.client.AgentdClient;
import io.github.agentd.client.PermissionDeniedException;
import io.github.agentd.client.Tls;
import io.github.agentd.client.UnauthenticatedException;
import java.util.HashMap;
import java.util.Map;

/**
 * One call to a server with {@code [auth]}: a token over TLS, or mutual TLS.
 *
 * <pre>
 * java -cp examples/target/agentd-examples.jar io.github.agentd.examples.Secure \
 *     --addr HOST:PORT --token "$TOKEN" --cacert ca.pem        # or --cert me.pem --key me-key.pem
 * </pre>
 */
public final class Secure {
  private Secure() {}

  public static void main(String[] argv) {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i + 1 < argv.length; i += 2) {
      flags.put(argv[i].replaceFirst("^--?", ""), argv[i + 1]);
    }
    AgentdClient.Builder builder = AgentdClient.builder(flags.getOrDefault("addr", "127.0.0.1:50051"))
        .tls(new Tls(flags.get("cacert"), flags.get("cert"), flags.get("key")));
    if (flags.containsKey("token")) {
      builder.token(flags.get("token")); // without --token: $AGENTD_TOKEN, the builder's default
    }
    try (AgentdClient client = builder.build()) {
      System.out.println(client.generate(flags.getOrDefault("agent", "echo"), "hello over TLS").getText());
    } catch (UnauthenticatedException e) {
      System.err.println("refused: " + e.reason()); // TOKEN_MISSING, TOKEN_INVALID, CERTIFICATE_UNKNOWN, ...
      System.exit(1);
    } catch (PermissionDeniedException e) {
      System.err.println("refused: " + e.reason() + ", needs role " + e.metadata().get("required_role"));
      System.exit(1);
    }
  }
}
