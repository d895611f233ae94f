package io.github.agentd.client.processor;

import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.ProcessAPIErrorCall;
import io.github.agentd.proto.v1.ProcessInputCall;
import io.github.agentd.proto.v1.ProcessInputStepCall;
import io.github.agentd.proto.v1.ProcessLLMRequestCall;
import io.github.agentd.proto.v1.ProcessLLMResponseCall;
import io.github.agentd.proto.v1.ProcessOutputResultCall;
import io.github.agentd.proto.v1.ProcessOutputStepCall;
import io.github.agentd.proto.v1.ProcessToolResultCall;
import io.github.agentd.proto.v1.StepOverrides;
import java.util.List;

/**
 * A processor that agentd calls over gRPC (its {@code remote} processor), in Java. Override the
 * hooks you implement: agentd calls no other (the hello names only the overridden ones).
 *
 * <pre>{@code
 * Processor pii = new Processor() {
 *   public Chunk processOutputStream(Run run, Chunk part) {
 *     if (!part.hasTextDelta()) return part;
 *     String text = EMAIL.matcher(part.getTextDelta().getText()).replaceAll("[email]");
 *     return part.toBuilder().setTextDelta(part.getTextDelta().toBuilder().setText(text)).build();
 *   }
 * };
 * ProcessorService.serve(pii, "127.0.0.1", 50070).awaitTermination();
 * }</pre>
 *
 * <p>Each hook gets the run (state shared by its hooks, {@link Run#custom} data chunks, {@link
 * Run#sendSignal}) and the hook's call. Message hooks return the messages that replace the hook's,
 * or null for unchanged; {@link #processOutputStream} returns the part, a replacement, or null to
 * drop it; {@link #processApiError} returns true to retry the model call. Throw {@link
 * Run#abort} for a tripwire; any other exception ends the stream, which agentd handles by the
 * entry's {@code on_error}.
 */
public interface Processor {
  /** A name for agentd's logs and spans. */
  default String name() {
    return "";
  }

  /** Also send {@code data-*} and signal chunks to {@link #processOutputStream}. */
  default boolean processDataParts() {
    return false;
  }

  default List<Message> processInput(Run run, ProcessInputCall call) throws Exception {
    return null;
  }

  default StepOverrides processInputStep(Run run, ProcessInputStepCall call) throws Exception {
    return null;
  }

  /** The provider-bound prompt replaced, or null. */
  default List<Message> processLlmRequest(Run run, ProcessLLMRequestCall call) throws Exception {
    return null;
  }

  default void processLlmResponse(Run run, ProcessLLMResponseCall call) throws Exception {}

  /** One streamed part: itself (passes), a replacement, or null (dropped). */
  default Chunk processOutputStream(Run run, Chunk part) throws Exception {
    return part;
  }

  default List<Message> processOutputStep(Run run, ProcessOutputStepCall call) throws Exception {
    return null;
  }

  default List<Message> processOutputResult(Run run, ProcessOutputResultCall call) throws Exception {
    return null;
  }

  default List<Message> processToolResult(Run run, ProcessToolResultCall call) throws Exception {
    return null;
  }

  /** True: retry the model call. */
  default boolean processApiError(Run run, ProcessAPIErrorCall call) throws Exception {
    return false;
  }
}
