package io.github.agentd.examples;

import io.github.agentd.client.processor.Processor;
import io.github.agentd.client.processor.ProcessorService;
import io.github.agentd.client.processor.Run;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.Part;
import io.github.agentd.proto.v1.ProcessInputCall;
import io.grpc.Server;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A PII redactor as a remote processor: e-mail addresses and phone numbers in the input and the
 * streamed text become placeholders.
 *
 * <pre>
 * java -cp examples/target/agentd-examples.jar io.github.agentd.examples.PiiProcessor --addr 127.0.0.1:50070
 * </pre>
 *
 * <p>and in agentd.toml:
 *
 * <pre>
 * output_processors = [{ name = "remote", options = { id = "pii-java", target = "127.0.0.1:50070" } }]
 * </pre>
 */
public final class PiiProcessor implements Processor {
  private static final Pattern EMAIL = Pattern.compile("[\\w.+-]+@[\\w-]+\\.[\\w.]+");
  private static final Pattern PHONE = Pattern.compile("\\+?\\d[\\d -]{7,}\\d");

  static String redact(String s) {
    return PHONE.matcher(EMAIL.matcher(s).replaceAll("[email]")).replaceAll("[phone]");
  }

  @Override
  public String name() {
    return "pii-java";
  }

  @Override
  public List<Message> processInput(Run run, ProcessInputCall call) {
    return call.getMessagesList().stream().map(m -> {
      Message.Builder b = m.toBuilder();
      for (Part.Builder p : b.getPartsBuilderList()) {
        if (p.hasText()) {
          p.getTextBuilder().setText(redact(p.getText().getText()));
        }
      }
      return b.build();
    }).toList();
  }

  @Override
  public Chunk processOutputStream(Run run, Chunk part) {
    if (!part.hasTextDelta()) {
      return part;
    }
    String text = redact(part.getTextDelta().getText());
    return part.toBuilder().setTextDelta(part.getTextDelta().toBuilder().setText(text)).build();
  }

  public static void main(String[] argv) throws Exception {
    String addr = argv.length == 2 && argv[0].equals("--addr") ? argv[1] : "127.0.0.1:50070";
    int colon = addr.lastIndexOf(':');
    Server server = ProcessorService.serve(new PiiProcessor(), addr.substring(0, colon),
        Integer.parseInt(addr.substring(colon + 1)));
    System.out.println("listening " + addr.substring(0, colon) + ":" + server.getPort());
    System.out.flush();
    server.awaitTermination();
  }
}
