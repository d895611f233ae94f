"""What `agentd serve` loads at start-up: libraries only some configurations
use (jsonschema for request-context schemas, structured output and judges,
PyJWT and cryptography for JWT authentication, prometheus-client for the
metrics endpoint) wait for their first use (agentd.runtime.lazy)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

# Builds the host `agentd serve` builds from an agentd.toml with an echo agent,
# then reports which of the deferred libraries have run their code.
PROBE = textwrap.dedent(
    """
    import sys, tempfile, pathlib
    from agentd.cli import build_host
    config = pathlib.Path(tempfile.mkdtemp()) / "agentd.toml"
    config.write_text('[storage]\\nbackend = "memory"\\n[[agents]]\\nid = "echo"\\nmodel = "local/echo"\\n')
    build_host(str(config), None)
    loaded = [n for n in ("jsonschema", "referencing", "jwt", "cryptography", "prometheus_client")
              if n in sys.modules and type(sys.modules[n]).__name__ != "_LazyModule"]
    print("loaded:" + ",".join(loaded))
    """
)


def run_probe(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout.strip()


def test_start_up_loads_no_schema_or_jwt_library() -> None:
    assert run_probe(PROBE) == "loaded:"


def test_a_deferred_library_loads_on_first_use() -> None:
    code = PROBE + textwrap.dedent(
        """
        from agentd.runtime.lazy import lazy
        assert lazy("jsonschema").Draft202012Validator({"type": "object"}).is_valid({})
        import jwt
        assert jwt.encode({"a": 1}, "k" * 32, algorithm="HS256")
        print(type(sys.modules["jsonschema"]).__name__)
        """
    )
    assert run_probe(code).splitlines() == ["loaded:", "module"]
