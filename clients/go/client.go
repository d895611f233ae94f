package agentd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// Client is a connection to an agentd server. It is safe for concurrent use;
// create one per server and share it. Close it when done.
type Client struct {
	conn    *grpc.ClientConn
	agents  agentdv1.AgentServiceClient
	threads agentdv1.ThreadServiceClient
	signals agentdv1.SignalServiceClient
	cache   agentdv1.CacheServiceClient
}

// Option configures Dial.
type Option func(*dialConfig)

type dialConfig struct {
	creds      credentials.TransportCredentials
	keepalive  *keepalive.ClientParameters
	metadata   []string
	timeout    time.Duration
	block      bool
	propagator propagation.TextMapPropagator
	extra      []grpc.DialOption
	token      *string // WithToken's; nil: $AGENTD_TOKEN unless other credentials are given
	perRPC     []credentials.PerRPCCredentials
	errs       []error
}

// WithTLS connects over TLS with the given transport credentials, e.g.
// credentials.NewTLS(&tls.Config{...}) or credentials.NewClientTLSFromFile
// (see also WithTLSConfig and WithTLSFiles). Without a TLS option or
// WithInsecure, Dial uses TLS with the system roots.
func WithTLS(creds credentials.TransportCredentials) Option {
	return func(c *dialConfig) { c.creds = creds }
}

// WithInsecure connects in plaintext (a local or sidecar server).
func WithInsecure() Option {
	return func(c *dialConfig) { c.creds = insecure.NewCredentials() }
}

// WithKeepalive pings the server after `time` without activity and closes the
// connection when a ping is not answered within `timeout`. Pings are sent
// with and without open calls; keep `time` above the server's minimum ping
// interval.
func WithKeepalive(time, timeout time.Duration) Option {
	return func(c *dialConfig) {
		c.keepalive = &keepalive.ClientParameters{Time: time, Timeout: timeout, PermitWithoutStream: true}
	}
}

// WithMetadata adds a gRPC metadata pair (a request header) to every call.
// Keys are lowercased by gRPC. It may be given more than once. For a bearer
// token use WithToken, which keeps it off plaintext connections; an
// "authorization" entry given here replaces $AGENTD_TOKEN.
func WithMetadata(key, value string) Option {
	return func(c *dialConfig) { c.metadata = append(c.metadata, key, value) }
}

// WithTimeout sets a default deadline for unary calls (Generate, GetAgent,
// sends, cache calls, ...) whose context has none. Streams (Stream,
// Subscribe, Connect) are never given a default deadline: bound them with
// their context.
func WithTimeout(d time.Duration) Option {
	return func(c *dialConfig) { c.timeout = d }
}

// WithBlock makes Dial wait until the connection is ready, or fail when the
// context passed to Dial ends first. By default Dial returns at once and
// connects in the background; calls then wait for the connection.
func WithBlock() Option {
	return func(c *dialConfig) { c.block = true }
}

// WithPropagator sets how a span in a call's context is propagated to the
// server. The default is W3C trace context (traceparent, tracestate) plus
// W3C baggage. Nothing is sent when the context carries no valid span.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *dialConfig) { c.propagator = p }
}

// WithDialOptions passes extra options to grpc.NewClient (interceptors,
// stats handlers, message size limits, ...).
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *dialConfig) { c.extra = append(c.extra, opts...) }
}

// Dial creates a client for the agentd server at target ("host:port", or any
// gRPC target such as "dns:///agentd.internal:443").
//
// Dial does not wait for the connection unless WithBlock is given; ctx then
// bounds the wait. The client must be closed with Close.
func Dial(ctx context.Context, target string, opts ...Option) (*Client, error) {
	cfg := dialConfig{}
	for _, opt := range opts {
		opt(&cfg)
	}
	if len(cfg.metadata)%2 != 0 {
		return nil, errors.New("agentd: WithMetadata needs a key and a value")
	}
	if len(cfg.errs) > 0 {
		return nil, errors.Join(cfg.errs...)
	}
	if cfg.creds == nil {
		cfg.creds = credentials.NewTLS(nil)
	}
	bearer, err := cfg.bearerToken(target)
	if err != nil {
		return nil, err
	}
	if bearer != nil {
		cfg.perRPC = append(cfg.perRPC, bearer)
	}
	if cfg.propagator == nil {
		cfg.propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	ic := interceptors{metadata: cfg.metadata, timeout: cfg.timeout, propagator: cfg.propagator}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(cfg.creds),
		grpc.WithChainUnaryInterceptor(ic.unary),
		grpc.WithChainStreamInterceptor(ic.stream),
	}
	for _, creds := range cfg.perRPC {
		dialOpts = append(dialOpts, grpc.WithPerRPCCredentials(creds))
	}
	if cfg.keepalive != nil {
		dialOpts = append(dialOpts, grpc.WithKeepaliveParams(*cfg.keepalive))
	}
	dialOpts = append(dialOpts, cfg.extra...)
	conn, err := grpc.NewClient(target, dialOpts...)
	if err != nil {
		return nil, fmt.Errorf("agentd: dial %s: %w", target, err)
	}
	if cfg.block {
		if err := waitReady(ctx, conn); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("agentd: dial %s: %w", target, err)
		}
	}
	return NewClient(conn), nil
}

// NewClient wraps an existing connection (for callers that build their own
// grpc.ClientConn). Closing the client closes the connection.
func NewClient(conn *grpc.ClientConn) *Client {
	return &Client{
		conn:    conn,
		agents:  agentdv1.NewAgentServiceClient(conn),
		threads: agentdv1.NewThreadServiceClient(conn),
		signals: agentdv1.NewSignalServiceClient(conn),
		cache:   agentdv1.NewCacheServiceClient(conn),
	}
}

func waitReady(ctx context.Context, conn *grpc.ClientConn) error {
	conn.Connect()
	for {
		state := conn.GetState()
		switch state {
		case connectivity.Ready:
			return nil
		case connectivity.Shutdown:
			return errors.New("connection shut down")
		}
		if !conn.WaitForStateChange(ctx, state) {
			return fmt.Errorf("not ready (%s): %w", state, ctx.Err())
		}
	}
}

// Close closes the connection. Open streams end with a Canceled error.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the underlying connection.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// AgentService is the generated stub, for calls this package does not wrap.
// Errors it returns are plain gRPC statuses; AsError converts them.
func (c *Client) AgentService() agentdv1.AgentServiceClient { return c.agents }

// ThreadService is the generated stub.
func (c *Client) ThreadService() agentdv1.ThreadServiceClient { return c.threads }

// SignalService is the generated stub.
func (c *Client) SignalService() agentdv1.SignalServiceClient { return c.signals }

// CacheService is the generated stub.
func (c *Client) CacheService() agentdv1.CacheServiceClient { return c.cache }
