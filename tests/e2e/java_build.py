"""Building the Java client's Maven reactor (gen/java, client, conformance, examples) for the end-to-end tests."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping

import pytest

from .serverproc import REPO_ROOT, require_tool

JAVA_CLIENT_DIR = REPO_ROOT / "clients" / "java"
JAVA_HINT = "Java 17 or newer and Maven 3.8 or newer (Debian packages openjdk-17-jdk-headless and maven)"
#: The first build on a new machine fetches the dependencies from Maven Central.
BUILD_TIMEOUT_S = 600
CONFORMANCE_JAR = JAVA_CLIENT_DIR / "conformance" / "target" / "agentd-conformance.jar"
EXAMPLES_JAR = JAVA_CLIENT_DIR / "examples" / "target" / "agentd-examples.jar"


def decoded(out: str | bytes | None) -> str:
    """Output captured by TimeoutExpired is bytes even in text mode."""
    if isinstance(out, bytes):
        return out.decode("utf-8", errors="replace")
    return out or ""


def mvn(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`mvn -B -q <args>` in clients/java (with `env` as its environment when
    given); fails the test with its output when it fails."""
    require_tool("java", JAVA_HINT)
    cmd = [require_tool("mvn", JAVA_HINT), "-B", "-q", "-Dstyle.color=never", *args]
    try:
        result = subprocess.run(
            cmd, cwd=JAVA_CLIENT_DIR, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S, check=False, env=env
        )
    except subprocess.TimeoutExpired as err:
        output = f"{decoded(err.stdout)}\n{decoded(err.stderr)}"
        pytest.fail(f"`{' '.join(cmd)}` timed out after {BUILD_TIMEOUT_S}s:\n{output}")
    if result.returncode != 0:
        pytest.fail(
            f"`{' '.join(cmd)}` in {JAVA_CLIENT_DIR} exited with {result.returncode}:\n"
            f"--- stdout ---\n{result.stdout}\n--- stderr ---\n{result.stderr}"
        )
    return result


def package() -> None:
    """Builds every jar of the reactor (tests skipped: test_conformance_java runs them)."""
    mvn("package", "-DskipTests")
    for jar in (CONFORMANCE_JAR, EXAMPLES_JAR):
        assert jar.is_file(), f"the build made no {jar}"
