package agentd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// ToolHandler answers a client tool call: it gets the call's JSON arguments
// and returns the JSON result, or an error the model sees as the tool's
// error. ctx ends with the session.
type ToolHandler func(ctx context.Context, args *structpb.Value) (*structpb.Value, error)

type connectConfig struct {
	streamConfig
	tools       map[string]ToolHandler
	toolSpecs   []*agentdv1.ClientTool
	runOpts     []CallOption
	onToolError func(toolName string, err error)
}

type connectOption func(*connectConfig)

func (f connectOption) applyConnect(c *connectConfig) { f(c) }

// WithTool declares a client tool for the runs this session wakes and
// answers its calls with handler, automatically, through tool_result
// frames. A handler error is sent as an error result (is_error) with the
// error's text; a panic is recovered and sent the same way.
func WithTool(name string, handler ToolHandler) ConnectOption {
	return WithToolSpec(&agentdv1.ClientTool{Name: name}, handler)
}

// WithToolSpec is WithTool with a description and input schema for the
// model.
func WithToolSpec(tool *agentdv1.ClientTool, handler ToolHandler) ConnectOption {
	return connectOption(func(c *connectConfig) {
		if c.tools == nil {
			c.tools = map[string]ToolHandler{}
		}
		if _, dup := c.tools[tool.GetName()]; !dup {
			c.toolSpecs = append(c.toolSpecs, tool)
		}
		c.tools[tool.GetName()] = handler
	})
}

// WithRunOptions sets the options of the runs this session's sends wake,
// unless a send sets its own with WithWakeOptions (the session's tools are
// declared either way).
func WithRunOptions(opts ...CallOption) ConnectOption {
	return connectOption(func(c *connectConfig) { c.runOpts = append(c.runOpts, opts...) })
}

// WithToolErrorHandler is told when an automatic tool answer could not be
// delivered (the run ended, the stream broke for good, ...). By default such
// failures are dropped: the run then fails the tool call on its timeout.
func WithToolErrorHandler(fn func(toolName string, err error)) ConnectOption {
	return connectOption(func(c *connectConfig) { c.onToolError = fn })
}

// Session is an open bidirectional thread stream (ThreadService.Connect):
// everything Subscribe yields, plus sends whose answers come back on the
// same stream, and client tools answered automatically. It is safe for
// concurrent use. Close it when done.
//
// A session reconnects like Subscribe (on UNAVAILABLE and when it fell
// behind) and resumes after the last offset it received; a send in flight
// during a reconnection fails with UNAVAILABLE and may be retried (give it
// an id with WithMessageID to make the retry idempotent).
type Session struct {
	client                  *Client
	cfg                     connectConfig
	agent, resource, thread string
	open                    *agentdv1.ConnectOpen

	ctx    context.Context
	cancel context.CancelFunc
	ids    atomic.Uint64

	mu       sync.Mutex
	stream   grpc.BidiStreamingClient[agentdv1.ConnectRequest, agentdv1.ConnectResponse]
	pending  map[string]chan *agentdv1.ConnectResponse
	snapshot *agentdv1.ThreadSnapshot
	state    resumeState
	answered map[string]bool
	closing  bool

	sendMu sync.Mutex

	qmu    sync.Mutex
	queue  []*agentdv1.Chunk
	qerr   error
	qdone  bool
	notify chan struct{}
	done   chan struct{}
}

