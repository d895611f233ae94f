package io.github.agentd.client;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.protobuf.Empty;
import com.google.protobuf.FieldMask;
import com.google.protobuf.Value;
import io.github.agentd.proto.v1.*;
import io.github.agentd.proto.v1.Thread;
import io.grpc.ChannelCredentials;
import io.grpc.CompositeChannelCredentials;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.stub.AbstractStub;
import io.grpc.stub.MetadataUtils;
import io.opentelemetry.api.baggage.propagation.W3CBaggagePropagator;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.TextMapPropagator;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The agentd client: every RPC of the contract, blocking ({@code generate}) and asynchronous
 * ({@code generateAsync}, a {@link CompletableFuture}); streams as for-each loops or Flow
 * publishers. Failed calls throw (or complete exceptionally with) an {@link AgentdException}.
 *
 * <pre>{@code
 * try (AgentdClient client = AgentdClient.builder("127.0.0.1:50051").insecure().build()) {
 *   System.out.println(client.generate("echo", "hello").getText());
 *   try (var chunks = client.stream("echo", "one two three")) {
 *     for (Chunk c : chunks) {
 *       if (c.hasTextDelta()) System.out.print(c.getTextDelta().getText());
 *     }
 *   }
 * }
 * }</pre>
 */
public final class AgentdClient implements AutoCloseable {
  /** The environment variable read for the bearer token when the builder is given none. */
  public static final String TOKEN_ENV = "AGENTD_TOKEN";

  private final ManagedChannel channel;
  private final boolean owned;
  private final AgentServiceGrpc.AgentServiceFutureStub agents;
  private final AgentServiceGrpc.AgentServiceBlockingStub agentsBlocking;
  private final ThreadServiceGrpc.ThreadServiceFutureStub threads;
  private final ThreadServiceGrpc.ThreadServiceBlockingStub threadsBlocking;
  private final ThreadServiceGrpc.ThreadServiceStub threadsAsync;
  private final SignalServiceGrpc.SignalServiceFutureStub signals;
  private final CacheServiceGrpc.CacheServiceFutureStub cache;

  private AgentdClient(ManagedChannel channel, boolean owned) {
    this.channel = channel;
    this.owned = owned;
    agents = AgentServiceGrpc.newFutureStub(channel);
    agentsBlocking = AgentServiceGrpc.newBlockingStub(channel);
    threads = ThreadServiceGrpc.newFutureStub(channel);
    threadsBlocking = ThreadServiceGrpc.newBlockingStub(channel);
    threadsAsync = ThreadServiceGrpc.newStub(channel);
    signals = SignalServiceGrpc.newFutureStub(channel);
    cache = CacheServiceGrpc.newFutureStub(channel);
  }

  /** A client of the agentd at a gRPC target ("host:port", "dns:///host:port", "unix:path"). */
  public static Builder builder(String target) {
    return new Builder(target);
  }

  /**
   * Wraps a channel built by the caller (interceptors, credentials and all); {@link #close()}
   * leaves it open.
   */
  public static AgentdClient wrap(ManagedChannel channel) {
    return new AgentdClient(channel, false);
  }

  /** The channel, for the raw stubs of gen/java. */
  public ManagedChannel channel() {
    return channel;
  }

  /** Shuts the channel down (when this client built it), waiting up to 5 s for calls to end. */
  @Override
  public void close() {
    if (!owned) {
      return;
    }
    channel.shutdown();
    try {
      if (!channel.awaitTermination(5, TimeUnit.SECONDS)) {
        channel.shutdownNow();
      }
    } catch (InterruptedException e) {
      channel.shutdownNow();
      java.lang.Thread.currentThread().interrupt();
    }
  }

  // --- plumbing

  /** A ListenableFuture as a CompletableFuture failing with an AgentdException. */
  static <T> CompletableFuture<T> future(ListenableFuture<T> call) {
    CompletableFuture<T> out = new CompletableFuture<>() {
      @Override
      public boolean cancel(boolean mayInterrupt) {
        call.cancel(mayInterrupt);
        return super.cancel(mayInterrupt);
      }
    };
    Futures.addCallback(call, new FutureCallback<T>() {
      @Override
      public void onSuccess(T result) {
        out.complete(result);
      }

      @Override
      public void onFailure(Throwable t) {
        out.completeExceptionally(AgentdException.from(t));
      }
    }, MoreExecutors.directExecutor());
    return out;
  }

