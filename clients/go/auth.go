package agentd

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"

	"google.golang.org/grpc/credentials"
)

// BearerToken is credentials.PerRPCCredentials that sends
// "authorization: Bearer <Token>" with every call, as a server with
// [auth] mode "token" or "jwt" expects.
//
// It requires transport security unless AllowInsecure is set: gRPC then
// refuses it on a plaintext connection rather than send the token in clear.
// Set AllowInsecure only for a server on this machine (a loopback address)
// or behind a local sidecar that terminates TLS. WithToken sets it by itself
// for a plaintext connection to a loopback target, and refuses any other
// plaintext target.
type BearerToken struct {
	Token         string
	AllowInsecure bool
}

// GetRequestMetadata implements credentials.PerRPCCredentials.
func (t BearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + t.Token}, nil
}

// RequireTransportSecurity implements credentials.PerRPCCredentials.
func (t BearerToken) RequireTransportSecurity() bool { return !t.AllowInsecure }

// TokenEnv is read for the bearer token when Dial is given none.
const TokenEnv = "AGENTD_TOKEN"

// WithToken sends a bearer token with every call (see BearerToken). Over
// TLS it goes to any server; over a plaintext connection (WithInsecure) only
// to a loopback target, and Dial fails for any other: to send it anyway,
// use WithPerRPCCredentials(agentd.BearerToken{Token: t, AllowInsecure: true}).
//
// Without WithToken, Dial sends $AGENTD_TOKEN (TokenEnv) the same way,
// unless WithPerRPCCredentials or an "authorization" WithMetadata says how
// the caller is known. WithToken("") sends no token, whatever the
// environment holds. A token and an "authorization" WithMetadata together
// are refused.
func WithToken(token string) Option {
	return func(c *dialConfig) {
		token = strings.TrimSpace(token)
		c.token = &token
	}
}

// WithPerRPCCredentials adds credentials computed for each call, e.g. a
// BearerToken or an oauth.TokenSource refreshing its token.
func WithPerRPCCredentials(creds credentials.PerRPCCredentials) Option {
	return func(c *dialConfig) { c.perRPC = append(c.perRPC, creds) }
}

// WithTLSConfig connects over TLS with this configuration: RootCAs for a
// private CA, Certificates for mutual TLS, ServerName to check another name.
func WithTLSConfig(config *tls.Config) Option {
	return func(c *dialConfig) { c.creds = credentials.NewTLS(config) }
}

// WithTLSFiles connects over TLS trusting the CA in caFile (PEM; "" for the
// system roots) and, when certFile and keyFile are given, presenting that
// client certificate (mutual TLS). Dial reports a file that cannot be read.
func WithTLSFiles(caFile, certFile, keyFile string) Option {
	return func(c *dialConfig) {
		config, err := LoadTLSConfig(caFile, certFile, keyFile)
		if err != nil {
			c.errs = append(c.errs, err)
			return
		}
		c.creds = credentials.NewTLS(config)
	}
}

// LoadTLSConfig is the *tls.Config of WithTLSFiles.
func LoadTLSConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	config := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("agentd: TLS CA: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("agentd: TLS CA: no PEM certificate in %s", caFile)
		}
		config.RootCAs = pool
	}
	if (certFile == "") != (keyFile == "") {
		return nil, errors.New("agentd: TLS: a client certificate and its key go together")
	}
	if certFile != "" {
		pair, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("agentd: TLS client certificate: %w", err)
		}
		config.Certificates = []tls.Certificate{pair}
	}
	return config, nil
}

// bearerToken is the BearerToken Dial sends, if any: WithToken's, else
// $AGENTD_TOKEN's when no other credentials are given; an error for a token
// that would cross the network in clear.
func (c *dialConfig) bearerToken(target string) (credentials.PerRPCCredentials, error) {
	authorization := false
	for i := 0; i+1 < len(c.metadata); i += 2 {
		authorization = authorization || strings.EqualFold(c.metadata[i], "authorization")
	}
	token, source := "", "a token"
	switch {
	case c.token != nil:
		token = *c.token
		if token != "" && authorization {
			return nil, errors.New("agentd: give WithToken or an authorization WithMetadata, not both")
		}
	case len(c.perRPC) == 0 && !authorization:
		token, source = strings.TrimSpace(os.Getenv(TokenEnv)), "a token from $"+TokenEnv
	}
	if token == "" {
		return nil, nil
	}
	plaintext := c.creds.Info().SecurityProtocol == "insecure"
	if plaintext && !isLoopback(target) {
		return nil, fmt.Errorf("agentd: %s over plaintext to %s would cross the network in clear: use TLS, "+
			"WithToken(\"\") to send none, or WithPerRPCCredentials(agentd.BearerToken{Token: ..., AllowInsecure: true})",
			source, target)
	}
	return BearerToken{Token: token, AllowInsecure: plaintext}, nil
}

// isLoopback reports whether every address of a gRPC target is on this
// machine: localhost, 127.0.0.0/8, ::1, or a unix socket.
func isLoopback(target string) bool {
	if strings.HasPrefix(target, "unix:") || strings.HasPrefix(target, "unix-abstract:") {
		return true
	}
	rest := target
	for _, scheme := range []string{"dns:///", "dns:", "ipv4:", "ipv6:", "passthrough:///"} {
		if strings.HasPrefix(rest, scheme) {
			rest = rest[len(scheme):]
			break
		}
	}
	seen := false
	for _, address := range strings.Split(rest, ",") {
		address = strings.TrimSpace(address)
		if address == "" {
			continue
		}
		seen = true
		host := address
		if h, _, err := net.SplitHostPort(address); err == nil {
			host = h
		}
		host = strings.Trim(host, "[]")
		if strings.EqualFold(host, "localhost") || strings.EqualFold(host, "ip6-localhost") {
			continue
		}
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return seen
}
