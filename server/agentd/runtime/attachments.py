"""Attachments the model cannot fetch itself: downloaded before the model call.

`prepare_attachments(request, model, message_list, state)` runs before every
model call (and again on every retry of that call). It looks at each file part
given by URL (`FilePart.url`, no `data`) in the request's prompt, which is a
copy made for this call; stored messages always keep their URL.

Which models fetch URLs themselves
    A model object may carry `fetches_urls: frozenset[str]`; otherwise the
    provider's entry of `DEFAULT_FETCHES_URLS` applies (an unknown provider
    fetches nothing). Each entry is one of:

    * a media-type prefix (`"image/"`, `"application/pdf"`, `"*"` for any):
      http(s) URLs of files of that type;
    * `"<scheme>:<media-type prefix>"` (`"gs:"` = any type): URLs of that scheme;
    * a URL prefix containing `://`: URLs starting with it, any type.

    Defaults: openai fetches images by http(s) URL; anthropic images and
    PDFs; google only `gs:` URIs, its own Files API URIs (which need the API
    key, so agentd could not download them anyway) and YouTube video URLs
    (which it reads as videos, not as web pages); local fetches nothing
    (it never reads files, but downloads happen so they can be tested).
    Parts the model can fetch are left alone.

`data:` URLs
    Always decoded into bytes here (never a network request). A data URL that
    cannot be decoded (no comma, bad base64) is replaced at once by the
    placeholder: a retry could not fix it.

Downloads
    http and https only (redirects too), with urllib in a worker thread, and
    only from public addresses: a connection (a redirect's too) whose peer is
    loopback, private, link-local or otherwise not global fails, checked on
    the connected socket so DNS cannot point elsewhere after a check, unless
    `ALLOW_PRIVATE_NETWORKS` (agentd.toml `[attachments]
    allow_private_networks = true`) lets a deployment fetch from its own network;
    `DOWNLOAD_TIMEOUT_SECONDS` (10 s) for the whole download and at most
    `MAX_DOWNLOAD_BYTES` (20 MB). The bytes replace the URL in the request copy
    only, and are kept in `state` for the run: a retry or a later step does not
    download the same URL again. A failure (HTTP status >= 400, another scheme,
    connection error, timeout, too big) of a URL raises

        ModelAPIError("could not download attachment <url>", status_code=None,
                      provider_code="DOWNLOAD_ASSETS_FAILED", retryable=False,
                      details={"id": "DOWNLOAD_ASSETS_FAILED", "url": <url>,
                               "urls": [<every URL that failed for the first time>],
                               "reason": "<why>"})

    which the loop hands to the error processors like a provider failure. It
    carries no cause (the default retry processor never resends it blindly).
    An error processor can replace the URL in the stored message (its
    `message_list`) and return a retry; after the error processors, the
    agent's fallback models get their turn.

When nothing recovers it (the exact rule)
    Failures are counted per URL for the run. The first failure of a URL
    raises the error above (all URLs failing for the first time in one call
    are counted and listed in `details["urls"]`; `details["url"]` is the first).
    The second failure of the same URL in the same run (a retry, the fallback
    model's call, or the loop's one last retry) does not raise: the part
    becomes the text `[Attachment unavailable: <name>]` (`<name>`: the file
    name, else the last path segment of the URL, else its host; "data URL"
    for a data URL), one warning is
    logged (logger `agentd.attachments`, once per URL per run), and the URL is
    added (without duplicates) to the list under metadata key
    `agentd.unavailableAttachments` of the stored message holding the part (found
    in `message_list` by id), so memory saves it with the message. From then
    on, in this run and in later turns (a message whose metadata lists the
    URL), the part is the placeholder at once, with no download and no warning,
    whatever the model (even one that fetches URLs itself).
    An undecodable data URL is recorded the same way, under
    `data:sha256,<hex digest of the URL>` rather than the (possibly huge) URL.

The loop is expected to retry a call once more when a DOWNLOAD_ASSETS_FAILED
error is left unrecovered by the error processors and the fallback models:
that retry is the one that sends placeholders, so the turn does not fail.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import logging
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import unquote, unquote_to_bytes, urlsplit, urlunsplit

from agentd.runtime.lazy import lazy
from agentd.runtime.messages import FilePart, Message, Part, TextPart
from agentd.runtime.models.base import LanguageModel, ModelAPIError, ModelRequest
from agentd.runtime.processors.message_list import MessageList

if TYPE_CHECKING:
    from agentd.runtime import downloads
else:
    # urllib.request and http.client: loaded by the first download, not at start-up.
    downloads = lazy("agentd.runtime.downloads")

log = logging.getLogger("agentd.attachments")

#: The error id (and provider code) of a failed attachment download.
DOWNLOAD_ASSETS_FAILED: Final = "DOWNLOAD_ASSETS_FAILED"
#: Metadata key of a stored message: the URLs of its unavailable attachments.
UNAVAILABLE_ATTACHMENTS_KEY: Final = "agentd.unavailableAttachments"
#: Read at call time, so tests may lower them (and the server sets them from agentd.toml).
DOWNLOAD_TIMEOUT_SECONDS = 10.0
MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024
#: False: a caller's URL can never make agentd fetch from loopback, the
#: private network or cloud metadata addresses.
ALLOW_PRIVATE_NETWORKS = False
#: What each provider's models fetch themselves (see the module docstring).
DEFAULT_FETCHES_URLS: Final[dict[str, frozenset[str]]] = {
    "openai": frozenset({"image/"}),
    "anthropic": frozenset({"image/", "application/pdf"}),
    "google": frozenset(
        {"gs:", "https://generativelanguage.googleapis.com/", "https://www.youtube.com/", "https://youtu.be/"}
    ),
    "local": frozenset(),
}

_STATE_KEY = "attachments"
_HTTP = ("http", "https")


@dataclass(slots=True)
class _Downloaded:
    data: bytes
    media_type: str | None


@dataclass(slots=True)
class _RunAttachments:
    """Per-run bookkeeping, kept in the loop's `state` dict."""

    downloaded: dict[str, _Downloaded] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)
    #: URLs (or data-URL keys) shown as placeholders for the rest of the run.
    unavailable: set[str] = field(default_factory=set)


