"""End-to-end tests: a real `agentd serve` process and clients in Go, TypeScript and grpcurl."""
