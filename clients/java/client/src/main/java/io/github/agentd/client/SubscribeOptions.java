package io.github.agentd.client;

import io.github.agentd.proto.v1.ResumePoint;
import io.github.agentd.proto.v1.ThreadSnapshot;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;

/** Options of {@code subscribe}: the thread's owner, where to resume, reconnection, snapshots. */
public final class SubscribeOptions {
  /** The defaults: reconnect without limit, 100 ms to 5 s apart. */
  public static final SubscribeOptions DEFAULT = builder().build();

  final String resource;
  final ResumePoint resume;
  final List<String> hideSignals;
  final Reconnect reconnect;
  final Consumer<ThreadSnapshot> onSnapshot;

  private SubscribeOptions(Builder b) {
    resource = b.resource;
    resume = b.resume;
    hideSignals = List.copyOf(b.hideSignals);
    reconnect = b.reconnect;
    onSnapshot = b.onSnapshot;
  }

  public static Builder builder() {
    return new Builder();
  }

  /** How a stream reconnects: attempts (negative: no limit) and the backoff bounds. */
  record Reconnect(int attempts, Duration min, Duration max) {
    static final Reconnect DEFAULT = new Reconnect(-1, Duration.ofMillis(100), Duration.ofSeconds(5));

    boolean allows(int failures) {
      return attempts < 0 || failures <= attempts;
    }

    /** Sleeps before attempt n (1-based), with jitter; false when interrupted. */
    boolean waitBefore(int n) {
      long d = min.toMillis();
      for (int i = 1; i < n && d < max.toMillis(); i++) {
        d *= 2;
      }
      d = Math.min(d, max.toMillis());
      if (d > 0) {
        d = d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1);
      }
      try {
        Thread.sleep(d);
        return true;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  /** Builds SubscribeOptions. */
  public static final class Builder {
    private String resource = "";
    private ResumePoint resume;
    private List<String> hideSignals = List.of();
    private Reconnect reconnect = Reconnect.DEFAULT;
    private Consumer<ThreadSnapshot> onSnapshot;

    private Builder() {}

    /** The thread's resource: the server checks the thread belongs to it. */
    public Builder resource(String resourceId) {
      resource = resourceId;
      return this;
    }

    /** Starts after a known offset of a log epoch (from a snapshot or a chunk). */
    public Builder resume(String logEpoch, long afterOffset) {
      resume = ResumePoint.newBuilder().setLogEpoch(logEpoch).setAfterOffset(afterOffset).build();
      return this;
    }

    /** Hides the echoes of these signal types. */
    public Builder hideSignals(String... types) {
      hideSignals = List.of(types);
      return this;
    }

    /** Reconnection on UNAVAILABLE and after falling behind: attempts (negative: no limit). */
    public Builder reconnect(int attempts, Duration minBackoff, Duration maxBackoff) {
      reconnect = new Reconnect(attempts, minBackoff, maxBackoff);
      return this;
    }

    /** No reconnection: the first failure ends the stream (FELL_BEHIND as an OUT_OF_RANGE error). */
    public Builder noReconnect() {
      reconnect = new Reconnect(0, Duration.ZERO, Duration.ZERO);
      return this;
    }

    /** Called with each connection's snapshot (active run, log epoch, last offset). */
    public Builder onSnapshot(Consumer<ThreadSnapshot> handler) {
      onSnapshot = handler;
      return this;
    }

    public SubscribeOptions build() {
      return new SubscribeOptions(this);
    }
  }
}
