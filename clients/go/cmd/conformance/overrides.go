package main

import (
	"fmt"
	"slices"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// checkFields compares overridden_fields with the expectation, when there is one.
func checkFields(got []string, e *expectation) error {
	if want, ok := e.get("overridden_fields"); ok {
		if w := strings_(want); !slices.Equal(got, w) {
			return fmt.Errorf("overridden_fields %q, want %q", got, w)
		}
	}
	return nil
}

func (r *runner) updateOverrides(s step, e *expectation) error {
	agent, err := s.str("agent")
	if err != nil {
		return err
	}
	overrides := &agentdv1.AgentOverrides{AgentId: agent}
	if text, ok := s["instructions"].(string); ok {
		overrides.Instructions = &text
	}
	written, err := r.client.UpdateAgentOverrides(r.ctx, overrides, "instructions")
	if handled, err := checkError(err, e); handled || err != nil {
		return err
	}
	return checkFields(written.GetOverriddenFields(), e)
}

func (r *runner) deleteOverrides(s step, e *expectation) error {
	agent, err := s.str("agent")
	if err != nil {
		return err
	}
	deleted, err := r.client.DeleteAgentOverrides(r.ctx, agent)
	if err != nil {
		return err
	}
	return checkFields(deleted.GetOverriddenFields(), e)
}

func (r *runner) getAgent(s step, e *expectation) error {
	name, err := s.str("agent")
	if err != nil {
		return err
	}
	agent, err := r.client.GetAgent(r.ctx, name)
	if err != nil {
		return err
	}
	if want, ok := e.get("instructions"); ok && agent.GetInstructions() != want {
		return fmt.Errorf("instructions %q, want %q", agent.GetInstructions(), want)
	}
	return checkFields(agent.GetOverriddenFields(), e)
}
