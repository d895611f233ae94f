# agentd: `make run` starts the server with embedded defaults; `make test` runs every test.
SHELL := /bin/bash
ROOT := $(CURDIR)
VENV := $(ROOT)/.venv
PY := $(VENV)/bin/python
TOOLS := $(ROOT)/.tools
GOBIN := $(TOOLS)/bin

# Pinned generators and tools (protoc itself comes from the pinned grpcio-tools).
PROTOC_GEN_GO_VERSION := v1.36.12
PROTOC_GEN_GO_GRPC_VERSION := v1.6.0
GRPCURL_VERSION := v1.9.3
# The load generator of bench/load.py (v0.93, what @latest resolves to, rejects proto3 optional).
GHZ_VERSION := v0.120.0

.PHONY: setup setup-run check-system tools run test fuzz gen gen-check lint baseline bench bench-load bench-against bench-peers clean

# .venv: the server, its stubs and the Python client (setup-run, for `make run`),
# plus the dev extra (setup: linters, tests, generators). Checks the Python version
# first and rebuilds a .venv made by another interpreter; PYTHON=python3.12 picks one.
setup:
	@VENV=$(VENV) tools/setup-venv.sh dev

setup-run:
	@VENV=$(VENV) tools/setup-venv.sh run

# redis-server, Java and Maven (installed when root with apt), Go and Node: before any set-up.
check-system:
	@tools/check-system.sh

# Go plugins, grpcurl and ghz (into .tools/bin), and ts-proto (into tools/ts-gen).
# (grpcurl is built with its version stamped in: `grpcurl -version` says v1.9.3.)
tools: $(GOBIN)/.stamp-$(PROTOC_GEN_GO_VERSION)-$(PROTOC_GEN_GO_GRPC_VERSION)-grpcurl-$(GRPCURL_VERSION)-$(GHZ_VERSION) tools/ts-gen/node_modules/.stamp

$(GOBIN)/.stamp-%:
	@command -v go >/dev/null || { echo "go is missing: install Go 1.26 or newer from https://go.dev/dl/ (Debian's golang-go is too old)"; exit 1; }
	mkdir -p $(GOBIN)
	GOBIN=$(GOBIN) go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(GOBIN) go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN=$(GOBIN) go install -ldflags "-X main.version=$(GRPCURL_VERSION)" github.com/fullstorydev/grpcurl/cmd/grpcurl@$(GRPCURL_VERSION)
	GOBIN=$(GOBIN) go install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)
	touch $@

tools/ts-gen/node_modules/.stamp: tools/ts-gen/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: install Debian packages nodejs and npm (Node 20)"; exit 1; }
	cd tools/ts-gen && npm ci --no-audit --no-fund
	touch $@

run: setup-run
	$(VENV)/bin/agentd serve --config agentd.toml

# Java's stubs come through Maven (gen/java/pom.xml's `generate` profile pins protoc
# and protoc-gen-grpc-java), so `make gen` needs mvn (tools/check-system.sh).
gen: setup tools
	$(PY) tools/gen.py --go-plugins $(GOBIN) --ts-plugin tools/ts-gen/node_modules/.bin/protoc-gen-ts_proto

# Regenerates and fails if anything under gen/ changed (CI's drift check).
gen-check: gen
	@git diff --exit-code --stat -- gen && test -z "$$(git status --porcelain --untracked-files=all -- gen)" \
	  || { echo "gen/ drifted from protos/: run 'make gen' and commit"; git status --porcelain -- gen; exit 1; }

lint: setup
	$(VENV)/bin/ruff check server tests bench tools clients/python examples/python
	$(VENV)/bin/ruff format --check server tests bench tools clients/python examples/python
	$(VENV)/bin/mypy
	$(VENV)/bin/buf lint
	test -z "$$(gofmt -l clients/go examples/go)" || { echo "gofmt: these need formatting:"; gofmt -l clients/go examples/go; exit 1; }
	$(VENV)/bin/buf breaking --against protos/baseline.binpb

# Rewrites the breaking-change baseline: only when an issue says so.
baseline: setup
	$(VENV)/bin/buf build -o protos/baseline.binpb

# Everything on uvloop (what `agentd serve` runs on by default), then the
# services again on asyncio's loop (--loop asyncio, and where uvloop has no build).
test: check-system setup tools
	$(PY) -m pytest -q -p no:cacheprovider
	AGENTD_TEST_LOOP=asyncio $(PY) -m pytest -q -p no:cacheprovider tests/service

# The descriptor-driven fuzz at full size (the suite runs 300 cases): 0 UNKNOWN or
# INTERNAL, every INVALID_ARGUMENT with field violations; prints the answers by status.
FUZZ_CASES ?= 50000
fuzz: setup
	AGENTD_FUZZ_CASES=$(FUZZ_CASES) $(PY) -m pytest -q -p no:cacheprovider -s --timeout=0 tests/fuzz/test_fuzz.py

bench: setup tools
	$(PY) bench/stream.py
	$(PY) bench/remote.py
	$(PY) bench/cache.py
	$(PY) bench/replicas.py
	$(PY) bench/load.py

# Load on one `agentd serve`: Generate at 50/200/500 concurrent (ghz), 500 Streams
# for 60 s, 2,000 idle Subscribes with their RSS; about 4 minutes. LOAD_ARGS=--quick
# for a smoke run, LOAD_ARGS=--profile for where the subscriptions' memory goes.
LOAD_ARGS ?=
bench-load: setup tools
	$(PY) bench/load.py $(LOAD_ARGS)

# Generate under ghz at 50 concurrent, this tree beside another revision's agentd,
# interleaved pairs (bench/against.py); 5 pairs of 20 s take about 5 minutes.
# AGAINST=042941d is the code issue 16's load goal was set against.
AGAINST ?= 042941d
AGAINST_ARGS ?=
bench-against: setup tools
	$(PY) bench/against.py $(AGAINST) $(AGAINST_ARGS)

# agentd beside Mastra in-process (bench/peers.py): streams, generates, the response
# cache, cold start and peak RSS, median of 3 fresh processes; under 10 minutes.
# @mastra/core 1.71.0 declares Node >= 22.13 but installs on Node 20 when pinned
# (npm only warns), and runs everything measured. PEERS_ARGS=--quick for a smoke run.
PEERS_ARGS ?=
bench-peers: setup bench/peers/node_modules/.stamp
	$(PY) bench/peers.py $(PEERS_ARGS)

bench/peers/node_modules/.stamp: bench/peers/package-lock.json
	@command -v npm >/dev/null || { echo "npm is missing: install Debian packages nodejs and npm (Node 20)"; exit 1; }
	cd bench/peers && npm ci --no-audit --no-fund
	touch $@

clean:
	rm -rf $(VENV) $(TOOLS) tools/ts-gen/node_modules gen/ts/node_modules gen/ts/dist clients/ts/node_modules clients/ts/dist clients/ts/build \
	  bench/peers/node_modules gen/java/target clients/java/target clients/java/*/target