// Connect opens a thread stream for agent on the thread threadID of
// resourceID and returns once the server answered with the thread's
// snapshot. ctx bounds the whole session: cancelling it ends the stream.
// Sends that wake the thread run agent with the session's run options
// (WithRunOptions, WithTool). Read the chunks with Session.Chunks.
func (c *Client) Connect(ctx context.Context, agent, resourceID, threadID string, opts ...ConnectOption) (*Session, error) {
	cfg := connectConfig{streamConfig: defaultStreamConfig()}
	for _, opt := range opts {
		if opt != nil {
			opt.applyConnect(&cfg)
		}
	}
	runOpts := cfg.runOpts
	if len(cfg.toolSpecs) > 0 {
		runOpts = append(append([]CallOption{}, runOpts...), WithClientTools(cfg.toolSpecs...))
	}
	streamOptions, err := executionOptions(runOpts)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	s := &Session{
		client: c, cfg: cfg, agent: agent, resource: resourceID, thread: threadID,
		open: &agentdv1.ConnectOpen{
			AgentId: agent, ResourceId: resourceID, ThreadId: threadID,
			HideSignals: cfg.hide, StreamOptions: streamOptions,
		},
		ctx: sctx, cancel: cancel,
		pending:  map[string]chan *agentdv1.ConnectResponse{},
		answered: map[string]bool{},
		state:    resumeState{point: cfg.resume},
		notify:   make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	if err := s.connect(); err != nil {
		cancel()
		return nil, err
	}
	go s.run()
	return s, nil
}

// connect opens one stream, sends open and reads the snapshot answer.
func (s *Session) connect() error {
	stream, err := s.client.threads.Connect(s.ctx)
	if err != nil {
		return wrap(err)
	}
	open := proto.Clone(s.open).(*agentdv1.ConnectOpen)
	s.mu.Lock()
	open.Resume = s.state.current()
	s.mu.Unlock()
	id := s.newID()
	if err := stream.Send(&agentdv1.ConnectRequest{RequestId: id, Frame: &agentdv1.ConnectRequest_Open{Open: open}}); err != nil {
		_, rerr := stream.Recv() // the real status
		return wrap(firstErr(rerr, err))
	}
	resp, err := stream.Recv()
	if err != nil {
		return wrap(err)
	}
	if e := FromRPCStatus(resp.GetError()); e != nil {
		return e
	}
	snap := resp.GetSnapshot()
	if snap == nil {
		return &Error{Code: codes.Internal, Message: fmt.Sprintf("Connect answered open with %T, not a snapshot", resp.GetEvent())}
	}
	s.mu.Lock()
	s.stream = stream
	s.snapshot = snap
	s.state.snapshot(snap)
	s.mu.Unlock()
	if s.cfg.onSnapshot != nil {
		s.cfg.onSnapshot(snap)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
	}
	return &Error{Code: codes.Unavailable, Message: "the session stream closed"}
}

// run reads the streams of the session, reconnecting as needed, until the
// session ends.
func (s *Session) run() {
	failures := 0
	for {
		fell, err := s.receive()
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		s.failPending(err)
		switch {
		case closing || s.ctx.Err() != nil:
			s.finish(nil)
			return
		case fell != nil:
			if s.cfg.reconnect.attempts == 0 {
				s.finish(fellBehindError(fell))
				return
			}
			s.mu.Lock()
			s.state.fellBehind(fell)
			s.mu.Unlock()
			failures = 0
		case err == nil:
			s.finish(nil) // the server ended the stream
			return
		default:
			failures++
			if !retryable(err) || !s.cfg.reconnect.allows(failures) {
				s.finish(err)
				return
			}
			if !s.cfg.reconnect.wait(s.ctx, failures) {
				s.finish(nil)
				return
			}
		}
		for {
			err := s.connect()
			if err == nil {
				failures = 0
				break
			}
			failures++
			if s.ctx.Err() != nil {
				s.finish(nil)
				return
			}
			if !retryable(err) || !s.cfg.reconnect.allows(failures) {
				s.finish(err)
				return
			}
			if !s.cfg.reconnect.wait(s.ctx, failures) {
				s.finish(nil)
				return
			}
		}
	}
}

// receive reads one stream to its end.
func (s *Session) receive() (*agentdv1.FellBehind, error) {
	s.mu.Lock()
	stream := s.stream
	s.mu.Unlock()
	var fell *agentdv1.FellBehind
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return fell, nil
		}
		if err != nil {
			return fell, wrap(err)
		}
		switch ev := resp.GetEvent().(type) {
		case *agentdv1.ConnectResponse_Chunks:
			s.chunks(ev.Chunks.GetChunks())
		case *agentdv1.ConnectResponse_FellBehind:
			fell = ev.FellBehind
		case *agentdv1.ConnectResponse_Snapshot:
			s.mu.Lock()
			s.snapshot = ev.Snapshot
			s.state.snapshot(ev.Snapshot)
			s.mu.Unlock()
		default:
			s.mu.Lock()
			ch := s.pending[resp.GetRequestId()]
			delete(s.pending, resp.GetRequestId())
			s.mu.Unlock()
			if ch != nil {
				ch <- resp
			}
		}
	}
}

func (s *Session) chunks(chunks []*agentdv1.Chunk) {
	var fresh []*agentdv1.Chunk
	s.mu.Lock()
	for _, chunk := range chunks {
		if s.state.seen(chunk) {
			continue
		}
		fresh = append(fresh, chunk)
		call := chunk.GetToolCall()
		if call == nil || !call.GetClientTool() || s.answered[call.GetToolCallId()] {
			continue
		}
		if handler := s.cfg.tools[call.GetToolName()]; handler != nil {
			s.answered[call.GetToolCallId()] = true
			go s.answerTool(chunk.GetRunId(), call, handler)
		}
	}
	s.mu.Unlock()
	if len(fresh) == 0 {
		return
	}
	s.qmu.Lock()
	s.queue = append(s.queue, fresh...)
	s.qmu.Unlock()
	s.wake()
}