def _run_state(state: dict[str, Any]) -> _RunAttachments:
    found = state.get(_STATE_KEY)
    if not isinstance(found, _RunAttachments):
        found = state[_STATE_KEY] = _RunAttachments()
    return found


# ---------------------------------------------------------------- who fetches what


def _media(media_type: str) -> str:
    return media_type.split(";", 1)[0].strip().lower()


def _media_matches(prefix: str, media_type: str) -> bool:
    prefix = prefix.strip().lower()
    return prefix in ("", "*") or media_type.startswith(prefix)


def fetches_urls(model: LanguageModel) -> frozenset[str]:
    """The model's `fetches_urls`, else its provider's default entry."""
    own = getattr(model, "fetches_urls", None)
    if isinstance(own, (frozenset, set)):
        return frozenset(str(entry) for entry in own)
    return DEFAULT_FETCHES_URLS.get(model.provider, frozenset())


def model_fetches(model: LanguageModel, part: FilePart) -> bool:
    """True when `model` fetches `part.url` itself (see the module docstring)."""
    url = part.url or ""
    scheme = urlsplit(url).scheme.lower()
    media_type = _media(part.media_type)
    for entry in fetches_urls(model):
        if "://" in entry:
            if url.startswith(entry):
                return True
        elif ":" in entry:
            entry_scheme, _, prefix = entry.partition(":")
            if scheme == entry_scheme.strip().lower() and _media_matches(prefix, media_type):
                return True
        elif scheme in _HTTP and _media_matches(entry, media_type):
            return True
    return False


# ---------------------------------------------------------------- names and keys


def _is_data_url(url: str) -> bool:
    return url[:5].lower() == "data:"


