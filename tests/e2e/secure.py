"""A token + TLS (and mutual TLS) agentd for end-to-end tests: a CA, a server
certificate for 127.0.0.1 and localhost and a client certificate, made in the
test with `cryptography`; bearer tokens made by `agentd token new`'s own
function; an agentd.toml with `[auth]` and `[server.tls]` written from a base
config; and the channel credentials a test's own calls (health included) use.

    pki = make_pki(tmp_path)
    tokens = {"writer": new_caller("acme", "svc", ["writer", "admin"])}
    config = secure_config(base, tmp_path / "agentd.toml", pki, tokens.values())
    server = start_secure_server(config, pki, extra_args=[...], log_dir=tmp_path)
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from agentd.tokens import new_token

from .serverproc import ServerNotServingError, ServerProcess, start_server

STARTUP_TIMEOUT_S = 30.0
#: The client certificate's identity (its SAN URI), for `[[auth.certificates]]`.
CLIENT_SUBJECT = "spiffe://acme/test-client"


@dataclass(frozen=True)
class Pki:
    """PEM files: the CA, the server's certificate and key, a client's."""

    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path

    def credentials(self, *, client_cert: bool = False) -> grpc.ChannelCredentials:
        if not client_cert:
            return grpc.ssl_channel_credentials(self.ca.read_bytes())
        return grpc.ssl_channel_credentials(
            self.ca.read_bytes(), self.client_key.read_bytes(), self.client_cert.read_bytes()
        )


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _write_key(key: ec.EllipticCurvePrivateKey, path: Path) -> Path:
    path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return path


def _write_cert(cert: x509.Certificate, path: Path) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def _issue(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Name,
    issuer_key: ec.EllipticCurvePrivateKey,
    *,
    names: Sequence[x509.GeneralName] = (),
    usage: x509.ObjectIdentifier | None = None,
    ca: bool = False,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if names:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(names)), critical=False)
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
    return builder.sign(issuer_key, hashes.SHA256())


def make_pki(folder: Path, client_subject: str = CLIENT_SUBJECT) -> Pki:
    """A fresh CA in `folder`, a server certificate it signed for 127.0.0.1,
    ::1 and localhost, and a client certificate naming `client_subject`."""
    folder.mkdir(parents=True, exist_ok=True)
    ca_key = _key()
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "agentd test CA")])
    ca = _issue("agentd test CA", ca_key, ca_name, ca_key, ca=True)
    server_key = _key()
    server = _issue(
        "localhost",
        server_key,
        ca_name,
        ca_key,
        names=[
            x509.DNSName("localhost"),
            x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            x509.IPAddress(ipaddress.ip_address("::1")),
        ],
        usage=ExtendedKeyUsageOID.SERVER_AUTH,
    )
    client_key = _key()
    client = _issue(
        "test-client",
        client_key,
        ca_name,
        ca_key,
        names=[x509.UniformResourceIdentifier(client_subject)],
        usage=ExtendedKeyUsageOID.CLIENT_AUTH,
    )
    return Pki(
        ca=_write_cert(ca, folder / "ca.pem"),
        server_cert=_write_cert(server, folder / "server.pem"),
        server_key=_write_key(server_key, folder / "server-key.pem"),
        client_cert=_write_cert(client, folder / "client.pem"),
        client_key=_write_key(client_key, folder / "client-key.pem"),
    )


@dataclass(frozen=True)
class Caller:
    """A bearer token and the `[[auth.tokens]]` lines that admit it."""

    token: str
    toml: str


def new_caller(tenant: str, subject: str, roles: Sequence[str], resources: Sequence[str] = ("*",)) -> Caller:
    token, lines = new_token(tenant, subject, roles, resources)
    return Caller(token, lines)


def secure_config(
    base: str,
    path: Path,
    pki: Pki,
    callers: Iterable[Caller],
    *,
    modes: Sequence[str] = ("token",),
    require_client_cert: bool = False,
    server: Sequence[str] = (),
    auth: Sequence[str] = (),
) -> Path:
    """`base` (an agentd.toml's text) with `[auth]` (`modes`, the callers'
    tokens, `auth` lines such as an `[auth.limits]` table) and `[server.tls]`
    added, and `server` lines (e.g. `reflection = "authenticated"`) in its
    `[server]` table; written to `path`."""
    settings = "".join(f"{line}\n" for line in server)
    text = (
        base.replace("[server]\n", f"[server]\n{settings}", 1)
        if "[server]\n" in base
        else f"[server]\n{settings}\n{base}"
    )
    mode_list = ", ".join(f'"{m}"' for m in modes)
    tls = [
        "[server.tls]",
        f'cert_file = "{pki.server_cert}"',
        f'key_file = "{pki.server_key}"',
    ]
    if require_client_cert or "mtls" in modes:
        tls += [f'client_ca_file = "{pki.ca}"', f"require_client_cert = {str(require_client_cert).lower()}"]
    sections = [f"[auth]\nmode = [{mode_list}]", *(c.toml for c in callers), *auth, "\n".join(tls)]
    path.write_text(text + "\n\n" + "\n\n".join(sections) + "\n", encoding="utf-8")
    return path


def start_secure_server(
    config: Path,
    pki: Pki,
    *,
    extra_args: Sequence[str] = (),
    log_dir: Path,
    client_cert: bool = False,
    env: Mapping[str, str] | None = None,
    plaintext: bool = False,
) -> ServerProcess:
    """`agentd serve --config <config>`, once its health service (open to
    anyone, over TLS unless `plaintext`) reports SERVING; stopped again when
    it never does. `env` is added to this process's environment."""
    server = start_server(extra_args, {**os.environ, **(env or {})}, config=config, log_dir=log_dir)
    credentials = None if plaintext else pki.credentials(client_cert=client_cert)
    try:
        server.wait_serving(timeout=STARTUP_TIMEOUT_S, credentials=credentials)
    except ServerNotServingError:
        server.stop()
        raise
    return server


CONFORMANCE_DIR = Path(__file__).resolve().parents[1] / "conformance"


@contextmanager
def secure_conformance_server(
    folder: Path, *, mtls: bool = False, callers: Sequence[Caller] = ()
) -> Iterator[tuple[ServerProcess, Pki, Caller]]:
    """The conformance server (tests/conformance/agentd.toml, --app
    tests.conformance.app) with `[auth] mode = "token"` over TLS, and the
    caller its scenarios run as (writer and admin: they read cache stats);
    `callers` are admitted too. With `mtls`, also mode mtls and a client
    certificate required, which names the same tenant and roles."""
    pki = make_pki(folder)
    caller = new_caller("acme", "conformance", ["writer", "admin"])
    extra: list[str] = []
    if mtls:
        extra = [f'[[auth.certificates]]\nsubject = "{CLIENT_SUBJECT}"\ntenant = "acme"\nroles = ["writer", "admin"]']
    config = secure_config(
        (CONFORMANCE_DIR / "agentd.toml").read_text(encoding="utf-8"),
        folder / "agentd.toml",
        pki,
        [caller, *callers],
        modes=("token", "mtls") if mtls else ("token",),
        require_client_cert=mtls,
        auth=extra,
    )
    server = start_secure_server(
        config, pki, extra_args=["--app", "tests.conformance.app"], log_dir=folder, client_cert=mtls
    )
    try:
        yield server, pki, caller
    finally:
        server.stop()
