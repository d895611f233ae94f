"""Message parts (text, file, reasoning, tool calls and results, data) to
protobuf and back, and the checks of the parts a caller sends. Signal parts
are the messages rung's: a signal is built from the content parts here."""

from __future__ import annotations

from collections.abc import Sequence

from agentd.grpc.values import from_value, optional_struct, optional_value, to_struct, to_value
from agentd.grpc.violations import Violations
from agentd.runtime import messages as rm
from agentd_proto.v1 import message_pb2 as mpb


def _shown(display: dict[str, rm.JSON] | None, key: str, payload: rm.JSON) -> rm.JSON:
    """What a caller is shown of a tool payload: the runtime's transform of it
    when one applied (tool_payloads). Every tool part leaving the server (a
    chunk, a stored message, a run's result) is converted here, so this is
    the one place the real payload is withheld."""
    return display[key] if display is not None and key in display else payload


def tool_call_to_pb(call: rm.ToolCallPart) -> mpb.ToolCall:
    return mpb.ToolCall(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        args=to_value(_shown(call.display, "args", call.args)),
        provider_executed=call.provider_executed,
        provider_metadata=to_struct(call.provider_metadata),
        client_tool=call.client_tool,
    )


def tool_result_to_pb(result: rm.ToolResultPart) -> mpb.ToolResult:
    return mpb.ToolResult(
        tool_call_id=result.tool_call_id,
        tool_name=result.tool_name,
        result=to_value(_shown(result.display, "result", result.result)),
        is_error=result.is_error,
        args=to_value(_shown(result.display, "args", result.args)),
        provider_executed=result.provider_executed,
        provider_metadata=to_struct(result.provider_metadata),
    )


def file_to_pb(part: rm.FilePart) -> mpb.FilePart:
    pb = mpb.FilePart(
        media_type=part.media_type,
        filename=part.filename or "",
        provider_options=to_struct(part.provider_options),
    )
    if part.data is not None:
        pb.data = part.data
    elif part.url is not None:
        pb.url = part.url
    return pb


def text_to_pb(part: rm.TextPart) -> mpb.TextPart:
    return mpb.TextPart(text=part.text, provider_options=to_struct(part.provider_options))


def fill_part(out: mpb.Part, part: rm.Part) -> None:
    """`part` (any but a signal part) written into `out`, an empty Part added
    where it goes: a text part, most of them, in place; any other built and
    copied in once."""
    if isinstance(part, rm.TextPart):
        text = out.text
        text.text = part.text  # even "": the oneof is set
        if part.provider_options:
            text.provider_options.update(part.provider_options)
    else:
        out.CopyFrom(part_to_pb(part))


def part_to_pb(part: rm.Part) -> mpb.Part:
    """Every part but a signal part (see messages.py)."""
    if isinstance(part, rm.TextPart):
        return mpb.Part(text=text_to_pb(part))
    if isinstance(part, rm.FilePart):
        return mpb.Part(file=file_to_pb(part))
    if isinstance(part, rm.ReasoningPart):
        return mpb.Part(
            reasoning=mpb.ReasoningPart(
                text=part.text,
                signature=part.signature or "",
                redacted_data=part.redacted_data or b"",
                provider_options=to_struct(part.provider_options),
            )
        )
    if isinstance(part, rm.ToolCallPart):
        return mpb.Part(tool_call=tool_call_to_pb(part))
    if isinstance(part, rm.ToolResultPart):
        return mpb.Part(tool_result=tool_result_to_pb(part))
    if isinstance(part, rm.DataPart):
        return mpb.Part(data=mpb.DataPart(type=part.type, id=part.id or "", data=to_value(part.data)))
    raise TypeError(f"no protobuf form for part {part!r}")


