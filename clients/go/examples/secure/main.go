// Command secure calls an agentd server that authenticates its callers: a
// bearer token over TLS, or a client certificate (mutual TLS).
//
//	agentd token new --tenant acme --subject example --roles writer   # paste its lines into agentd.toml
//	go run ./examples/secure -addr agentd.internal:50051 -token "$TOKEN" -cacert ca.pem
//	go run ./examples/secure -addr agentd.internal:50051 -cacert ca.pem -cert me.pem -key me-key.pem
//
// -token defaults to $AGENTD_TOKEN. Without -cacert the connection is
// plaintext, which carries a token only to a loopback address.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	agentd "github.com/agentd/agentd/clients/go"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "agentd address, host:port")
	token := flag.String("token", os.Getenv("AGENTD_TOKEN"), "bearer token (default $AGENTD_TOKEN)")
	caFile := flag.String("cacert", "", "the CA that signed the server's certificate (PEM); empty: plaintext")
	certFile := flag.String("cert", "", "client certificate (PEM), for mutual TLS")
	keyFile := flag.String("key", "", "the client certificate's key (PEM)")
	agent := flag.String("agent", "echo", "the agent to call")
	flag.Parse()

	if err := run(*addr, *token, *caFile, *certFile, *keyFile, *agent); err != nil {
		fmt.Fprintln(os.Stderr, "secure:", err)
		os.Exit(1)
	}
}

func run(addr, token, caFile, certFile, keyFile, agent string) error {
	ctx := context.Background()
	security := agentd.WithInsecure()
	if caFile != "" {
		security = agentd.WithTLSFiles(caFile, certFile, keyFile)
	}
	client, err := agentd.Dial(ctx, addr, security, agentd.WithToken(token), agentd.WithTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer client.Close()

	resp, err := client.Generate(ctx, agent, "hello, securely")
	var e *agentd.Error
	switch {
	case errors.Is(err, agentd.ErrUnauthenticated):
		return fmt.Errorf("the server does not know this caller (%s): check -token or the client certificate", agentd.ReasonOf(err))
	case errors.Is(err, agentd.ErrPermissionDenied) && errors.As(err, &e):
		return fmt.Errorf("this caller needs the %s role", e.Metadata["required_role"])
	case errors.As(err, &e) && e.Reason == agentd.ReasonRateLimited:
		return fmt.Errorf("rate limited: try again in %s", e.RetryDelay)
	case err != nil:
		return err
	}
	fmt.Println(resp.GetText())
	return nil
}
