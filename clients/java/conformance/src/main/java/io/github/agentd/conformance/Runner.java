package io.github.agentd.conformance;

import io.github.agentd.client.AgentdClient;
import io.github.agentd.client.AgentdException;
import io.github.agentd.client.ListOptions;
import io.github.agentd.client.ResponseStream;
import io.github.agentd.client.RunOptions;
import io.github.agentd.client.SendOptions;
import io.github.agentd.client.Session;
import io.github.agentd.client.SessionOptions;
import io.github.agentd.client.SubscribeOptions;
import io.github.agentd.client.Subscription;
import io.github.agentd.client.Values;
import io.github.agentd.proto.v1.Agent;
import io.github.agentd.proto.v1.AgentOverrides;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.FinishReason;
import io.github.agentd.proto.v1.GenerateResponse;
import io.github.agentd.proto.v1.Message;
import io.github.agentd.proto.v1.Part;
import io.github.agentd.proto.v1.Score;
import io.github.agentd.proto.v1.StreamResponse;
import io.github.agentd.proto.v1.ThreadSnapshot;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/** One scenario's steps against the client; each step kind as tests/conformance/README.md defines. */
final class Runner {
  /** A failed step or expectation. */
  static final class Failure extends Exception {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message);
    }
  }

  /** An item a background subscription read: a chunk, the error that ended it, or its end. */
  private record Item(Chunk chunk, AgentdException error) {}

  private static final Item END = new Item(null, null);

  /** A named subscription the scenario reads step by step. */
  private static final class Sub {
    String thread;
    String resource;
    ThreadSnapshot snapshot;
    Subscription subscription;
    final LinkedBlockingQueue<Item> items = new LinkedBlockingQueue<>();
    final List<Chunk> read = new ArrayList<>();
  }

  private final AgentdClient client;
  private final long deadline;
  private final String thread = "thr-java-" + randomHex();
  private final String resource = "res-java-" + randomHex();
  private final Map<String, Sub> subs = new HashMap<>();
  private final Map<String, Long> stats = new HashMap<>();

  private Runner(AgentdClient client, Duration timeout) {
    this.client = client;
    this.deadline = System.nanoTime() + timeout.toNanos();
  }

  /** Runs a scenario; null when it passed, else what failed. */
  static String run(AgentdClient client, Map<String, Object> scenario, Duration timeout) {
    Runner r = new Runner(client, timeout);
    ExecutorService thread = Executors.newSingleThreadExecutor();
    try {
      CompletableFuture<String> result = CompletableFuture.supplyAsync(() -> r.steps(scenario), thread);
      return result.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      return "timed out after " + timeout.toSeconds() + "s";
    } catch (InterruptedException e) {
      java.lang.Thread.currentThread().interrupt();
      return "interrupted";
    } catch (ExecutionException e) {
      return "crashed: " + e.getCause();
    } finally {
      r.subs.values().forEach(s -> s.subscription.close());
      thread.shutdownNow();
    }
  }

  private String steps(Map<String, Object> scenario) {
    Object raw = scenario.get("steps");
    if (!(raw instanceof List<?> steps) || steps.isEmpty()) {
      return "the scenario has no step";
    }
    for (int i = 0; i < steps.size(); i++) {
      @SuppressWarnings("unchecked")
      Map<String, Object> step = (Map<String, Object>) substitute(steps.get(i));
      String kind = String.valueOf(step.get("kind"));
      try {
        step(kind, new Step(step));
      } catch (Failure | RuntimeException e) {
        return "step " + (i + 1) + " (" + kind + "): " + e.getMessage();
      }
    }
    return null;
  }

  private static String randomHex() {
    byte[] b = new byte[6];
    new SecureRandom().nextBytes(b);
    return HexFormat.of().formatHex(b);
  }

  /** Replaces $thread and $resource in every string of a step. */
  private Object substitute(Object v) {
    if (v instanceof String s) {
      return s.replace("$thread", thread).replace("$resource", resource);
    }
    if (v instanceof List<?> list) {
      List<Object> out = new ArrayList<>();
      list.forEach(e -> out.add(substitute(e)));
      return out;
    }
    if (v instanceof Map<?, ?> map) {
      Map<String, Object> out = new HashMap<>();
      map.forEach((k, e) -> out.put(String.valueOf(k), substitute(e)));
      return out;
    }
    return v;
  }

  private long remainingMs() {
    return Math.max(0, (deadline - System.nanoTime()) / 1_000_000);
  }

  private void step(String kind, Step s) throws Failure {
    switch (kind) {
      case "generate" -> generate(s);
      case "stream" -> stream(s);
      case "stream_slow_reader" -> streamSlowReader(s);
      case "list_messages" -> listMessages(s);
      case "subscribe" -> subscribe(s);
      case "send_message" -> sendMessage(s);
      case "read_subscription" -> readSubscription(s);
      case "resume" -> resume(s);
      case "cache_stats" -> cacheStats(s);
      case "list_scores" -> listScores(s);
      case "connect_client_tool" -> connectClientTool(s);
      case "update_overrides" -> updateOverrides(s);
      case "delete_overrides" -> deleteOverrides(s);
      case "get_agent" -> getAgent(s);
      default -> throw new Failure("unknown step kind \"" + kind + "\"");
    }
    s.unknown();
  }

  private static RunOptions memory(Step s) {
    String thread = s.optStr("thread");
    String resource = s.optStr("resource");
    if (thread.isEmpty() && resource.isEmpty()) {
      return RunOptions.NONE;
    }
    return RunOptions.builder().memory(resource, thread).build();
  }

  /** Compares a call's error with error_code and error_reason; true when one was expected. */
  private static boolean checkError(AgentdException error, Step s) throws Failure {
    boolean wantCode = s.expects("error_code");
    boolean wantReason = s.expects("error_reason");
    if (!wantCode && !wantReason) {
      if (error != null) {
        throw new Failure(error.getMessage());
      }
      return false;
    }
    Object code = s.expected("error_code");
    Object reason = s.expected("error_reason");
    if (error == null) {
      throw new Failure("the call succeeded, want error " + code + " " + reason);
    }
    if (wantCode && !error.codeName().equals(code)) {
      throw new Failure("error code " + error.codeName() + ", want " + code + " (" + error.getMessage() + ")");
    }
    if (wantReason && !error.reason().equals(reason)) {
      throw new Failure("error reason " + error.reason() + ", want " + reason + " (" + error.getMessage() + ")");
    }
    return true;
  }

  private static String finishReason(FinishReason f) {
    return f.name().replaceFirst("^FINISH_REASON_", "");
  }

  private void generate(Step s) throws Failure {
    String agent = s.str("agent");
    String text = s.str("text");
    GenerateResponse resp = null;
    AgentdException error = null;
    try {
      resp = client.generate(agent, text, memory(s));
    } catch (AgentdException e) {
      error = e;
    }
    if (checkError(error, s)) {
      return;
    }
    if (s.expects("text") && !resp.getText().equals(s.expected("text"))) {
      throw new Failure("text \"" + resp.getText() + "\", want \"" + s.expected("text") + "\"");
    }
    if (s.expects("finish_reason") && !finishReason(resp.getFinishReason()).equals(s.expected("finish_reason"))) {
      throw new Failure("finish_reason " + finishReason(resp.getFinishReason()) + ", want " + s.expected("finish_reason"));
    }
    if (s.expects("usage_input_tokens_at_least")) {
      double n = ((Number) s.expected("usage_input_tokens_at_least")).doubleValue();
      if (resp.getUsage().getInputTokens() < n) {
        throw new Failure("usage.input_tokens " + resp.getUsage().getInputTokens() + ", want at least " + n);
      }
    }
  }

  private static void checkFields(List<String> got, Step s) throws Failure {
    if (s.expects("overridden_fields") && !got.equals(s.expected("overridden_fields"))) {
      throw new Failure("overridden_fields " + got + ", want " + s.expected("overridden_fields"));
    }
  }

  private void updateOverrides(Step s) throws Failure {
    AgentOverrides.Builder overrides = AgentOverrides.newBuilder().setAgentId(s.str("agent"));
    if (!s.optStr("instructions").isEmpty()) {
      overrides.setInstructions(s.optStr("instructions"));
    }
    AgentOverrides written = null;
    AgentdException error = null;
    try {
      written = client.updateAgentOverrides(overrides.build(), List.of("instructions"));
    } catch (AgentdException e) {
      error = e;
    }
    if (checkError(error, s)) {
      return;
    }
    checkFields(written.getOverriddenFieldsList(), s);
  }

  private void deleteOverrides(Step s) throws Failure {
    checkFields(client.deleteAgentOverrides(s.str("agent")).getOverriddenFieldsList(), s);
  }

  private void getAgent(Step s) throws Failure {
    Agent agent = client.getAgent(s.str("agent"));
    if (s.expects("instructions") && !agent.getInstructions().equals(s.expected("instructions"))) {
      throw new Failure("instructions \"" + agent.getInstructions() + "\", want \"" + s.expected("instructions") + "\"");
    }
    checkFields(agent.getOverriddenFieldsList(), s);
  }

  private void stream(Step s) throws Failure {
    String agent = s.str("agent");
    String text = s.str("text");
    List<Chunk> chunks = new ArrayList<>();
    AgentdException error = null;
    try (ResponseStream<Chunk> stream = client.stream(agent, text, memory(s))) {
      for (Chunk c : stream) {
        chunks.add(c);
      }
    } catch (AgentdException e) {
      error = e;
    }
    if (checkError(error, s)) {
      return;
    }
    if (chunks.isEmpty()) {
      throw new Failure("no chunk");
    }
    List<String> kinds = chunks.stream().map(Values::kind).toList();
    if (s.expects("kinds") && !kinds.equals(s.strings("kinds"))) {
      throw new Failure("kinds " + kinds + ", want " + s.strings("kinds"));
    }
    if (s.expects("last_kinds")) {
      List<String> want = s.strings("last_kinds");
      if (kinds.size() < want.size() || !kinds.subList(kinds.size() - want.size(), kinds.size()).equals(want)) {
        throw new Failure("kinds end " + kinds + ", want last " + want);
      }
    }
    if (Boolean.TRUE.equals(s.expected("seq_contiguous"))) {
      seqContiguous(chunks);
    }
    if (s.expects("text") && !deltas(chunks).equals(s.expected("text"))) {
      throw new Failure("text \"" + deltas(chunks) + "\", want \"" + s.expected("text") + "\"");
    }
    if (s.expects("tripwire_processor")) {
      List<String> got = chunks.stream().filter(Chunk::hasTripwire)
          .map(c -> c.getTripwire().getTripwire().getProcessorId()).toList();
      if (got.isEmpty() || !got.get(got.size() - 1).equals(s.expected("tripwire_processor"))) {
        throw new Failure("tripwire processors " + got + ", want " + s.expected("tripwire_processor"));
      }
    }
    if (s.expects("finish_reason")) {
      Chunk last = chunks.get(chunks.size() - 1);
      if (!last.hasFinish()) {
        throw new Failure("last chunk is " + Values.kind(last) + ", want finish");
      }
      String got = finishReason(last.getFinish().getFinishReason());
      if (!got.equals(s.expected("finish_reason"))) {
        throw new Failure("finish_reason " + got + ", want " + s.expected("finish_reason"));
      }
    }
    if (s.expects("data_types")) {
      List<String> got = chunks.stream().filter(Chunk::hasData).map(c -> c.getData().getType()).toList();
      if (!got.equals(s.strings("data_types"))) {
        throw new Failure("data chunk types " + got + ", want " + s.strings("data_types"));
      }
    }
  }

  private static String deltas(List<Chunk> chunks) {
    StringBuilder b = new StringBuilder();
    chunks.forEach(c -> b.append(c.getTextDelta().getText()));
    return b.toString();
  }

  private static void seqContiguous(List<Chunk> chunks) throws Failure {
    for (int i = 0; i < chunks.size(); i++) {
      Chunk c = chunks.get(i);
      if (c.getSeq() != i + 1) {
        throw new Failure("chunk " + i + " (" + Values.kind(c) + ") has seq " + c.getSeq() + ", want " + (i + 1));
      }
      if (!c.getRunId().equals(chunks.get(0).getRunId())) {
        throw new Failure("chunk " + i + " has run id " + c.getRunId() + ", want " + chunks.get(0).getRunId());
      }
    }
  }

  private void streamSlowReader(Step s) throws Failure {
    String agent = s.str("agent");
    int words = s.num("words");
    int pause = s.num("pause_ms");
    List<String> parts = new ArrayList<>();
    for (int i = 0; i < words; i++) {
      parts.add("w" + i);
    }
    List<Chunk> chunks = new ArrayList<>();
    int messages = 0;
    try (ResponseStream<StreamResponse> batches = client.streamBatches(agent, String.join(" ", parts), RunOptions.NONE)) {
      for (StreamResponse batch : batches) {
        if (messages == 0) {
          sleep(pause); // the run goes on meanwhile
        }
        messages++;
        chunks.addAll(batch.getChunksList());
      }
    }
    if (s.expects("chunks") && chunks.size() != ((Number) s.expected("chunks")).intValue()) {
      throw new Failure(chunks.size() + " chunks, want " + s.expected("chunks"));
    }
    if (Boolean.TRUE.equals(s.expected("fewer_messages_than_chunks")) && messages >= chunks.size()) {
      throw new Failure(messages + " messages for " + chunks.size() + " chunks, want fewer messages than chunks");
    }
    if (Boolean.TRUE.equals(s.expected("seq_contiguous"))) {
      seqContiguous(chunks);
    }
  }

  private static void sleep(long ms) {
    try {
      java.lang.Thread.sleep(ms);
    } catch (InterruptedException e) {
      java.lang.Thread.currentThread().interrupt();
    }
  }

  private void listMessages(Step s) throws Failure {
    String threadId = s.str("thread");
    ListOptions options = ListOptions.builder().resource(s.optStr("resource")).build();
    List<String> texts = new ArrayList<>();
    for (Message m : client.messages(threadId, options)) {
      texts.add(m.getPartsList().stream().filter(Part::hasText).map(p -> p.getText().getText()).findFirst().orElse(""));
    }
    if (s.expects("texts") && !texts.equals(s.strings("texts"))) {
      throw new Failure("texts " + texts + ", want " + s.strings("texts"));
    }
  }

  private void subscribe(Step s) throws Failure {
    String name = s.str("name");
    Sub sub = new Sub();
    sub.thread = s.str("thread");
    sub.resource = s.optStr("resource");
    CompletableFuture<ThreadSnapshot> snapshot = new CompletableFuture<>();
    sub.subscription = client.subscribe(sub.thread,
        SubscribeOptions.builder().resource(sub.resource).onSnapshot(snapshot::complete).build());
    readInBackground(sub.subscription, sub.items, snapshot);
    Sub old = subs.put(name, sub);
    if (old != null) {
      old.subscription.close();
    }
    try {
      sub.snapshot = snapshot.get(remainingMs(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw new Failure("subscribe: " + e.getCause().getMessage());
    } catch (TimeoutException | InterruptedException e) {
      throw new Failure("no snapshot");
    }
    if (sub.snapshot.getLogEpoch().isEmpty()) {
      throw new Failure("the snapshot has no log epoch");
    }
  }

  /** Reads a subscription on its own thread into a queue (and fails the snapshot if it ends first). */
  private static void readInBackground(Subscription subscription, LinkedBlockingQueue<Item> items,
      CompletableFuture<ThreadSnapshot> snapshot) {
    java.lang.Thread reader = new java.lang.Thread(() -> {
      try {
        for (Chunk c : subscription) {
          items.add(new Item(c, null));
        }
        snapshot.completeExceptionally(new Failure("the subscription ended before its snapshot"));
        items.add(END);
      } catch (AgentdException e) {
        snapshot.completeExceptionally(e);
        items.add(new Item(null, e));
      }
    }, "conformance-subscription");
    reader.setDaemon(true);
    reader.start();
  }

  private Item take(LinkedBlockingQueue<Item> items, long ms) throws Failure {
    try {
      return items.poll(ms, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      java.lang.Thread.currentThread().interrupt();
      throw new Failure("interrupted");
    }
  }

  private void sendMessage(Step s) throws Failure {
    var resp = client.sendMessage(s.str("agent"), AgentdClient.threadTarget(s.str("resource"), s.str("thread")),
        s.str("text"), SendOptions.NONE);
    if (s.expects("action") && !Values.action(resp.getDecision()).equals(s.expected("action"))) {
      throw new Failure("action " + Values.action(resp.getDecision()) + ", want " + s.expected("action"));
    }
  }

  private Sub sub(Step s) throws Failure {
    String name = s.str("name");
    Sub sub = subs.get(name);
    if (sub == null) {
      throw new Failure("no subscription \"" + name + "\"");
    }
    return sub;
  }

  private void readSubscription(Step s) throws Failure {
    Sub sub = sub(s);
    String until = s.str("until");
    if (!until.equals("finish")) {
      throw new Failure("until \"" + until + "\": only \"finish\" is known");
    }
    List<Chunk> got = new ArrayList<>();
    for (boolean done = false; !done; ) {
      Item it = take(sub.items, remainingMs());
      if (it == null) {
        throw new Failure("no finish after " + got.size() + " chunks");
      }
      if (it == END) {
        throw new Failure("the subscription ended after " + got.size() + " chunks");
      }
      if (it.error() != null) {
        throw new Failure("subscription: " + it.error().getMessage());
      }
      Chunk c = it.chunk();
      got.add(c);
      sub.read.add(c);
      boolean top = c.getParentRunId().isEmpty();
      done = c.hasFinish() && top;
      if (!done && top && (c.hasError() || c.hasAbort())) {
        throw new Failure("the run ended with " + Values.kind(c) + ": " + c);
      }
    }
    if (s.expects("echo_texts")) {
      List<String> echoes = got.stream().filter(Chunk::hasSignal).map(c -> Values.text(c.getSignal().getSignal())).toList();
      if (!echoes.equals(s.strings("echo_texts"))) {
        throw new Failure("echo texts " + echoes + ", want " + s.strings("echo_texts"));
      }
    }
    if (s.expects("text") && !deltas(got).equals(s.expected("text"))) {
      throw new Failure("text \"" + deltas(got) + "\", want \"" + s.expected("text") + "\"");
    }
  }

  private void resume(Step s) throws Failure {
    Sub sub = sub(s);
    int index = s.num("after_chunk_index");
    if (index < 0 || index >= sub.read.size()) {
      throw new Failure("after_chunk_index " + index + ": the subscription read " + sub.read.size() + " chunks");
    }
    Chunk after = sub.read.get(index);
    List<Chunk> want = sub.read.subList(index + 1, sub.read.size());
    if (after.getOffset() == 0) {
      throw new Failure("chunk " + index + " (" + Values.kind(after) + ") has no offset");
    }
    LinkedBlockingQueue<Item> items = new LinkedBlockingQueue<>();
    try (Subscription resumed = client.subscribe(sub.thread, SubscribeOptions.builder()
        .resource(sub.resource).resume(sub.snapshot.getLogEpoch(), after.getOffset()).noReconnect().build())) {
      readInBackground(resumed, items, new CompletableFuture<>());
      List<Chunk> got = new ArrayList<>();
      while (got.size() < want.size()) {
        Item it = take(items, remainingMs());
        if (it == null) {
          throw new Failure("resume replayed " + got.size() + " of " + want.size() + " chunks");
        }
        if (it == END) {
          throw new Failure("the resumed subscription ended after " + got.size() + " of " + want.size() + " chunks");
        }
        if (it.error() != null) {
          throw new Failure("resume: " + it.error().getMessage());
        }
        got.add(it.chunk());
      }
      Item extra = take(items, 300); // nothing else: the replay is exactly the rest
      if (extra != null && extra.chunk() != null) {
        throw new Failure("resume replayed an extra chunk at offset " + extra.chunk().getOffset());
      }
      if (!Boolean.TRUE.equals(s.expected("replays_rest_without_gap"))) {
        return;
      }
      for (int i = 0; i < want.size(); i++) {
        Chunk w = want.get(i);
        Chunk g = got.get(i);
        if (g.getOffset() != w.getOffset() || !g.getRunId().equals(w.getRunId()) || g.getSeq() != w.getSeq()
            || !Values.kind(g).equals(Values.kind(w))) {
          throw new Failure("replayed chunk " + i + " is offset " + g.getOffset() + " " + Values.kind(g)
              + ", want offset " + w.getOffset() + " " + Values.kind(w));
        }
      }
    }
  }

  private void cacheStats(Step s) throws Failure {
    long hits = client.getCacheStats().getHits();
    if (s.expects("hits_increased_since")) {
      String name = String.valueOf(s.expected("hits_increased_since"));
      Long before = stats.get(name);
      if (before == null) {
        throw new Failure("no cache stats named " + name);
      }
      if (hits <= before) {
        throw new Failure("cache hits " + hits + ", want more than " + before);
      }
    }
    String name = s.optStr("name");
    if (!name.isEmpty()) {
      stats.put(name, hits);
    }
  }

  /** A thread's scorers, polled for up to five seconds (scoring runs after the run has answered). */
  private void listScores(Step s) throws Failure {
    ListOptions options = ListOptions.builder().scoreFilter("", s.str("thread"), "", "").build();
    boolean wants = s.expects("scorers");
    List<String> want = wants ? s.strings("scorers") : List.of();
    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
    List<String> names;
    while (true) {
      names = new ArrayList<>();
      for (Score score : client.scores(options)) {
        names.add(score.getScorer());
      }
      names.sort(null);
      if (!wants || names.equals(want) || System.nanoTime() > until) {
        break;
      }
      sleep(50);
    }
    if (wants && !names.equals(want)) {
      throw new Failure("scorers " + names + ", want " + want);
    }
  }

  private void connectClientTool(Step s) throws Failure {
    String agent = s.str("agent");
    String threadId = s.str("thread");
    String resourceId = s.str("resource");
    String text = s.str("text");
    String tool = s.str("tool");
    if (!s.has("answer")) {
      throw new Failure("field \"answer\" is missing");
    }
    Object answer = s.get("answer");
    AtomicInteger calls = new AtomicInteger();
    SessionOptions options = SessionOptions.builder().tool(tool, args -> {
      calls.incrementAndGet();
      return answer;
    }).build();
    List<Chunk> got = new ArrayList<>();
    try (Session session = client.connect(agent, resourceId, threadId, options)) {
      var routing = session.sendMessage(text, SendOptions.NONE);
      String runId = Values.runId(routing.getDecision());
      if (runId.isEmpty()) {
        throw new Failure("the send was routed " + Values.action(routing.getDecision()) + ", want a run");
      }
      for (Chunk c : session.chunks()) {
        if (!c.getRunId().equals(runId)) {
          continue;
        }
        got.add(c);
        if (Values.isLast(c)) {
          break;
        }
      }
    }
    if (got.isEmpty() || !Values.isLast(got.get(got.size() - 1))) {
      throw new Failure("the run did not end (" + got.size() + " chunks)");
    }
    Chunk last = got.get(got.size() - 1);
    if (!last.hasFinish()) {
      throw new Failure("the run ended with " + Values.kind(last) + ": " + last);
    }
    if (calls.get() != 1) {
      throw new Failure("the tool handler ran " + calls.get() + " times, want 1");
    }
    if (s.expects("tool_result")) {
      List<Object> results = got.stream().filter(Chunk::hasToolResult)
          .filter(c -> c.getToolResult().getToolName().equals(tool))
          .map(c -> Values.toJava(c.getToolResult().getResult())).toList();
      if (results.size() != 1 || !Objects.equals(results.get(0), s.expected("tool_result"))) {
        throw new Failure("tool results " + results + ", want [" + s.expected("tool_result") + "]");
      }
    }
    if (s.expects("text") && !deltas(got).equals(s.expected("text"))) {
      throw new Failure("text \"" + deltas(got) + "\", want \"" + s.expected("text") + "\"");
    }
  }
}