def part_from_pb(part: mpb.Part) -> rm.Part:
    kind = part.WhichOneof("part")
    if kind == "text":
        return rm.TextPart(part.text.text, optional_struct(part.text, "provider_options"))
    if kind == "file":
        f = part.file
        return rm.FilePart(
            media_type=f.media_type,
            data=f.data if f.WhichOneof("source") == "data" else None,
            url=f.url if f.WhichOneof("source") == "url" else None,
            filename=f.filename or None,
            provider_options=optional_struct(f, "provider_options"),
        )
    if kind == "reasoning":
        r = part.reasoning
        return rm.ReasoningPart(
            r.text, r.signature or None, r.redacted_data or None, optional_struct(r, "provider_options")
        )
    if kind == "tool_call":
        c = part.tool_call
        return rm.ToolCallPart(
            c.tool_call_id,
            c.tool_name,
            optional_value(c, "args"),
            c.provider_executed,
            optional_struct(c, "provider_metadata"),
            c.client_tool,
        )
    if kind == "tool_result":
        t = part.tool_result
        return rm.ToolResultPart(
            t.tool_call_id,
            t.tool_name,
            optional_value(t, "result"),
            t.is_error,
            optional_value(t, "args"),
            t.provider_executed,
            optional_struct(t, "provider_metadata"),
        )
    if kind == "data":
        d = part.data
        return rm.DataPart(d.type, from_value(d.data) if d.HasField("data") else None, d.id or None)
    raise ValueError(f"unsupported part {kind!r}")


def content_part_to_pb(part: rm.TextPart | rm.FilePart) -> mpb.ContentPart:
    if isinstance(part, rm.TextPart):
        return mpb.ContentPart(text=text_to_pb(part))
    return mpb.ContentPart(file=file_to_pb(part))


def content_part_from_pb(pb: mpb.ContentPart) -> rm.TextPart | rm.FilePart:
    # A ContentPart is the text/file subset of Part: decode it as one.
    part = part_from_pb(mpb.Part(text=pb.text) if pb.HasField("text") else mpb.Part(file=pb.file))
    assert isinstance(part, (rm.TextPart, rm.FilePart))
    return part


# ---------------------------------------------------------------- checks of what callers send


def check_file(f: mpb.FilePart, path: str, v: Violations) -> None:
    if not f.media_type or "/" not in f.media_type:
        v.add(f"{path}.media_type", 'is required, as an IANA media type such as "image/png"')
    source = f.WhichOneof("source")
    if source is None:
        v.add(f"{path}.data", "set data or url")
    elif source == "url" and not f.url.startswith(("http://", "https://", "data:")):
        v.add(f"{path}.url", "must be an http(s) or data: URL")


def check_part(part: mpb.Part, path: str, role: int, v: Violations) -> None:
    """A part of a caller's message of `role`."""
    kind = part.WhichOneof("part")
    if kind is None:
        v.add(path, "no part set")
    elif kind == "file":
        check_file(part.file, f"{path}.file", v)
    elif kind == "signal":
        v.add(f"{path}.signal", "signal parts are written by the server; send signals with SignalService")
    elif kind in ("tool_call", "tool_result", "reasoning") and role != mpb.ROLE_ASSISTANT:
        v.add(f"{path}.{kind}", "only assistant messages carry this part")
    elif kind == "tool_call" and not (part.tool_call.tool_call_id and part.tool_call.tool_name):
        v.add(f"{path}.tool_call", "tool_call_id and tool_name are required")
    elif kind == "tool_result" and not part.tool_result.tool_call_id:
        v.add(f"{path}.tool_result.tool_call_id", "is required")
    elif kind == "data" and not part.data.type.startswith("data-"):
        v.add(f"{path}.data.type", 'must start with "data-"')
    elif kind == "text" and role == mpb.ROLE_SYSTEM and not part.text.text:
        v.add(f"{path}.text.text", "must not be empty")


def check_contents(
    text: str, parts: Sequence[mpb.ContentPart], path: str, v: Violations
) -> str | list[rm.TextPart | rm.FilePart]:
    """`text` or `parts` (not both) of a signal a caller sends; the parts that pass."""
    if text and parts:
        v.add(f"{path}.parts", "set either text or parts, not both")
    out: list[rm.TextPart | rm.FilePart] = []
    for i, part in enumerate(parts):
        item = f"{path}.parts[{i}]"
        kind = part.WhichOneof("part")
        before = len(v.items)
        if kind is None:
            v.add(item, "set text or file")
        elif kind == "file":
            check_file(part.file, f"{item}.file", v)
        if len(v.items) == before:
            out.append(content_part_from_pb(part))
    return out if parts else text
