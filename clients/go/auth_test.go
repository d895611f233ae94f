package agentd

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/peer"

	agentdv1 "github.com/agentd/agentd/gen/go/agentd/v1"
)

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate (SAN URI spiffe://acme/go-test) under dir.
type pki struct {
	ca, serverCert, serverKey, clientCert, clientKey string
}

func writePEM(t *testing.T, path, kind string, der []byte) string {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func issue(t *testing.T, dir, name string, template, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return cert, key, writePEM(t, filepath.Join(dir, name+".pem"), "CERTIFICATE", der),
		writePEM(t, filepath.Join(dir, name+"-key.pem"), "PRIVATE KEY", keyDER)
}

func makePKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	now := time.Now()
	ca, caKey, caFile, _ := issue(t, dir, "ca", &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil, nil)
	_, _, serverCert, serverKey := issue(t, dir, "server", &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, ca, caKey)
	uri, _ := url.Parse("spiffe://acme/go-test")
	_, _, clientCert, clientKey := issue(t, dir, "client", &x509.Certificate{
		SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "go-test"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), URIs: []*url.URL{uri},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}, ca, caKey)
	return pki{caFile, serverCert, serverKey, clientCert, clientKey}
}

// serveTCP serves f on a loopback port (a real address: WithToken looks at it).
func serveTCP(t *testing.T, f *fakeServer, opts ...grpc.ServerOption) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(opts...)
	agentdv1.RegisterAgentServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func authorization(t *testing.T, f *fakeServer) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	values := f.headers.Get("authorization")
	if len(values) != 1 {
		t.Fatalf("authorization headers = %v", values)
	}
	return values[0]
}

func TestWithTokenOverPlaintextGoesToLoopbackOnly(t *testing.T) {
	f := &fakeServer{}
	addr := serveTCP(t, f)
	client, err := Dial(context.Background(), addr, WithInsecure(), WithToken("agentd_secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.GetAgent(context.Background(), "echo"); err != nil {
		t.Fatal(err)
	}
	if got := authorization(t, f); got != "Bearer agentd_secret" {
		t.Fatalf("authorization = %q", got)
	}

	_, err = Dial(context.Background(), "agentd.example.com:50051", WithInsecure(), WithToken("agentd_secret"))
	if err == nil || !strings.Contains(err.Error(), "in clear") {
		t.Fatalf("a token over plaintext beyond loopback: err = %v", err)
	}
	// Said explicitly, it goes.
	explicit, err := Dial(context.Background(), "agentd.example.com:50051", WithInsecure(),
		WithPerRPCCredentials(BearerToken{Token: "agentd_secret", AllowInsecure: true}))
	if err != nil {
		t.Fatal(err)
	}
	_ = explicit.Close()
	// gRPC itself refuses a token that requires TLS on a plaintext connection.
	if _, err := Dial(context.Background(), addr, WithInsecure(), WithPerRPCCredentials(BearerToken{Token: "x"})); err == nil {
		t.Fatal("a BearerToken requiring TLS was accepted on a plaintext connection")
	}
}

func TestWithTLSFilesAndATokenOverMutualTLS(t *testing.T) {
	p := makePKI(t)
	serverPair, err := tls.LoadX509KeyPair(p.serverCert, p.serverKey)
	if err != nil {
		t.Fatal(err)
	}
	clientCAs := x509.NewCertPool()
	caPEM, _ := os.ReadFile(p.ca)
	clientCAs.AppendCertsFromPEM(caPEM)
	serverTLS := credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{serverPair}, ClientCAs: clientCAs, ClientAuth: tls.RequireAndVerifyClientCert,
	})
	var peerURI string
	f := &fakeServer{}
	record := grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if pr, ok := peer.FromContext(ctx); ok {
			if info, ok := pr.AuthInfo.(credentials.TLSInfo); ok && len(info.State.PeerCertificates) > 0 {
				peerURI = info.State.PeerCertificates[0].URIs[0].String()
			}
		}
		return h(ctx, req)
	})
	addr := serveTCP(t, f, grpc.Creds(serverTLS), record)

	client, err := Dial(context.Background(), addr, WithTLSFiles(p.ca, p.clientCert, p.clientKey), WithToken("agentd_tls"))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.GetAgent(context.Background(), "echo"); err != nil {
		t.Fatal(err)
	}
	if got := authorization(t, f); got != "Bearer agentd_tls" {
		t.Fatalf("authorization = %q", got)
	}
	if peerURI != "spiffe://acme/go-test" {
		t.Fatalf("the server saw client certificate %q", peerURI)
	}

	if _, err := Dial(context.Background(), addr, WithTLSFiles(filepath.Join(t.TempDir(), "none.pem"), "", "")); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
	if _, err := LoadTLSConfig(p.ca, p.clientCert, ""); err == nil {
		t.Fatal("a client certificate without its key was accepted")
	}
	config, err := LoadTLSConfig(p.ca, "", "")
	if err != nil || config.RootCAs == nil || len(config.Certificates) != 0 {
		t.Fatalf("LoadTLSConfig(ca) = %+v, %v", config, err)
	}
}