  /** Waits for an async call: its result, or its AgentdException. */
  static <T> T await(CompletableFuture<T> call) {
    try {
      return call.join();
    } catch (CompletionException e) {
      throw AgentdException.from(e);
    }
  }

  private static <S extends AbstractStub<S>> S per(S stub, RunOptions o) {
    if (o.metadata.keys().size() > 0) {
      stub = stub.withInterceptors(MetadataUtils.newAttachHeadersInterceptor(o.metadata));
    }
    if (o.timeout != null) {
      stub = stub.withDeadlineAfter(o.timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
    return stub;
  }

  private static List<Message> input(RunOptions o, String text) {
    if (o.messages.isEmpty()) {
      return null;
    }
    List<Message> out = new ArrayList<>(o.messages);
    if (text != null && !text.isEmpty()) {
      out.add(Values.userText(text));
    }
    return out;
  }

  // --- agents

  /**
   * Runs an agent to completion. A failed run (a provider error) or an aborted one throws
   * (MODEL_ERROR, ABORTED, ...); a tripwire does not: the response carries it (finish reason OTHER).
   */
  public GenerateResponse generate(String agent, String text) {
    return await(generateAsync(agent, text, RunOptions.NONE));
  }

  public GenerateResponse generate(String agent, String text, RunOptions options) {
    return await(generateAsync(agent, text, options));
  }

  public CompletableFuture<GenerateResponse> generateAsync(String agent, String text, RunOptions options) {
    GenerateRequest.Builder req = GenerateRequest.newBuilder().setAgentId(agent).setOptions(options.execution);
    List<Message> messages = input(options, text);
    if (messages == null) {
      req.setText(text == null ? "" : text);
    } else {
      req.addAllMessages(messages);
    }
    return future(per(agents, options).generate(req.build()));
  }

  /**
   * Runs an agent and yields its chunks in seq order: start first; finish, error or abort last.
   * A failure of the run itself is an error chunk; a caller's mistake (unknown agent, invalid
   * options) throws from the loop. Closing the stream early cancels the call, which aborts the
   * run unless {@code keepRunning()} was given on a thread-bound run.
   */
  public ResponseStream<Chunk> stream(String agent, String text) {
    return stream(agent, text, RunOptions.NONE);
  }

  public ResponseStream<Chunk> stream(String agent, String text, RunOptions options) {
    return streamBatches(agent, text, options).flatMap(StreamResponse::getChunksList);
  }

  /** {@link #stream} without flattening: each response message (one or more chunks). */
  public ResponseStream<StreamResponse> streamBatches(String agent, String text, RunOptions options) {
    StreamRequest.Builder req = StreamRequest.newBuilder()
        .setAgentId(agent).setOptions(options.execution).setKeepRunning(options.keepRunning);
    List<Message> messages = input(options, text);
    if (messages == null) {
      req.setText(text == null ? "" : text);
    } else {
      req.addAllMessages(messages);
    }
    StreamRequest request = req.build();
    return new ResponseStream<>(() -> per(agentsBlocking, options).stream(request));
  }

  /** One agent; NOT_FOUND (AGENT_NOT_FOUND) for an unknown id. */
  public Agent getAgent(String agent) {
    return await(getAgentAsync(agent));
  }

  public CompletableFuture<Agent> getAgentAsync(String agent) {
    return future(agents.getAgent(GetAgentRequest.newBuilder().setAgentId(agent).build()))
        .thenApply(GetAgentResponse::getAgent);
  }

  // Editor overrides: the fields UpdateAgentOverrides's mask names (instructions, tools,
  // tool_descriptions, tool_descriptions.<tool>) are written; admin only; a field the agent's
  // editor policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED). Each write returns its version.

  public AgentOverrides getAgentOverrides(String agent) {
    return await(future(agents.getAgentOverrides(GetAgentOverridesRequest.newBuilder().setAgentId(agent).build()))
        .thenApply(GetAgentOverridesResponse::getOverrides));
  }

  public AgentOverrides updateAgentOverrides(AgentOverrides overrides, List<String> paths) {
    UpdateAgentOverridesRequest req = UpdateAgentOverridesRequest.newBuilder()
        .setOverrides(overrides).setUpdateMask(FieldMask.newBuilder().addAllPaths(paths)).build();
    return await(future(agents.updateAgentOverrides(req)).thenApply(UpdateAgentOverridesResponse::getOverrides));
  }

  public AgentOverrides deleteAgentOverrides(String agent) {
    return await(future(agents.deleteAgentOverrides(DeleteAgentOverridesRequest.newBuilder().setAgentId(agent).build()))
        .thenApply(DeleteAgentOverridesResponse::getOverrides));
  }

  /** One page of an agent's override versions, newest first. */
  public ListAgentOverrideVersionsResponse listAgentOverrideVersions(String agent, ListOptions o) {
    return await(future(agents.listAgentOverrideVersions(ListAgentOverrideVersionsRequest.newBuilder()
        .setAgentId(agent).setPageSize(o.pageSize).setPageToken(o.pageToken).build())));
  }

  public AgentOverrides restoreAgentOverrides(String agent, long version) {
    return await(future(agents.restoreAgentOverrides(
        RestoreAgentOverridesRequest.newBuilder().setAgentId(agent).setVersion(version).build()))
        .thenApply(RestoreAgentOverridesResponse::getOverrides));
  }

  /** One page of agents. */
  public ListAgentsResponse listAgents(ListOptions options) {
    return await(listAgentsAsync(options));
  }

  public CompletableFuture<ListAgentsResponse> listAgentsAsync(ListOptions o) {
    ListAgentsRequest.Builder req = ListAgentsRequest.newBuilder().setPageSize(o.pageSize).setPageToken(o.pageToken);
    if (o.metadataFilter != null) {
      req.setMetadataFilter(Values.struct(o.metadataFilter));
    }
    return future(agents.listAgents(req.build()));
  }

  /** Every agent, page after page. */
  public Iterable<Agent> agents(ListOptions options) {
    return Pages.of(options, o -> {
      ListAgentsResponse r = listAgents(o);
      return new Pages.Page<>(r.getAgentsList(), r.getNextPageToken());
    });
  }

  /**
   * One page of the live scorers' scores, newest first, filtered by {@code scoreFilter} (agent,
   * thread, run, scorer) and {@code timeRange} (created at or after the start, before the end).
   */
  public ListScoresResponse listScores(ListOptions options) {
    return await(listScoresAsync(options));
  }

  public CompletableFuture<ListScoresResponse> listScoresAsync(ListOptions o) {
    ListScoresRequest.Builder req = ListScoresRequest.newBuilder()
        .setAgentId(o.agent).setThreadId(o.thread).setRunId(o.run).setScorer(o.scorer)
        .setPageSize(o.pageSize).setPageToken(o.pageToken);
    if (o.start != null) {
      req.setStartTime(o.start);
    }
    if (o.end != null) {
      req.setEndTime(o.end);
    }
    return future(agents.listScores(req.build()));
  }

  /** Every score the options' filter matches, page after page, newest first. */
  public Iterable<Score> scores(ListOptions options) {
    return Pages.of(options, o -> {
      ListScoresResponse r = listScores(o);
      return new Pages.Page<>(r.getScoresList(), r.getNextPageToken());
    });
  }

  // --- threads and messages

  public Thread createThread(Thread thread) {
    return await(createThreadAsync(thread));
  }

  public CompletableFuture<Thread> createThreadAsync(Thread thread) {
    return future(threads.createThread(CreateThreadRequest.newBuilder().setThread(thread).build()))
        .thenApply(CreateThreadResponse::getThread);
  }

  /** The thread and its active run id ("" when idle); resource may be "" (not checked). */
  public GetThreadResponse getThread(String threadId, String resource) {
    return await(getThreadAsync(threadId, resource));
  }

  public CompletableFuture<GetThreadResponse> getThreadAsync(String threadId, String resource) {
    return future(threads.getThread(
        GetThreadRequest.newBuilder().setThreadId(threadId).setResourceId(resource).build()));
  }

  public ListThreadsResponse listThreads(String resource, ListOptions options) {
    return await(listThreadsAsync(resource, options));
  }

  public CompletableFuture<ListThreadsResponse> listThreadsAsync(String resource, ListOptions o) {
    ListThreadsRequest.Builder req = ListThreadsRequest.newBuilder()
        .setResourceId(resource).setPageSize(o.pageSize).setPageToken(o.pageToken);
    if (o.metadataFilter != null) {
      req.setMetadataFilter(Values.struct(o.metadataFilter));
    }
    return future(threads.listThreads(req.build()));
  }

  /** Every thread of a resource, page after page. */
  public Iterable<Thread> threads(String resource, ListOptions options) {
    return Pages.of(options, o -> {
      ListThreadsResponse r = listThreads(resource, o);
      return new Pages.Page<>(r.getThreadsList(), r.getNextPageToken());
    });
  }

  /** Updates the named fields ("title", "metadata") of a thread. */
  public Thread updateThread(Thread thread, String... fields) {
    return await(updateThreadAsync(thread, fields));
  }

  public CompletableFuture<Thread> updateThreadAsync(Thread thread, String... fields) {
    UpdateThreadRequest req = UpdateThreadRequest.newBuilder()
        .setThread(thread).setUpdateMask(FieldMask.newBuilder().addAllPaths(List.of(fields))).build();
    return future(threads.updateThread(req)).thenApply(UpdateThreadResponse::getThread);
  }

  public void deleteThread(String threadId, String resource) {
    await(deleteThreadAsync(threadId, resource));
  }

  public CompletableFuture<Void> deleteThreadAsync(String threadId, String resource) {
    return future(threads.deleteThread(
        DeleteThreadRequest.newBuilder().setThreadId(threadId).setResourceId(resource).build()))
        .thenApply(r -> null);
  }

  /** One page of a thread's messages. */
  public ListMessagesResponse listMessages(String threadId, ListOptions options) {
    return await(listMessagesAsync(threadId, options));
  }

  public CompletableFuture<ListMessagesResponse> listMessagesAsync(String threadId, ListOptions o) {
    ListMessagesRequest.Builder req = ListMessagesRequest.newBuilder()
        .setThreadId(threadId).setResourceId(o.resource).setPageSize(o.pageSize).setPageToken(o.pageToken)
        .setOrder(o.order).setIncludeSystemReminders(o.systemReminders);
    if (o.start != null) {
      req.setStartTime(o.start);
    }
    if (o.end != null) {
      req.setEndTime(o.end);
    }
    return future(threads.listMessages(req.build()));
  }

  /** Every message of a thread, page after page. */
  public Iterable<Message> messages(String threadId, ListOptions options) {
    return Pages.of(options, o -> {
      ListMessagesResponse r = listMessages(threadId, o);
      return new Pages.Page<>(r.getMessagesList(), r.getNextPageToken());
    });
  }

  /** Aborts the thread's active run (runId "": whichever); the aborted run's id, "" when none. */
  public String abortRun(String threadId, String resource, String runId) {
    return await(abortRunAsync(threadId, resource, runId));
  }

  public CompletableFuture<String> abortRunAsync(String threadId, String resource, String runId) {
    AbortRunRequest req = AbortRunRequest.newBuilder()
        .setThreadId(threadId).setResourceId(resource).setRunId(runId).build();
    return future(threads.abortRun(req)).thenApply(r -> r.getAborted() ? r.getRunId() : "");
  }

  /** Follows a thread's chunks across runs; see {@link Subscription}. */
  public Subscription subscribe(String threadId, SubscribeOptions options) {
    return new Subscription(threadsBlocking, threadId, options);
  }

  /**
   * Opens a two-way session on a thread: sends answered on the stream, every run's chunks, client
   * tools answered by local functions; returns once the server answered with the snapshot.
   */
  public Session connect(String agent, String resource, String threadId, SessionOptions options) {
    return Session.open(threadsAsync, agent, resource, threadId, options);
  }

  // --- signals and notifications

  /** A target of a thread of a resource. */
  public static SignalTarget threadTarget(String resource, String threadId) {
    return SignalTarget.newBuilder().setResourceId(resource).setThreadId(threadId).build();
  }

  /** A target of one run. */
  public static SignalTarget runTarget(String runId) {
    return SignalTarget.newBuilder().setRunId(runId).build();
  }

  /** Sends a user message: delivered into the active run, or waking the idle thread. */
  public SendMessageResponse sendMessage(String agent, SignalTarget target, String text, SendOptions options) {
    return await(sendMessageAsync(agent, target, text, options));
  }

  public CompletableFuture<SendMessageResponse> sendMessageAsync(
      String agent, SignalTarget target, String text, SendOptions o) {
    SendMessageRequest.Builder req = SendMessageRequest.newBuilder()
        .setAgentId(agent).setTarget(target).setMessage(o.message(text));
    if (o.ifActive != null) {
      req.setIfActive(o.ifActive);
    }
    if (o.ifIdle != null) {
      req.setIfIdle(o.ifIdle);
    }
    return future(signals.sendMessage(req.build()));
  }

  /** Queues a user message for the thread's next turn. */
  public QueueMessageResponse queueMessage(String agent, SignalTarget target, String text, SendOptions options) {
    return await(queueMessageAsync(agent, target, text, options));
  }

  public CompletableFuture<QueueMessageResponse> queueMessageAsync(
      String agent, SignalTarget target, String text, SendOptions o) {
    QueueMessageRequest.Builder req = QueueMessageRequest.newBuilder()
        .setAgentId(agent).setTarget(target).setMessage(o.message(text));
    if (o.ifIdle != null) {
      req.setIfIdle(o.ifIdle);
    }
    return future(signals.queueMessage(req.build()));
  }

  /** Sends a signal of any type. */
  public SendSignalResponse sendSignal(String agent, SignalTarget target, SignalInput signal, SendOptions options) {
    return await(sendSignalAsync(agent, target, signal, options));
  }

  public CompletableFuture<SendSignalResponse> sendSignalAsync(
      String agent, SignalTarget target, SignalInput signal, SendOptions o) {
    SendSignalRequest.Builder req = SendSignalRequest.newBuilder().setAgentId(agent).setTarget(target).setSignal(signal);
    if (o.ifActive != null) {
      req.setIfActive(o.ifActive);
    }
    if (o.ifIdle != null) {
      req.setIfIdle(o.ifIdle);
    }
    return future(signals.sendSignal(req.build()));
  }

  /** Sends named thread state (skipped when unchanged). */
  public SendStateSignalResponse sendStateSignal(
      String agent, SignalTarget target, StateSignalInput state, SendOptions options) {
    return await(sendStateSignalAsync(agent, target, state, options));
  }

  public CompletableFuture<SendStateSignalResponse> sendStateSignalAsync(
      String agent, SignalTarget target, StateSignalInput state, SendOptions o) {
    SendStateSignalRequest.Builder req = SendStateSignalRequest.newBuilder()
        .setAgentId(agent).setTarget(target).setState(state);
    if (o.ifActive != null) {
      req.setIfActive(o.ifActive);
    }
    if (o.ifIdle != null) {
      req.setIfIdle(o.ifIdle);
    }
    return future(signals.sendStateSignal(req.build()));
  }

  /** Sends a notification to a thread; wakeOptions of the options run an idle thread's delivery. */
  public SendNotificationResponse sendNotification(
      String agent, String resource, String threadId, NotificationInput notification, SendOptions options) {
    return await(sendNotificationAsync(agent, resource, threadId, notification, options));
  }

  public CompletableFuture<SendNotificationResponse> sendNotificationAsync(
      String agent, String resource, String threadId, NotificationInput notification, SendOptions o) {
    SendNotificationRequest.Builder req = SendNotificationRequest.newBuilder()
        .setAgentId(agent).setResourceId(resource).setThreadId(threadId).setNotification(notification);
    if (o.ifIdle != null && o.ifIdle.hasStreamOptions()) {
      req.setIdleStreamOptions(o.ifIdle.getStreamOptions());
    }
    return future(signals.sendNotification(req.build()));
  }

  public ListNotificationsResponse listNotifications(String threadId, ListOptions options) {
    return await(listNotificationsAsync(threadId, options));
  }

  public CompletableFuture<ListNotificationsResponse> listNotificationsAsync(String threadId, ListOptions o) {
    return future(signals.listNotifications(ListNotificationsRequest.newBuilder()
        .setThreadId(threadId).setResourceId(o.resource).setAgentId(o.agent)
        .addAllStatuses(o.statuses).addAllPriorities(o.priorities).setSource(o.source).setSearch(o.search)
        .setPageSize(o.pageSize).setPageToken(o.pageToken).build()));
  }

  /** Every notification of a thread, page after page. */
  public Iterable<Notification> notifications(String threadId, ListOptions options) {
    return Pages.of(options, o -> {
      ListNotificationsResponse r = listNotifications(threadId, o);
      return new Pages.Page<>(r.getNotificationsList(), r.getNextPageToken());
    });
  }

  public Notification updateNotificationStatus(String threadId, String notificationId, NotificationStatus status) {
    return await(updateNotificationStatusAsync(threadId, notificationId, status));
  }

  public CompletableFuture<Notification> updateNotificationStatusAsync(
      String threadId, String notificationId, NotificationStatus status) {
    return future(signals.updateNotificationStatus(UpdateNotificationStatusRequest.newBuilder()
        .setThreadId(threadId).setNotificationId(notificationId).setStatus(status).build()))
        .thenApply(UpdateNotificationStatusResponse::getNotification);
  }

  // --- cache

  /** The value under a key, empty when missing. */
  public Optional<Value> getCacheEntry(String key) {
    return await(getCacheEntryAsync(key));
  }

  public CompletableFuture<Optional<Value>> getCacheEntryAsync(String key) {
    return future(cache.getCacheEntry(GetCacheEntryRequest.newBuilder().setKey(key).build()))
        .thenApply(r -> r.getFound() ? Optional.of(r.getValue()) : Optional.empty());
  }

  /** Stores a JSON-like value (see {@link Values#value}); ttl null: the server's default. */
  public void setCacheEntry(String key, Object value, Duration ttl, boolean pinned) {
    await(setCacheEntryAsync(key, value, ttl, pinned));
  }

  public CompletableFuture<Void> setCacheEntryAsync(String key, Object value, Duration ttl, boolean pinned) {
    SetCacheEntryRequest.Builder req = SetCacheEntryRequest.newBuilder()
        .setKey(key).setValue(Values.value(value)).setPinned(pinned);
    if (ttl != null) {
      req.setTtl(com.google.protobuf.Duration.newBuilder().setSeconds(ttl.getSeconds()).setNanos(ttl.getNano()));
    }
    return future(cache.setCacheEntry(req.build())).thenApply(r -> null);
  }

  /** Whether the key was there. */
  public boolean deleteCacheEntry(String key) {
    return await(deleteCacheEntryAsync(key));
  }

  public CompletableFuture<Boolean> deleteCacheEntryAsync(String key) {
    return future(cache.deleteCacheEntry(DeleteCacheEntryRequest.newBuilder().setKey(key).build()))
        .thenApply(DeleteCacheEntryResponse::getDeleted);
  }

  /** Deletes every entry under a key prefix; how many. */
  public long clearCache(String prefix) {
    return await(clearCacheAsync(prefix));
  }

  public CompletableFuture<Long> clearCacheAsync(String prefix) {
    return future(cache.clearCache(ClearCacheRequest.newBuilder().setPrefix(prefix).build()))
        .thenApply(ClearCacheResponse::getDeletedCount);
  }

  public GetCacheStatsResponse getCacheStats() {
    return await(getCacheStatsAsync());
  }

  public CompletableFuture<GetCacheStatsResponse> getCacheStatsAsync() {
    return future(cache.getCacheStats(GetCacheStatsRequest.getDefaultInstance()));
  }

  /**
   * Drops an agent's cached responses: of one scope, of the unscoped entries (scope ""), or all
   * (scope null). How many.
   */
  public long invalidateResponseCache(String agent, String scope) {
    return await(invalidateResponseCacheAsync(agent, scope));
  }

  public CompletableFuture<Long> invalidateResponseCacheAsync(String agent, String scope) {
    InvalidateResponseCacheRequest.Builder req = InvalidateResponseCacheRequest.newBuilder().setAgentId(agent);
    if (scope != null && !scope.isEmpty()) {
      req.setScope(scope);
    } else if (scope != null) {
      req.setNoScope(Empty.getDefaultInstance());
    }
    return future(cache.invalidateResponseCache(req.build()))
        .thenApply(InvalidateResponseCacheResponse::getDeletedCount);
  }

  /** Builds an AgentdClient: TLS with the system's roots unless told otherwise. */
  public static final class Builder {
    private final String target;
    private boolean insecure;
    private Tls tls = Tls.system();
    private ChannelCredentials credentials;
    private String token;
    private boolean tokenGiven;
    private io.grpc.CallCredentials callCredentials;
    private final Metadata metadata = new Metadata();
    private Duration timeout;
    private Duration keepaliveTime;
    private Duration keepaliveTimeout;
    private TextMapPropagator propagator =
        TextMapPropagator.composite(W3CTraceContextPropagator.getInstance(), W3CBaggagePropagator.getInstance());
    private Function<ManagedChannelBuilder<?>, ManagedChannelBuilder<?>> customize = Function.identity();

    private Builder(String target) {
      this.target = target;
    }

    /** Plaintext (a local server, or a sidecar that terminates TLS). */
    public Builder insecure() {
      insecure = true;
      return this;
    }

    /** TLS from PEM files (a CA, and a client certificate for mutual TLS). */
    public Builder tls(Tls files) {
      insecure = false;
      tls = files;
      return this;
    }

    /** Channel credentials of your own (TlsChannelCredentials with a custom trust manager, ...). */
    public Builder channelCredentials(ChannelCredentials creds) {
      credentials = creds;
      return this;
    }

    /**
     * A bearer token on every call; null or "" sends none, whatever {@code $AGENTD_TOKEN} holds.
     * Over plaintext it goes only to a loopback target: {@link #build()} fails for any other.
     *
     * <p>Without this, the client sends {@code $AGENTD_TOKEN} ({@link AgentdClient#TOKEN_ENV}) the
     * same way, unless {@link #callCredentials} or an {@code authorization} {@link #metadata} entry
     * say who the caller is. A token beside an {@code authorization} metadata entry is refused.
     */
    public Builder token(String bearer) {
      token = bearer;
      tokenGiven = true;
      return this;
    }

    /**
     * Any other per-call credentials (instead of a token, given or from $AGENTD_TOKEN): a {@link
     * BearerToken} that allows plaintext, OAuth, ...
     */
    public Builder callCredentials(io.grpc.CallCredentials creds) {
      callCredentials = creds;
      return this;
    }

    /** Metadata sent with every call. */
    public Builder metadata(String key, String value) {
      metadata.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);
      return this;
    }

    /** The default deadline of unary calls. */
    public Builder timeout(Duration d) {
      timeout = d;
      return this;
    }

    /** HTTP/2 keepalive pings: every {@code time}, failing after {@code pingTimeout}. */
    public Builder keepalive(Duration time, Duration pingTimeout) {
      keepaliveTime = time;
      keepaliveTimeout = pingTimeout;
      return this;
    }

    /** The propagator of the caller's trace context (default W3C traceparent and baggage; null: none). */
    public Builder propagator(TextMapPropagator p) {
      propagator = p;
      return this;
    }

    /** Anything else of the channel (message sizes, executors, load balancing, ...). */
    public Builder channel(Function<ManagedChannelBuilder<?>, ManagedChannelBuilder<?>> edit) {
      customize = edit;
      return this;
    }

    public AgentdClient build() {
      ChannelCredentials transport = credentials != null ? credentials
          : insecure ? InsecureChannelCredentials.create() : tls.credentials();
      boolean plaintext = credentials == null && insecure;
      io.grpc.CallCredentials perCall = callCredentials != null ? callCredentials : bearerToken(plaintext);
      if (perCall != null) {
        transport = CompositeChannelCredentials.create(transport, perCall);
      }
      ManagedChannelBuilder<?> b = Grpc.newChannelBuilder(target, transport)
          .intercept(new CallInterceptor(metadata, timeout, propagator));
      if (keepaliveTime != null) {
        b.keepAliveTime(keepaliveTime.toNanos(), TimeUnit.NANOSECONDS)
            .keepAliveTimeout(keepaliveTimeout.toNanos(), TimeUnit.NANOSECONDS)
            .keepAliveWithoutCalls(true);
      }
      return new AgentdClient(customize.apply(b).build(), true);
    }

    /**
     * The token's credentials when the caller brings no call credentials, if any: the given token,
     * else $AGENTD_TOKEN's unless an authorization metadata entry says who the caller is; refused
     * when it would cross the network in clear.
     */
    private BearerToken bearerToken(boolean plaintext) {
      boolean authorization = metadata.containsKey(BearerToken.AUTHORIZATION);
      String bearer = null;
      String source = "a token";
      if (tokenGiven) {
        bearer = strip(token);
        if (bearer != null && authorization) {
          throw new IllegalArgumentException("agentd: give token(...) or an authorization metadata entry, not both");
        }
      } else if (!authorization) {
        bearer = strip(System.getenv(TOKEN_ENV));
        source = "a token from $" + TOKEN_ENV;
      }
      if (bearer == null) {
        return null;
      }
      if (plaintext && !BearerToken.isLoopback(target)) {
        throw new IllegalArgumentException("agentd: " + source + " over plaintext to " + target
            + " would cross the network in clear: use TLS, token(\"\") to send none,"
            + " or callCredentials(new BearerToken(token, true))");
      }
      return new BearerToken(bearer, plaintext);
    }

    private static String strip(String s) {
      return s == null || s.isBlank() ? null : s.strip();
    }
  }
}
