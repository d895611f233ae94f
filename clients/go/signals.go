package agentd

import (
	"context"
	"iter"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// ThreadTarget targets a thread: the signal goes into its active run, or
// wakes it when idle (see WithIfActive and WithIfIdle).
func ThreadTarget(resourceID, threadID string) *agentdv1.SignalTarget {
	return &agentdv1.SignalTarget{ResourceId: resourceID, ThreadId: threadID}
}

// RunTarget targets a run by id.
func RunTarget(runID string) *agentdv1.SignalTarget {
	return &agentdv1.SignalTarget{RunId: runID}
}

// SendOption configures a send (messages, signals, state, notifications),
// over SignalService or a Connect session.
type SendOption func(*sendConfig)

type sendConfig struct {
	messageID    string
	attributes   []*agentdv1.Attribute
	metadata     map[string]any
	providerOpts map[string]any
	ifActive     *agentdv1.IfActive
	ifIdle       *agentdv1.IfIdle
	errs         []error
}

func newSendConfig(opts []SendOption) *sendConfig {
	c := &sendConfig{}
	for _, opt := range opts {
		if opt != nil {
			opt(c)
		}
	}
	return c
}

func (c *sendConfig) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return (&callConfig{errs: c.errs}).err()
}

func (c *sendConfig) idle() *agentdv1.IfIdle {
	if c.ifIdle == nil {
		c.ifIdle = &agentdv1.IfIdle{}
	}
	return c.ifIdle
}

func (c *sendConfig) active() *agentdv1.IfActive {
	if c.ifActive == nil {
		c.ifActive = &agentdv1.IfActive{}
	}
	return c.ifActive
}

// message builds the MessageInput of a text message send.
func (c *sendConfig) message(text string) *agentdv1.MessageInput {
	m := &agentdv1.MessageInput{Id: c.messageID, Text: text, Attributes: c.attributes}
	var err error
	if m.Metadata, err = Struct(c.metadata); err != nil {
		c.errs = append(c.errs, err)
	}
	if m.ProviderOptions, err = Struct(c.providerOpts); err != nil {
		c.errs = append(c.errs, err)
	}
	return m
}

// WithMessageID sets the client id of a sent message: a retried send with
// the same id and payload returns the first answer and is not routed twice.
func WithMessageID(id string) SendOption {
	return func(c *sendConfig) { c.messageID = id }
}

// WithMessageAttributes sets the ordered attributes of a sent message (the
// model then sees <user name="...">...</user>); see Attr and Attrs.
func WithMessageAttributes(attrs ...*agentdv1.Attribute) SendOption {
	return func(c *sendConfig) { c.attributes = append(c.attributes, attrs...) }
}

// WithMessageMetadata sets the metadata of a sent message.
func WithMessageMetadata(metadata map[string]any) SendOption {
	return func(c *sendConfig) { c.metadata = metadata }
}

// WithMessageProviderOptions sets the provider options of a sent message.
func WithMessageProviderOptions(options map[string]any) SendOption {
	return func(c *sendConfig) { c.providerOpts = options }
}

// WithIfActive chooses what happens when the thread has an active run
// (deliver by default), with attributes merged into the signal on that path.
func WithIfActive(behavior agentdv1.ActiveBehavior, attrs ...*agentdv1.Attribute) SendOption {
	return func(c *sendConfig) {
		a := c.active()
		a.Behavior, a.Attributes = behavior, append(a.Attributes, attrs...)
	}
}

// WithIfIdle chooses what happens when the thread is idle (wake by
// default), with attributes merged into the signal on that path.
func WithIfIdle(behavior agentdv1.IdleBehavior, attrs ...*agentdv1.Attribute) SendOption {
	return func(c *sendConfig) {
		i := c.idle()
		i.Behavior, i.Attributes = behavior, append(i.Attributes, attrs...)
	}
}

// WithWakeOptions sets the options of the run a send wakes (memory always
// comes from the target thread). For SendNotification they are the idle
// stream options of an immediate delivery.
func WithWakeOptions(opts ...CallOption) SendOption {
	return func(c *sendConfig) {
		o, err := executionOptions(opts)
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.idle().StreamOptions = o
	}
}

// SendMessage sends a user message to a thread or run: delivered into the
// active run, or waking an idle thread. The response carries the created
// signal and the routing decision (wake, deliver, persist, discard).
func (c *Client) SendMessage(ctx context.Context, agent string, target *agentdv1.SignalTarget, text string, opts ...SendOption) (*agentdv1.SendMessageResponse, error) {
	cfg := newSendConfig(opts)
	msg := cfg.message(text)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.signals.SendMessage(ctx, &agentdv1.SendMessageRequest{
		AgentId: agent, Target: target, Message: msg, IfActive: cfg.ifActive, IfIdle: cfg.ifIdle,
	})
	return resp, wrap(err)
}

