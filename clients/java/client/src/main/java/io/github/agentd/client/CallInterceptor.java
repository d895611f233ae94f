package io.github.agentd.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Adds the client-wide metadata, the default deadline of unary calls and the W3C trace context
 * (traceparent, tracestate, baggage) of the caller's current OpenTelemetry span.
 */
final class CallInterceptor implements ClientInterceptor {
  private static final TextMapSetter<Metadata> SETTER =
      (carrier, key, value) -> carrier.put(Metadata.Key.of(key, Metadata.ASCII_STRING_MARSHALLER), value);

  private final Metadata metadata;
  private final Duration timeout;
  private final TextMapPropagator propagator;

  CallInterceptor(Metadata metadata, Duration timeout, TextMapPropagator propagator) {
    this.metadata = metadata;
    this.timeout = timeout;
    this.propagator = propagator;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    if (timeout != null && method.getType() == MethodDescriptor.MethodType.UNARY && options.getDeadline() == null) {
      options = options.withDeadlineAfter(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }
    Context trace = Context.current(); // the caller's thread: the call starts there
    return new ForwardingClientCall.SimpleForwardingClientCall<>(next.newCall(method, options)) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        headers.merge(metadata);
        if (propagator != null && Span.fromContext(trace).getSpanContext().isValid()) {
          propagator.inject(trace, headers, SETTER);
        }
        super.start(listener, headers);
      }
    };
  }
}
