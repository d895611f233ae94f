// Package agentd is the Go client of agentd, an agent runtime served over
// gRPC. It wraps the generated stubs of agentd.v1
// (github.com/agentd/agentd/gen/go/agentd/v1) with context-first methods,
// errors as values and Go 1.23 iterators:
//
//	client, err := agentd.Dial(ctx, "127.0.0.1:50051", agentd.WithInsecure())
//	if err != nil {
//		return err
//	}
//	defer client.Close()
//
//	resp, err := client.Generate(ctx, "echo", "hello")
//	if agentd.ReasonOf(err) == agentd.ReasonAgentNotFound {
//		...
//	}
//
//	for chunk, err := range client.Stream(ctx, "echo", "hello") {
//		if err != nil {
//			return err
//		}
//		fmt.Print(chunk.GetTextDelta().GetText())
//	}
//
// A server with [auth] and [server.tls] takes a bearer token (WithToken,
// default $AGENTD_TOKEN, sent as per-call credentials) over TLS
// (WithTLSFiles, WithTLSConfig; a client certificate makes it mutual TLS):
//
//	client, err := agentd.Dial(ctx, "agentd.internal:50051",
//		agentd.WithTLSFiles("ca.pem", "", ""), agentd.WithToken(token))
//
// Every failed call returns an *Error carrying the gRPC code, the ErrorInfo
// reason and metadata, the BadRequest field violations and the RetryInfo
// delay; errors.Is(err, agentd.ErrUnauthenticated) (ErrPermissionDenied,
// ErrResourceExhausted) matches those codes whatever the reason. Thread streams
// (Subscribe, Connect) reconnect and resume after the last offset by
// themselves. When the context of a call carries an OpenTelemetry span, its
// W3C trace context (traceparent) is sent with the call.
package agentd
