package io.github.agentd.conformance;

import com.google.protobuf.Struct;
import io.github.agentd.client.Values;
import io.github.agentd.client.processor.Processor;
import io.github.agentd.client.processor.ProcessorService;
import io.github.agentd.client.processor.Run;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.Part;
import io.github.agentd.proto.v1.ProcessAPIErrorCall;
import io.github.agentd.proto.v1.ProcessInputCall;
import io.github.agentd.proto.v1.ProcessInputStepCall;
import io.github.agentd.proto.v1.ProcessLLMRequestCall;
import io.github.agentd.proto.v1.ProcessLLMResponseCall;
import io.github.agentd.proto.v1.ProcessOutputResultCall;
import io.github.agentd.proto.v1.ProcessOutputStepCall;
import io.github.agentd.proto.v1.ProcessToolResultCall;
import io.github.agentd.proto.v1.StepOverrides;
import io.grpc.Server;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The Java processor of the remote-processor e2e tests (tests/e2e/test_remote_processors.py),
 * built with the client's {@link ProcessorService} and started as its own process:
 *
 * <pre>
 * java -cp conformance/target/agentd-conformance.jar io.github.agentd.conformance.E2eProcessor --addr 127.0.0.1:0
 * </pre>
 *
 * <p>It prints "listening host:port" once it serves, and behaves as its Go twin
 * (tests/e2e/goprocessor): every hook notes its name in the run's state, and
 * process_output_result writes those names and the number of streamed parts into the response's
 * metadata; process_input lowercases the input (after config.sleepMs); process_output_stream
 * replaces "secret" with "[redacted]", drops a "drop" delta, emits one data-processor-note chunk
 * and exits the process with status 3 at part config.crashAtPart; process_output_step aborts with
 * retry (metadata {"score": 0.1}) while the step's text has "meh"; process_api_error asks for one
 * retry.
 */
public final class E2eProcessor implements Processor {
  @Override
  public String name() {
    return "java-e2e";
  }

  @SuppressWarnings("unchecked")
  private static void note(Run run, String hook) {
    ((List<Object>) run.state().computeIfAbsent("hooks", k -> new ArrayList<>())).add(hook);
  }

  private static double config(Run run, String key) {
    return run.config().get(key) instanceof Double d ? d : 0;
  }

  private static List<Message> lower(List<Message> messages) {
    List<Message> out = new ArrayList<>();
    for (Message m : messages) {
      Message.Builder b = m.toBuilder();
      for (Part.Builder p : b.getPartsBuilderList()) {
        if (p.hasText()) {
          p.getTextBuilder().setText(p.getText().getText().toLowerCase(Locale.ROOT));
        }
      }
      out.add(b.build());
    }
    return out;
  }

  @Override
  public List<Message> processInput(Run run, ProcessInputCall call) throws InterruptedException {
    note(run, "process_input");
    double ms = config(run, "sleepMs");
    if (ms > 0) {
      java.lang.Thread.sleep((long) ms);
    }
    return lower(call.getMessagesList());
  }

  @Override
  public StepOverrides processInputStep(Run run, ProcessInputStepCall call) {
    note(run, "process_input_step");
    return null;
  }

  @Override
  public List<Message> processLlmRequest(Run run, ProcessLLMRequestCall call) {
    note(run, "process_llm_request");
    return null;
  }

  @Override
  public void processLlmResponse(Run run, ProcessLLMResponseCall call) {
    note(run, "process_llm_response");
  }

  @Override
  public Chunk processOutputStream(Run run, Chunk part) {
    int n = (int) run.state().getOrDefault("parts", 0) + 1;
    run.state().put("parts", n);
    double at = config(run, "crashAtPart");
    if (at > 0 && n >= at) {
      System.err.println("crashing on purpose");
      Runtime.getRuntime().halt(3);
    }
    if (!part.hasTextDelta()) {
      return part;
    }
    String text = part.getTextDelta().getText();
    if (text.strip().equals("drop")) {
      return null;
    }
    if (run.state().putIfAbsent("noted", true) == null) {
      run.custom("data-processor-note", Map.of("by", "java"));
    }
    return part.toBuilder().setTextDelta(part.getTextDelta().toBuilder().setText(text.replace("secret", "[redacted]")))
        .build();
  }

  @Override
  public List<Message> processOutputStep(Run run, ProcessOutputStepCall call) {
    note(run, "process_output_step");
    if (call.getText().contains("meh")) {
      throw run.abort("Be more detailed.", true, Map.of("score", 0.1));
    }
    return null;
  }

  @Override
  public List<Message> processToolResult(Run run, ProcessToolResultCall call) {
    note(run, "process_tool_result");
    return null;
  }

  @Override
  public List<Message> processOutputResult(Run run, ProcessOutputResultCall call) {
    note(run, "process_output_result");
    Map<String, Object> seen = Map.of("partsSeen", run.state().getOrDefault("parts", 0),
        "hooks", run.state().getOrDefault("hooks", List.of()));
    List<Message> out = new ArrayList<>();
    for (Message m : call.getMessagesList()) {
      Struct.Builder metadata = m.getMetadata().toBuilder().putAllFields(Values.struct(seen).getFieldsMap());
      out.add(m.toBuilder().setMetadata(metadata).build());
    }
    return out;
  }

  @Override
  public boolean processApiError(Run run, ProcessAPIErrorCall call) {
    note(run, "process_api_error");
    return run.retryCount() == 0;
  }

  public static void main(String[] argv) throws Exception {
    String addr = argv.length == 2 && argv[0].equals("--addr") ? argv[1] : "127.0.0.1:0";
    int colon = addr.lastIndexOf(':');
    String host = addr.substring(0, colon);
    Server server = ProcessorService.serve(new E2eProcessor(), host, Integer.parseInt(addr.substring(colon + 1)));
    System.out.println("listening " + host + ":" + server.getPort());
    System.out.flush();
    server.awaitTermination();
  }
}
