package io.github.agentd.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.agentd.proto.v1.AgentServiceGrpc;
import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.StreamRequest;
import io.github.agentd.proto.v1.StreamResponse;
import io.github.agentd.proto.v1.TextDeltaChunk;
import io.grpc.Context;
import io.grpc.stub.StreamObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Stream as a loop and as a Flow publisher; closing it cancels the call. */
class StreamsTest {
  /** Streams one chunk per word in batches of two; "forever" streams until cancelled. */
  static final class Agents extends AgentServiceGrpc.AgentServiceImplBase {
    final CountDownLatch cancelled = new CountDownLatch(1);

    @Override
    public void stream(StreamRequest req, StreamObserver<StreamResponse> out) {
      if (req.getText().equals("forever")) {
        Context.current().addListener(c -> cancelled.countDown(), Runnable::run);
        out.onNext(batch(1, "tick"));
        return; // never completes: only the client's cancellation ends it
      }
      String[] words = req.getText().split(" ");
      for (int i = 0; i < words.length; i += 2) {
        StreamResponse.Builder b = StreamResponse.newBuilder().addChunks(delta(i + 1, words[i]));
        if (i + 1 < words.length) {
          b.addChunks(delta(i + 2, words[i + 1]));
        }
        out.onNext(b.build());
      }
      out.onCompleted();
    }

    private static StreamResponse batch(long seq, String text) {
      return StreamResponse.newBuilder().addChunks(delta(seq, text)).build();
    }

    private static Chunk delta(long seq, String text) {
      return Chunk.newBuilder().setSeq(seq).setTextDelta(TextDeltaChunk.newBuilder().setText(text)).build();
    }
  }

  @Test
  void theLoopSeesEveryChunkFlattenedInOrder() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      List<String> words = new ArrayList<>();
      try (ResponseStream<Chunk> chunks = client.stream("echo", "one two three")) {
        chunks.forEach(c -> words.add(c.getTextDelta().getText()));
      }
      assertEquals(List.of("one", "two", "three"), words);
      int batches = 0;
      for (StreamResponse ignored : client.streamBatches("echo", "a b c d e", RunOptions.NONE)) {
        batches++;
      }
      assertEquals(3, batches);
    }
  }

  @Test
  void aPublisherDeliversOnDemandAndCompletes() throws Exception {
    try (FakeServer server = new FakeServer(new Agents()); AgentdClient client = server.client()) {
      List<Long> seqs = new ArrayList<>();
      CompletableFuture<Void> complete = new CompletableFuture<>();
      client.stream("echo", "a b c d e").publisher().subscribe(new Flow.Subscriber<Chunk>() {
        private Flow.Subscription subscription;

        @Override
        public void onSubscribe(Flow.Subscription s) {
          subscription = s;
          s.request(1);
        }

        @Override
        public void onNext(Chunk c) {
          synchronized (seqs) {
            seqs.add(c.getSeq());
          }
          subscription.request(1);
        }

        @Override
        public void onError(Throwable t) {
          complete.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
          complete.complete(null);
        }
      });
      complete.get(10, TimeUnit.SECONDS);
      synchronized (seqs) {
        assertEquals(List.of(1L, 2L, 3L, 4L, 5L), seqs);
      }
    }
  }

  @Test
  void aPublisherPassesTheCallsFailureToOnError() throws Exception {
    try (FakeServer server = new FakeServer(new ErrorsTest.Agents()); AgentdClient client = server.client()) {
      CompletableFuture<Throwable> failed = new CompletableFuture<>();
      client.stream("ghost", "x").publisher().subscribe(new Flow.Subscriber<Chunk>() {
        @Override
        public void onSubscribe(Flow.Subscription s) {
          s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Chunk c) {}

        @Override
        public void onError(Throwable t) {
          failed.complete(t);
        }

        @Override
        public void onComplete() {
          failed.complete(null);
        }
      });
      NotFoundException e = assertInstanceOf(NotFoundException.class, failed.get(10, TimeUnit.SECONDS));
      assertEquals(Reasons.AGENT_NOT_FOUND, e.reason());
    }
  }

  @Test
  void leavingTheLoopEarlyCancelsTheCall() throws Exception {
    Agents agents = new Agents();
    try (FakeServer server = new FakeServer(agents); AgentdClient client = server.client()) {
      try (ResponseStream<Chunk> chunks = client.stream("echo", "forever")) {
        for (Chunk c : chunks) {
          assertEquals("tick", c.getTextDelta().getText());
          break;
        }
      }
      assertTrue(agents.cancelled.await(10, TimeUnit.SECONDS), "the server saw no cancellation");
    }
  }
}