def record_key(url: str) -> str:
    """What the metadata lists for `url`: the URL, or a digest of a data URL."""
    if _is_data_url(url):
        return "data:sha256," + hashlib.sha256(url.encode("utf-8", "replace")).hexdigest()
    return url


def attachment_name(part: FilePart) -> str:
    """The file name, else the URL's last path segment, else its host."""
    if part.filename:
        return part.filename
    url = part.url or ""
    if _is_data_url(url):
        return "data URL"
    parts = urlsplit(url)
    base = unquote(posixpath.basename(parts.path.rstrip("/")))
    return base or parts.hostname or url


def placeholder_text(part: FilePart) -> str:
    return f"[Attachment unavailable: {attachment_name(part)}]"


def _shown(url: str) -> str:
    """`url` for a log line: a data URL shortened, no query (signed URLs carry secrets)."""
    if _is_data_url(url):
        return url if len(url) <= 64 else url[:48] + "..."
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "..." if parts.query else "", ""))


# ---------------------------------------------------------------- data URLs and downloads


def decode_data_url(url: str) -> tuple[str, bytes] | None:
    """(media type, bytes) of a `data:` URL, or None when it does not decode."""
    header, sep, payload = url[5:].partition(",")
    if not sep:
        return None
    params = [p.strip() for p in header.split(";")]
    media_type = params[0].lower()
    if any(p.lower() == "base64" for p in params[1:]):
        compact = "".join(unquote(payload).split())
        if len(compact) % 4 == 1:
            return None
        try:
            data = base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
        except (binascii.Error, ValueError):
            return None
    else:
        data = unquote_to_bytes(payload)
    return media_type, data


async def _download(url: str) -> _Downloaded | str:
    """The file, or why it could not be downloaded."""
    if urlsplit(url).scheme.lower() not in _HTTP:
        return f"cannot download {urlsplit(url).scheme or 'scheme-less'} URLs"
    timeout = DOWNLOAD_TIMEOUT_SECONDS
    fetch = downloads.fetch  # (loaded here, on the loop's thread)
    try:
        body, content_type = await asyncio.wait_for(
            asyncio.to_thread(fetch, url, timeout, MAX_DOWNLOAD_BYTES, ALLOW_PRIVATE_NETWORKS), timeout
        )
    except TimeoutError:
        return f"timed out after {timeout:g} s"
    except downloads.DownloadFailed as exc:
        return str(exc)
    return _Downloaded(body, _media(content_type) if content_type else None)


# ---------------------------------------------------------------- the hook


def _listed(message: Message) -> list[str]:
    value = message.metadata.get(UNAVAILABLE_ATTACHMENTS_KEY)
    return [str(v) for v in value] if isinstance(value, list) else []


def _record(message_list: MessageList, message_id: str, url: str) -> None:
    """Adds `url` to the stored message's unavailable attachments."""
    stored = message_list.get(message_id)
    if stored is None or not any(isinstance(p, FilePart) and p.url == url for p in stored.parts):
        return  # not a stored message (or not its part): nothing to remember
    listed = _listed(stored)
    key = record_key(url)
    if key not in listed:
        stored.metadata[UNAVAILABLE_ATTACHMENTS_KEY] = [*listed, key]


def _give_up(run: _RunAttachments, message_list: MessageList, where: Iterable[str], url: str, reason: str) -> None:
    """Marks `url` unavailable for the run, records it, and warns once."""
    key = record_key(url)
    for message_id in where:
        _record(message_list, message_id, url)
    if key in run.unavailable:
        return
    run.unavailable.add(key)
    log.warning("attachment %s is unavailable (%s); the model gets a placeholder instead", _shown(url), reason)


def _with_bytes(part: FilePart, data: bytes, media_type: str | None) -> FilePart:
    current = _media(part.media_type)
    keep = bool(current) and not current.endswith("/*") and current != "application/octet-stream"
    return replace(part, data=data, url=None, media_type=part.media_type if keep or not media_type else media_type)


