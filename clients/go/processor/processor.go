// Package processor writes a processor that agentd calls over gRPC (its
// `remote` processor), in Go.
//
//	p := &processor.Processor{
//		ProcessOutputStream: func(ctx context.Context, run *processor.Run, part *agentdv1.Chunk) (*agentdv1.Chunk, error) {
//			if d := part.GetTextDelta(); d != nil {
//				d.Text = email.ReplaceAllString(d.Text, "[email]")
//			}
//			return part, nil // the part (changed or not); nil drops it
//		},
//	}
//	processor.Serve(ctx, p, listener)
//
// Set the hooks you implement; agentd calls no other (the hello names only
// those). Each gets the run (state shared by its hooks, Custom data chunks,
// SendSignal) and the hook's call. Message hooks return the messages that
// replace the hook's, or nil for unchanged; ProcessAPIError returns true to
// retry the model call. Return run.Abort(...) as the error for a tripwire;
// any other error ends the stream, which agentd handles by the entry's
// on_error.
package processor

import (
	"context"
	"errors"
	"io"
	"net"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// Hook is the signature of a hook taking messages and returning their replacement (nil: unchanged).
type Hook[C any] func(ctx context.Context, run *Run, call C) ([]*agentdv1.Message, error)

// Processor is a processor's hooks; nil ones are not implemented.
type Processor struct {
	Name string
	// Also send data-* and signal chunks to ProcessOutputStream.
	ProcessDataParts bool

	ProcessInput        Hook[*agentdv1.ProcessInputCall]
	ProcessInputStep    func(ctx context.Context, run *Run, call *agentdv1.ProcessInputStepCall) (*agentdv1.StepOverrides, error)
	ProcessLLMRequest   Hook[*agentdv1.ProcessLLMRequestCall]
	ProcessLLMResponse  func(ctx context.Context, run *Run, call *agentdv1.ProcessLLMResponseCall) error
	ProcessOutputStream func(ctx context.Context, run *Run, part *agentdv1.Chunk) (*agentdv1.Chunk, error)
	ProcessOutputStep   Hook[*agentdv1.ProcessOutputStepCall]
	ProcessOutputResult Hook[*agentdv1.ProcessOutputResultCall]
	ProcessToolResult   Hook[*agentdv1.ProcessToolResultCall]
	ProcessAPIError     func(ctx context.Context, run *Run, call *agentdv1.ProcessAPIErrorCall) (bool, error)
}

// Run is one run as one processor sees it.
type Run struct {
	Open *agentdv1.ProcessOpen
	// Shared by this processor's hooks for the run.
	State map[string]any
	// Processor-requested retries already performed in this run.
	RetryCount uint32
	answer     *agentdv1.HookAnswer
}

// AbortError is a tripwire: agentd ends the run (or, with Retry, the step).
type AbortError struct {
	Reason   string
	Retry    bool
	Metadata map[string]any
}

func (a *AbortError) Error() string { return "abort: " + a.Reason }

// Abort returns the error a hook returns for a tripwire.
func (r *Run) Abort(reason string, retry bool, metadata map[string]any) error {
	return &AbortError{Reason: reason, Retry: retry, Metadata: metadata}
}

// Custom emits a data-* chunk into the run's stream (writer.custom).
func (r *Run) Custom(typ string, data any) error {
	v, err := structpb.NewValue(data)
	if err != nil {
		return err
	}
	r.answer.Custom = append(r.answer.Custom, &agentdv1.DataChunk{Type: typ, Data: v})
	return nil
}

// SendSignal sends a signal into the run (input step, output step, output result and API error hooks).
func (r *Run) SendSignal(signal *agentdv1.SignalInput) {
	r.answer.Signals = append(r.answer.Signals, signal)
}

func (p *Processor) hooks() []agentdv1.Hook {
	var out []agentdv1.Hook
	add := func(set bool, h agentdv1.Hook) {
		if set {
			out = append(out, h)
		}
	}
	add(p.ProcessInput != nil, agentdv1.Hook_HOOK_PROCESS_INPUT)
	add(p.ProcessInputStep != nil, agentdv1.Hook_HOOK_PROCESS_INPUT_STEP)
	add(p.ProcessLLMRequest != nil, agentdv1.Hook_HOOK_PROCESS_LLM_REQUEST)
	add(p.ProcessLLMResponse != nil, agentdv1.Hook_HOOK_PROCESS_LLM_RESPONSE)
	add(p.ProcessOutputStream != nil, agentdv1.Hook_HOOK_PROCESS_OUTPUT_STREAM)
	add(p.ProcessOutputStep != nil, agentdv1.Hook_HOOK_PROCESS_OUTPUT_STEP)
	add(p.ProcessOutputResult != nil, agentdv1.Hook_HOOK_PROCESS_OUTPUT_RESULT)
	add(p.ProcessToolResult != nil, agentdv1.Hook_HOOK_PROCESS_TOOL_RESULT)
	add(p.ProcessAPIError != nil, agentdv1.Hook_HOOK_PROCESS_API_ERROR)
	return out
}

type server struct {
	agentdv1.UnimplementedProcessorServiceServer
	p *Processor
}

// Register adds the processor's service to a gRPC server of your own.
func Register(s grpc.ServiceRegistrar, p *Processor) {
	agentdv1.RegisterProcessorServiceServer(s, &server{p: p})
}

// Serve serves the processor on lis until ctx is done.
func Serve(ctx context.Context, p *Processor, lis net.Listener, opts ...grpc.ServerOption) error {
	s := grpc.NewServer(opts...)
	Register(s, p)
	go func() {
		<-ctx.Done()
		s.GracefulStop()
	}()
	return s.Serve(lis)
}

func (s *server) Process(stream agentdv1.ProcessorService_ProcessServer) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	open := first.GetOpen()
	if open == nil {
		return status.Error(codes.InvalidArgument, "the first message must be open")
	}
	hello := &agentdv1.ProcessorHello{Hooks: s.p.hooks(), ProcessDataParts: s.p.ProcessDataParts, Name: s.p.Name}
	if err := stream.Send(&agentdv1.ProcessResponse{Kind: &agentdv1.ProcessResponse_Hello{Hello: hello}}); err != nil {
		return err
	}
	run := &Run{Open: open, State: map[string]any{}}
	ctx := stream.Context()
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		call := req.GetCall()
		if call == nil {
			continue
		}
		answer, err := s.answer(ctx, run, call)
		if err != nil {
			return err
		}
		if err := stream.Send(&agentdv1.ProcessResponse{Kind: &agentdv1.ProcessResponse_Answer{Answer: answer}}); err != nil {
			return err
		}
	}
}