func (s *Session) wake() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *Session) finish(err error) {
	s.qmu.Lock()
	if !s.qdone {
		s.qdone, s.qerr = true, err
		close(s.done)
	}
	s.qmu.Unlock()
	s.wake()
	s.cancel()
}

// failPending answers every waiting send with err (UNAVAILABLE when the
// stream ended without one).
func (s *Session) failPending(err error) {
	if err == nil {
		err = &Error{Code: codes.Unavailable, Message: "the session stream ended before the answer"}
	}
	var e *Error
	if !errors.As(err, &e) {
		e = AsError(err)
	}
	st := e.GRPCStatus().Proto()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, ch := range s.pending {
		ch <- &agentdv1.ConnectResponse{RequestId: id, Event: &agentdv1.ConnectResponse_Error{Error: st}}
		delete(s.pending, id)
	}
}

func (s *Session) answerTool(runID string, call *agentdv1.ToolCall, handler ToolHandler) {
	result, err := callTool(s.ctx, handler, call.GetArgs())
	tr := &agentdv1.ConnectToolResult{RunId: runID, ToolCallId: call.GetToolCallId(), Result: result}
	if err != nil {
		tr.IsError, tr.Result = true, structpb.NewStringValue(err.Error())
	} else if result == nil {
		tr.Result = structpb.NewNullValue()
	}
	for attempt := 1; ; attempt++ {
		_, err = s.request(s.ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_ToolResult{ToolResult: tr}})
		if err == nil || !retryable(err) || attempt > 5 || s.ctx.Err() != nil {
			break
		}
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond) // a reconnection is under way
	}
	if err != nil && s.ctx.Err() == nil && s.cfg.onToolError != nil {
		s.cfg.onToolError(call.GetToolName(), err)
	}
}

func callTool(ctx context.Context, handler ToolHandler, args *structpb.Value) (result *structpb.Value, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool handler panicked: %v", p)
		}
	}()
	return handler(ctx, args)
}

func (s *Session) newID() string {
	return "go-" + strconv.FormatUint(s.ids.Add(1), 10)
}

// request sends a frame and waits for its answer; an error answer is
// returned as an *Error.
func (s *Session) request(ctx context.Context, req *agentdv1.ConnectRequest) (*agentdv1.ConnectResponse, error) {
	req.RequestId = s.newID()
	ch := make(chan *agentdv1.ConnectResponse, 1)
	s.mu.Lock()
	if s.closing || s.ctx.Err() != nil {
		s.mu.Unlock()
		return nil, &Error{Code: codes.Canceled, Message: "the session is closed"}
	}
	stream := s.stream
	s.pending[req.RequestId] = ch
	s.mu.Unlock()
	s.sendMu.Lock()
	err := stream.Send(req)
	s.sendMu.Unlock()
	if err != nil {
		s.mu.Lock()
		delete(s.pending, req.RequestId)
		s.mu.Unlock()
		return nil, &Error{Code: codes.Unavailable, Message: "the session stream is broken: " + err.Error()}
	}
	select {
	case resp := <-ch:
		if e := FromRPCStatus(resp.GetError()); e != nil {
			return nil, e
		}
		return resp, nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.pending, req.RequestId)
		s.mu.Unlock()
		return nil, AsError(ctx.Err())
	}
}

// withTools adds the session's client tools to a send's own run options,
// which replace the session's.
func (s *Session) withTools(ifIdle *agentdv1.IfIdle) {
	o := ifIdle.GetStreamOptions()
	if o == nil || len(s.cfg.toolSpecs) == 0 {
		return
	}
	have := map[string]bool{}
	for _, t := range o.GetClientTools() {
		have[t.GetName()] = true
	}
	for _, t := range s.cfg.toolSpecs {
		if !have[t.GetName()] {
			o.ClientTools = append(o.ClientTools, t)
		}
	}
}

func (s *Session) route(ctx context.Context, req *agentdv1.ConnectRequest) (*agentdv1.ConnectRoutingAnswer, error) {
	resp, err := s.request(ctx, req)
	if err != nil {
		return nil, err
	}
	return resp.GetRouting(), nil
}

// SendMessage sends a user message into the thread: delivered into the
// active run, or waking the idle thread. It returns the created signal and
// the routing decision; the routing answer of a wake comes before that
// run's chunks.
func (s *Session) SendMessage(ctx context.Context, text string, opts ...SendOption) (*agentdv1.ConnectRoutingAnswer, error) {
	cfg := newSendConfig(opts)
	msg := cfg.message(text)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	s.withTools(cfg.ifIdle)
	return s.route(ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_SendMessage{
		SendMessage: &agentdv1.ConnectSendMessage{Message: msg, IfActive: cfg.ifActive, IfIdle: cfg.ifIdle},
	}})
}

