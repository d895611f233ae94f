// Command conformance runs agentd's client conformance scenarios
// (tests/conformance/scenarios.json) through the Go client against a
// running conformance server:
//
//	agentd serve --config tests/conformance/agentd.toml --app tests.conformance.app --port 50051
//	go run ./cmd/conformance -addr 127.0.0.1:50051 -scenarios ../../tests/conformance/scenarios.json
//
// A server with [auth] takes -token (default $AGENTD_TOKEN; the scenarios
// need the writer and admin roles); -cacert connects over TLS trusting that
// CA, and -cert/-key add a client certificate (mutual TLS):
//
//	go run ./cmd/conformance -addr 127.0.0.1:50051 -token "$TOKEN" -cacert ca.pem
//
// It prints one line per scenario, then exactly
// "conformance: N passed, M failed", and exits 1 when a scenario failed (2
// when the scenarios could not be read). A step of an unknown kind, or an
// expectation this runner does not know, fails its scenario.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	agentd "github.com/agentd/agentd/clients/go"
)

type scenarioFile struct {
	Description string     `json:"description"`
	Scenarios   []scenario `json:"scenarios"`
}

type scenario struct {
	Name  string           `json:"name"`
	Steps []map[string]any `json:"steps"`
}

func main() {
	addr := flag.String("addr", "", "agentd address, host:port")
	path := flag.String("scenarios", "../../tests/conformance/scenarios.json", "the scenario file")
	timeout := flag.Duration("timeout", 60*time.Second, "deadline of each scenario")
	filter := flag.String("run", "", "run only the scenarios whose name matches this regular expression")
	token := flag.String("token", os.Getenv("AGENTD_TOKEN"), "bearer token (default $AGENTD_TOKEN)")
	caFile := flag.String("cacert", "", "connect over TLS, trusting this CA (PEM)")
	certFile := flag.String("cert", "", "client certificate (PEM) for mutual TLS, with -key and -cacert")
	keyFile := flag.String("key", "", "the client certificate's key (PEM)")
	flag.Parse()
	if *addr == "" || (*certFile != "" || *keyFile != "") && *caFile == "" {
		fmt.Fprintln(os.Stderr, "usage: conformance -addr host:port [-scenarios file] [-timeout d] [-run regexp] "+
			"[-token t] [-cacert ca.pem [-cert client.pem -key client-key.pem]]")
		os.Exit(2)
	}
	file, err := load(*path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
		os.Exit(2)
	}
	var match *regexp.Regexp
	if *filter != "" {
		if match, err = regexp.Compile(*filter); err != nil {
			fmt.Fprintf(os.Stderr, "conformance: -run: %v\n", err)
			os.Exit(2)
		}
	}

	security := agentd.WithInsecure()
	if *caFile != "" {
		security = agentd.WithTLSFiles(*caFile, *certFile, *keyFile)
	}
	client, err := agentd.Dial(context.Background(), *addr, security, agentd.WithToken(*token))
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformance: %v\n", err)
		os.Exit(2)
	}
	defer client.Close()

	passed, failed := 0, 0
	for _, sc := range file.Scenarios {
		if match != nil && !match.MatchString(sc.Name) {
			continue
		}
		start := time.Now()
		err := runScenario(client, sc, *timeout)
		took := time.Since(start).Round(time.Millisecond)
		if err != nil {
			failed++
			fmt.Printf("FAIL %s (%s): %v\n", sc.Name, took, err)
		} else {
			passed++
			fmt.Printf("PASS %s (%s)\n", sc.Name, took)
		}
	}
	fmt.Printf("conformance: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		client.Close()
		os.Exit(1)
	}
}

func load(path string) (*scenarioFile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f scenarioFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(f.Scenarios) == 0 {
		return nil, fmt.Errorf("%s: no scenario", path)
	}
	return &f, nil
}

func runScenario(client *agentd.Client, sc scenario, timeout time.Duration) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r := &runner{
		client:   client,
		ctx:      ctx,
		subs:     map[string]*subscription{},
		stats:    map[string]cacheStats{},
		thread:   "thr-go-" + randomHex(),
		resource: "res-go-" + randomHex(),
	}
	defer r.close()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	if len(sc.Steps) == 0 {
		return fmt.Errorf("the scenario has no step")
	}
	for i, raw := range sc.Steps {
		s := step(substitute(raw, r.thread, r.resource).(map[string]any))
		kind, _ := s["kind"].(string)
		if err := r.step(kind, s); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, kind, err)
		}
	}
	return nil
}

func randomHex() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// substitute replaces $thread and $resource in every string of a step.
func substitute(v any, thread, resource string) any {
	switch x := v.(type) {
	case string:
		return strings.NewReplacer("$thread", thread, "$resource", resource).Replace(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = substitute(e, thread, resource)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = substitute(e, thread, resource)
		}
		return out
	}
	return v
}
