package io.github.agentd.examples;

import io.github.agentd.client.AgentdClient;
import io.github.agentd.client.ListOptions;
import io.github.agentd.client.NotFoundException;
import io.github.agentd.client.ResponseStream;
import io.github.agentd.client.RunOptions;
import io.github.agentd.client.Values;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.Message;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * A terminal chat with an agent that has memory: each line you type is streamed to the agent on
 * one thread, and the answer is printed as it arrives. At the end it prints the thread's history.
 *
 * <pre>
 * agentd serve --config tests/conformance/agentd.toml --app tests.conformance.app --port 50051
 * java -jar examples/target/agentd-examples.jar --addr 127.0.0.1:50051 --agent chat
 * </pre>
 *
 * <p>With {@code --say TEXT} it sends that one message and exits; Ctrl-D ends the chat.
 */
public final class Chat {
  private Chat() {}

  public static void main(String[] argv) throws Exception {
    Map<String, String> flags = new HashMap<>();
    for (int i = 0; i + 1 < argv.length; i += 2) {
      flags.put(argv[i].replaceFirst("^--?", ""), argv[i + 1]);
    }
    String addr = flags.getOrDefault("addr", "127.0.0.1:50051");
    String agent = flags.getOrDefault("agent", "chat");
    String resource = flags.getOrDefault("resource", "demo-user");
    String thread = flags.getOrDefault("thread", "chat-" + System.nanoTime());
    String say = flags.get("say");

    try (AgentdClient client = AgentdClient.builder(addr).insecure().timeout(Duration.ofSeconds(30)).build()) {
      try {
        client.getAgent(agent);
      } catch (NotFoundException e) { // typed exceptions carry the ErrorInfo reason
        System.err.println("chat: no agent \"" + agent + "\" on " + addr + " (" + e.reason() + ")");
        System.exit(1);
      }
      RunOptions memory = RunOptions.builder().memory(resource, thread).build();
      if (say != null) {
        turn(client, agent, say, memory);
      } else {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        System.out.print("> ");
        System.out.flush();
        for (String line; (line = in.readLine()) != null; ) {
          if (!line.isBlank()) {
            turn(client, agent, line, memory);
          }
          System.out.print("> ");
          System.out.flush();
        }
        System.out.println();
      }
      System.out.println("--- thread " + thread);
      for (Message m : client.messages(thread, ListOptions.builder().resource(resource).build())) {
        System.out.println(m.getRole().name().replaceFirst("^ROLE_", "").toLowerCase() + ": " + Values.text(m));
      }
    }
  }

  /** Streams one answer, printing its text as it arrives. */
  private static void turn(AgentdClient client, String agent, String text, RunOptions memory) {
    try (ResponseStream<Chunk> chunks = client.stream(agent, text, memory)) {
      for (Chunk c : chunks) {
        switch (c.getPayloadCase()) {
          case TEXT_DELTA -> System.out.print(c.getTextDelta().getText());
          case TRIPWIRE -> System.out.print("[blocked by " + c.getTripwire().getTripwire().getProcessorId() + "]");
          case ERROR -> System.out.print("[the run failed: " + c.getError().getMessage() + "]");
          default -> {}
        }
        System.out.flush();
      }
    }
    System.out.println();
  }
}
