package agentd

import (
	"context"
	"iter"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// GetAgentOverrides returns the editor overrides in effect for an agent
// (version 0: none ever written).
func (c *Client) GetAgentOverrides(ctx context.Context, agent string) (*agentdv1.AgentOverrides, error) {
	resp, err := c.agents.GetAgentOverrides(ctx, &agentdv1.GetAgentOverridesRequest{AgentId: agent})
	return resp.GetOverrides(), wrap(err)
}

// UpdateAgentOverrides writes the fields the mask names (AIP-134 paths:
// instructions, tools, tool_descriptions, tool_descriptions.<tool>); a path
// named with no value removes that override. Needs the admin role; a field
// the agent's editor policy locks is PERMISSION_DENIED (EDITOR_FIELD_LOCKED).
// It returns the new version.
//
//	v, err := client.UpdateAgentOverrides(ctx,
//		&agentdv1.AgentOverrides{AgentId: "support", Instructions: proto.String("Answer in French.")},
//		"instructions")
func (c *Client) UpdateAgentOverrides(ctx context.Context, overrides *agentdv1.AgentOverrides, paths ...string) (*agentdv1.AgentOverrides, error) {
	req := &agentdv1.UpdateAgentOverridesRequest{Overrides: overrides}
	if len(paths) > 0 {
		req.UpdateMask = &fieldmaskpb.FieldMask{Paths: paths}
	}
	resp, err := c.agents.UpdateAgentOverrides(ctx, req)
	return resp.GetOverrides(), wrap(err)
}

// DeleteAgentOverrides removes every override of an agent; it returns the
// version that records the deletion.
func (c *Client) DeleteAgentOverrides(ctx context.Context, agent string) (*agentdv1.AgentOverrides, error) {
	resp, err := c.agents.DeleteAgentOverrides(ctx, &agentdv1.DeleteAgentOverridesRequest{AgentId: agent})
	return resp.GetOverrides(), wrap(err)
}

// ListAgentOverrideVersions returns one page of an agent's override
// versions, newest first.
func (c *Client) ListAgentOverrideVersions(ctx context.Context, agent string, opts ...ListOption) (*agentdv1.ListAgentOverrideVersionsResponse, error) {
	cfg := newListConfig(opts)
	if err := cfg.err(); err != nil {
		return nil, err
	}
	resp, err := c.agents.ListAgentOverrideVersions(ctx, &agentdv1.ListAgentOverrideVersionsRequest{
		AgentId: agent, PageSize: cfg.pageSize, PageToken: cfg.pageToken,
	})
	return resp, wrap(err)
}

// AgentOverrideVersions yields every override version of an agent, newest
// first, page after page.
func (c *Client) AgentOverrideVersions(ctx context.Context, agent string, opts ...ListOption) iter.Seq2[*agentdv1.AgentOverrides, error] {
	return paginate(opts, func(page []ListOption) ([]*agentdv1.AgentOverrides, string, error) {
		resp, err := c.ListAgentOverrideVersions(ctx, agent, page...)
		return resp.GetVersions(), resp.GetNextPageToken(), err
	})
}

// RestoreAgentOverrides makes an earlier version's fields current again, as
// a new version (returned).
func (c *Client) RestoreAgentOverrides(ctx context.Context, agent string, version int64) (*agentdv1.AgentOverrides, error) {
	resp, err := c.agents.RestoreAgentOverrides(ctx, &agentdv1.RestoreAgentOverridesRequest{AgentId: agent, Version: version})
	return resp.GetOverrides(), wrap(err)
}
