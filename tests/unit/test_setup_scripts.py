"""The checks `make run` and `make test` make before any set-up, run with fake
tools on PATH (nothing is installed or removed): tools/check-system.sh for
redis-server, Go and Node; tools/setup-venv.sh for the Python version and a
.venv made by another interpreter."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash") or "/bin/bash"


def fake(bin_dir: Path, name: str, body: str) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def machine(tmp_path: Path, *, uid: int, apt: bool, go: str = "go1.26.0") -> Path:
    """A PATH of fakes: no redis-server, `id -u` says `uid`, apt-get (when `apt`)
    logs its arguments and "installs" a redis-server."""
    bin_dir = tmp_path / "bin"
    fake(bin_dir, "id", f"echo {uid}")
    os.symlink(shutil.which("dirname") or "/usr/bin/dirname", bin_dir / "dirname")  # all it needs of coreutils
    fake(bin_dir, "go", f'[ "$1 $2" = "env GOVERSION" ] && echo {go}')
    fake(bin_dir, "node", "exit 0")
    fake(bin_dir, "npm", "exit 0")
    fake(bin_dir, "javac", "exit 0")
    fake(bin_dir, "mvn", "exit 0")
    fake(bin_dir, "java", 'echo "    java.specification.version = 17" >&2')
    os.symlink(shutil.which("sed") or "/usr/bin/sed", bin_dir / "sed")  # reads java's version
    if apt:
        log = tmp_path / "apt.log"
        chmod = shutil.which("chmod") or "/bin/chmod"
        install = f'printf "#!/bin/sh\\n" > {bin_dir}/redis-server; {chmod} +x {bin_dir}/redis-server'
        fake(bin_dir, "apt-get", f'echo "$@" >> {log}\ncase "$*" in *install*) {install};; esac')
    return bin_dir


def check_system(bin_dir: Path) -> subprocess.CompletedProcess[str]:
    script = str(ROOT / "tools" / "check-system.sh")
    return subprocess.run(
        [BASH, script], env={"PATH": str(bin_dir)}, capture_output=True, text=True, timeout=30, check=False
    )


MISSING = "redis-server is missing: install Debian package redis-server"


def test_without_root_it_stops_at_once_naming_the_package(tmp_path: Path) -> None:
    done = check_system(machine(tmp_path, uid=1000, apt=True))
    assert done.returncode == 1 and MISSING in done.stderr, done
    assert not (tmp_path / "apt.log").exists()  # apt-get is not tried without root


def test_without_apt_it_stops_at_once_naming_the_package(tmp_path: Path) -> None:
    done = check_system(machine(tmp_path, uid=0, apt=False))
    assert done.returncode == 1 and MISSING in done.stderr, done


def test_as_root_with_apt_it_installs_redis_server_and_says_so(tmp_path: Path) -> None:
    done = check_system(machine(tmp_path, uid=0, apt=True))
    assert done.returncode == 0, done
    assert "redis-server is missing; installing Debian package redis-server" in done.stdout
    assert (tmp_path / "apt.log").read_text().splitlines() == ["update -qq", "install -y -qq redis-server"]


def test_debians_go_is_refused_naming_what_works(tmp_path: Path) -> None:
    bin_dir = machine(tmp_path, uid=0, apt=False, go="go1.19.8")
    fake(bin_dir, "redis-server", "exit 0")
    done = check_system(bin_dir)
    assert done.returncode == 1, done
    assert "go 1.19.8 is too old: install Go 1.26.0 or newer from https://go.dev/dl/" in done.stderr


def fake_python(path: Path, identity: str, *, has_venv: bool = True) -> Path:
    """An interpreter answering setup-venv.sh's probes: its identity, whether
    it is 3.11+ (from the identity), whether it has venv and ensurepip."""
    new_enough = tuple(int(n) for n in identity.split()[0].split(".")[:2]) >= (3, 11)
    return fake(
        path.parent,
        path.name,
        f'case "$2" in *base_prefix*) echo "{identity}"; exit 0;; *version_info*) exit {0 if new_enough else 1};;'
        f" *ensurepip*) exit {0 if has_venv else 1};; esac; exit 3",
    )


def setup_venv(python: Path, venv: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHON": str(python), "VENV": str(venv)}
    script = str(ROOT / "tools" / "setup-venv.sh")
    return subprocess.run([BASH, script, "run"], env=env, capture_output=True, text=True, timeout=30, check=False)


def test_an_old_python_is_refused_before_anything_is_built(tmp_path: Path) -> None:
    python = fake_python(tmp_path / "bin" / "python3", "3.9.2 /opt/python3.9")
    done = setup_venv(python, tmp_path / "venv")
    assert done.returncode == 1, done
    assert f"agentd needs Python 3.11 or newer; {python} is 3.9.2" in done.stderr
    assert not (tmp_path / "venv").exists()


def test_a_venv_made_by_another_interpreter_is_rebuilt(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    fake_python(venv / "bin" / "python", "3.12.1 /opt/python3.12")
    python = fake_python(tmp_path / "bin" / "python3", "3.11.9 /opt/python3.11", has_venv=False)
    done = setup_venv(python, venv)
    assert f"rebuilding {venv}: it was made by Python 3.12.1 /opt/python3.12, not 3.11.9 /opt/python3.11" in done.stdout
    assert not (venv / "bin").exists()
    # Then it would build a new one; this interpreter has no venv module, which it names.
    assert done.returncode == 1 and "has no venv module: install Debian package python3.11-venv" in done.stderr, done
