// Command traced calls Stream inside a trace: the client sends the span
// context as W3C traceparent, so the server's spans join the caller's trace.
//
//	go run ./examples/traced -addr 127.0.0.1:50051 \
//	    -trace 4bf92f3577b34da6a3ce929d0e0e4736 -span 00f067aa0ba902b7
//
// A service would take the span context from its own tracer (or from the
// request it is serving); here it is given on the command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"go.opentelemetry.io/otel/trace"

	agentd "github.com/agentd/agentd/clients/go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "agentd address")
	traceHex := flag.String("trace", "", "trace id (32 hex digits)")
	spanHex := flag.String("span", "", "the caller's span id (16 hex digits)")
	agent := flag.String("agent", "echo", "agent id")
	flag.Parse()
	if err := run(*addr, *traceHex, *spanHex, *agent); err != nil {
		fmt.Fprintln(os.Stderr, "traced:", err)
		os.Exit(1)
	}
}

func run(addr, traceHex, spanHex, agentID string) error {
	traceID, err := trace.TraceIDFromHex(traceHex)
	if err != nil {
		return fmt.Errorf("-trace: %w", err)
	}
	spanID, err := trace.SpanIDFromHex(spanHex)
	if err != nil {
		return fmt.Errorf("-span: %w", err)
	}
	parent := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled, Remote: true,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), parent)

	client, err := agentd.Dial(ctx, addr, agentd.WithInsecure())
	if err != nil {
		return err
	}
	defer client.Close()
	for chunk, err := range client.Stream(ctx, agentID, "traced hello") {
		if err != nil {
			return err
		}
		if d := chunk.GetTextDelta(); d != nil {
			fmt.Print(d.GetText())
		}
	}
	fmt.Println()
	return nil
}
