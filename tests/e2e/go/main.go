// Command agentd-e2e checks a running agentd server through the generated Go
// client: Generate and Stream on the "echo" agent, and NOT_FOUND for an
// unknown agent.
//
// Usage:
//
//	go run . -addr 127.0.0.1:50051
//
// It prints "go client: ok" and exits 0 when every check passes; otherwise it
// prints the first mismatch to stderr and exits 1.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

const echoAgent = "echo"

func main() {
	addr := flag.String("addr", "", "agentd address, host:port")
	timeout := flag.Duration("timeout", 30*time.Second, "deadline for all checks")
	flag.Parse()
	if *addr == "" {
		fmt.Fprintln(os.Stderr, "usage: agentd-e2e -addr host:port")
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	err := run(ctx, *addr)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go client: %v\n", err)
		os.Exit(1)
	}
	fmt.Println("go client: ok")
}

func run(ctx context.Context, addr string) error {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()

	client := agentdv1.NewAgentServiceClient(conn)
	if err := checkGenerate(ctx, client); err != nil {
		return fmt.Errorf("Generate: %w", err)
	}
	if err := checkStream(ctx, client); err != nil {
		return fmt.Errorf("Stream: %w", err)
	}
	if err := checkGetAgentNotFound(ctx, client); err != nil {
		return fmt.Errorf("GetAgent: %w", err)
	}
	return nil
}

func checkGenerate(ctx context.Context, client agentdv1.AgentServiceClient) error {
	const input = "hello from go"
	resp, err := client.Generate(ctx, &agentdv1.GenerateRequest{AgentId: echoAgent, Text: input})
	if err != nil {
		return err
	}
	if resp.GetText() != input {
		return fmt.Errorf("text = %q, want %q", resp.GetText(), input)
	}
	if got := resp.GetFinishReason(); got != agentdv1.FinishReason_FINISH_REASON_STOP {
		return fmt.Errorf("finish_reason = %v, want FINISH_REASON_STOP", got)
	}
	if got := resp.GetUsage().GetInputTokens(); got <= 0 {
		return fmt.Errorf("usage.input_tokens = %d, want > 0", got)
	}
	if resp.GetRunId() == "" {
		return errors.New("run_id is empty")
	}
	return nil
}

func checkStream(ctx context.Context, client agentdv1.AgentServiceClient) error {
	const input = "alpha beta gamma"
	stream, err := client.Stream(ctx, &agentdv1.StreamRequest{AgentId: echoAgent, Text: input})
	if err != nil {
		return err
	}
	chunks, err := receiveAll(stream)
	if err != nil {
		return err
	}
	if len(chunks) == 0 {
		return errors.New("no chunk received")
	}

	runID := chunks[0].GetRunId()
	if runID == "" {
		return errors.New("first chunk has an empty run_id")
	}
	kinds := make([]string, 0, len(chunks))
	var text strings.Builder
	for i, c := range chunks {
		kind := payloadKind(c)
		kinds = append(kinds, kind)
		if want := uint64(i + 1); c.GetSeq() != want {
			return fmt.Errorf("chunk %d (%s) has seq %d, want %d", i, kind, c.GetSeq(), want)
		}
		if c.GetRunId() != runID {
			return fmt.Errorf("chunk %d (%s) has run_id %q, want %q", i, kind, c.GetRunId(), runID)
		}
		if d := c.GetTextDelta(); d != nil {
			text.WriteString(d.GetText())
		}
	}

	want := []string{"start", "step_start", "text_start", "text_delta", "text_end", "step_finish", "finish"}
	// Consecutive text deltas collapse to one so the shape compares with want.
	if got := slices.Compact(slices.Clone(kinds)); !slices.Equal(got, want) {
		return fmt.Errorf("chunk order %v, want %v with one or more text_delta", kinds, want)
	}
	if text.String() != input {
		return fmt.Errorf("text deltas join to %q, want %q", text.String(), input)
	}
	if got := chunks[len(chunks)-1].GetFinish().GetFinishReason(); got != agentdv1.FinishReason_FINISH_REASON_STOP {
		return fmt.Errorf("finish.finish_reason = %v, want FINISH_REASON_STOP", got)
	}
	return nil
}

// receiveAll reads a Stream call to its end and flattens the chunks of all
// response messages.
func receiveAll(stream grpc.ServerStreamingClient[agentdv1.StreamResponse]) ([]*agentdv1.Chunk, error) {
	var chunks []*agentdv1.Chunk
	for n := 1; ; n++ {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return chunks, nil
		}
		if err != nil {
			return nil, err
		}
		if len(msg.GetChunks()) == 0 {
			return nil, fmt.Errorf("response message %d carries no chunk", n)
		}
		chunks = append(chunks, msg.GetChunks()...)
	}
}

// payloadKind names the payload field set on a chunk ("text_delta", ...), or
// "<none>".
func payloadKind(c *agentdv1.Chunk) string {
	m := c.ProtoReflect()
	field := m.WhichOneof(m.Descriptor().Oneofs().ByName("payload"))
	if field == nil {
		return "<none>"
	}
	return string(field.Name())
}

func checkGetAgentNotFound(ctx context.Context, client agentdv1.AgentServiceClient) error {
	const id = "nope"
	resp, err := client.GetAgent(ctx, &agentdv1.GetAgentRequest{AgentId: id})
	if err == nil {
		return fmt.Errorf("%q: got agent %q, want status NOT_FOUND", id, resp.GetAgent().GetId())
	}
	if got := status.Code(err); got != codes.NotFound {
		return fmt.Errorf("%q: status %v (%v), want NOT_FOUND", id, got, err)
	}
	return nil
}
