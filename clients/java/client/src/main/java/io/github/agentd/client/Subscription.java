package io.github.agentd.client;

import io.github.agentd.proto.v1.Chunk;
import io.github.agentd.proto.v1.FellBehind;
import io.github.agentd.proto.v1.SubscribeRequest;
import io.github.agentd.proto.v1.SubscribeResponse;
import io.github.agentd.proto.v1.ThreadServiceGrpc;
import io.grpc.Context;
import io.grpc.Status;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A thread's chunks across runs (signal echoes included), with their thread offsets, read in a
 * for-each loop. It reconnects by itself on UNAVAILABLE and when the server says this subscriber
 * fell behind, resuming after the last offset it delivered: the loop sees every chunk once, in
 * order. The loop ends after {@link #close()} (from any thread), or throws the error that ended
 * the subscription for good (e.g. RESUME_OFFSET_EXPIRED). Ending it never aborts a run.
 */
public final class Subscription implements Iterable<Chunk>, AutoCloseable {
  private final ThreadServiceGrpc.ThreadServiceBlockingStub stub;
  private final String thread;
  private final SubscribeOptions options;
  private final ResumeState state;
  private Context.CancellableContext context;
  private boolean closed;
  private boolean started;

  Subscription(ThreadServiceGrpc.ThreadServiceBlockingStub stub, String thread, SubscribeOptions options) {
    this.stub = stub;
    this.thread = thread;
    this.options = options;
    this.state = new ResumeState(options.resume);
  }

  @Override
  public synchronized Iterator<Chunk> iterator() {
    if (started) {
      throw new IllegalStateException("agentd: iterate a subscription once");
    }
    started = true;
    return new Iterator<>() {
      private final ArrayDeque<Chunk> ready = new ArrayDeque<>();
      private Iterator<SubscribeResponse> responses;
      private boolean snapshotSeen;
      private int failures;
      private boolean ended;

      @Override
      public boolean hasNext() {
        while (ready.isEmpty() && !ended) {
          step();
        }
        return !ready.isEmpty();
      }

      @Override
      public Chunk next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return ready.poll();
      }

      private void step() {
        if (isClosed()) {
          ended = true;
          return;
        }
        try {
          if (responses == null) {
            responses = open();
            snapshotSeen = false;
          }
          if (!responses.hasNext()) {
            ended = true; // the server ended the stream
            return;
          }
          handle(responses.next());
        } catch (RuntimeException e) {
          responses = null;
          if (isClosed()) {
            ended = true;
            return;
          }
          AgentdException error = AgentdException.from(e);
          failures++;
          if (error.code() != Status.Code.UNAVAILABLE || !options.reconnect.allows(failures)) {
            ended = true;
            throw error;
          }
          if (!options.reconnect.waitBefore(failures)) {
            ended = true;
          }
        }
      }

      private void handle(SubscribeResponse resp) {
        switch (resp.getEventCase()) {
          case SNAPSHOT -> {
            snapshotSeen = true;
            failures = 0;
            state.snapshot(resp.getSnapshot());
            if (options.onSnapshot != null) {
              options.onSnapshot.accept(resp.getSnapshot());
            }
          }
          case CHUNKS -> {
            if (!snapshotSeen) {
              throw AgentdException.of(Status.Code.INTERNAL, "the subscription did not start with a snapshot", null, null);
            }
            for (Chunk c : resp.getChunks().getChunksList()) {
              if (!state.seen(c)) {
                ready.add(c);
              }
            }
          }
          case FELL_BEHIND -> {
            FellBehind fb = resp.getFellBehind();
            cancelCurrent();
            responses = null;
            if (options.reconnect.attempts() == 0) {
              ended = true;
              throw ResumeState.fellBehindError(fb);
            }
            state.fellBehind(fb);
            failures = 0;
          }
          default -> {}
        }
      }
    };
  }

  private synchronized Iterator<SubscribeResponse> open() {
    if (context != null) {
      context.cancel(null);
    }
    context = Context.current().withCancellation();
    SubscribeRequest.Builder req = SubscribeRequest.newBuilder()
        .setThreadId(thread)
        .setResourceId(options.resource)
        .addAllHideSignals(options.hideSignals);
    var resume = state.current();
    if (resume != null) {
      req.setResume(resume);
    }
    Context previous = context.attach();
    try {
      return stub.subscribe(req.build());
    } finally {
      context.detach(previous);
    }
  }

  private synchronized void cancelCurrent() {
    if (context != null) {
      context.cancel(null);
    }
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  /** Ends the subscription: the loop ends without an error. */
  @Override
  public synchronized void close() {
    closed = true;
    cancelCurrent();
  }
}
