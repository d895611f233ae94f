package agentd_test

// The client against a real agentd (the conformance config). Skipped unless
// AGENTD_ADDR names a plaintext server, and AGENTD_SECURE_ADDR one with a
// token over TLS (AGENTD_SECURE_CA its CA's PEM file, AGENTD_SECURE_TOKEN a
// writer's token); tests/e2e/test_conformance_go.py sets them all.

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	agentd "github.com/agentd/agentd/clients/go"
)

func liveEnv(t *testing.T, names ...string) []string {
	t.Helper()
	values := make([]string, len(names))
	for i, name := range names {
		if values[i] = os.Getenv(name); values[i] == "" {
			t.Skipf("%s is not set", name)
		}
	}
	return values
}

func TestLiveTheTokenComesFromAgentdTokenWhenNoneIsGiven(t *testing.T) {
	env := liveEnv(t, "AGENTD_SECURE_ADDR", "AGENTD_SECURE_CA", "AGENTD_SECURE_TOKEN")
	addr, ca, token := env[0], env[1], env[2]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	t.Setenv(agentd.TokenEnv, token)

	client, err := agentd.Dial(ctx, addr, agentd.WithTLSFiles(ca, "", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Generate(ctx, "echo", "from the environment")
	if err != nil || resp.GetText() != "from the environment" {
		t.Fatalf("Generate = %v, %v", resp, err)
	}

	anonymous, err := agentd.Dial(ctx, addr, agentd.WithTLSFiles(ca, "", ""), agentd.WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	defer anonymous.Close()
	if _, err := anonymous.ListAgents(ctx); !errors.Is(err, agentd.ErrUnauthenticated) {
		t.Fatalf(`WithToken(""): err = %v, want UNAUTHENTICATED`, err)
	}
}

func TestLiveAFallbackStrategyAnswersWithTheFallbackValue(t *testing.T) {
	addr := liveEnv(t, "AGENTD_ADDR")[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client, err := agentd.Dial(ctx, addr, agentd.WithInsecure(), agentd.WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	// The local model answers "Paris", which is not JSON, let alone a city object.
	resp, err := client.Generate(ctx, "echo", "where?",
		agentd.WithProviderOptions(map[string]any{"local": map[string]any{"script": []any{map[string]any{"text": "Paris"}}}}),
		agentd.WithStructuredOutputSpec(agentd.StructuredOutput{
			Name:          "city",
			Schema:        map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string"}}, "required": []any{"city"}},
			ErrorStrategy: agentd.StrategyFallback,
			FallbackValue: map[string]any{"city": "unknown"},
		}))
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetObject().GetStructValue().AsMap(); got["city"] != "unknown" || len(got) != 1 {
		t.Fatalf("object = %v, want the fallback value", resp.GetObject())
	}
	used := false
	for _, w := range resp.GetWarnings() {
		used = used || strings.HasSuffix(w, "the fallback value was used")
	}
	if !used {
		t.Fatalf("warnings = %q, want one saying the fallback value was used", resp.GetWarnings())
	}
}
