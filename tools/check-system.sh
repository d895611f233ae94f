#!/usr/bin/env bash
# What `make test` needs from the machine, checked before any setup: redis-server,
# and Java 17+ with Maven (installed here when running as root with apt), Go new
# enough for the go.mod files, and Node.js with npm. Stops at the first missing
# need, naming it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { echo "check-system: $*"; }
stop() { say "$*" >&2; exit 1; }

if ! command -v redis-server >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "redis-server is missing; installing Debian package redis-server (apt-get, as root)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server
    command -v redis-server >/dev/null 2>&1 || stop "apt-get installed redis-server, but it is not on PATH"
  else
    stop "redis-server is missing: install Debian package redis-server (sudo apt-get install redis-server)"
  fi
fi

# Java 17 or newer and Maven: gen/java's stubs (`make gen`) and clients/java.
java_hint="install Java 17 or newer and Maven 3.8 or newer (Debian packages openjdk-17-jdk-headless and maven)"
if ! command -v mvn >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
    say "Java or Maven is missing; installing Debian packages default-jdk-headless and maven (apt-get, as root)"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless maven
  fi
  command -v javac >/dev/null 2>&1 || stop "javac is missing: $java_hint"
  command -v mvn >/dev/null 2>&1 || stop "mvn is missing: $java_hint"
fi
java_version=$(java -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.specification.version = //p')
(( ${java_version%%.*} >= 17 )) || stop "java $java_version is too old: $java_hint"

# The Go version the modules ask for (clients/go/go.mod's `go` line). Go 1.21 and
# later fetch a newer toolchain themselves (GOTOOLCHAIN=auto); Debian 12's
# golang-go (1.19) cannot.
wanted=
while read -r word version _; do
  [[ $word == go ]] && { wanted=$version; break; }
done <clients/go/go.mod
go_hint="install Go $wanted or newer from https://go.dev/dl/ (tar -C /usr/local -xzf go$wanted.linux-amd64.tar.gz; PATH=/usr/local/go/bin:\$PATH); Debian's golang-go is too old"
command -v go >/dev/null 2>&1 || stop "go is missing: $go_hint"
have=$(go env GOVERSION)
have=${have#go}
IFS=. read -r major minor _ <<<"$have"
if (( major == 1 && minor < 21 )); then
  stop "go $have is too old: $go_hint"
fi

node_hint="install Node.js 20 with npm (https://nodejs.org/en/download, or Debian packages nodejs and npm)"
command -v node >/dev/null 2>&1 || stop "node is missing: $node_hint"
command -v npm >/dev/null 2>&1 || stop "npm is missing: $node_hint"
