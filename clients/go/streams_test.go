package agentd

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// fakeServer scripts ThreadService and AgentService answers in process.
type fakeServer struct {
	agentdv1.UnimplementedThreadServiceServer
	agentdv1.UnimplementedAgentServiceServer

	mu        sync.Mutex
	resumes   []*agentdv1.ResumePoint // of each Subscribe call
	subscribe func(call int, req *agentdv1.SubscribeRequest, stream grpc.ServerStreamingServer[agentdv1.SubscribeResponse]) error
	connect   func(stream grpc.BidiStreamingServer[agentdv1.ConnectRequest, agentdv1.ConnectResponse]) error
	headers   metadata.MD
}

func (f *fakeServer) Subscribe(req *agentdv1.SubscribeRequest, stream grpc.ServerStreamingServer[agentdv1.SubscribeResponse]) error {
	f.mu.Lock()
	f.resumes = append(f.resumes, req.GetResume())
	call := len(f.resumes)
	f.mu.Unlock()
	return f.subscribe(call, req, stream)
}

func (f *fakeServer) Connect(stream grpc.BidiStreamingServer[agentdv1.ConnectRequest, agentdv1.ConnectResponse]) error {
	return f.connect(stream)
}

func (f *fakeServer) GetAgent(ctx context.Context, req *agentdv1.GetAgentRequest) (*agentdv1.GetAgentResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.headers = md
	f.mu.Unlock()
	return &agentdv1.GetAgentResponse{Agent: &agentdv1.Agent{Id: req.GetAgentId()}}, nil
}

func startFake(t *testing.T, f *fakeServer, opts ...Option) *Client {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	agentdv1.RegisterThreadServiceServer(srv, f)
	agentdv1.RegisterAgentServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	dialer := grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) })
	opts = append([]Option{WithInsecure(), WithDialOptions(dialer)}, opts...)
	client, err := Dial(context.Background(), "passthrough:///bufnet", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = client.Close() })
	return client
}

func batch(runID string, offsets ...uint64) *agentdv1.ChunkBatch {
	b := &agentdv1.ChunkBatch{}
	for _, o := range offsets {
		b.Chunks = append(b.Chunks, &agentdv1.Chunk{RunId: runID, Seq: o, Offset: o,
			Payload: &agentdv1.Chunk_TextDelta{TextDelta: &agentdv1.TextDeltaChunk{Text: "x"}}})
	}
	return b
}

func shutdownStatus() error {
	st, _ := status.New(codes.Unavailable, "shutting down").WithDetails(&errdetails.ErrorInfo{Reason: "SERVER_SHUTDOWN", Domain: "agentd"})
	return st.Err()
}

