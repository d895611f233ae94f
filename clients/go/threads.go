package agentd

import (
	"context"
	"iter"
	"time"

	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// ListOption configures a list call (ListAgents, ListThreads, ListMessages,
// ListNotifications). Options a list does not support are ignored.
type ListOption interface{ applyList(*listConfig) }

// ThreadOption configures a call on one thread (GetThread, DeleteThread,
// AbortRun).
type ThreadOption interface{ applyThread(*threadConfig) }

type listOptionFunc func(*listConfig)

func (f listOptionFunc) applyList(c *listConfig) { f(c) }

type listConfig struct {
	resource       string
	pageSize       int32
	pageToken      string
	metadataFilter *structpb.Struct
	order          agentdv1.SortOrder
	start, end     *timestamppb.Timestamp
	reminders      bool
	agent          string
	statuses       []agentdv1.NotificationStatus
	priorities     []agentdv1.NotificationPriority
	source, search string
	errs           []error
}

func newListConfig(opts []ListOption) *listConfig {
	c := &listConfig{}
	for _, opt := range opts {
		if opt != nil {
			opt.applyList(c)
		}
	}
	return c
}

func (c *listConfig) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return (&callConfig{errs: c.errs}).err()
}

type threadConfig struct{ resource string }

func newThreadConfig(opts []ThreadOption) *threadConfig {
	c := &threadConfig{}
	for _, opt := range opts {
		if opt != nil {
			opt.applyThread(c)
		}
	}
	return c
}

// ResourceOption names the resource (owner) of a thread. A thread of
// another resource is then NOT_FOUND. It is a ListOption, a ThreadOption
// and a SubscribeOption.
type ResourceOption string

// WithResource scopes a thread call to a resource.
func WithResource(resourceID string) ResourceOption { return ResourceOption(resourceID) }

func (r ResourceOption) applyList(c *listConfig)           { c.resource = string(r) }
func (r ResourceOption) applyThread(c *threadConfig)       { c.resource = string(r) }
func (r ResourceOption) applySubscribe(c *subscribeConfig) { c.resource = string(r) }

// WithPageSize sets the page size (0: the server default, 50; at most 1000).
func WithPageSize(n int) ListOption {
	return listOptionFunc(func(c *listConfig) { c.pageSize = int32(n) })
}

// WithPageToken asks for the page after the one that returned this token.
func WithPageToken(token string) ListOption {
	return listOptionFunc(func(c *listConfig) { c.pageToken = token })
}

// WithMetadataFilter keeps agents or threads whose metadata has each key
// with an equal value.
func WithMetadataFilter(filter map[string]any) ListOption {
	return listOptionFunc(func(c *listConfig) {
		s, err := Struct(filter)
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.metadataFilter = s
	})
}

// WithOrder sorts messages by creation time (ascending by default).
func WithOrder(order agentdv1.SortOrder) ListOption {
	return listOptionFunc(func(c *listConfig) { c.order = order })
}

// WithTimeRange keeps messages created within [start, end]; a zero time
// leaves that side open.
func WithTimeRange(start, end time.Time) ListOption {
	return listOptionFunc(func(c *listConfig) {
		if !start.IsZero() {
			c.start = timestamppb.New(start)
		}
		if !end.IsZero() {
			c.end = timestamppb.New(end)
		}
	})
}

// WithSystemReminders includes reactive (system-reminder) signal rows in
// ListMessages; they are hidden by default.
func WithSystemReminders() ListOption {
	return listOptionFunc(func(c *listConfig) { c.reminders = true })
}

// WithNotificationFilter filters ListNotifications: by agent (empty: any),
// statuses and priorities (none: any), source and a case-insensitive search
// in summary, kind or source.
func WithNotificationFilter(agent string, statuses []agentdv1.NotificationStatus, priorities []agentdv1.NotificationPriority, source, search string) ListOption {
	return listOptionFunc(func(c *listConfig) {
		c.agent, c.statuses, c.priorities, c.source, c.search = agent, statuses, priorities, source, search
	})
}

// CreateThread creates a thread. thread.ResourceId is required; the id is
// generated when empty. ALREADY_EXISTS (THREAD_ALREADY_EXISTS) when the id is
// taken.
func (c *Client) CreateThread(ctx context.Context, thread *agentdv1.Thread) (*agentdv1.Thread, error) {
	resp, err := c.threads.CreateThread(ctx, &agentdv1.CreateThreadRequest{Thread: thread})
	if err != nil {
		return nil, wrap(err)
	}
	return resp.GetThread(), nil
}