func (s *server) answer(ctx context.Context, run *Run, call *agentdv1.HookCall) (*agentdv1.HookAnswer, error) {
	answer := &agentdv1.HookAnswer{CallId: call.CallId}
	run.answer, run.RetryCount = answer, call.RetryCount
	err := s.dispatch(ctx, run, call, answer)
	var abort *AbortError
	if errors.As(err, &abort) {
		md, _ := structpb.NewStruct(abort.Metadata)
		answer.Abort = &agentdv1.ProcessorAbort{Reason: abort.Reason, Retry: abort.Retry, Metadata: md}
		return answer, nil
	}
	return answer, err
}

func messages(answer *agentdv1.HookAnswer, out []*agentdv1.Message, err error) error {
	if err == nil && out != nil {
		answer.Result = &agentdv1.HookAnswer_Messages{Messages: &agentdv1.MessagesResult{Messages: out}}
	}
	return err
}

func (s *server) dispatch(ctx context.Context, run *Run, call *agentdv1.HookCall, answer *agentdv1.HookAnswer) error {
	p := s.p
	switch h := call.Hook.(type) {
	case *agentdv1.HookCall_ProcessInput:
		out, err := p.ProcessInput(ctx, run, h.ProcessInput)
		return messages(answer, out, err)
	case *agentdv1.HookCall_ProcessInputStep:
		out, err := p.ProcessInputStep(ctx, run, h.ProcessInputStep)
		if err == nil && out != nil {
			answer.Result = &agentdv1.HookAnswer_Step{Step: out}
		}
		return err
	case *agentdv1.HookCall_ProcessLlmRequest:
		out, err := p.ProcessLLMRequest(ctx, run, h.ProcessLlmRequest)
		if err == nil && out != nil {
			answer.Result = &agentdv1.HookAnswer_Prompt{Prompt: &agentdv1.MessagesResult{Messages: out}}
		}
		return err
	case *agentdv1.HookCall_ProcessLlmResponse:
		return p.ProcessLLMResponse(ctx, run, h.ProcessLlmResponse)
	case *agentdv1.HookCall_ProcessOutputStream:
		return s.stream(ctx, run, h.ProcessOutputStream.Parts, answer)
	case *agentdv1.HookCall_ProcessOutputStep:
		out, err := p.ProcessOutputStep(ctx, run, h.ProcessOutputStep)
		return messages(answer, out, err)
	case *agentdv1.HookCall_ProcessOutputResult:
		out, err := p.ProcessOutputResult(ctx, run, h.ProcessOutputResult)
		return messages(answer, out, err)
	case *agentdv1.HookCall_ProcessToolResult:
		out, err := p.ProcessToolResult(ctx, run, h.ProcessToolResult)
		return messages(answer, out, err)
	case *agentdv1.HookCall_ProcessApiError:
		retry, err := p.ProcessAPIError(ctx, run, h.ProcessApiError)
		if err == nil && retry {
			answer.Result = &agentdv1.HookAnswer_ApiError{ApiError: &agentdv1.APIErrorAnswer{Retry: true}}
		}
		return err
	}
	return nil
}

var (
	pass = &agentdv1.ChunkAnswer{Result: &agentdv1.ChunkAnswer_Pass{Pass: &agentdv1.ChunkPass{}}}
	drop = &agentdv1.ChunkAnswer{Result: &agentdv1.ChunkAnswer_Drop{Drop: &agentdv1.ChunkDrop{}}}
)

// stream answers each part in order; an abort leaves the parts after it unanswered.
func (s *server) stream(ctx context.Context, run *Run, parts []*agentdv1.Chunk, answer *agentdv1.HookAnswer) error {
	answers := &agentdv1.ChunkAnswers{Answers: make([]*agentdv1.ChunkAnswer, 0, len(parts))}
	answer.Result = &agentdv1.HookAnswer_Chunks{Chunks: answers}
	for _, part := range parts {
		original := proto.Clone(part)
		out, err := s.p.ProcessOutputStream(ctx, run, part)
		if err != nil {
			return err
		}
		switch {
		case out == nil:
			answers.Answers = append(answers.Answers, drop)
		case proto.Equal(out, original):
			answers.Answers = append(answers.Answers, pass)
		default:
			answers.Answers = append(answers.Answers, &agentdv1.ChunkAnswer{Result: &agentdv1.ChunkAnswer_Replace{Replace: out}})
		}
	}
	return nil
}
