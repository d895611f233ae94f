"""Signals: context pushed into a thread, and their three forms.

A signal is created once (`create_signal`, `create_message_signal`), then
rendered for the model as a user turn of XML (`render_for_model`), stored as a
`signal` row (`to_db_message` / `from_db_message`), and echoed to subscribers
as itself. No grpc here: the transport converts in agentd.grpc.signals.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, TypeAlias, cast, get_args

from agentd.runtime.errors import FieldViolation, InvalidArgument
from agentd.runtime.lazy import lazy
from agentd.runtime.messages import (
    JSON,
    Attributes,
    ContentPart,
    Contents,
    FilePart,
    Message,
    Signal,
    SignalPart,
    SignalType,
    TextPart,
    utcnow,
)

if TYPE_CHECKING:
    import html
else:
    html = lazy("html")  # with the first escape: its package loads html.entities, a large table

# The signal types are defined beside the message parts that carry them;
# this module is where callers import them from.
__all__ = [
    "ACTIVE_DELIVERIES",
    "DEFAULT_TAGS",
    "JSON",
    "SIGNAL_CATEGORIES",
    "SIGNAL_TYPES",
    "ActiveDelivery",
    "Attributes",
    "AttributesInput",
    "ContentPart",
    "Contents",
    "Signal",
    "SignalType",
    "attribute_text",
    "create_message_signal",
    "create_signal",
    "escape_attribute",
    "escape_text",
    "from_db_message",
    "is_transient_signal_message",
    "normalize_attributes",
    "render_attributes",
    "render_element",
    "render_for_model",
    "signal_delivery_policy",
    "to_db_message",
    "with_delivery_attributes",
]

AttributesInput: TypeAlias = Mapping[str, JSON] | Sequence[tuple[str, JSON]] | None

SIGNAL_TYPES: tuple[SignalType, ...] = ("user", "state", "reactive", "notification")
#: Every accepted input type, legacy names included, to its category.
SIGNAL_CATEGORIES: dict[str, SignalType] = {
    **{t: t for t in SIGNAL_TYPES},
    "user-message": "user",
    "system-reminder": "reactive",
}
#: What a signal does on a thread whose run is active, when its sender left
#: if_active unset: an agent's `signal_delivery` policy per category.
ActiveDelivery = Literal["deliver", "queue", "persist", "discard"]
ACTIVE_DELIVERIES: tuple[ActiveDelivery, ...] = get_args(ActiveDelivery)


def signal_delivery_policy(policy: Mapping[str, str]) -> dict[str, ActiveDelivery]:
    """An agent's per-category policy for active runs (`{"user": "queue"}`),
    legacy type names normalised; ValueError names an unknown category or outcome."""
    out: dict[str, ActiveDelivery] = {}
    for name, outcome in policy.items():
        category = SIGNAL_CATEGORIES.get(name)
        if category is None:
            raise ValueError(f"signal_delivery: {name!r} is not a signal type (one of {', '.join(SIGNAL_TYPES)})")
        if outcome not in ACTIVE_DELIVERIES:
            raise ValueError(
                f"signal_delivery.{name}: {outcome!r} is not an outcome (one of {', '.join(ACTIVE_DELIVERIES)})"
            )
        out[category] = outcome
    return out


DEFAULT_TAGS: dict[SignalType, str] = {
    "user": "user",
    "state": "state",
    "reactive": "system-reminder",
    "notification": "notification",
}

# Tag and attribute names: a letter or "_", then letters, digits, "_", "." or "-"
# (no ":" so no namespaces, no spaces).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_NAME_RULE = 'must start with a letter or "_", then only letters, digits, "_", "." or "-"'


# ---------------------------------------------------------------- creation


def create_signal(
    type: str,
    contents: str | Sequence[ContentPart] = "",
    *,
    tag_name: str | None = None,
    attributes: AttributesInput = None,
    metadata: dict[str, JSON] | None = None,
    provider_options: dict[str, JSON] | None = None,
    transient: bool | None = None,
    id: str | None = None,
    created_at: datetime | str | None = None,
    accepted_at: datetime | str | None = None,
    thread_id: str | None = None,
    resource_id: str | None = None,
) -> Signal:
    """Normalise and validate; every problem is reported in one InvalidArgument."""
    violations: list[FieldViolation] = []
    reason = "INVALID_REQUEST"
    kind = SIGNAL_CATEGORIES.get(type)
    if kind is None:
        reason = "UNKNOWN_SIGNAL_TYPE"
        violations.append(
            FieldViolation(
                "type",
                f"unknown signal type {type!r}: use one of {', '.join(SIGNAL_TYPES)} (or the legacy "
                "user-message, system-reminder), and set tag_name for a custom XML tag",
            )
        )
    if tag_name is not None and not _NAME.fullmatch(tag_name):
        violations.append(FieldViolation("tag_name", f"invalid signal XML tag name {tag_name!r}: {_NAME_RULE}"))
    # Presence, not truth: a state signal is durable context, so even
    # `transient: false` signals a caller who misunderstood it.
    if kind == "state" and transient is not None:
        violations.append(FieldViolation("transient", "state signals cannot be transient"))
    attrs = _attributes(attributes, "attributes", kind == "state", violations)
    body = _contents(contents, violations)
    created = _time(created_at, "created_at", violations)
    accepted = _time(accepted_at, "accepted_at", violations)
    if violations:
        raise InvalidArgument.fields(violations, reason)
    assert kind is not None
    return Signal(
        id=id or str(uuid.uuid4()),
        type=kind,
        tag_name=tag_name or DEFAULT_TAGS[kind],
        contents=body,
        attributes=attrs,
        # Empty and absent are one thing (protobuf cannot tell them apart).
        metadata=dict(metadata) if metadata else None,
        provider_options=dict(provider_options) if provider_options else None,
        transient=True if transient else None,
        created_at=created or utcnow(),
        accepted_at=accepted,
        thread_id=thread_id,
        resource_id=resource_id,
    )


def create_message_signal(
    message: str | Sequence[ContentPart] | Mapping[str, JSON],
    *,
    id: str | None = None,
    created_at: datetime | str | None = None,
    accepted_at: datetime | str | None = None,
) -> Signal:
    """A user message: always category user, tag user (the message API has no
    custom tag, so any `tag_name` key in a dict is ignored)."""
    if isinstance(message, Mapping):
        return create_signal(
            "user",
            message.get("contents", ""),
            attributes=message.get("attributes"),
            metadata=message.get("metadata"),
            provider_options=message.get("provider_options"),
            id=id,
            created_at=created_at,
            accepted_at=accepted_at,
        )
    return create_signal("user", message, id=id, created_at=created_at, accepted_at=accepted_at)


def normalize_attributes(
    attributes: AttributesInput, *, path: str = "attributes", scalar_only: bool = False
) -> Attributes:
    """Validated ordered pairs; InvalidArgument names `<path>[i].name|value`.
    Delivery-path (if_active/if_idle) and state attributes are scalar-only."""
    violations: list[FieldViolation] = []
    out = _attributes(attributes, path, scalar_only, violations)
    if violations:
        raise InvalidArgument.fields(violations)
    return out


def with_delivery_attributes(signal: Signal, attributes: AttributesInput) -> Signal:
    """Merge the delivery path's attributes after the signal's own: a new key
    is appended, an existing key keeps its place and takes the new value."""
    extra = normalize_attributes(attributes, scalar_only=True)
    if not extra:
        return signal
    merged = dict(signal.attributes)
    merged.update(extra)
    return replace(signal, attributes=tuple(merged.items()))


def _attributes(
    attributes: AttributesInput, path: str, scalar_only: bool, violations: list[FieldViolation]
) -> Attributes:
    pairs = tuple(attributes.items()) if isinstance(attributes, Mapping) else tuple(attributes or ())
    seen: set[str] = set()
    for i, (name, value) in enumerate(pairs):
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            violations.append(
                FieldViolation(f"{path}[{i}].name", f"invalid signal XML attribute name {name!r}: {_NAME_RULE}")
            )
        elif name in seen:
            # An XML element cannot carry the same attribute twice.
            violations.append(FieldViolation(f"{path}[{i}].name", f"duplicate attribute name {name!r}"))
        seen.add(name)
        if scalar_only and isinstance(value, (dict, list, tuple)):
            violations.append(FieldViolation(f"{path}[{i}].value", "must be a string, number, boolean or null"))
        elif not _is_json(value):
            violations.append(FieldViolation(f"{path}[{i}].value", "must be a JSON value"))
    return pairs


def _is_json(value: JSON) -> bool:
    try:
        json.dumps(value, allow_nan=False)  # NaN/Infinity are not JSON and protobuf cannot carry them
    except (TypeError, ValueError):
        return False
    return True


def _contents(contents: str | Sequence[ContentPart], violations: list[FieldViolation]) -> Contents:
    if isinstance(contents, str):
        return contents
    parts = tuple(contents)
    bad = [i for i, p in enumerate(parts) if not isinstance(p, (TextPart, FilePart))]
    for i in bad:
        violations.append(FieldViolation(f"contents[{i}]", "must be a TextPart or FilePart"))
    if bad:
        return ""
    # Copies: the caller may keep editing its parts; the signal must not change.
    return _collapse(tuple(replace(p) for p in parts))


def _collapse(parts: tuple[ContentPart, ...]) -> Contents:
    if not parts:
        return ""
    only = parts[0]
    if len(parts) == 1 and isinstance(only, TextPart) and not only.provider_options:
        return only.text
    return parts


def _time(value: datetime | str | None, name: str, violations: list[FieldViolation]) -> datetime | None:
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            violations.append(FieldViolation(name, f"not an ISO 8601 time: {value!r}"))
            return None
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# ---------------------------------------------------------------- XML


# html.escape, not xml.sax.saxutils.escape (the same &, < and >): saxutils
# imports urllib.request, http.client and email, a tenth of a second of start-up.
def escape_text(text: str) -> str:
    """&, < and >; input that already holds entities is escaped like any text (`&amp;` → `&amp;amp;`)."""
    return html.escape(text, quote=False)


def escape_attribute(text: str) -> str:
    """As text, and the double quote that delimits the attribute."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def attribute_text(value: JSON) -> str | None:
    """An attribute value as text, before escaping; None means "leave it out"."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    # Numbers, objects and arrays: compact JSON, keys in insertion order, so
    # the same value always renders the same.
    return json.dumps(_plain_numbers(value), separators=(",", ":"), ensure_ascii=False)


def _plain_numbers(value: JSON) -> JSON:
    # Protobuf delivers every number as a double: 3 arrives as 3.0 and must
    # still render "3". (Below 1e21, where decimal notation is still used.)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, dict):
        return {k: _plain_numbers(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_numbers(v) for v in value]
    return value


def render_attributes(attributes: Attributes) -> str:
    out = []
    for name, value in attributes:
        text = attribute_text(value)
        if text is not None:
            out.append(f' {name}="{escape_attribute(text)}"')
    return "".join(out)


def render_element(tag: str, attributes: Attributes, text: str) -> str:
    attrs = render_attributes(attributes)
    if not text:
        return f"<{tag}{attrs} />"
    return f"<{tag}{attrs}>{escape_text(text)}</{tag}>"


def render_for_model(signal: Signal) -> Message:
    """The user turn the model sees."""
    # Copies: processors may edit the prompt's parts; the signal must not change.
    parts: list[ContentPart] = [replace(p) for p in _parts(signal.contents)]
    tag, attrs = signal.tag_name, signal.attributes
    if signal.type == "user" and all(v is None for _, v in attrs):
        out: list[ContentPart] = parts  # a plain user message: no XML at all
    elif all(isinstance(p, TextPart) and not p.provider_options for p in parts):
        out = [TextPart(render_element(tag, attrs, "\n".join(cast(TextPart, p).text for p in parts)))]
    else:
        # Files or per-part provider options: wrap only the first text part so
        # the others keep their place and options.
        first = next((i for i, p in enumerate(parts) if isinstance(p, TextPart)), None)
        if first is None:
            out = [TextPart(render_element(tag, attrs, "")), *parts]
        else:
            text = cast(TextPart, parts[first])
            out = list(parts)
            out[first] = TextPart(render_element(tag, attrs, text.text), text.provider_options)
    return Message(
        role="user",
        parts=[*out],
        id=signal.id,
        provider_options=signal.provider_options,
        created_at=signal.created_at,
    )


def _parts(contents: Contents) -> tuple[ContentPart, ...]:
    return (TextPart(contents),) if isinstance(contents, str) else contents


# ---------------------------------------------------------------- storage


def to_db_message(signal: Signal, thread_id: str | None = None, resource_id: str | None = None) -> Message:
    """The stored `signal` row: the signal itself as its one part, plus a JSON
    summary in metadata["signal"] that listings and UIs read without decoding."""
    thread_id = thread_id or signal.thread_id
    resource_id = resource_id or signal.resource_id
    stored = replace(signal, thread_id=thread_id, resource_id=resource_id)
    record: dict[str, JSON] = {
        "id": signal.id,
        "type": signal.type,
        "tagName": signal.tag_name,
        "createdAt": _iso(signal.created_at),
    }
    if signal.accepted_at is not None:
        record["acceptedAt"] = _iso(signal.accepted_at)
    if signal.attributes:
        record["attributes"] = dict(signal.attributes)
    if signal.metadata is not None:
        record["metadata"] = dict(signal.metadata)
    if signal.transient:
        record["transient"] = True
    return Message(
        role="signal",
        parts=[SignalPart(stored)],
        id=signal.id,
        metadata={"signal": record},
        provider_options=signal.provider_options,
        thread_id=thread_id,
        resource_id=resource_id,
        created_at=signal.created_at,
    )


def from_db_message(message: Message) -> Signal:
    """The signal of a stored row. The embedded signal wins when present (it
    keeps attribute order and types exactly); otherwise the row is decoded from
    metadata["signal"] and its text/file parts, as older rows were written."""
    if message.role != "signal":
        raise ValueError(f"not a signal message: role {message.role!r}")
    for part in message.parts:
        if isinstance(part, SignalPart) and isinstance(part.signal, Signal):
            return replace(
                part.signal,
                thread_id=message.thread_id or part.signal.thread_id,
                resource_id=message.resource_id or part.signal.resource_id,
            )

    record = message.metadata.get("signal")
    meta: dict[str, JSON] = record if isinstance(record, dict) else {}
    kind = meta.get("type") or "user-message"
    transient = meta.get("transient") if "transient" in meta else None
    if SIGNAL_CATEGORIES.get(kind) != "state":
        transient = True if transient is True else None  # only an exact `true` counts
    stash = _decode_contents(meta["contents"]) if "contents" in meta else None
    row_parts = [p for p in message.parts if isinstance(p, (TextPart, FilePart))]
    contents = row_parts if stash is None else stash
    return create_signal(
        kind,
        contents,
        tag_name=meta.get("tagName"),
        attributes=meta.get("attributes"),
        metadata=meta.get("metadata"),
        provider_options=message.provider_options,
        transient=transient,
        id=meta.get("id") or message.id,
        created_at=meta.get("createdAt") or message.created_at,
        accepted_at=meta.get("acceptedAt"),
        thread_id=message.thread_id,
        resource_id=message.resource_id,
    )


def is_transient_signal_message(message: Message) -> bool:
    record = message.metadata.get("signal")
    return message.role == "signal" and isinstance(record, dict) and record.get("transient") is True


def _iso(when: datetime) -> str:
    return when.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _decode_contents(raw: JSON) -> list[ContentPart] | None:
    """Contents stashed in metadata by older writers: a string, a part, a list
    of strings/parts, or a `{role: "user", content}` wrapper. None when it
    cannot be decoded (the caller then falls back to the row's parts)."""
    if isinstance(raw, str):
        return [TextPart(raw)]
    if isinstance(raw, dict):
        if raw.get("role") == "user":
            return _decode_contents(raw.get("content"))
        part = _decode_part(raw)
        return None if part is None else [part]
    if isinstance(raw, list):
        out: list[ContentPart] = []
        for item in raw:
            decoded = _decode_contents(item)
            if decoded is None:
                return None
            out.extend(decoded)
        return out
    return None


def _decode_part(raw: dict[str, JSON]) -> ContentPart | None:
    options = raw.get("providerOptions") or raw.get("providerMetadata")
    options = options if isinstance(options, dict) else None
    kind = raw.get("type")
    if kind == "text" and isinstance(raw.get("text"), str):
        return TextPart(raw["text"], options)
    if kind not in ("file", "image"):
        return None
    data = raw.get("data" if kind == "file" else "image")
    # Older image parts often carry no media type; PNG is what they defaulted to.
    media_type = raw.get("mediaType") or raw.get("mimeType") or ("image/png" if kind == "image" else None)
    if not isinstance(data, str) or not isinstance(media_type, str):
        return None
    filename = raw.get("filename") if isinstance(raw.get("filename"), str) else None
    if data.startswith(("http://", "https://", "data:")):
        return FilePart(media_type, url=data, filename=filename, provider_options=options)
    try:
        blob = base64.b64decode(data, validate=True)
    except binascii.Error:
        return None
    return FilePart(media_type, data=blob, filename=filename, provider_options=options)