func TestSubscribeReconnectsAndResumesWithoutDuplicates(t *testing.T) {
	snap := func(last uint64) *agentdv1.SubscribeResponse {
		return &agentdv1.SubscribeResponse{Event: &agentdv1.SubscribeResponse_Snapshot{Snapshot: &agentdv1.ThreadSnapshot{LogEpoch: "e1", LastOffset: last}}}
	}
	chunks := func(offsets ...uint64) *agentdv1.SubscribeResponse {
		return &agentdv1.SubscribeResponse{Event: &agentdv1.SubscribeResponse_Chunks{Chunks: batch("r1", offsets...)}}
	}
	f := &fakeServer{subscribe: func(call int, _ *agentdv1.SubscribeRequest, stream grpc.ServerStreamingServer[agentdv1.SubscribeResponse]) error {
		switch call {
		case 1: // live from offset 5, then a shutdown
			_ = stream.Send(snap(5))
			_ = stream.Send(chunks(6, 7))
			return shutdownStatus()
		case 2: // replays 7 again (a duplicate the client must drop), then falls behind
			_ = stream.Send(snap(8))
			_ = stream.Send(chunks(7, 8))
			return stream.Send(&agentdv1.SubscribeResponse{Event: &agentdv1.SubscribeResponse_FellBehind{FellBehind: &agentdv1.FellBehind{LastOffset: 8, LogEpoch: "e1"}}})
		default:
			_ = stream.Send(snap(9))
			_ = stream.Send(chunks(9))
			<-stream.Context().Done()
			return nil
		}
	}}
	client := startFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	snapshots := 0
	var offsets []uint64
	for chunk, err := range client.Subscribe(ctx, "t1", WithReconnect(3, time.Millisecond, 10*time.Millisecond),
		WithSnapshotHandler(func(*agentdv1.ThreadSnapshot) { snapshots++ })) {
		if err != nil {
			t.Fatal(err)
		}
		offsets = append(offsets, chunk.GetOffset())
		if chunk.GetOffset() == 9 {
			break
		}
	}
	if !slices.Equal(offsets, []uint64{6, 7, 8, 9}) {
		t.Fatalf("offsets = %v, want [6 7 8 9]", offsets)
	}
	if snapshots != 3 {
		t.Fatalf("%d snapshots, want 3", snapshots)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	want := []*agentdv1.ResumePoint{nil, {LogEpoch: "e1", AfterOffset: 7}, {LogEpoch: "e1", AfterOffset: 8}}
	for i, w := range want {
		if !proto.Equal(f.resumes[i], w) {
			t.Fatalf("Subscribe call %d resumed from %v, want %v", i+1, f.resumes[i], w)
		}
	}
}

func TestSubscribeStopsOnNonRetryableError(t *testing.T) {
	f := &fakeServer{subscribe: func(int, *agentdv1.SubscribeRequest, grpc.ServerStreamingServer[agentdv1.SubscribeResponse]) error {
		st, _ := status.New(codes.OutOfRange, "expired").WithDetails(&errdetails.ErrorInfo{Reason: "RESUME_OFFSET_EXPIRED", Domain: "agentd"})
		return st.Err()
	}}
	client := startFake(t, f)
	var last error
	for _, err := range client.Subscribe(context.Background(), "t1", WithResume("old", 3)) {
		last = err
	}
	if ReasonOf(last) != ReasonResumeOffsetExpired {
		t.Fatalf("error = %v, want RESUME_OFFSET_EXPIRED", last)
	}
	if len(f.resumes) != 1 {
		t.Fatalf("%d calls, want 1 (no retry)", len(f.resumes))
	}
}

func TestSessionAnswersClientToolsAndSends(t *testing.T) {
	var gotResult *agentdv1.ConnectToolResult
	f := &fakeServer{connect: func(stream grpc.BidiStreamingServer[agentdv1.ConnectRequest, agentdv1.ConnectResponse]) error {
		open, err := stream.Recv()
		if err != nil || open.GetOpen() == nil {
			return status.Error(codes.InvalidArgument, "want open")
		}
		if tools := open.GetOpen().GetStreamOptions().GetClientTools(); len(tools) != 1 || tools[0].GetName() != "pick" {
			return status.Errorf(codes.InvalidArgument, "client tools %v", tools)
		}
		_ = stream.Send(&agentdv1.ConnectResponse{RequestId: open.GetRequestId(), Event: &agentdv1.ConnectResponse_Snapshot{Snapshot: &agentdv1.ThreadSnapshot{LogEpoch: "e"}}})
		for {
			req, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				return err
			}
			switch frame := req.GetFrame().(type) {
			case *agentdv1.ConnectRequest_SendMessage:
				_ = stream.Send(&agentdv1.ConnectResponse{RequestId: req.GetRequestId(), Event: &agentdv1.ConnectResponse_Routing{Routing: &agentdv1.ConnectRoutingAnswer{
					Decision: &agentdv1.RoutingDecision{Action: &agentdv1.RoutingDecision_Wake{Wake: &agentdv1.RoutingWake{RunId: "r1"}}},
				}}})
				args, _ := structpb.NewValue(map[string]any{"choices": []any{"red", "blue"}})
				_ = stream.Send(&agentdv1.ConnectResponse{Event: &agentdv1.ConnectResponse_Chunks{Chunks: &agentdv1.ChunkBatch{Chunks: []*agentdv1.Chunk{
					{RunId: "r1", Seq: 1, Offset: 1, Payload: &agentdv1.Chunk_Start{Start: &agentdv1.StartChunk{}}},
					{RunId: "r1", Seq: 2, Offset: 2, Payload: &agentdv1.Chunk_ToolCall{ToolCall: &agentdv1.ToolCall{ToolCallId: "c1", ToolName: "pick", Args: args, ClientTool: true}}},
				}}}})
			case *agentdv1.ConnectRequest_ToolResult:
				gotResult = frame.ToolResult
				_ = stream.Send(&agentdv1.ConnectResponse{RequestId: req.GetRequestId(), Event: &agentdv1.ConnectResponse_ToolResultAck{ToolResultAck: &agentdv1.ToolResultAck{RunId: "r1", ToolCallId: "c1"}}})
				_ = stream.Send(&agentdv1.ConnectResponse{Event: &agentdv1.ConnectResponse_Chunks{Chunks: &agentdv1.ChunkBatch{Chunks: []*agentdv1.Chunk{
					{RunId: "r1", Seq: 3, Offset: 3, Payload: &agentdv1.Chunk_Finish{Finish: &agentdv1.FinishChunk{}}},
				}}}})
			case *agentdv1.ConnectRequest_Abort:
				st, _ := status.New(codes.NotFound, "no run").WithDetails(&errdetails.ErrorInfo{Reason: "RUN_NOT_FOUND", Domain: "agentd"})
				_ = stream.Send(&agentdv1.ConnectResponse{RequestId: req.GetRequestId(), Event: &agentdv1.ConnectResponse_Error{Error: st.Proto()}})
			}
		}
	}}
	client := startFake(t, f)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	session, err := client.Connect(ctx, "tools", "res", "thr", WithTool("pick", func(_ context.Context, args *structpb.Value) (*structpb.Value, error) {
		choices := args.GetStructValue().GetFields()["choices"].GetListValue().GetValues()
		return choices[len(choices)-1], nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	routing, err := session.SendMessage(ctx, "choose")
	if err != nil || Action(routing.GetDecision()) != "wake" || RunID(routing.GetDecision()) != "r1" {
		t.Fatalf("routing = %v, %v", routing, err)
	}
	var kinds []string
	for chunk, err := range session.Chunks() {
		if err != nil {
			t.Fatal(err)
		}
		kinds = append(kinds, Kind(chunk))
		if IsLast(chunk) {
			break
		}
	}
	if !slices.Equal(kinds, []string{"start", "tool_call", "finish"}) {
		t.Fatalf("kinds = %v", kinds)
	}
	if gotResult.GetRunId() != "r1" || gotResult.GetToolCallId() != "c1" || gotResult.GetResult().GetStringValue() != "blue" || gotResult.GetIsError() {
		t.Fatalf("tool result = %v", gotResult)
	}
	if _, err := session.Abort(ctx, "nope"); ReasonOf(err) != ReasonRunNotFound {
		t.Fatalf("abort error = %v, want RUN_NOT_FOUND", err)
	}
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	if session.Err() != nil {
		t.Fatalf("session ended with %v", session.Err())
	}
}

func TestTraceparentAndMetadataAreSent(t *testing.T) {
	f := &fakeServer{}
	client := startFake(t, f, WithMetadata("x-tenant", "acme"))
	traceID, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	spanID, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: traceID, SpanID: spanID, TraceFlags: trace.FlagsSampled})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	if _, err := client.GetAgent(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	headers := f.headers
	f.mu.Unlock()
	if got := headers.Get("traceparent"); len(got) != 1 || got[0] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" {
		t.Fatalf("traceparent = %v", got)
	}
	if got := headers.Get("x-tenant"); len(got) != 1 || got[0] != "acme" {
		t.Fatalf("x-tenant = %v", got)
	}
	if _, err := client.GetAgent(context.Background(), "echo"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	headers = f.headers
	f.mu.Unlock()
	if got := headers.Get("traceparent"); len(got) != 0 {
		t.Fatalf("traceparent without a span = %v", got)
	}
}
