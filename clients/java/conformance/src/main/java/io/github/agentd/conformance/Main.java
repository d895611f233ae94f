package io.github.agentd.conformance;

import com.google.gson.Gson;
import com.google.gson.reflect.TypeToken;
import io.github.agentd.client.AgentdClient;
import io.github.agentd.client.Tls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Runs agentd's client conformance scenarios (tests/conformance/scenarios.json) through the Java
 * client against a running conformance server:
 *
 * <pre>
 * agentd serve --config tests/conformance/agentd.toml --app tests.conformance.app --port 50051
 * java -jar conformance/target/agentd-conformance.jar --addr 127.0.0.1:50051 \
 *     --scenarios ../../tests/conformance/scenarios.json
 * </pre>
 *
 * <p>A server with [auth] takes --token (default $AGENTD_TOKEN); --cacert connects over TLS
 * trusting that CA, and --cert/--key add a client certificate (mutual TLS). It prints one line
 * per scenario, then exactly "conformance: N passed, M failed", and exits 1 when a scenario
 * failed (2 when the scenarios could not be read). A step of an unknown kind, or an expectation
 * this runner does not know, fails its scenario.
 */
public final class Main {
  private Main() {}

  private static final String USAGE = "usage: conformance --addr host:port [--scenarios file] [--timeout seconds]"
      + " [--run regexp] [--token t] [--cacert ca.pem [--cert client.pem --key client-key.pem]]";

  public static void main(String[] argv) {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (!a.startsWith("--") || i + 1 == argv.length) {
        usage();
      }
      flags.put(a.substring(2), argv[++i]);
    }
    String addr = flags.get("addr");
    String ca = flags.get("cacert");
    String cert = flags.get("cert");
    String key = flags.get("key");
    if (addr == null || ((cert != null || key != null) && ca == null)) {
      usage();
    }
    String path = flags.getOrDefault("scenarios", "../../tests/conformance/scenarios.json");
    Duration timeout = Duration.ofSeconds(Long.parseLong(flags.getOrDefault("timeout", "60")));
    Pattern match = flags.containsKey("run") ? Pattern.compile(flags.get("run")) : null;

    List<Map<String, Object>> scenarios;
    try {
      Map<String, Object> file = new Gson().fromJson(
          Files.readString(Path.of(path), StandardCharsets.UTF_8), new TypeToken<Map<String, Object>>() {}.getType());
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> list = (List<Map<String, Object>>) file.get("scenarios");
      if (list == null || list.isEmpty()) {
        throw new IOException(path + ": no scenario");
      }
      scenarios = list;
    } catch (IOException | RuntimeException e) {
      System.err.println("conformance: " + e.getMessage());
      System.exit(2);
      return;
    }

    AgentdClient.Builder builder = AgentdClient.builder(addr);
    if (flags.containsKey("token")) {
      builder.token(flags.get("token")); // without it, the builder's default: $AGENTD_TOKEN
    }
    builder = ca == null ? builder.insecure() : builder.tls(new Tls(ca, cert, key));
    int passed = 0;
    int failed = 0;
    try (AgentdClient client = builder.build()) {
      for (Map<String, Object> scenario : scenarios) {
        String name = String.valueOf(scenario.get("name"));
        if (match != null && !match.matcher(name).find()) {
          continue;
        }
        long start = System.nanoTime();
        String error = Runner.run(client, scenario, timeout);
        long took = (System.nanoTime() - start) / 1_000_000;
        if (error != null) {
          failed++;
          System.out.printf("FAIL %s (%dms): %s%n", name, took, error);
        } else {
          passed++;
          System.out.printf("PASS %s (%dms)%n", name, took);
        }
      }
    }
    System.out.printf("conformance: %d passed, %d failed%n", passed, failed);
    System.out.flush();
    System.exit(failed > 0 ? 1 : 0);
  }

  private static void usage() {
    System.err.println(USAGE);
    System.exit(2);
  }
}