func TestIsLoopback(t *testing.T) {
	for target, want := range map[string]bool{
		"127.0.0.1:50051":                 true,
		"localhost:50051":                 true,
		"[::1]:50051":                     true,
		"dns:///localhost:50051":          true,
		"ipv4:127.0.0.1:1,127.0.0.2:2":    true,
		"unix:///tmp/agentd.sock":         true,
		"10.0.0.7:50051":                  false,
		"agentd.internal:443":             false,
		"ipv4:127.0.0.1:1,10.0.0.1:2":     false,
		"passthrough:///bufnet":           false,
		"dns:///agentd.example.com:50051": false,
	} {
		if got := isLoopback(target); got != want {
			t.Errorf("isLoopback(%q) = %v, want %v", target, got, want)
		}
	}
}

// authorizations is every authorization header of the fake server's last call.
func authorizations(t *testing.T, client *Client, f *fakeServer) []string {
	t.Helper()
	if _, err := client.GetAgent(context.Background(), "echo"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.headers.Get("authorization")
}

func TestTheTokenComesFromAgentdTokenWhenNoneIsGiven(t *testing.T) {
	f := &fakeServer{}
	addr := serveTCP(t, f)
	t.Setenv(TokenEnv, " agentd_env ")
	for _, tc := range []struct {
		name string
		opts []Option
		want []string
	}{
		{"the environment's by default", nil, []string{"Bearer agentd_env"}},
		{`none with WithToken("")`, []Option{WithToken("")}, nil},
		{"an explicit token wins", []Option{WithToken("agentd_explicit")}, []string{"Bearer agentd_explicit"}},
		{"an authorization metadata entry wins", []Option{WithMetadata("Authorization", "Bearer agentd_md")}, []string{"Bearer agentd_md"}},
		{"per-call credentials win", []Option{WithPerRPCCredentials(BearerToken{Token: "agentd_creds", AllowInsecure: true})}, []string{"Bearer agentd_creds"}},
		{`WithToken("") beside metadata`, []Option{WithToken(""), WithMetadata("authorization", "Bearer agentd_md")}, []string{"Bearer agentd_md"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, err := Dial(context.Background(), addr, append([]Option{WithInsecure()}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			if got := authorizations(t, client, f); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("authorization headers = %q, want %q", got, tc.want)
			}
		})
	}

	// An explicit token and an authorization entry are two answers to one question.
	_, err := Dial(context.Background(), addr, WithInsecure(), WithToken("agentd_x"), WithMetadata("authorization", "Bearer agentd_y"))
	if err == nil || !strings.Contains(err.Error(), "not both") {
		t.Fatalf("a token beside an authorization entry: err = %v", err)
	}
	// The environment's token stays off plaintext beyond loopback, as WithToken's does.
	_, err = Dial(context.Background(), "agentd.example.com:50051", WithInsecure())
	if err == nil || !strings.Contains(err.Error(), "$AGENTD_TOKEN") || !strings.Contains(err.Error(), "in clear") {
		t.Fatalf("the environment's token over plaintext beyond loopback: err = %v", err)
	}
	anonymous, err := Dial(context.Background(), "agentd.example.com:50051", WithInsecure(), WithToken(""))
	if err != nil {
		t.Fatal(err)
	}
	_ = anonymous.Close()

	t.Setenv(TokenEnv, "")
	client, err := Dial(context.Background(), addr, WithInsecure())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if got := authorizations(t, client, f); len(got) != 0 {
		t.Fatalf("no token anywhere, yet authorization headers = %q", got)
	}
}
