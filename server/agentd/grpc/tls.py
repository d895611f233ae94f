"""TLS for the server, and mutual TLS: certificates read from files and read
again when the files change, without a restart (grpc's dynamic server
credentials ask for the current certificate at each new handshake)."""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from pathlib import Path

import grpc

__all__ = ["TLSSettings", "server_credentials"]

log = logging.getLogger("agentd.tls")


@dataclass(frozen=True)
class TLSSettings:
    """The server's certificate and key, and the client CA for mutual TLS."""

    cert_file: str
    key_file: str
    #: The CA that signs client certificates (mutual TLS).
    client_ca_file: str | None = None
    #: Refuse a client without a certificate the CA signed (mutual TLS).
    require_client_cert: bool = False

    def __post_init__(self) -> None:
        if self.require_client_cert and not self.client_ca_file:
            raise ValueError("server.tls.require_client_cert needs server.tls.client_ca_file")


class _Files:
    """The certificate files, and the configuration built from them when they last changed."""

    def __init__(self, settings: TLSSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._stamp = self._stamps()

    def _paths(self) -> list[Path]:
        s = self.settings
        return [Path(p) for p in (s.cert_file, s.key_file, s.client_ca_file) if p]

    def _stamps(self) -> tuple[tuple[int, int], ...]:
        return tuple((p.stat().st_mtime_ns, p.stat().st_size) for p in self._paths())

    def configuration(self) -> grpc.ServerCertificateConfiguration:
        s = self.settings
        chain = Path(s.cert_file).read_bytes()
        key = Path(s.key_file).read_bytes()
        ca = Path(s.client_ca_file).read_bytes() if s.client_ca_file else None
        return grpc.ssl_server_certificate_configuration([(key, chain)], root_certificates=ca)

    def changed(self) -> grpc.ServerCertificateConfiguration | None:
        """A new configuration when a file changed since the last look; None otherwise
        (or when the new files cannot be read: the server keeps what it serves)."""
        with self._lock:
            try:
                stamp = self._stamps()
                if stamp == self._stamp:
                    return None
                configuration = self.configuration()
            except OSError as exc:
                log.error("TLS certificate files could not be read again (%s); serving the previous ones", exc)
                return None
            self._stamp = stamp
        log.warning("TLS certificate files changed: new connections get the new certificate")
        return configuration


def server_credentials(settings: TLSSettings) -> grpc.ServerCredentials:
    files = _Files(settings)
    return grpc.dynamic_ssl_server_credentials(
        files.configuration(),
        files.changed,  # type: ignore[arg-type]  # None means "no change" (grpc's docs; the stubs omit it)
        require_client_authentication=settings.require_client_cert,
    )
