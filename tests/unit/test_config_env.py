"""Every setting from the environment (AGENTD_<TABLE>__<KEY>, over the file),
and the messages a bad file or a bad variable gets: each names its key, and
the variable when one gave the value."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from agentd import config, settings
from agentd.runtime.buffer import DEFAULT_LINGER
from agentd.runtime.host import Host
from agentd.runtime.loop.state import DEFAULT_ON_FINISH_TIMEOUT
from agentd.runtime.redact import redact


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "agentd.toml"
    path.write_text(text)
    return path


def test_every_table_takes_its_keys_from_the_environment(tmp_path: Path) -> None:
    path = write(tmp_path, '[server]\nport = 1234\nreflection = "off"\n[storage]\nbackend = "sqlite"\npath = "a.db"\n')
    digest = hashlib.sha256(b"a-token").hexdigest()
    env = {
        "AGENTD_STORAGE__BACKEND": "memory",
        "AGENTD_SERVER__PORT": "4321",
        "AGENTD_SERVER__DEFAULT_DEADLINE_SECONDS": "12.5",
        "AGENTD_SERVER__METRICS_PORT": "9464",
        "AGENTD_CACHE__MAX_SIZE": "7",
        "AGENTD_CACHE__TTL_SECONDS": "9",
        "AGENTD_COORDINATION__LEASE_TTL_MS": "2500",
        "AGENTD_THREADS__LOG_RETENTION": "99",
        "AGENTD_ATTACHMENTS__ALLOW_PRIVATE_NETWORKS": "true",
        "AGENTD_AUTH__MODE": "token",
        "AGENTD_AUTH__TOKENS": json.dumps([{"sha256": digest, "tenant": "acme", "subject": "ci", "roles": ["reader"]}]),
        "AGENTD_AUTH__LIMITS__REQUESTS_PER_SECOND": "5",
        "agentd_auth__limits__burst": "10",  # any case
        "AGENTD_PRICING": json.dumps({"local/echo": {"input": 1, "output": 2}}),
    }
    loaded = config.load(path, env=env)
    assert loaded.storage_settings.backend == "memory" and loaded.storage is not None
    assert loaded.storage.backend == "memory"
    assert not (tmp_path / "a.db").exists()
    # The variable wins over the file's key; the file's other keys stay.
    assert (loaded.server.port, loaded.server.reflection, loaded.server.default_deadline_seconds) == (4321, "off", 12.5)
    assert loaded.server.metrics_port == 9464
    assert (loaded.cache.max_size, loaded.cache.ttl_seconds) == (7, 9)
    assert loaded.coordination_settings.lease_ttl_ms == 2500 and loaded.thread_settings.lease_ttl_ms == 2500
    assert loaded.threads.log_retention == 99
    assert loaded.attachments.allow_private_networks is True
    assert loaded.auth.modes == ("token",) and loaded.auth.tokens[0].key == digest
    assert loaded.auth.tokens[0].identity.tenant == "acme"
    assert (loaded.auth.limits.requests_per_second, loaded.auth.limits.burst) == (5, 10)
    assert str(loaded.pricing["local/echo"].output) == "2"


def test_the_short_names_stay_and_the_long_ones_win(tmp_path: Path) -> None:
    path = write(tmp_path, '[server]\nport = 1234\n[storage]\nbackend = "memory"\n')
    env = {"AGENTD_CONFIG": str(path), "AGENTD_HOST": "0.0.0.0", "AGENTD_PORT": "999"}
    loaded = config.load(None, env=env)
    assert (loaded.server.host, loaded.server.port) == ("0.0.0.0", 999)
    assert config.load(None, env={**env, "AGENTD_SERVER__PORT": "1000"}).server.port == 1000
    assert config.load(None, env={**env, "AGENTD_PORT": ""}).server.port == 1234  # empty: unset


def test_settings_come_from_the_environment_without_a_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no ./agentd.toml
    loaded = config.load(None, env={"AGENTD_STORAGE__BACKEND": "memory", "AGENTD_SERVER__HOST": "::1"})
    assert loaded.path is None and loaded.storage_settings.backend == "memory" and loaded.server.host == "::1"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"AGENTD_STORAGE__BACKEND": "disk"}, "storage.backend (from AGENTD_STORAGE__BACKEND): 'disk' is not sqlite"),
        ({"AGENTD_PORT": "http"}, "server.port (from AGENTD_PORT): 'http' is not a whole number"),
        ({"AGENTD_SERVER__PORT": "70000"}, "server.port (from AGENTD_SERVER__PORT): '70000' is over 65535"),
        (
            {"AGENTD_ATTACHMENTS__ALLOW_PRIVATE_NETWORKS": "maybe"},
            "attachments.allow_private_networks (from AGENTD_ATTACHMENTS__ALLOW_PRIVATE_NETWORKS): 'maybe' is not true",
        ),
        (
            {"AGENTD_STORAGE__PTH": "x.db"},
            "storage (from AGENTD_STORAGE__PTH): unknown key(s) pth (allowed: backend, key_prefix, path, redis_url)",
        ),
        ({"AGENTD_STORGE__BACKEND": "memory"}, "AGENTD_STORGE__BACKEND: agentd has no [storge] table"),
        ({"AGENTD_STORAGE": "redis"}, "AGENTD_STORAGE: not JSON"),
        ({"AGENTD_AUTH__TOKENS": "[{"}, "AGENTD_AUTH__TOKENS: not JSON"),
        ({"AGENTD_AUTH__LIMITS__BURST": "-1"}, "auth.limits: values must not be negative"),
        ({"AGENTD_CACHE__BACKEND": "redis"}, "cache.redis_url: required when cache.backend is redis"),
    ],
)
def test_a_bad_variable_is_named(tmp_path: Path, env: dict[str, str], message: str) -> None:
    path = write(tmp_path, '[storage]\nbackend = "memory"\n')
    with pytest.raises(config.ConfigError) as caught:
        config.load(path, env=env)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[storage]\npth = 'x'\n", "storage: unknown key(s) pth (allowed: backend, key_prefix, path, redis_url)"),
        ("colour = 1\n", "agentd.toml: unknown key(s) colour (allowed: agents, attachments, auth, cache"),
        ("[auth.jwt]\nissuer = 'x'\nissuer_url = 'y'\n", "auth.jwt: unknown key(s) issuer_url"),
        ("[storage\n", "(at line 1, column 9)"),
        ('[cache]\nbackend = "disk"\n', "cache.backend: 'disk' is not memory or redis"),
        ("[server]\nmax_message_bytes = 1000\n", "server.max_message_bytes: 1000 is under 64 KiB"),
        ("[coordination]\nlease_ttl_ms = true\n", "coordination.lease_ttl_ms: True is not a whole number"),
        ("[server.tls]\ncert_file = 'a.pem'\n", "server.tls.key_file: required"),
        # In TOML a number is written as one (the environment has only text).
        ('[server]\nport = "50051"\n', "server.port: '50051' is not a whole number"),
        ('[cache]\nttl_seconds = "9"\n', "cache.ttl_seconds: '9' is not a number"),
        ('[attachments]\nallow_private_networks = "true"\n', "'true' is not true or false"),
        ("[[agents]]\nid = 'x'\ninput_processors = [{ name = 'no-such' }]\n", "no processor named 'no-such'"),
    ],
)
def test_the_file_keeps_its_messages(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(config.ConfigError) as caught:
        config.load(write(tmp_path, text), env={})
    assert message in str(caught.value)
    assert "(from " not in str(caught.value)  # no variable gave it


def test_a_redis_password_from_the_environment_is_redacted_even_when_the_load_fails(tmp_path: Path) -> None:
    password = "env-redis-password-42"
    url = f"redis://:{password}@127.0.0.1:1/0"
    with pytest.raises(config.ConfigError):
        config.load(write(tmp_path, ""), env={"AGENTD_STORAGE__REDIS_URL": url, "AGENTD_STORAGE__BACKEND": "disk"})
    assert password not in redact(f"cannot reach {url}")


def test_zero_turns_the_notification_timer_off(tmp_path: Path) -> None:
    path = write(tmp_path, '[storage]\nbackend = "memory"\n[threads]\nnotification_dispatch_interval_seconds = 0\n')
    assert config.load(path, env={}).threads.notification_dispatch_interval_seconds == 0


def test_stream_linger_ms_reaches_the_runs_and_zero_turns_it_off(tmp_path: Path) -> None:
    memory = '[storage]\nbackend = "memory"\n'
    default = config.load(write(tmp_path, memory), env={})
    assert Host.from_config(default).runs.linger == DEFAULT_LINGER > 0
    off = config.load(write(tmp_path, memory + "[server]\nstream_linger_ms = 0\n"), env={})
    assert Host.from_config(off).runs.linger == 0
    from_env = config.load(write(tmp_path, memory), env={"AGENTD_SERVER__STREAM_LINGER_MS": "0.5"})
    assert Host.from_config(from_env).runs.linger == 0.0005
    with pytest.raises(config.ConfigError) as caught:
        config.load(write(tmp_path, memory + "[server]\nstream_linger_ms = -1\n"), env={})
    assert "server.stream_linger_ms" in str(caught.value)


def test_on_finish_timeout_seconds_reaches_the_runs(tmp_path: Path) -> None:
    memory = '[storage]\nbackend = "memory"\n'
    default = config.load(write(tmp_path, memory), env={})
    assert Host.from_config(default).runs.on_finish_timeout == DEFAULT_ON_FINISH_TIMEOUT == 60
    set_ = config.load(write(tmp_path, memory + "[server]\non_finish_timeout_seconds = 5\n"), env={})
    assert Host.from_config(set_).runs.on_finish_timeout == 5
    with pytest.raises(config.ConfigError) as caught:
        config.load(write(tmp_path, memory + "[server]\non_finish_timeout_seconds = 0\n"), env={})
    assert "server.on_finish_timeout_seconds" in str(caught.value)


def test_only_agentds_variables_are_read() -> None:
    # A pod's service links are never handed to pydantic-settings, which looks
    # for each table's variables through every variable it is given.
    environ = {
        "AGENTD_PORT": "1",
        "agentd_cache__max_size": "2",
        "AGENTD_X": "",
        "PATH": "/bin",
        "DB_SERVICE_HOST": "h",
    }
    assert settings._variables(environ) == {
        "agentd_port": "1",
        "agentd_server__port": "1",
        "agentd_cache__max_size": "2",
    }
