"""Signals through protobuf, and SignalInput/MessageInput validation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from google.protobuf import struct_pb2

from agentd.grpc.signals import (
    attributes_from_pb,
    message_input_from_pb,
    signal_from_pb,
    signal_input_from_pb,
    signal_to_pb,
)
from agentd.grpc.values import to_struct, to_value
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, TextPart
from agentd.runtime.signals import Signal, create_message_signal, create_signal, render_for_model
from agentd_proto.v1 import message_pb2 as mpb
from agentd_proto.v1 import signal_pb2 as spb


def wire(signal: Signal) -> Signal:
    """Through the bytes a client would see, and back."""
    return signal_from_pb(mpb.Signal.FromString(signal_to_pb(signal).SerializeToString()))


def attr(name: str, value: object) -> mpb.Attribute:
    return mpb.Attribute(name=name, value=to_value(value))


def fields(err: pytest.ExceptionInfo[InvalidArgument]) -> list[str]:
    return [v.field for v in err.value.violations]


# ---------------------------------------------------------------- Signal


def test_text_signal_to_pb() -> None:
    signal = create_signal(
        "reactive",
        "PR comment",
        attributes={"source": "github", "pr": "123"},
        created_at=datetime(2024, 1, 2, 3, 4, 5, 600000, tzinfo=UTC),
    )
    pb = signal_to_pb(signal)
    assert (pb.id, pb.type, pb.tag_name, pb.text) == (signal.id, "reactive", "system-reminder", "PR comment")
    assert not pb.parts and not pb.transient
    assert [(a.name, a.value.string_value) for a in pb.attributes] == [("source", "github"), ("pr", "123")]
    assert pb.create_time.seconds == int(signal.created_at.timestamp()) and pb.create_time.nanos == 600000000
    assert not pb.HasField("accept_time") and not pb.HasField("metadata")


def test_parts_signal_to_pb() -> None:
    options = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
    signal = create_signal(
        "notification", [TextPart("see", options), FilePart("image/png", data=b"\x89PNG", filename="a.png")]
    )
    pb = signal_to_pb(signal)
    assert pb.text == "" and [p.WhichOneof("part") for p in pb.parts] == ["text", "file"]
    assert pb.parts[0].text.provider_options == to_struct(options)
    assert (pb.parts[1].file.data, pb.parts[1].file.media_type, pb.parts[1].file.filename) == (
        b"\x89PNG",
        "image/png",
        "a.png",
    )


@pytest.mark.parametrize(
    "signal",
    [
        create_signal("user", "hi"),
        create_signal("reactive", ""),
        create_message_signal({"contents": "x", "attributes": {"name": "Devin", "from": "slack"}}),
        create_signal(
            "notification",
            [TextPart("a", {"p": {"k": True}}), FilePart("application/pdf", url="https://x/y.pdf")],
            tag_name="github-review",
            attributes=[("z", "last"), ("a", 5), ("m", None), ("obj", {"b": [1, 2.5], "a": "x"})],
            metadata={"origin": {"hook": 1}},
            provider_options={"openai": {"store": False}},
            transient=True,
            created_at=datetime(2024, 5, 1, 10, 0, 0, 123456, tzinfo=UTC),
            accepted_at=datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC),
            thread_id="t1",
            resource_id="r1",
        ),
        create_signal("state", "Browser open", attributes={"tabs": 3}, metadata={"cacheKey": "k"}),
        create_signal("reactive", [TextPart("only", {"p": {}})]),
    ],
)
def test_proto_round_trip_is_equal(signal: Signal) -> None:
    assert wire(signal) == signal


def test_attribute_order_survives_the_wire() -> None:
    names = ["zeta", "alpha", "mid", "beta", "omega", "a1"]
    signal = create_signal("reactive", "x", attributes=[(n, i) for i, n in enumerate(names)])
    back = wire(signal)
    assert [n for n, _ in back.attributes] == names
    assert render_for_model(back).parts == render_for_model(signal).parts


def test_protobuf_numbers_still_render_as_integers() -> None:
    signal = create_signal("reactive", "Max.", attributes={"reason": "max-steps-reached", "step": 5})
    back = wire(signal)
    assert back.attributes == (("reason", "max-steps-reached"), ("step", 5.0))
    assert isinstance(back.attributes[1][1], float)  # what protobuf hands back
    assert render_for_model(back).text == (
        '<system-reminder reason="max-steps-reached" step="5">Max.</system-reminder>'
    )


def test_unset_attribute_value_is_null() -> None:
    assert attributes_from_pb([mpb.Attribute(name="a"), attr("b", "1")]) == [("a", None), ("b", "1")]


# ---------------------------------------------------------------- SignalInput


def test_signal_input_builds_a_normalised_signal() -> None:
    pb = spb.SignalInput(
        id="sig-1",
        type="system-reminder",
        text="check CI",
        attributes=[attr("source", "github"), attr("pr", 123)],
        metadata=to_struct({"m": "v"}),
        provider_options=to_struct({"o": {"k": 1}}),
        transient=True,
    )
    signal = signal_input_from_pb(pb, "signal")
    assert (signal.id, signal.type, signal.tag_name, signal.contents) == (
        "sig-1",
        "reactive",
        "system-reminder",
        "check CI",
    )
    assert signal.metadata == {"m": "v"} and signal.provider_options == {"o": {"k": 1.0}}
    assert signal.transient is True
    assert render_for_model(signal).text == '<system-reminder source="github" pr="123">check CI</system-reminder>'


def test_signal_input_defaults_id_and_tag_and_takes_parts() -> None:
    pb = spb.SignalInput(
        type="notification",
        parts=[
            mpb.ContentPart(text=mpb.TextPart(text="a")),
            mpb.ContentPart(file=mpb.FilePart(url="https://x/i.png", media_type="image/png")),
        ],
    )
    signal = signal_input_from_pb(pb, "signal")
    assert signal.id and signal.tag_name == "notification"
    assert signal.contents == (TextPart("a"), FilePart("image/png", url="https://x/i.png"))


def test_signal_input_unknown_type() -> None:
    with pytest.raises(InvalidArgument) as err:
        signal_input_from_pb(spb.SignalInput(type="banana", text="x"), "signal")
    assert fields(err) == ["signal.type"]
    assert err.value.reason == "UNKNOWN_SIGNAL_TYPE"
    assert "tag_name" in err.value.violations[0].description


def test_signal_input_state_with_transient_false_is_rejected_by_presence() -> None:
    with pytest.raises(InvalidArgument) as err:
        signal_input_from_pb(spb.SignalInput(type="state", text="x", transient=False), "signal")
    assert fields(err) == ["signal.transient"]
    assert signal_input_from_pb(spb.SignalInput(type="state", text="x"), "signal").transient is None


def test_signal_input_reports_every_violation_with_its_path() -> None:
    pb = spb.SignalInput(
        type="banana",
        tag_name="a:b",
        text="both",
        parts=[
            mpb.ContentPart(text=mpb.TextPart(text="ok")),
            mpb.ContentPart(file=mpb.FilePart()),
            mpb.ContentPart(),
        ],
        attributes=[attr("ok", 1), attr("bad name", 2), attr("ok", 3)],
    )
    with pytest.raises(InvalidArgument) as err:
        signal_input_from_pb(pb, "signal")
    assert fields(err) == [
        "signal.parts",
        "signal.parts[1].file.media_type",
        "signal.parts[1].file.data",
        "signal.parts[2]",
        "signal.type",
        "signal.tag_name",
        "signal.attributes[1].name",
        "signal.attributes[2].name",
    ]
    assert err.value.reason == "UNKNOWN_SIGNAL_TYPE"


def test_signal_input_bad_file_url() -> None:
    pb = spb.SignalInput(type="user", parts=[mpb.ContentPart(file=mpb.FilePart(url="ftp://x", media_type="image/png"))])
    with pytest.raises(InvalidArgument) as err:
        signal_input_from_pb(pb, "req.signal")
    assert fields(err) == ["req.signal.parts[0].file.url"]
    assert err.value.reason == "INVALID_REQUEST"


def test_signal_input_accepts_any_json_attribute_value() -> None:
    nested = struct_pb2.Value()
    nested.struct_value.update({"k": [1, "two"]})
    signal = signal_input_from_pb(
        spb.SignalInput(type="reactive", text="x", attributes=[mpb.Attribute(name="data", value=nested)]),
        "signal",
    )
    assert render_for_model(signal).text == (
        '<system-reminder data="{&quot;k&quot;:[1,&quot;two&quot;]}">x</system-reminder>'
    )


# ---------------------------------------------------------------- MessageInput


def test_message_input_is_a_user_signal() -> None:
    pb = spb.MessageInput(
        id="m-1",
        text="Can we simplify the API surface?",
        attributes=[attr("name", "Devin"), attr("from", "slack")],
        metadata=to_struct({"avatar": "d.png"}),
    )
    signal = message_input_from_pb(pb, "message")
    assert (signal.id, signal.type, signal.tag_name) == ("m-1", "user", "user")
    assert signal.metadata == {"avatar": "d.png"}
    assert render_for_model(signal).text == ('<user name="Devin" from="slack">Can we simplify the API surface?</user>')


def test_message_input_without_attributes_is_plain() -> None:
    signal = message_input_from_pb(spb.MessageInput(text="hi"), "message")
    assert render_for_model(signal).parts == [TextPart("hi")]


def test_message_input_violations_have_paths() -> None:
    pb = spb.MessageInput(
        text="x",
        parts=[mpb.ContentPart(file=mpb.FilePart(data=b"x"))],
        attributes=[attr("1st", "x")],
    )
    with pytest.raises(InvalidArgument) as err:
        message_input_from_pb(pb, "message")
    assert fields(err) == ["message.parts", "message.parts[0].file.media_type", "message.attributes[0].name"]
