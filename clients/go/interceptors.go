package agentd

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// interceptors add the client-wide metadata, the default unary deadline and
// the W3C trace context of a span in the call's context.
type interceptors struct {
	metadata   []string
	timeout    time.Duration
	propagator propagation.TextMapPropagator
}

func (ic interceptors) outgoing(ctx context.Context) context.Context {
	if len(ic.metadata) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, ic.metadata...)
	}
	return injectTraceContext(ctx, ic.propagator)
}

func (ic interceptors) unary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	if ic.timeout > 0 {
		if _, ok := ctx.Deadline(); !ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, ic.timeout)
			defer cancel()
		}
	}
	return invoker(ic.outgoing(ctx), method, req, reply, cc, opts...)
}

func (ic interceptors) stream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return streamer(ic.outgoing(ctx), desc, cc, method, opts...)
}

// injectTraceContext writes traceparent (and whatever else the propagator
// carries) into the outgoing metadata when ctx holds a valid span context.
func injectTraceContext(ctx context.Context, p propagation.TextMapPropagator) context.Context {
	if p == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	p.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return ctx
	}
	kv := make([]string, 0, 2*len(carrier))
	for k, v := range carrier {
		kv = append(kv, k, v)
	}
	return metadata.AppendToOutgoingContext(ctx, kv...)
}
