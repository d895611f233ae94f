package agentd

import (
	"os"
	"testing"
)

// TestMain keeps the caller's $AGENTD_TOKEN out of the tests: Dial would
// send it to the fake servers (and refuse plaintext beyond loopback).
// Tests that want one set it with t.Setenv.
func TestMain(m *testing.M) {
	_ = os.Unsetenv(TokenEnv)
	os.Exit(m.Run())
}