// QueueMessage queues a user message for the thread's next turn (runs start
// in order, one at a time); on an idle thread the run starts at once.
func (c *Client) QueueMessage(ctx context.Context, agent string, target *agentdv1.SignalTarget, text string, opts ...SendOption) (*agentdv1.QueueMessageResponse, error) {
	cfg := newSendConfig(opts)
	msg := cfg.message(text)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.signals.QueueMessage(ctx, &agentdv1.QueueMessageRequest{
		AgentId: agent, Target: target, Message: msg, IfIdle: cfg.ifIdle,
	})
	return resp, wrap(err)
}

// SendSignal sends a signal of any type ("user", "state", "reactive",
// "notification").
func (c *Client) SendSignal(ctx context.Context, agent string, target *agentdv1.SignalTarget, signal *agentdv1.SignalInput, opts ...SendOption) (*agentdv1.SendSignalResponse, error) {
	cfg := newSendConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.signals.SendSignal(ctx, &agentdv1.SendSignalRequest{
		AgentId: agent, Target: target, Signal: signal, IfActive: cfg.ifActive, IfIdle: cfg.ifIdle,
	})
	return resp, wrap(err)
}

// SendStateSignal sends named thread state; it is skipped (decision
// skipped_unchanged, no signal) when unchanged.
func (c *Client) SendStateSignal(ctx context.Context, agent string, target *agentdv1.SignalTarget, state *agentdv1.StateSignalInput, opts ...SendOption) (*agentdv1.SendStateSignalResponse, error) {
	cfg := newSendConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.signals.SendStateSignal(ctx, &agentdv1.SendStateSignalRequest{
		AgentId: agent, Target: target, State: state, IfActive: cfg.ifActive, IfIdle: cfg.ifIdle,
	})
	return resp, wrap(err)
}

// SendNotification creates (or merges) a notification inbox record and
// applies the agent's delivery policy. WithWakeOptions sets the options of
// the run an immediate delivery wakes.
func (c *Client) SendNotification(ctx context.Context, agent, resourceID, threadID string, n *agentdv1.NotificationInput, opts ...SendOption) (*agentdv1.SendNotificationResponse, error) {
	cfg := newSendConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	req := &agentdv1.SendNotificationRequest{AgentId: agent, ResourceId: resourceID, ThreadId: threadID, Notification: n}
	if cfg.ifIdle != nil {
		req.IdleStreamOptions = cfg.ifIdle.GetStreamOptions()
	}
	resp, err := c.signals.SendNotification(ctx, req)
	return resp, wrap(err)
}

// ListNotifications lists one page of a thread's notifications, newest
// update first (WithResource, WithNotificationFilter, WithPageSize,
// WithPageToken).
func (c *Client) ListNotifications(ctx context.Context, threadID string, opts ...ListOption) (*agentdv1.ListNotificationsResponse, error) {
	cfg := newListConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.signals.ListNotifications(ctx, &agentdv1.ListNotificationsRequest{
		ThreadId: threadID, ResourceId: cfg.resource, AgentId: cfg.agent, Statuses: cfg.statuses,
		Priorities: cfg.priorities, Source: cfg.source, Search: cfg.search,
		PageSize: cfg.pageSize, PageToken: cfg.pageToken,
	})
	return resp, wrap(err)
}

// Notifications yields every notification of a thread, page after page.
func (c *Client) Notifications(ctx context.Context, threadID string, opts ...ListOption) iter.Seq2[*agentdv1.Notification, error] {
	return paginate(opts, func(page []ListOption) ([]*agentdv1.Notification, string, error) {
		resp, err := c.ListNotifications(ctx, threadID, page...)
		return resp.GetNotifications(), resp.GetNextPageToken(), err
	})
}

// UpdateNotificationStatus marks a notification SEEN, DISMISSED or ARCHIVED.
func (c *Client) UpdateNotificationStatus(ctx context.Context, threadID, notificationID string, s agentdv1.NotificationStatus) (*agentdv1.Notification, error) {
	resp, err := c.signals.UpdateNotificationStatus(ctx, &agentdv1.UpdateNotificationStatusRequest{
		ThreadId: threadID, NotificationId: notificationID, Status: s,
	})
	if err != nil {
		return nil, wrap(err)
	}
	return resp.GetNotification(), nil
}

// Action names a routing decision: "wake", "deliver", "persist", "discard",
// "skipped_unchanged", or "" when none is set.
func Action(d *agentdv1.RoutingDecision) string {
	if d == nil {
		return ""
	}
	m := d.ProtoReflect()
	field := m.WhichOneof(m.Descriptor().Oneofs().ByName("action"))
	if field == nil {
		return ""
	}
	return string(field.Name())
}

// RunID is the run a routing decision woke or delivered into ("" for the
// others).
func RunID(d *agentdv1.RoutingDecision) string {
	if w := d.GetWake(); w != nil {
		return w.GetRunId()
	}
	return d.GetDeliver().GetRunId()
}
