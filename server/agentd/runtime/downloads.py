"""One blocking HTTP(S) download of an attachment (attachments.py runs it in a
worker thread): redirects only to http(s), and, unless private networks are
allowed, only from public addresses, checked on the connected socket so a
name that resolves to loopback or cloud metadata cannot be fetched.

Its own module so that urllib.request and http.client (with email) load with
the first download, not at every start-up (attachments reads it through lazy).
"""

from __future__ import annotations

import http.client
import ipaddress
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import urlsplit

_HTTP = ("http", "https")


class DownloadFailed(Exception):
    """Why the file could not be downloaded (the message is shown to the model)."""


class _HttpOnlyRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if urlsplit(newurl).scheme.lower() not in _HTTP:
            return None  # the redirect becomes an HTTP error: a failed download
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _public_only(connection: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
    class PublicOnly(connection):  # type: ignore[valid-type,misc]
        def connect(self) -> None:
            super().connect()
            peer = ipaddress.ip_address(self.sock.getpeername()[0].split("%")[0])
            mapped = getattr(peer, "ipv4_mapped", None)
            if not (mapped or peer).is_global:
                self.sock.close()
                raise DownloadFailed(f"{self.host} is not a public address ({peer}); downloads from there are off")

    return PublicOnly


class _PublicHTTP(urllib.request.HTTPHandler):
    def http_open(self, req: Any) -> Any:
        return self.do_open(_public_only(http.client.HTTPConnection), req)


class _PublicHTTPS(urllib.request.HTTPSHandler):
    def https_open(self, req: Any) -> Any:
        context = getattr(self, "_context", None)  # HTTPSHandler's own (the default TLS context)
        return self.do_open(_public_only(http.client.HTTPSConnection), req, context=context)


def fetch(url: str, timeout: float, limit: int, allow_private: bool) -> tuple[bytes, str | None]:
    """The body (at most `limit` bytes) and its Content-Type; DownloadFailed otherwise."""
    handlers: list[Any] = [_HttpOnlyRedirects()]
    if not allow_private:
        handlers += [_PublicHTTP(), _PublicHTTPS()]
    opener = urllib.request.build_opener(*handlers)
    request = urllib.request.Request(url, headers={"User-Agent": "agentd", "Accept": "*/*"})
    try:
        with opener.open(request, timeout=timeout) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.strip().isdigit() and int(length) > limit:
                raise DownloadFailed(f"larger than {limit} bytes")
            body: bytes = response.read(limit + 1)
            if len(body) > limit:
                raise DownloadFailed(f"larger than {limit} bytes")
            content_type: str | None = response.headers.get("Content-Type")
            return body, content_type
    except urllib.error.HTTPError as exc:
        raise DownloadFailed(f"HTTP {exc.code}") from None
    except urllib.error.URLError as exc:
        raise DownloadFailed(str(exc.reason)) from None
    except (OSError, ValueError) as exc:  # timeouts, resets, malformed URLs
        raise DownloadFailed(str(exc) or type(exc).__name__) from None
