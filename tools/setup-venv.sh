#!/usr/bin/env bash
# Builds .venv for `make run` (run: the server, its stubs and the Python
# client) or `make setup` (dev: run plus the dev extra: linters, type checkers,
# test tools, generators and the provider SDKs). One line per step; pip's own
# output goes to .venv/setup.log and is shown only when a step fails.
#
# Usage: tools/setup-venv.sh run|dev      (PYTHON=python3.12 picks the interpreter;
#                                          VENV=path another venv than .venv)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

level=${1:?usage: tools/setup-venv.sh run|dev}
case $level in
  run) spec=. ;;
  dev) spec='.[dev]' ;;
  *) echo "usage: tools/setup-venv.sh run|dev" >&2; exit 2 ;;
esac
python=${PYTHON:-python3}
venv=${VENV:-.venv}
log=$venv/setup.log

say() { echo "setup: $*"; }

command -v "$python" >/dev/null 2>&1 || {
  say "$python is missing: install Python 3.11 or newer (Debian packages python3 and python3-venv)" >&2
  exit 1
}
# The interpreter's identity: its version and the installation it runs from.
identity() { "$1" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3], sys.base_prefix)' 2>/dev/null; }
wanted=$(identity "$python") || { say "$python does not run" >&2; exit 1; }
version=${wanted%% *}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
  say "agentd needs Python 3.11 or newer; $python is $version ($(command -v "$python"))." >&2
  say "install one (Debian 12's python3 is 3.11), or name one: make run PYTHON=python3.12" >&2
  exit 1
}

if [[ -e $venv ]]; then
  built=$(identity "$venv/bin/python" || true)
  if [[ $built != "$wanted" ]]; then
    say "rebuilding $venv: it was made by Python ${built:-that no longer runs}, not $wanted"
    rm -rf "$venv"
  fi
fi

# Up to date when the pyproject files and the interpreter are those of the last install.
fingerprint=$(cat pyproject.toml gen/python/pyproject.toml clients/python/pyproject.toml | sha256sum | cut -c1-16)
stamp() { echo "$venv/.stamp-$1-$fingerprint"; }
# The editable installs run from the tree, where pip compiles nothing: compiled
# here (again on every set-up, only what changed), `agentd serve` reads bytecode
# instead of compiling its 240 modules at each start (more than half of its start-up
# where PYTHONDONTWRITEBYTECODE is set: Python then never writes them itself).
# So is the code the standard library writes as text while agentd is imported
# (agentd/generated_code.py: a third of the start): importing agentd.cli
# writes it.
compile_tree() {
  "$venv/bin/python" -m compileall -q -j 0 server gen/python clients/python >/dev/null
  env -u PYTHONDONTWRITEBYTECODE "$venv/bin/python" -c "import agentd.cli"
}
if [[ -e $(stamp dev) || ( $level == run && -e $(stamp run) ) ]]; then
  compile_tree
  exit 0
fi

step() {  # step "what" cmd...: one line, the log's tail when it fails
  say "$1"
  if ! "${@:2}" >>"$log" 2>&1; then
    say "failed: $1 (the last lines of $log follow)" >&2
    tail -n 30 "$log" >&2
    exit 1
  fi
}

if [[ ! -x $venv/bin/python ]]; then
  "$python" -c 'import venv, ensurepip' 2>/dev/null || {
    say "$python has no venv module: install Debian package python${version%.*}-venv" >&2
    exit 1
  }
  mkdir -p "$venv"
  step "creating $venv with Python $version ($(command -v "$python"))" "$python" -m venv "$venv"
fi
rm -f "$venv"/.stamp-*
pip=("$venv/bin/python" -m pip --disable-pip-version-check --no-input)
step "upgrading pip" "${pip[@]}" install --upgrade pip
what="agentd-proto (gen/python), agentd-client (clients/python), agentd (the server)"
[[ $level == dev ]] && what="$what and the dev extra (ruff, mypy, pytest, buf, grpcio-tools, provider SDKs)"
step "installing $what" "${pip[@]}" install -e gen/python -e clients/python -e "$spec"
step "compiling agentd's sources to bytecode" compile_tree
touch "$(stamp "$level")"
say "done: $venv ($level, Python $version)"
