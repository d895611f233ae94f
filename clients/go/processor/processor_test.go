package processor

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

func delta(text string) *agentdv1.Chunk {
	return &agentdv1.Chunk{Payload: &agentdv1.Chunk_TextDelta{TextDelta: &agentdv1.TextDeltaChunk{Id: "t", Text: text}}}
}

// A stream as agentd drives it: open, hello naming only the set hooks, then a
// batch of parts answered pass / drop / replace, with an abort at the part it concerns.
func TestAStreamAsAgentdDrivesIt(t *testing.T) {
	p := &Processor{
		ProcessOutputStream: func(ctx context.Context, run *Run, part *agentdv1.Chunk) (*agentdv1.Chunk, error) {
			switch part.GetTextDelta().GetText() {
			case "drop":
				return nil, nil
			case "secret":
				part.GetTextDelta().Text = "[redacted]"
			case "stop":
				return nil, run.Abort("blocked", true, map[string]any{"score": 0.1})
			}
			return part, nil
		},
	}
	lis := bufconn.Listen(1 << 20)
	server := grpc.NewServer()
	Register(server, p)
	go func() { _ = server.Serve(lis) }()
	defer server.Stop()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := agentdv1.NewProcessorServiceClient(conn).Process(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&agentdv1.ProcessRequest{Kind: &agentdv1.ProcessRequest_Open{Open: &agentdv1.ProcessOpen{RunId: "r1"}}}); err != nil {
		t.Fatal(err)
	}
	hello, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if hooks := hello.GetHello().GetHooks(); len(hooks) != 1 || hooks[0] != agentdv1.Hook_HOOK_PROCESS_OUTPUT_STREAM {
		t.Fatalf("hello hooks = %v", hooks)
	}
	parts := []*agentdv1.Chunk{delta("a"), delta("drop"), delta("secret"), delta("stop"), delta("after")}
	call := &agentdv1.HookCall{CallId: 1, Hook: &agentdv1.HookCall_ProcessOutputStream{
		ProcessOutputStream: &agentdv1.ProcessOutputStreamCall{Parts: parts}}}
	if err := stream.Send(&agentdv1.ProcessRequest{Kind: &agentdv1.ProcessRequest_Call{Call: call}}); err != nil {
		t.Fatal(err)
	}
	reply, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	answer := reply.GetAnswer()
	answers := answer.GetChunks().GetAnswers()
	if answer.GetCallId() != 1 || len(answers) != 3 {
		t.Fatalf("answer %v", answer)
	}
	if answers[0].GetPass() == nil || answers[1].GetDrop() == nil || answers[2].GetReplace().GetTextDelta().GetText() != "[redacted]" {
		t.Fatalf("answers %v", answers)
	}
	if a := answer.GetAbort(); a.GetReason() != "blocked" || !a.GetRetry() || a.GetMetadata().GetFields()["score"].GetNumberValue() != 0.1 {
		t.Fatalf("abort %v", a)
	}
}
