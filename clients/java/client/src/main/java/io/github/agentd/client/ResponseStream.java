package io.github.agentd.client;

import io.grpc.Context;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.SubmissionPublisher;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The items of a server stream, read one by one in a for-each loop (the reader's pace is the
 * stream's flow control), or pushed to a {@link Flow.Subscriber} with {@link #publisher()}.
 *
 * <p>The call starts when the iteration starts and ends when it does; {@link #close()} (or
 * leaving a try-with-resources block) cancels it, which aborts a run unless {@code keepRunning}
 * was given. A failed call throws an {@link AgentdException} from {@code hasNext}/{@code next}.
 * One stream is one call: iterate it once.
 */
public class ResponseStream<T> implements Iterable<T>, AutoCloseable {
  private final Supplier<Iterator<T>> open;
  private Context.CancellableContext context;
  private boolean started;

  ResponseStream(Supplier<Iterator<T>> open) {
    this.open = open;
  }

  /** A stream of the same call whose items are mapped one to many (batches to chunks). */
  <U> ResponseStream<U> flatMap(Function<T, Iterable<U>> items) {
    ResponseStream<T> outer = this;
    return new ResponseStream<>(() -> new Iterator<U>() {
      private final Iterator<T> batches = outer.iterator();
      private Iterator<U> current = java.util.Collections.emptyIterator();

      @Override
      public boolean hasNext() {
        while (!current.hasNext()) {
          if (!batches.hasNext()) {
            return false;
          }
          current = items.apply(batches.next()).iterator();
        }
        return true;
      }

      @Override
      public U next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return current.next();
      }
    }) {
      @Override
      public void close() {
        outer.close();
      }
    };
  }

  @Override
  public synchronized Iterator<T> iterator() {
    if (started) {
      throw new IllegalStateException("agentd: a stream is one call; iterate it once");
    }
    started = true;
    context = Context.current().withCancellation();
    Iterator<T> items;
    Context previous = context.attach();
    try {
      items = open.get();
    } catch (RuntimeException e) {
      throw AgentdException.from(e);
    } finally {
      context.detach(previous);
    }
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        try {
          return items.hasNext();
        } catch (RuntimeException e) {
          if (isCancelled()) {
            return false;
          }
          throw AgentdException.from(e);
        }
      }

      @Override
      public T next() {
        if (!hasNext()) {
          throw new NoSuchElementException();
        }
        return items.next();
      }
    };
  }

  private synchronized boolean isCancelled() {
    return context != null && context.isCancelled();
  }

  /** Cancels the call (a no-op once it ended). */
  @Override
  public synchronized void close() {
    started = true;
    if (context != null) {
      context.cancel(null);
    }
  }

  /**
   * The stream as a Flow publisher for one subscriber, delivering on the common pool: the call is
   * read on a thread of its own as the subscriber's demand allows (a full buffer holds the
   * reading back); a failure is onError; cancelling the subscription cancels the call.
   */
  public Flow.Publisher<T> publisher() {
    return publisher(ForkJoinPool.commonPool());
  }

  /** {@link #publisher()} delivering on an executor of the caller's. */
  public Flow.Publisher<T> publisher(Executor executor) {
    return subscriber -> {
      SubmissionPublisher<T> out = new SubmissionPublisher<>(executor, Flow.defaultBufferSize());
      out.subscribe(new Flow.Subscriber<T>() {
        @Override
        public void onSubscribe(Flow.Subscription s) {
          subscriber.onSubscribe(new Flow.Subscription() {
            @Override
            public void request(long n) {
              s.request(n);
            }

            @Override
            public void cancel() {
              s.cancel();
              close();
            }
          });
        }

        @Override
        public void onNext(T item) {
          subscriber.onNext(item);
        }

        @Override
        public void onError(Throwable t) {
          subscriber.onError(t);
        }

        @Override
        public void onComplete() {
          subscriber.onComplete();
        }
      });
      // Not on the executor: a read waiting for the network would hold a delivery thread.
      java.lang.Thread reader = new java.lang.Thread(() -> {
        try {
          for (T item : this) {
            if (out.isClosed()) {
              break;
            }
            out.submit(item); // blocks while the subscriber's buffer is full
          }
          out.close();
        } catch (RuntimeException e) {
          out.closeExceptionally(e);
        }
      }, "agentd-stream-publisher");
      reader.setDaemon(true);
      reader.start();
    };
  }
}
