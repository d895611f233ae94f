package agentd

import (
	"context"
	"errors"
	"io"
	"iter"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
	"google.golang.org/protobuf/proto"
)

// runInput sets the input of a run: the WithMessages messages, then input
// as a user message; or input alone as the text shortcut.
func runInput(cfg *callConfig, input string) ([]*agentdv1.Message, string) {
	if len(cfg.messages) == 0 {
		return nil, input
	}
	msgs := append([]*agentdv1.Message{}, cfg.messages...)
	if input != "" {
		msgs = append(msgs, UserText(input))
	}
	return msgs, ""
}

// Generate runs an agent to completion and returns its full output. A
// failed run (a provider error) or an aborted one is an *Error (MODEL_ERROR,
// ABORTED, ...); a tripwire is not: the response carries it, with finish
// reason OTHER.
func (c *Client) Generate(ctx context.Context, agent, input string, opts ...CallOption) (*agentdv1.GenerateResponse, error) {
	cfg := newCallConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	req := &agentdv1.GenerateRequest{AgentId: agent, Options: cfg.opts}
	req.Messages, req.Text = runInput(cfg, input)
	resp, err := c.agents.Generate(cfg.ctx(ctx), req, cfg.grpcOpts...)
	return resp, wrap(err)
}

// Stream runs an agent and yields its chunks, flattened from the response
// batches, in seq order: start first; finish, error or abort last (a blocked
// run ends with tripwire then finish). A failure of the run itself is an
// error chunk, not an error; a caller's mistake (unknown agent, invalid
// options) is yielded as a final (nil, *Error).
//
// The call starts when the loop starts: every range over the returned
// sequence is a new run. Stopping the loop early (or cancelling ctx) cancels
// the call, which aborts the run unless WithKeepRunning was given.
//
//	for chunk, err := range client.Stream(ctx, "echo", "hello") {
//		if err != nil {
//			return err
//		}
//		if d := chunk.GetTextDelta(); d != nil {
//			fmt.Print(d.GetText())
//		}
//	}
func (c *Client) Stream(ctx context.Context, agent, input string, opts ...CallOption) iter.Seq2[*agentdv1.Chunk, error] {
	return func(yield func(*agentdv1.Chunk, error) bool) {
		for batch, err := range c.StreamBatches(ctx, agent, input, opts...) {
			if err != nil {
				yield(nil, err)
				return
			}
			for _, chunk := range batch.GetChunks() {
				if !yield(chunk, nil) {
					return
				}
			}
		}
	}
}

// StreamBatches is Stream without flattening: it yields each response
// message as it arrives (one or more chunks of the run; a reader slower than
// the run gets bigger batches).
func (c *Client) StreamBatches(ctx context.Context, agent, input string, opts ...CallOption) iter.Seq2[*agentdv1.StreamResponse, error] {
	return func(yield func(*agentdv1.StreamResponse, error) bool) {
		cfg := newCallConfig(opts)
		if err := cfg.err(); err != nil {
			yield(nil, err)
			return
		}
		req := &agentdv1.StreamRequest{AgentId: agent, Options: cfg.opts, KeepRunning: cfg.keepRunning}
		req.Messages, req.Text = runInput(cfg, input)
		ctx, cancel := context.WithCancel(cfg.ctx(ctx))
		defer cancel()
		stream, err := c.agents.Stream(ctx, req, cfg.grpcOpts...)
		if err != nil {
			yield(nil, wrap(err))
			return
		}
		for {
			resp, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				yield(nil, wrap(err))
				return
			}
			if !yield(resp, nil) {
				return
			}
		}
	}
}

// GetAgent describes one agent; NOT_FOUND (AGENT_NOT_FOUND) for an unknown
// id.
func (c *Client) GetAgent(ctx context.Context, agent string) (*agentdv1.Agent, error) {
	resp, err := c.agents.GetAgent(ctx, &agentdv1.GetAgentRequest{AgentId: agent})
	if err != nil {
		return nil, wrap(err)
	}
	return resp.GetAgent(), nil
}

// ListAgents lists one page of agents (WithPageSize, WithPageToken,
// WithMetadataFilter). See Agents for all of them.
func (c *Client) ListAgents(ctx context.Context, opts ...ListOption) (*agentdv1.ListAgentsResponse, error) {
	cfg := newListConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.agents.ListAgents(ctx, &agentdv1.ListAgentsRequest{
		PageSize: cfg.pageSize, PageToken: cfg.pageToken, MetadataFilter: cfg.metadataFilter,
	})
	return resp, wrap(err)
}

// Agents yields every agent, page after page.
func (c *Client) Agents(ctx context.Context, opts ...ListOption) iter.Seq2[*agentdv1.Agent, error] {
	return paginate(opts, func(page []ListOption) ([]*agentdv1.Agent, string, error) {
		resp, err := c.ListAgents(ctx, page...)
		return resp.GetAgents(), resp.GetNextPageToken(), err
	})
}

// paginate yields the items of successive pages until the next page token
// is empty.
func paginate[T any](opts []ListOption, page func([]ListOption) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		token := newListConfig(opts).pageToken
		for {
			items, next, err := page(append(append([]ListOption{}, opts...), WithPageToken(token)))
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range items {
				if !yield(item, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			token = next
		}
	}
}

// Kind names the payload of a chunk as in the proto's oneof: "start",
// "text_delta", "tool_call", "finish", ... or "" when none is set.
func Kind(c *agentdv1.Chunk) string {
	m := c.ProtoReflect()
	field := m.WhichOneof(m.Descriptor().Oneofs().ByName("payload"))
	if field == nil {
		return ""
	}
	return string(field.Name())
}

// IsLast reports whether a chunk ends its run: finish, error or abort.
// (A tripwire is followed by a finish.)
func IsLast(c *agentdv1.Chunk) bool {
	return c.GetFinish() != nil || c.GetError() != nil || c.GetAbort() != nil
}

// ListScores lists one page of the live scorers' scores, newest first;
// filter (agent, thread, run, scorer, time range, page size and token) may be nil.
func (c *Client) ListScores(ctx context.Context, filter *agentdv1.ListScoresRequest) (*agentdv1.ListScoresResponse, error) {
	if filter == nil {
		filter = &agentdv1.ListScoresRequest{}
	}
	resp, err := c.agents.ListScores(ctx, filter)
	return resp, wrap(err)
}

// Scores yields every score filter matches (all pages), newest first.
func (c *Client) Scores(ctx context.Context, filter *agentdv1.ListScoresRequest) iter.Seq2[*agentdv1.Score, error] {
	return func(yield func(*agentdv1.Score, error) bool) {
		page := &agentdv1.ListScoresRequest{}
		if filter != nil {
			page = proto.Clone(filter).(*agentdv1.ListScoresRequest)
		}
		for {
			resp, err := c.ListScores(ctx, page)
			if err != nil {
				yield(nil, err)
				return
			}
			for _, score := range resp.GetScores() {
				if !yield(score, nil) {
					return
				}
			}
			if resp.GetNextPageToken() == "" {
				return
			}
			page.PageToken = resp.GetNextPageToken()
		}
	}
}
