"""agentd.toml's [auth] and [server.tls], as the configuration loads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd import config


def load(tmp_path: Path, text: str) -> config.Config:
    path = tmp_path / "agentd.toml"
    path.write_text(text)
    return config.load(path, env={})


def test_mtls_without_a_required_client_certificate_is_refused(tmp_path: Path) -> None:
    mtls = (
        '[auth]\nmode = "mtls"\n'
        '[[auth.certificates]]\nsubject = "spiffe://acme/x"\ntenant = "acme"\nroles = ["reader"]\n'
    )
    with pytest.raises(config.ConfigError, match="require_client_cert"):
        load(tmp_path, mtls)
    for name in ("server.pem", "server-key.pem", "ca.pem"):
        (tmp_path / name).write_text("unused")
    tls = '[server.tls]\ncert_file = "server.pem"\nkey_file = "server-key.pem"\nclient_ca_file = "ca.pem"\n'
    with pytest.raises(config.ConfigError, match="require_client_cert"):
        load(tmp_path, mtls + tls)
    loaded = load(tmp_path, mtls + tls + "require_client_cert = true\n")
    assert loaded.server.tls is not None and loaded.server.tls.cert_file == str(tmp_path / "server.pem")


def test_auth_tables_are_checked_key_by_key(tmp_path: Path) -> None:
    with pytest.raises(config.ConfigError, match=r"auth\.tokens\[0\]\.sha256"):
        load(tmp_path, '[auth]\nmode = "token"\n[[auth.tokens]]\nsha256 = "abc"\ntenant = "acme"\nsubject = "s"\n')
    with pytest.raises(config.ConfigError, match="unknown key"):
        load(tmp_path, "[auth]\nmodes = 1\n")
    with pytest.raises(config.ConfigError, match="unknown role"):
        load(
            tmp_path,
            f'[auth]\nmode = "token"\n[[auth.tokens]]\nsha256 = "{"a" * 64}"\n'
            'tenant = "acme"\nsubject = "s"\nroles = ["root"]\n',
        )
    with pytest.raises(config.ConfigError, match="reflection"):
        load(tmp_path, '[server]\nreflection = "sometimes"\n')
