"""`[server] metrics_port`: off unless set, a port number or 0, and on in the README's agentd.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd import config

ROOT = Path(__file__).resolve().parents[2]


def load(tmp_path: Path, server: str) -> config.Config:
    path = tmp_path / "agentd.toml"
    path.write_text(f"[server]\n{server}\n")
    return config.load(path, env={})


def test_metrics_are_off_unless_a_port_is_set(tmp_path: Path) -> None:
    assert load(tmp_path, "port = 50051").server.metrics_port is None
    assert load(tmp_path, "metrics_port = 9464").server.metrics_port == 9464
    assert load(tmp_path, "metrics_port = 0").server.metrics_port == 0  # any free port


@pytest.mark.parametrize("value", ['"9464"', "-1", "65536", "true", "9464.5"])
def test_a_metrics_port_that_is_no_port_is_refused_naming_the_key(tmp_path: Path, value: str) -> None:
    with pytest.raises(config.ConfigError, match=r"server\.metrics_port: .* is not a port number"):
        load(tmp_path, f"metrics_port = {value}")


def test_the_readme_config_serves_metrics_where_the_readme_scrapes() -> None:
    assert config.load(ROOT / "agentd.toml", env={}).server.metrics_port == 9464
    assert "curl -s 127.0.0.1:9464/metrics" in (ROOT / "README.md").read_text()