// QueueMessage queues a user message for the thread's next turn.
func (s *Session) QueueMessage(ctx context.Context, text string, opts ...SendOption) (*agentdv1.ConnectRoutingAnswer, error) {
	cfg := newSendConfig(opts)
	msg := cfg.message(text)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	s.withTools(cfg.ifIdle)
	return s.route(ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_QueueMessage{
		QueueMessage: &agentdv1.ConnectQueueMessage{Message: msg, IfIdle: cfg.ifIdle},
	}})
}

// SendSignal sends a signal of any type into the thread.
func (s *Session) SendSignal(ctx context.Context, signal *agentdv1.SignalInput, opts ...SendOption) (*agentdv1.ConnectRoutingAnswer, error) {
	cfg := newSendConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	s.withTools(cfg.ifIdle)
	return s.route(ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_SendSignal{
		SendSignal: &agentdv1.ConnectSendSignal{Signal: signal, IfActive: cfg.ifActive, IfIdle: cfg.ifIdle},
	}})
}

// SendStateSignal sends named thread state (skipped when unchanged).
func (s *Session) SendStateSignal(ctx context.Context, state *agentdv1.StateSignalInput, opts ...SendOption) (*agentdv1.ConnectRoutingAnswer, error) {
	cfg := newSendConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	s.withTools(cfg.ifIdle)
	return s.route(ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_SendStateSignal{
		SendStateSignal: &agentdv1.ConnectSendStateSignal{State: state, IfActive: cfg.ifActive, IfIdle: cfg.ifIdle},
	}})
}

// Abort aborts the thread's active run (with a non-empty runID, only that
// run) and returns the aborted run's id, "" when nothing was aborted.
func (s *Session) Abort(ctx context.Context, runID string) (string, error) {
	resp, err := s.request(ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_Abort{
		Abort: &agentdv1.ConnectAbort{RunId: runID},
	}})
	if err != nil {
		return "", err
	}
	if !resp.GetAbort().GetAborted() {
		return "", nil
	}
	return resp.GetAbort().GetRunId(), nil
}

// SendToolResult answers a client tool call by hand (for tools without a
// WithTool handler). result is any JSON value; with isError it describes
// the error the model sees. NOT_FOUND (TOOL_CALL_NOT_FOUND) when no such
// call is waiting.
func (s *Session) SendToolResult(ctx context.Context, runID, toolCallID string, result any, isError bool) error {
	v, err := Value(result)
	if err != nil {
		return (&callConfig{errs: []error{err}}).err()
	}
	s.mu.Lock()
	s.answered[toolCallID] = true
	s.mu.Unlock()
	_, err = s.request(ctx, &agentdv1.ConnectRequest{Frame: &agentdv1.ConnectRequest_ToolResult{
		ToolResult: &agentdv1.ConnectToolResult{RunId: runID, ToolCallId: toolCallID, Result: v, IsError: isError},
	}})
	return err
}

// Chunks yields the session's chunks (of every run on the thread, with
// their offsets) in order, until the session ends: after Close or the end
// of the Connect context the sequence ends without an error; a stream that
// failed for good yields its error last. Each chunk is yielded once:
// ranging again continues where the previous loop stopped. Chunks received
// while nobody ranges are kept.
func (s *Session) Chunks() iter.Seq2[*agentdv1.Chunk, error] {
	return func(yield func(*agentdv1.Chunk, error) bool) {
		for {
			s.qmu.Lock()
			if len(s.queue) > 0 {
				chunk := s.queue[0]
				s.queue[0] = nil
				s.queue = s.queue[1:]
				s.qmu.Unlock()
				if !yield(chunk, nil) {
					return
				}
				continue
			}
			done, err := s.qdone, s.qerr
			s.qmu.Unlock()
			if done {
				if err != nil {
					yield(nil, err)
				}
				return
			}
			select {
			case <-s.notify:
			case <-s.done:
			}
		}
	}
}

// Snapshot is the snapshot of the session's latest connection.
func (s *Session) Snapshot() *agentdv1.ThreadSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snapshot
}

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.done }

// Err is the error that ended the session, nil while it runs or when it
// ended normally.
func (s *Session) Err() error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.qerr
}

// Close half-closes the stream, waits (at most a few seconds) for the
// server to send the answers still pending and end it, then releases the
// session. Closing never aborts a run. Chunks not yet read stay readable.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.closing = true
	stream := s.stream
	s.mu.Unlock()
	s.sendMu.Lock()
	_ = stream.CloseSend()
	s.sendMu.Unlock()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case <-s.done:
	case <-t.C:
		s.cancel()
		<-s.done
	}
	return nil
}
