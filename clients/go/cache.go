package agentd

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// CacheOption configures SetCacheEntry.
type CacheOption func(*agentdv1.SetCacheEntryRequest)

// WithTTL sets the entry's time to live (the backend default when unset;
// some backends round it up to whole seconds).
func WithTTL(ttl time.Duration) CacheOption {
	return func(r *agentdv1.SetCacheEntryRequest) { r.Ttl = durationpb.New(ttl) }
}

// WithPinned pins the entry: it never expires and is never evicted.
func WithPinned() CacheOption {
	return func(r *agentdv1.SetCacheEntryRequest) { r.Pinned = true }
}

// GetCacheEntry reads a server cache entry. found is false for a missing
// key. Binary values come back base64-encoded.
func (c *Client) GetCacheEntry(ctx context.Context, key string) (value *structpb.Value, found bool, err error) {
	resp, err := c.cache.GetCacheEntry(ctx, &agentdv1.GetCacheEntryRequest{Key: key})
	if err != nil {
		return nil, false, wrap(err)
	}
	return resp.GetValue(), resp.GetFound(), nil
}

// SetCacheEntry writes a server cache entry. value is any JSON value (see
// Value).
func (c *Client) SetCacheEntry(ctx context.Context, key string, value any, opts ...CacheOption) error {
	v, err := Value(value)
	if err != nil {
		return (&callConfig{errs: []error{err}}).err()
	}
	req := &agentdv1.SetCacheEntryRequest{Key: key, Value: v}
	for _, opt := range opts {
		opt(req)
	}
	_, err = c.cache.SetCacheEntry(ctx, req)
	return wrap(err)
}

// DeleteCacheEntry deletes a cache entry and reports whether it existed.
func (c *Client) DeleteCacheEntry(ctx context.Context, key string) (bool, error) {
	resp, err := c.cache.DeleteCacheEntry(ctx, &agentdv1.DeleteCacheEntryRequest{Key: key})
	if err != nil {
		return false, wrap(err)
	}
	return resp.GetDeleted(), nil
}

// ClearCache deletes every key starting with prefix (required) and returns
// how many were deleted.
func (c *Client) ClearCache(ctx context.Context, prefix string) (int64, error) {
	resp, err := c.cache.ClearCache(ctx, &agentdv1.ClearCacheRequest{Prefix: prefix})
	if err != nil {
		return 0, wrap(err)
	}
	return resp.GetDeletedCount(), nil
}

// GetCacheStats returns the cache's counters (hits, misses, writes, errors,
// size) and the name of the cache backend.
func (c *Client) GetCacheStats(ctx context.Context) (*agentdv1.GetCacheStatsResponse, error) {
	resp, err := c.cache.GetCacheStats(ctx, &agentdv1.GetCacheStatsRequest{})
	return resp, wrap(err)
}

// InvalidateOption narrows InvalidateResponseCache.
type InvalidateOption func(*agentdv1.InvalidateResponseCacheRequest)

// OnlyScope invalidates only the entries of this scope.
func OnlyScope(scope string) InvalidateOption {
	return func(r *agentdv1.InvalidateResponseCacheRequest) {
		r.ScopeFilter = &agentdv1.InvalidateResponseCacheRequest_Scope{Scope: scope}
	}
}

// OnlyUnscoped invalidates only the unscoped entries.
func OnlyUnscoped() InvalidateOption {
	return func(r *agentdv1.InvalidateResponseCacheRequest) {
		r.ScopeFilter = &agentdv1.InvalidateResponseCacheRequest_NoScope{NoScope: &emptypb.Empty{}}
	}
}

// InvalidateResponseCache deletes the response-cache entries of an agent id
// (default-derived keys only) and returns how many were deleted.
func (c *Client) InvalidateResponseCache(ctx context.Context, agentID string, opts ...InvalidateOption) (int64, error) {
	req := &agentdv1.InvalidateResponseCacheRequest{AgentId: agentID}
	for _, opt := range opts {
		opt(req)
	}
	resp, err := c.cache.InvalidateResponseCache(ctx, req)
	if err != nil {
		return 0, wrap(err)
	}
	return resp.GetDeletedCount(), nil
}
