package agentd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// SubscribeOption configures Subscribe.
type SubscribeOption interface{ applySubscribe(*subscribeConfig) }

// ConnectOption configures Connect.
type ConnectOption interface{ applyConnect(*connectConfig) }

// StreamOption configures both thread streams, Subscribe and Connect.
type StreamOption interface {
	SubscribeOption
	ConnectOption
}

type streamConfig struct {
	resume     *agentdv1.ResumePoint
	hide       []string
	reconnect  reconnectPolicy
	onSnapshot func(*agentdv1.ThreadSnapshot)
}

type reconnectPolicy struct {
	attempts int // consecutive failed attempts allowed; < 0: unlimited
	min, max time.Duration
}

func defaultStreamConfig() streamConfig {
	return streamConfig{reconnect: reconnectPolicy{attempts: 10, min: 100 * time.Millisecond, max: 5 * time.Second}}
}

type subscribeConfig struct {
	streamConfig
	resource string
}

type streamOption func(*streamConfig)

func (f streamOption) applySubscribe(c *subscribeConfig) { f(&c.streamConfig) }
func (f streamOption) applyConnect(c *connectConfig)     { f(&c.streamConfig) }

// WithResume starts the stream after a known offset of the thread's chunk
// log: the server replays every chunk after it, then goes on live, with no
// gap and no duplicate. epoch is the log_epoch of the snapshot the offset
// belongs to. Another epoch, or an offset the server no longer holds, fails
// with OUT_OF_RANGE (RESUME_OFFSET_EXPIRED): read the history with
// ListMessages and subscribe again without resume.
func WithResume(epoch string, afterOffset uint64) StreamOption {
	return streamOption(func(c *streamConfig) {
		c.resume = &agentdv1.ResumePoint{LogEpoch: epoch, AfterOffset: afterOffset}
	})
}

// WithHideSignals hides the echoes of these signal types ("reactive",
// "state", ...).
func WithHideSignals(types ...string) StreamOption {
	return streamOption(func(c *streamConfig) { c.hide = append(c.hide, types...) })
}

// WithReconnect sets how a thread stream reconnects after UNAVAILABLE
// (server shutdown, a dropped connection): up to attempts consecutive
// failed attempts (< 0: until the context ends), waiting from minBackoff,
// doubled each time up to maxBackoff, with jitter. The default is 10
// attempts from 100ms to 5s. A fell-behind stream reconnects at once.
func WithReconnect(attempts int, minBackoff, maxBackoff time.Duration) StreamOption {
	return streamOption(func(c *streamConfig) {
		c.reconnect = reconnectPolicy{attempts: attempts, min: minBackoff, max: maxBackoff}
	})
}

// WithoutReconnect ends the stream with the error instead of reconnecting;
// a fell-behind stream then ends with an OUT_OF_RANGE *Error whose metadata
// holds last_offset and log_epoch.
func WithoutReconnect() StreamOption {
	return streamOption(func(c *streamConfig) { c.reconnect = reconnectPolicy{attempts: 0} })
}

// WithSnapshotHandler calls fn with the snapshot that starts each
// connection of the stream (the first, and each reconnection), before any
// chunk of that connection.
func WithSnapshotHandler(fn func(*agentdv1.ThreadSnapshot)) StreamOption {
	return streamOption(func(c *streamConfig) { c.onSnapshot = fn })
}

// resumeState follows the last offset a stream delivered.
type resumeState struct {
	point *agentdv1.ResumePoint // nil until the first snapshot (without WithResume)
}

// seen reports whether a chunk was already delivered (a replay after a
// reconnection), and otherwise records its offset.
func (r *resumeState) seen(c *agentdv1.Chunk) bool {
	if c.GetOffset() == 0 || r.point == nil {
		return false
	}
	if c.GetOffset() <= r.point.GetAfterOffset() {
		return true
	}
	r.point.AfterOffset = c.GetOffset()
	return false
}

func (r *resumeState) snapshot(s *agentdv1.ThreadSnapshot) {
	if r.point == nil {
		r.point = &agentdv1.ResumePoint{LogEpoch: s.GetLogEpoch(), AfterOffset: s.GetLastOffset()}
	} else if s.GetLogEpoch() != "" {
		r.point.LogEpoch = s.GetLogEpoch()
	}
}

func (r *resumeState) fellBehind(fb *agentdv1.FellBehind) {
	if r.point == nil {
		r.point = &agentdv1.ResumePoint{}
	}
	if fb.GetLogEpoch() != "" {
		r.point.LogEpoch = fb.GetLogEpoch()
	}
	r.point.AfterOffset = max(r.point.GetAfterOffset(), fb.GetLastOffset())
}

func (r *resumeState) current() *agentdv1.ResumePoint {
	if r.point == nil {
		return nil
	}
	return proto.Clone(r.point).(*agentdv1.ResumePoint)
}