// GetThread returns a thread and the id of its active run ("" when idle).
func (c *Client) GetThread(ctx context.Context, threadID string, opts ...ThreadOption) (*agentdv1.Thread, string, error) {
	cfg := newThreadConfig(opts)
	resp, err := c.threads.GetThread(ctx, &agentdv1.GetThreadRequest{ThreadId: threadID, ResourceId: cfg.resource})
	if err != nil {
		return nil, "", wrap(err)
	}
	return resp.GetThread(), resp.GetActiveRunId(), nil
}

// ListThreads lists one page of a resource's threads, newest first.
func (c *Client) ListThreads(ctx context.Context, resourceID string, opts ...ListOption) (*agentdv1.ListThreadsResponse, error) {
	cfg := newListConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.threads.ListThreads(ctx, &agentdv1.ListThreadsRequest{
		ResourceId: resourceID, PageSize: cfg.pageSize, PageToken: cfg.pageToken, MetadataFilter: cfg.metadataFilter,
	})
	return resp, wrap(err)
}

// Threads yields every thread of a resource, newest first.
func (c *Client) Threads(ctx context.Context, resourceID string, opts ...ListOption) iter.Seq2[*agentdv1.Thread, error] {
	return paginate(opts, func(page []ListOption) ([]*agentdv1.Thread, string, error) {
		resp, err := c.ListThreads(ctx, resourceID, page...)
		return resp.GetThreads(), resp.GetNextPageToken(), err
	})
}

// UpdateThread updates a thread identified by thread.Id: the named fields
// ("title", "metadata"), or both when none is named.
func (c *Client) UpdateThread(ctx context.Context, thread *agentdv1.Thread, fields ...string) (*agentdv1.Thread, error) {
	req := &agentdv1.UpdateThreadRequest{Thread: thread}
	if len(fields) > 0 {
		req.UpdateMask = &fieldmaskpb.FieldMask{Paths: fields}
	}
	resp, err := c.threads.UpdateThread(ctx, req)
	if err != nil {
		return nil, wrap(err)
	}
	return resp.GetThread(), nil
}

// DeleteThread deletes a thread and its messages.
func (c *Client) DeleteThread(ctx context.Context, threadID string, opts ...ThreadOption) error {
	cfg := newThreadConfig(opts)
	_, err := c.threads.DeleteThread(ctx, &agentdv1.DeleteThreadRequest{ThreadId: threadID, ResourceId: cfg.resource})
	return wrap(err)
}

// ListMessages lists one page of a thread's messages (WithResource,
// WithOrder, WithTimeRange, WithSystemReminders, WithPageSize,
// WithPageToken).
func (c *Client) ListMessages(ctx context.Context, threadID string, opts ...ListOption) (*agentdv1.ListMessagesResponse, error) {
	cfg := newListConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.threads.ListMessages(ctx, &agentdv1.ListMessagesRequest{
		ThreadId: threadID, ResourceId: cfg.resource, PageSize: cfg.pageSize, PageToken: cfg.pageToken,
		Order: cfg.order, StartTime: cfg.start, EndTime: cfg.end, IncludeSystemReminders: cfg.reminders,
	})
	return resp, wrap(err)
}

// Messages yields every message of a thread, page after page.
func (c *Client) Messages(ctx context.Context, threadID string, opts ...ListOption) iter.Seq2[*agentdv1.Message, error] {
	return paginate(opts, func(page []ListOption) ([]*agentdv1.Message, string, error) {
		resp, err := c.ListMessages(ctx, threadID, page...)
		return resp.GetMessages(), resp.GetNextPageToken(), err
	})
}

// AbortRun aborts the thread's active run; with a non-empty runID only that
// run (a no-op when it is not the active one). It returns the aborted run's
// id, "" when nothing was aborted. An empty threadID with a runID aborts a
// run without a thread (Generate or Stream without memory).
func (c *Client) AbortRun(ctx context.Context, threadID, runID string, opts ...ThreadOption) (string, error) {
	cfg := newThreadConfig(opts)
	resp, err := c.threads.AbortRun(ctx, &agentdv1.AbortRunRequest{ThreadId: threadID, ResourceId: cfg.resource, RunId: runID})
	if err != nil {
		return "", wrap(err)
	}
	if !resp.GetAborted() {
		return "", nil
	}
	return resp.GetRunId(), nil
}
