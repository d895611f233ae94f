package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.ChunkBatch;
import io.github.agentd.proto.v1.SubscribeRequest;
import io.github.agentd.proto.v1.SubscribeResponse;
import io.github.agentd.proto.v1.TextDeltaChunk;
import io.github.agentd.proto.v1.ThreadServiceGrpc;
import io.github.agentd.proto.v1.ThreadSnapshot;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.opentelemetry.context.Scope;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Credentials, metadata, trace context and subscription resumption over a real gRPC server. */
class CallsTest {
  private static final Metadata.Key<String> AUTHORIZATION = Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> TRACEPARENT = Metadata.Key.of("traceparent", Metadata.ASCII_STRING_MARSHALLER);
  private static final Metadata.Key<String> TENANT = Metadata.Key.of("x-tenant", Metadata.ASCII_STRING_MARSHALLER);

  @Test
  void aTokenOverPlaintextGoesOnlyToALoopbackTarget() throws Exception {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> AgentdClient.builder("agentd.internal:50051").insecure().token("secret").build());
    assertTrue(e.getMessage().contains("in clear"), e.getMessage());
    assertThrows(IllegalArgumentException.class,
        () -> AgentdClient.builder("10.1.2.3:50051").insecure().token("secret").build());
    assertTrue(BearerToken.isLoopback("127.0.0.1:1"));
    assertTrue(BearerToken.isLoopback("dns:///localhost:1"));
    assertTrue(BearerToken.isLoopback("[::1]:1"));
    assertTrue(BearerToken.isLoopback("unix:/tmp/agentd.sock"));
    assertFalse(BearerToken.isLoopback("example.com:1"));

    try (FakeServer server = new FakeServer(new ErrorsTest.Agents());
        AgentdClient client = AgentdClient.builder(server.target()).insecure().token("secret")
            .metadata("x-tenant", "acme").build()) {
      client.generate("a", "hi");
      Metadata h = server.headers.poll(5, TimeUnit.SECONDS);
      assertEquals("Bearer secret", h.get(AUTHORIZATION));
      assertEquals("acme", h.get(TENANT));
    }
  }

  @Test
  void theCallersSpanTravelsAsTraceparent() throws Exception {
    SpanContext span = SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331",
        TraceFlags.getSampled(), TraceState.getDefault());
    try (FakeServer server = new FakeServer(new ErrorsTest.Agents()); AgentdClient client = server.client()) {
      client.generate("a", "untraced");
      assertNull(server.headers.poll(5, TimeUnit.SECONDS).get(TRACEPARENT));
      Scope scope = Span.wrap(span).makeCurrent();
      try {
        client.generate("a", "traced");
        client.generateAsync("a", "traced async", RunOptions.NONE).join();
      } finally {
        scope.close();
      }
      for (int i = 0; i < 2; i++) {
        assertEquals("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            server.headers.poll(5, TimeUnit.SECONDS).get(TRACEPARENT));
      }
    }
  }

  /** First connection: snapshot, offsets 1-2, then UNAVAILABLE; later ones replay from the resume point. */
  static final class Threads extends ThreadServiceGrpc.ThreadServiceImplBase {
    final List<SubscribeRequest> requests = new CopyOnWriteArrayList<>();

    @Override
    public void subscribe(SubscribeRequest req, StreamObserver<SubscribeResponse> out) {
      requests.add(req);
      out.onNext(SubscribeResponse.newBuilder()
          .setSnapshot(ThreadSnapshot.newBuilder().setLogEpoch("e1").setThreadId(req.getThreadId())).build());
      if (requests.size() == 1) {
        out.onNext(batch(1, 2));
        out.onError(Status.UNAVAILABLE.withDescription("server shutting down").asRuntimeException());
        return;
      }
      long after = req.getResume().getAfterOffset();
      out.onNext(batch(after, 4)); // replays the last delivered one too: the client drops it
      out.onCompleted();
    }

    private static SubscribeResponse batch(long from, long to) {
      ChunkBatch.Builder b = ChunkBatch.newBuilder();
      for (long o = from; o <= to; o++) {
        b.addChunks(Chunk.newBuilder().setOffset(o).setTextDelta(TextDeltaChunk.newBuilder().setText("c" + o)));
      }
      return SubscribeResponse.newBuilder().setChunks(b).build();
    }
  }

  @Test
  void aSubscriptionReconnectsAndResumesAfterTheLastOffset() throws Exception {
    Threads threads = new Threads();
    List<ThreadSnapshot> snapshots = new CopyOnWriteArrayList<>();
    try (FakeServer server = new FakeServer(threads); AgentdClient client = server.client()) {
      List<Long> offsets = new ArrayList<>();
      try (Subscription sub = client.subscribe("t1", SubscribeOptions.builder().resource("r1")
          .reconnect(3, Duration.ofMillis(1), Duration.ofMillis(5)).onSnapshot(snapshots::add).build())) {
        for (Chunk c : sub) {
          offsets.add(c.getOffset());
        }
      }
      assertEquals(List.of(1L, 2L, 3L, 4L), offsets);
      assertEquals(2, threads.requests.size());
      assertFalse(threads.requests.get(0).hasResume());
      assertEquals("e1", threads.requests.get(1).getResume().getLogEpoch());
      assertEquals(2L, threads.requests.get(1).getResume().getAfterOffset());
      assertEquals("r1", threads.requests.get(1).getResourceId());
      assertEquals(2, snapshots.size());
    }
  }

  @Test
  void withoutReconnectionTheFailureEndsTheLoop() throws Exception {
    try (FakeServer server = new FakeServer(new Threads()); AgentdClient client = server.client()) {
      List<Long> offsets = new ArrayList<>();
      UnavailableException e = assertThrows(UnavailableException.class, () -> {
        try (Subscription sub = client.subscribe("t1", SubscribeOptions.builder().noReconnect().build())) {
          sub.forEach(c -> offsets.add(c.getOffset()));
        }
      });
      assertEquals(List.of(1L, 2L), offsets);
      assertTrue(e.getMessage().contains("shutting down"), e.getMessage());
    }
  }
}