// fellBehindError is the error of a fell-behind stream that may not
// reconnect.
func fellBehindError(fb *agentdv1.FellBehind) *Error {
	return &Error{
		Code:    codes.OutOfRange,
		Message: fmt.Sprintf("the subscriber fell behind; resume after offset %d", fb.GetLastOffset()),
		Reason:  "FELL_BEHIND",
		Domain:  ErrorDomain,
		Metadata: map[string]string{
			"last_offset": fmt.Sprint(fb.GetLastOffset()),
			"log_epoch":   fb.GetLogEpoch(),
		},
	}
}

// backoff waits before reconnection attempt n (1-based); false when ctx
// ended first.
func (p reconnectPolicy) wait(ctx context.Context, n int) bool {
	d := p.min
	for i := 1; i < n && d < p.max; i++ {
		d *= 2
	}
	d = min(d, p.max)
	if d > 0 {
		d = d/2 + rand.N(d/2+1) // jitter
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (p reconnectPolicy) allows(failures int) bool {
	return p.attempts < 0 || failures <= p.attempts
}

// retryable reports whether a stream error is worth a reconnection.
func retryable(err error) bool {
	return CodeOf(err) == codes.Unavailable
}

// Subscribe follows a thread's chunks across runs (including signal
// echoes), with their thread offsets. It yields chunks until ctx ends (the
// sequence then ends without an error), the loop stops, or a non-retryable
// error, yielded last.
//
// The stream reconnects by itself: on UNAVAILABLE (server shutdown, lost
// connection; see WithReconnect) and when the server reports that this
// subscriber fell behind, it resumes after the last offset it delivered, so
// the loop sees every chunk once, in order. Use WithResume to start after a
// known offset, WithResource to check the thread's owner, and
// WithSnapshotHandler to see each connection's snapshot (active run id, log
// epoch, last offset). Ending a subscription never aborts a run.
func (c *Client) Subscribe(ctx context.Context, threadID string, opts ...SubscribeOption) iter.Seq2[*agentdv1.Chunk, error] {
	return func(yield func(*agentdv1.Chunk, error) bool) {
		cfg := subscribeConfig{streamConfig: defaultStreamConfig()}
		for _, opt := range opts {
			if opt != nil {
				opt.applySubscribe(&cfg)
			}
		}
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		state := &resumeState{point: cfg.resume}
		failures := 0
		for {
			out := c.subscribeOnce(ctx, threadID, &cfg, state, yield)
			switch {
			case out.stopped:
				return
			case out.fellBehind != nil:
				if cfg.reconnect.attempts == 0 {
					yield(nil, fellBehindError(out.fellBehind))
					return
				}
				state.fellBehind(out.fellBehind)
				failures = 0
				continue
			case out.err == nil:
				return // the server ended the stream
			}
			if ctx.Err() != nil {
				return
			}
			if out.progressed {
				failures = 0
			}
			failures++
			if !retryable(out.err) || !cfg.reconnect.allows(failures) {
				yield(nil, out.err)
				return
			}
			if !cfg.reconnect.wait(ctx, failures) {
				return
			}
		}
	}
}

type subscribeOutcome struct {
	stopped    bool // the consumer stopped the loop
	progressed bool // the connection delivered a snapshot
	fellBehind *agentdv1.FellBehind
	err        error
}

func (c *Client) subscribeOnce(ctx context.Context, threadID string, cfg *subscribeConfig, state *resumeState, yield func(*agentdv1.Chunk, error) bool) subscribeOutcome {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.threads.Subscribe(ctx, &agentdv1.SubscribeRequest{
		ThreadId: threadID, ResourceId: cfg.resource, Resume: state.current(), HideSignals: cfg.hide,
	})
	if err != nil {
		return subscribeOutcome{err: wrap(err)}
	}
	out := subscribeOutcome{}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			out.err = wrap(err)
			return out
		}
		switch ev := resp.GetEvent().(type) {
		case *agentdv1.SubscribeResponse_Snapshot:
			out.progressed = true
			state.snapshot(ev.Snapshot)
			if cfg.onSnapshot != nil {
				cfg.onSnapshot(ev.Snapshot)
			}
		case *agentdv1.SubscribeResponse_Chunks:
			if !out.progressed {
				out.err = &Error{Code: codes.Internal, Message: "the subscription did not start with a snapshot"}
				return out
			}
			for _, chunk := range ev.Chunks.GetChunks() {
				if state.seen(chunk) {
					continue
				}
				if !yield(chunk, nil) {
					out.stopped = true
					return out
				}
			}
		case *agentdv1.SubscribeResponse_FellBehind:
			out.fellBehind = ev.FellBehind
		}
	}
}
