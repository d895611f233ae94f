package io.github.agentd.client.processor;

import io.github.agentd.client.Values;
import io.github.agentd.proto.v1.DataChunk;
import io.github.agentd.proto.v1.HookAnswer;
import io.github.agentd.proto.v1.ProcessOpen;
import io.github.agentd.proto.v1.SignalInput;
import java.util.HashMap;
import java.util.Map;

/** One run as one processor sees it: the stream's open message, and state shared by its hooks. */
public final class Run {
  private final ProcessOpen open;
  private final Map<String, Object> state = new HashMap<>();
  private int retryCount;
  private HookAnswer.Builder answer;

  Run(ProcessOpen open) {
    this.open = open;
  }

  /** The run, agent, thread and processor ids, the request context and the entry's config. */
  public ProcessOpen open() {
    return open;
  }

  /** The entry's {@code config} option as Java values. */
  public Map<String, Object> config() {
    return Values.toJava(open.getConfig());
  }

  /** Shared by this processor's hooks for this run (one stream per run: no locking needed). */
  public Map<String, Object> state() {
    return state;
  }

  /** Processor-requested retries already performed in this run. */
  public int retryCount() {
    return retryCount;
  }

  /** Emits a {@code data-*} chunk into the run's stream (writer.custom) with a JSON-like value. */
  public void custom(String type, Object data) {
    answer.addCustom(DataChunk.newBuilder().setType(type).setData(Values.value(data)));
  }

  /** Sends a signal into the run (input step, output step, output result and API error hooks). */
  public void sendSignal(SignalInput signal) {
    answer.addSignals(signal);
  }

  /** The exception a hook throws for a tripwire: {@code throw run.abort("too long", true, Map.of())}. */
  public AbortException abort(String reason, boolean retry, Map<String, ?> metadata) {
    return new AbortException(reason, retry, metadata);
  }

  void call(HookAnswer.Builder next, int retries) {
    answer = next;
    retryCount = retries;
  }
}
