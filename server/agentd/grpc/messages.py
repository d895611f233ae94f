"""Messages to protobuf and back (a signal part through the signals rung), and
the input messages of a run a caller sends."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer

from agentd.grpc.parts import check_part, fill_part, part_from_pb
from agentd.grpc.signals import signal_to_pb
from agentd.grpc.values import fill_timestamp, from_struct, from_timestamp, optional_struct, timestamp
from agentd.grpc.violations import Violations
from agentd.runtime import messages as rm
from agentd_proto.v1 import message_pb2 as mpb

ROLES: dict[str, mpb.Role] = {
    "user": mpb.ROLE_USER,
    "assistant": mpb.ROLE_ASSISTANT,
    "system": mpb.ROLE_SYSTEM,
    "signal": mpb.ROLE_SIGNAL,
}
ROLE_NAMES: dict[int, rm.Role] = {v: k for k, v in ROLES.items()}  # type: ignore[misc]


def message_to_pb(message: rm.Message) -> mpb.Message:
    out = mpb.Message(id=message.id, role=ROLES[message.role])
    _fill(out, message)
    return out


def add_message(into: RepeatedCompositeFieldContainer[mpb.Message], message: rm.Message) -> None:
    """Adds `message` to a repeated field, built where it goes (one built
    apart and added would be copied in, and so would each of its parts);
    its fields set one by one, cheaper with upb than named in add()."""
    out = into.add()
    out.id = message.id
    out.role = ROLES[message.role]
    _fill(out, message)


def _fill(out: mpb.Message, message: rm.Message) -> None:
    parts = out.parts
    for part in message.parts:
        if isinstance(part, rm.SignalPart):
            parts.add().signal.signal.CopyFrom(signal_to_pb(part.signal))
        else:
            fill_part(parts.add(), part)
    when = message.created_at
    if when is not None:
        fill_timestamp(out.create_time, when)
    # Set only when there: a field named at its default still costs a lookup.
    if message.metadata:
        out.metadata.update(message.metadata)
    if message.provider_options:
        out.provider_options.update(message.provider_options)
    if message.thread_id:
        out.thread_id = message.thread_id
    if message.resource_id:
        out.resource_id = message.resource_id


def message_from_pb(message: mpb.Message) -> rm.Message:
    out = rm.Message(
        role=ROLE_NAMES[message.role],
        parts=[part_from_pb(p) for p in message.parts],
        metadata=from_struct(message.metadata) if message.HasField("metadata") else {},
        provider_options=optional_struct(message, "provider_options"),
        thread_id=message.thread_id or None,
        resource_id=message.resource_id or None,
    )
    if message.id:
        out.id = message.id
    if message.HasField("create_time"):
        out.created_at = from_timestamp(message.create_time)
    return out


def run_input(messages: Sequence[mpb.Message], text: str, v: Violations) -> tuple[rm.Message, ...]:
    """A run's input: `messages` xor `text` (a tuple, as RunRequest holds it)."""
    if text:
        if messages:
            v.add("text", "set either text or messages, not both")
            return ()
        return (rm.Message("user", [rm.TextPart(text)]),)  # (Message.user, without its frame)
    if not messages:
        v.add("text", "set text or messages")
        return ()
    out: list[rm.Message] = []
    for i, message in enumerate(messages):
        out.extend(_input_message(message, f"messages[{i}]", v))
    if out and all(m.role == "system" for m in out):
        v.add("messages", "needs at least one non-system message")
    return tuple(out)


def _input_message(message: mpb.Message, path: str, v: Violations) -> list[rm.Message]:
    before = len(v.items)
    if message.role not in (mpb.ROLE_USER, mpb.ROLE_ASSISTANT, mpb.ROLE_SYSTEM):
        v.add(f"{path}.role", "must be ROLE_USER, ROLE_ASSISTANT or ROLE_SYSTEM")
    if not message.parts:
        v.add(f"{path}.parts", "must not be empty")
    for j, part in enumerate(message.parts):
        check_part(part, f"{path}.parts[{j}]", message.role, v)
    if message.HasField("create_time"):
        timestamp(message.create_time, f"{path}.create_time", v)
    if len(v.items) > before:
        return []
    return [message_from_pb(message)]
