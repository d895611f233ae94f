package io.github.agentd.client;

import com.google.protobuf.Value;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.ClientTool;
import io.github.agentd.proto.v1.ConnectAbort;
import io.github.agentd.proto.v1.ConnectOpen;
import io.github.agentd.proto.v1.ConnectQueueMessage;
import io.github.agentd.proto.v1.ConnectRequest;
import io.github.agentd.proto.v1.ConnectResponse;
import io.github.agentd.proto.v1.ConnectRoutingAnswer;
import io.github.agentd.proto.v1.ConnectSendMessage;
import io.github.agentd.proto.v1.ConnectSendSignal;
import io.github.agentd.proto.v1.ConnectSendStateSignal;
import io.github.agentd.proto.v1.ConnectToolResult;
import io.github.agentd.proto.v1.ExecutionOptions;
import io.github.agentd.proto.v1.FellBehind;
import io.github.agentd.proto.v1.IfIdle;
import io.github.agentd.proto.v1.SignalInput;
import io.github.agentd.proto.v1.StateSignalInput;
import io.github.agentd.proto.v1.ThreadServiceGrpc;
import io.github.agentd.proto.v1.ThreadSnapshot;
import io.github.agentd.proto.v1.ToolCall;
import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A two-way session on a thread ({@code ThreadService.Connect}). Sends are answered on the same
 * stream; the chunks of every run on the thread come from {@link #chunks()}. Client tools given
 * in the options are declared for the runs the session wakes and answered automatically.
 *
 * <p>A session reconnects like a subscription; a send in flight during a reconnection fails with
 * UNAVAILABLE and may be retried (with a message id the retry is idempotent). {@link #close()}
 * half-closes the stream; closing never aborts a run.
 */
public final class Session implements AutoCloseable {
  private static final Object END = new Object();

  private final ThreadServiceGrpc.ThreadServiceStub stub;
  private final SessionOptions options;
  private final ConnectOpen open;
  private final ResumeState state;
  private final AtomicLong ids = new AtomicLong();
  private final Map<String, CompletableFuture<ConnectResponse>> pending = new ConcurrentHashMap<>();
  private final Set<String> answered = ConcurrentHashMap.newKeySet();
  private final LinkedBlockingQueue<Object> queue = new LinkedBlockingQueue<>();
  private final CompletableFuture<AgentdException> done = new CompletableFuture<>();
  private final ExecutorService tools = Executors.newCachedThreadPool(r -> {
    java.lang.Thread t = new java.lang.Thread(r, "agentd-session-tool");
    t.setDaemon(true);
    return t;
  });
  private volatile Connection current;
  private volatile boolean closing;
  private volatile ThreadSnapshot snapshot;

  private Session(ThreadServiceGrpc.ThreadServiceStub stub, ConnectOpen open, SessionOptions options) {
    this.stub = stub;
    this.open = open;
    this.options = options;
    this.state = new ResumeState(options.resume);
  }

  static Session open(ThreadServiceGrpc.ThreadServiceStub stub, String agent, String resource, String thread,
      SessionOptions options) {
    ExecutionOptions.Builder runs = options.runOptions.execution.toBuilder();
    addTools(runs, options.toolSpecs);
    ConnectOpen open = ConnectOpen.newBuilder()
        .setAgentId(agent).setResourceId(resource).setThreadId(thread)
        .addAllHideSignals(options.hideSignals).setStreamOptions(runs).build();
    Session s = new Session(stub, open, options);
    s.current = s.connect();
    java.lang.Thread supervisor = new java.lang.Thread(s::supervise, "agentd-session");
    supervisor.setDaemon(true);
    supervisor.start();
    return s;
  }

  private static void addTools(ExecutionOptions.Builder runs, Iterable<ClientTool> specs) {
    Set<String> have = new java.util.HashSet<>();
    runs.getClientToolsList().forEach(t -> have.add(t.getName()));
    for (ClientTool t : specs) {
      if (have.add(t.getName())) {
        runs.addClientTools(t);
      }
    }
  }

  /** One Connect stream. */
  private final class Connection implements ClientResponseObserver<ConnectRequest, ConnectResponse> {
    private ClientCallStreamObserver<ConnectRequest> requests;
    final CompletableFuture<ThreadSnapshot> opened = new CompletableFuture<>();
    /** Completes when the stream ends: with its error, or null when the server ended it. */
    final CompletableFuture<AgentdException> ended = new CompletableFuture<>();
    volatile FellBehind fell;

    @Override
    public void beforeStart(ClientCallStreamObserver<ConnectRequest> stream) {
      requests = stream;
    }

    synchronized void send(ConnectRequest req) {
      requests.onNext(req);
    }

    synchronized void halfClose() {
      requests.onCompleted();
    }

    void cancel() {
      requests.cancel("agentd: session closed", null);
    }

    @Override
    public void onNext(ConnectResponse resp) {
      if (!opened.isDone()) {
        if (resp.hasError()) {
          opened.completeExceptionally(AgentdException.fromStatus(resp.getError()));
        } else if (resp.hasSnapshot()) {
          snapshot(resp.getSnapshot());
          opened.complete(resp.getSnapshot());
        } else {
          opened.completeExceptionally(AgentdException.of(Status.Code.INTERNAL,
              "Connect answered open with " + resp.getEventCase() + ", not a snapshot", null, null));
        }
        return;
      }
      switch (resp.getEventCase()) {
        case CHUNKS -> chunks(resp.getChunks().getChunksList());
        case FELL_BEHIND -> fell = resp.getFellBehind();
        case SNAPSHOT -> snapshot(resp.getSnapshot());
        default -> {
          CompletableFuture<ConnectResponse> waiting = pending.remove(resp.getRequestId());
          if (waiting != null) {
            waiting.complete(resp);
          }
        }
      }
    }

    @Override
    public void onError(Throwable t) {
      AgentdException e = AgentdException.from(t);
      opened.completeExceptionally(e);
      ended.complete(e);
    }

    @Override
    public void onCompleted() {
      opened.completeExceptionally(AgentdException.of(Status.Code.UNAVAILABLE, "the session stream closed", null, null));
      ended.complete(null);
    }
  }

  private void snapshot(ThreadSnapshot s) {
    snapshot = s;
    state.snapshot(s);
  }

  /** Opens one stream, sends open and waits for the snapshot. */
  private Connection connect() {
    Connection c = new Connection();
    stub.connect(c);
    ConnectOpen.Builder o = open.toBuilder();
    var resume = state.current();
    if (resume != null) {
      o.setResume(resume);
    }
    c.send(ConnectRequest.newBuilder().setRequestId(newId()).setOpen(o).build());
    ThreadSnapshot snap;
    try {
      snap = AgentdClient.await(c.opened);
    } catch (AgentdException e) {
      c.cancel();
      throw e;
    }
    if (options.onSnapshot != null) {
      options.onSnapshot.accept(snap);
    }
    return c;
  }

  /** Follows the session's streams, reconnecting as needed, until the session ends. */
  private void supervise() {
    int failures = 0;
    while (true) {
      Connection c = current;
      AgentdException error = c.ended.join();
      failPending(error);
      if (closing) {
        finish(null);
        return;
      }
      FellBehind fell = c.fell;
      if (fell != null) {
        if (options.reconnect.attempts() == 0) {
          finish(ResumeState.fellBehindError(fell));
          return;
        }
        state.fellBehind(fell);
        failures = 0;
      } else if (error == null) {
        finish(null); // the server ended the stream
        return;
      } else {
        failures++;
        if (error.code() != Status.Code.UNAVAILABLE || !options.reconnect.allows(failures)
            || !options.reconnect.waitBefore(failures)) {
          finish(error);
          return;
        }
      }
      while (true) {
        if (closing) {
          finish(null);
          return;
        }
        try {
          current = connect();
          failures = 0;
          break;
        } catch (AgentdException e) {
          failures++;
          if (e.code() != Status.Code.UNAVAILABLE || !options.reconnect.allows(failures)
              || !options.reconnect.waitBefore(failures)) {
            finish(e);
            return;
          }
        }
      }
    }
  }

  private void chunks(Iterable<Chunk> batch) {
    for (Chunk chunk : batch) {
      if (state.seen(chunk)) {
        continue;
      }
      queue.add(chunk);
      if (chunk.hasToolCall()) {
        ToolCall call = chunk.getToolCall();
        SessionOptions.ToolHandler handler = options.tools.get(call.getToolName());
        if (call.getClientTool() && handler != null && answered.add(call.getToolCallId())) {
          tools.execute(() -> answerTool(chunk.getRunId(), call, handler));
        }
      }
    }
  }

  private void answerTool(String runId, ToolCall call, SessionOptions.ToolHandler handler) {
    ConnectToolResult.Builder result = ConnectToolResult.newBuilder().setRunId(runId).setToolCallId(call.getToolCallId());
    try {
      result.setResult(Values.value(handler.call(call.getArgs())));
    } catch (Exception e) {
      result.setIsError(true).setResult(Values.value(String.valueOf(e.getMessage())));
    }
    AgentdException last = null;
    for (int attempt = 1; attempt <= 6 && !done.isDone(); attempt++) {
      try {
        AgentdClient.await(request(ConnectRequest.newBuilder().setToolResult(result)));
        return;
      } catch (AgentdException e) {
        last = e;
        if (e.code() != Status.Code.UNAVAILABLE) {
          break;
        }
        sleep(200L * attempt); // a reconnection is under way
      }
    }
    if (last != null && !done.isDone() && options.onToolError != null) {
      options.onToolError.accept(call.getToolName(), last);
    }
  }

  private static void sleep(long ms) {
    try {
      java.lang.Thread.sleep(ms);
    } catch (InterruptedException e) {
      java.lang.Thread.currentThread().interrupt();
    }
  }

  private void finish(AgentdException error) {
    if (done.complete(error)) {
      queue.add(END);
      tools.shutdown();
    }
  }

  private void failPending(AgentdException error) {
    AgentdException e = error != null ? error
        : AgentdException.of(Status.Code.UNAVAILABLE, "the session stream ended before the answer", null, null);
    pending.keySet().forEach(id -> {
      CompletableFuture<ConnectResponse> f = pending.remove(id);
      if (f != null) {
        f.completeExceptionally(e);
      }
    });
  }

  private String newId() {
    return "java-" + ids.incrementAndGet();
  }

  /** Sends a frame; the answer, or an AgentdException (an error answer too). */
  private CompletableFuture<ConnectResponse> request(ConnectRequest.Builder req) {
    String id = newId();
    CompletableFuture<ConnectResponse> answer = new CompletableFuture<>();
    if (closing || done.isDone()) {
      answer.completeExceptionally(AgentdException.of(Status.Code.CANCELLED, "the session is closed", null, null));
      return answer;
    }
    pending.put(id, answer);
    Connection c = current;
    try {
      c.send(req.setRequestId(id).build());
    } catch (RuntimeException e) {
      pending.remove(id);
      answer.completeExceptionally(AgentdException.of(Status.Code.UNAVAILABLE,
          "the session stream is broken: " + e.getMessage(), null, e));
    }
    if (c.ended.isDone() && pending.remove(id) != null) {
      // the stream ended around the send: nothing will answer it on this one
      answer.completeExceptionally(AgentdException.of(Status.Code.UNAVAILABLE,
          "the session is reconnecting; retry the send", null, null));
    }
    return answer.thenApply(resp -> {
      AgentdException e = AgentdException.fromStatus(resp.hasError() ? resp.getError() : null);
      if (e != null) {
        throw e;
      }
      return resp;
    });
  }

  private IfIdle withTools(IfIdle ifIdle) {
    if (ifIdle == null || !ifIdle.hasStreamOptions() || options.toolSpecs.isEmpty()) {
      return ifIdle;
    }
    IfIdle.Builder b = ifIdle.toBuilder();
    addTools(b.getStreamOptionsBuilder(), options.toolSpecs);
    return b.build();
  }

  /**
   * Sends a user message into the thread: delivered into the active run, or waking the idle
   * thread. The routing answer of a wake comes before that run's chunks.
   */
  public ConnectRoutingAnswer sendMessage(String text, SendOptions o) {
    return AgentdClient.await(sendMessageAsync(text, o));
  }

  public CompletableFuture<ConnectRoutingAnswer> sendMessageAsync(String text, SendOptions o) {
    ConnectSendMessage.Builder m = ConnectSendMessage.newBuilder().setMessage(o.message(text));
    if (o.ifActive != null) {
      m.setIfActive(o.ifActive);
    }
    IfIdle idle = withTools(o.ifIdle);
    if (idle != null) {
      m.setIfIdle(idle);
    }
    return request(ConnectRequest.newBuilder().setSendMessage(m)).thenApply(ConnectResponse::getRouting);
  }

  /** Queues a user message for the thread's next turn. */
  public ConnectRoutingAnswer queueMessage(String text, SendOptions o) {
    ConnectQueueMessage.Builder m = ConnectQueueMessage.newBuilder().setMessage(o.message(text));
    IfIdle idle = withTools(o.ifIdle);
    if (idle != null) {
      m.setIfIdle(idle);
    }
    return AgentdClient.await(request(ConnectRequest.newBuilder().setQueueMessage(m))).getRouting();
  }

  /** Sends a signal of any type into the thread. */
  public ConnectRoutingAnswer sendSignal(SignalInput signal, SendOptions o) {
    ConnectSendSignal.Builder m = ConnectSendSignal.newBuilder().setSignal(signal);
    if (o.ifActive != null) {
      m.setIfActive(o.ifActive);
    }
    IfIdle idle = withTools(o.ifIdle);
    if (idle != null) {
      m.setIfIdle(idle);
    }
    return AgentdClient.await(request(ConnectRequest.newBuilder().setSendSignal(m))).getRouting();
  }

  /** Sends named thread state (skipped when unchanged). */
  public ConnectRoutingAnswer sendStateSignal(StateSignalInput stateSignal, SendOptions o) {
    ConnectSendStateSignal.Builder m = ConnectSendStateSignal.newBuilder().setState(stateSignal);
    if (o.ifActive != null) {
      m.setIfActive(o.ifActive);
    }
    IfIdle idle = withTools(o.ifIdle);
    if (idle != null) {
      m.setIfIdle(idle);
    }
    return AgentdClient.await(request(ConnectRequest.newBuilder().setSendStateSignal(m))).getRouting();
  }

  /** Aborts the thread's active run (runId "": whichever); the aborted run's id, "" when none. */
  public String abort(String runId) {
    ConnectResponse resp = AgentdClient.await(
        request(ConnectRequest.newBuilder().setAbort(ConnectAbort.newBuilder().setRunId(runId))));
    return resp.getAbort().getAborted() ? resp.getAbort().getRunId() : "";
  }

  /**
   * Answers a client tool call by hand (for tools without a handler); NOT_FOUND
   * (TOOL_CALL_NOT_FOUND) when no such call is waiting.
   */
  public void sendToolResult(String runId, String toolCallId, Object result, boolean isError) {
    Value v = Values.value(result);
    answered.add(toolCallId);
    AgentdClient.await(request(ConnectRequest.newBuilder().setToolResult(
        ConnectToolResult.newBuilder().setRunId(runId).setToolCallId(toolCallId).setResult(v).setIsError(isError))));
  }

  /**
   * The session's chunks (of every run on the thread, with their offsets) in order, until the
   * session ends: after {@link #close()} the loop ends; a stream that failed for good throws its
   * error. Each chunk is yielded once: a new loop continues where the last one stopped.
   */
  public Iterable<Chunk> chunks() {
    return () -> new Iterator<>() {
      private Chunk next;
      private boolean ended;

      @Override
      public boolean hasNext() {
        if (next != null) {
          return true;
        }
        if (ended) {
          return false;
        }
        Object item;
        try {
          item = queue.take();
        } catch (InterruptedException e) {
          java.lang.Thread.currentThread().interrupt();
          throw AgentdException.from(e);
        }
        if (item == END) {
          queue.add(END); // for the next loop
          ended = true;
          AgentdException error = done.getNow(null);
          if (error != null) {
            throw error;
          }
          return false;
        }
        next = (Chunk) item;
        return true;
      }

      @Override
      public Chunk next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        Chunk c = next;
        next = null;
        return c;
      }
    };
  }

  /** The snapshot of the session's latest connection. */
  public ThreadSnapshot snapshot() {
    return snapshot;
  }

  /** Completes when the session has ended: with the error that ended it, or null. */
  public CompletableFuture<AgentdException> done() {
    return done.copy();
  }

  /**
   * Half-closes the stream, waits (at most 5 s) for the server to answer what is pending and end
   * it, then releases the session. Never aborts a run; chunks not yet read stay readable.
   */
  @Override
  public void close() {
    if (!closing) {
      closing = true;
      Connection c = current;
      try {
        c.halfClose();
      } catch (RuntimeException ignored) {
        // the stream already ended
      }
      try {
        done.get(5, TimeUnit.SECONDS);
      } catch (Exception e) {
        c.cancel();
      }
    }
    done.join();
  }
}