def has_url_attachments(prompt: list[Message]) -> bool:
    """Whether any part of `prompt` is an attachment given by URL only (what a
    download or a placeholder may replace; the loops below skip exactly the
    others): without one, `prepare_attachments` has nothing to do."""
    for message in prompt:
        for part in message.parts:
            if isinstance(part, FilePart) and part.data is None and part.url:
                return True
    return False


async def prepare_attachments(
    request: ModelRequest, model: LanguageModel, message_list: MessageList, state: dict[str, Any]
) -> ModelRequest:
    """The request with each URL attachment the model cannot fetch made inline
    (or a placeholder); raises ModelAPIError DOWNLOAD_ASSETS_FAILED on a URL's
    first failed download in the run. See the module docstring."""
    if not has_url_attachments(request.prompt):
        return request  # no attachment given by URL: nothing to download or replace
    run = _run_state(state)
    # Which URLs need a download, and which messages hold them.
    holders: dict[str, list[str]] = {}
    for message in request.prompt:
        stored = message_list.get(message.id)
        listed = {*_listed(message), *(_listed(stored) if stored is not None else ())}
        for part in message.parts:
            if not isinstance(part, FilePart) or part.data is not None or not part.url:
                continue
            url = part.url
            key = record_key(url)
            if key in listed or key in run.unavailable:
                continue
            if _is_data_url(url):
                if decode_data_url(url) is None:
                    _give_up(run, message_list, [message.id], url, "the data URL does not decode")
                continue
            if model_fetches(model, part) or url in run.downloaded:
                continue
            holders.setdefault(url, []).append(message.id)

    results = await asyncio.gather(*(_download(url) for url in holders)) if holders else []
    first_failures: list[tuple[str, str]] = []
    for url, outcome in zip(holders, results, strict=True):
        if isinstance(outcome, _Downloaded):
            run.downloaded[url] = outcome
            continue
        count = run.failures[url] = run.failures.get(url, 0) + 1
        if count >= 2:
            _give_up(run, message_list, holders[url], url, outcome)
        else:
            first_failures.append((url, outcome))
    if first_failures:
        url, reason = first_failures[0]
        # Raised outside any `except`: the error has no cause or context that
        # a retry processor could mistake for a transient failure.
        raise ModelAPIError(
            f"could not download attachment {url}",
            status_code=None,
            provider_code=DOWNLOAD_ASSETS_FAILED,
            retryable=False,
            details={
                "id": DOWNLOAD_ASSETS_FAILED,
                "url": url,
                "urls": [u for u, _ in first_failures],
                "reason": reason,
            },
        )

    changed = False
    prompt: list[Message] = []
    for message in request.prompt:
        stored = message_list.get(message.id)
        listed = {*_listed(message), *(_listed(stored) if stored is not None else ())}
        parts: list[Part] = []
        touched = False
        for part in message.parts:
            new = _prepared(part, model, run, listed)
            touched = touched or new is not part
            parts.append(new)
        if touched:
            changed = True
            prompt.append(replace(message, parts=parts))
        else:
            prompt.append(message)
    return replace(request, prompt=prompt) if changed else request


def _prepared(part: Part, model: LanguageModel, run: _RunAttachments, listed: set[str]) -> Part:
    """One part of the request copy, as the model gets it."""
    if not isinstance(part, FilePart) or part.data is not None or not part.url:
        return part
    url = part.url
    key = record_key(url)
    if key in listed or key in run.unavailable:
        return TextPart(placeholder_text(part))
    if _is_data_url(url):
        decoded = decode_data_url(url)
        if decoded is None:  # already given up on above
            return TextPart(placeholder_text(part))
        return _with_bytes(part, decoded[1], decoded[0] or None)
    if model_fetches(model, part):
        return part
    downloaded = run.downloaded.get(url)
    if downloaded is None:  # not reached: every other URL was downloaded or raised
        return TextPart(placeholder_text(part))
    return _with_bytes(part, downloaded.data, downloaded.media_type)
