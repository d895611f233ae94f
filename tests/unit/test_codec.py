"""The codec: every runtime type round-trips (bytes included), and nothing else decodes."""

from __future__ import annotations

import json
import pickle
import typing
from dataclasses import dataclass, fields
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from agentd.runtime import chunks, codec
from agentd.runtime.cache import CacheError
from agentd.runtime.chunks import Chunk, Payload, Tripwire, Usage
from agentd.runtime.codec import decode, encode
from agentd.runtime.messages import FilePart, Message, Part
from agentd.runtime.models.base import ModelFinish
from support.samples import BLOB, NOW, every_part, every_payload, sample_message, sample_response, sample_signal


def round_trip(value: Any) -> Any:
    data = encode(value)
    assert isinstance(data, bytes)
    back = decode(data)
    assert back == value
    assert type(back) is type(value)
    return back


def payload_id(payload: Payload) -> str:
    return type(payload).__name__


# ---------------------------------------------------------------- runtime types


def test_every_payload_type_has_a_sample() -> None:
    # A new chunk type must be added to every_payload (and so be round-tripped below).
    assert {type(p) for p in every_payload()} == set(typing.get_args(Payload))
    assert {type(p) for p in every_part()} == set(typing.get_args(Part))


@pytest.mark.parametrize("payload", every_payload(), ids=payload_id)
def test_every_payload_round_trips(payload: Payload) -> None:
    round_trip(payload)
    chunk = Chunk(payload, "run-1", 7, parent_run_id="run-0", offset=3, source="workflow", metadata={"m": 1})
    back = round_trip(chunk)
    assert back.type == payload.type


@pytest.mark.parametrize("part", every_part(), ids=lambda p: type(p).__name__)
def test_every_part_round_trips(part: Part) -> None:
    round_trip(part)


def test_message_with_every_part_type_round_trips_with_its_bytes() -> None:
    back = round_trip(sample_message())
    file = back.parts[1]
    assert isinstance(file, FilePart)
    assert type(file.data) is bytes
    assert file.data == BLOB
    assert back.created_at == NOW and back.created_at.tzinfo is not None


def test_signal_round_trips_with_tuples() -> None:
    back = round_trip(sample_signal())
    assert back.attributes == (("from", "ci"), ("attempt", 2))
    assert type(back.contents) is tuple
    assert back.contents[1].data == BLOB


def test_cached_response_model_finish_usage_and_tripwire_round_trip() -> None:
    back = round_trip(sample_response())
    assert [type(c) for c in back.chunks] == [type(c) for c in sample_response().chunks]
    round_trip(ModelFinish("length", Usage(input_tokens=1)))
    round_trip(Usage())
    round_trip(Tripwire("r"))


# ---------------------------------------------------------------- plain values


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -1,
        2**70,
        1.5,
        1.0,
        float("inf"),
        "",
        "héllo \u2603 \U0001f600",
        "\ud800 lone surrogate",
        [],
        {},
        [1, "a", None, [2, [3]]],
        {"a": {"b": [1, {"c": None}]}},
        b"",
        BLOB,
        (),
        (1, (2, b"\x00"), [3]),
        [(1, 2), {"t": (3,)}],
        {"$t": "TextDelta", "v": 1},
        {1: "int key", (2, 3): "tuple key", None: "none key"},
        NOW,
        datetime(2025, 1, 2, 3, 4, 5),
        datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2))),
    ],
    ids=repr,
)
def test_plain_values_round_trip(value: Any) -> None:
    back = round_trip(value)
    if isinstance(value, datetime):
        assert back.utcoffset() == value.utcoffset()


def test_nested_types_are_kept() -> None:
    back = decode(encode({"a": [(1, b"x")], "b": {"$t": [NOW]}}))
    assert type(back["a"][0]) is tuple
    assert type(back["a"][0][1]) is bytes
    assert back["b"] == {"$t": [NOW]}


# ---------------------------------------------------------------- compactness


def test_encoding_is_compact_json_without_default_fields() -> None:
    assert encode(chunks.TextDelta("t1", "hi")) == b'{"$t":"TextDelta","id":"t1","text":"hi"}'
    assert encode(Usage(input_tokens=3)) == b'{"$t":"Usage","input_tokens":3}'
    assert encode({"a": [1, "é"]}) == '{"a":[1,"é"]}'.encode()
    json.loads(encode(sample_response()))  # plain JSON underneath


def test_bytes_are_base64() -> None:
    data = bytes(range(256)) * 12
    encoded = encode(FilePart("application/octet-stream", data=data))
    assert len(encoded) < len(data) * 4 / 3 + 100


def test_a_default_factory_field_that_is_not_empty_is_kept() -> None:
    message = Message(role="user", parts=[])
    obj = json.loads(encode(message))
    assert obj["id"] == message.id  # a generated default is always written
    assert "parts" not in obj and "metadata" not in obj


# ---------------------------------------------------------------- what does not decode


@pytest.mark.parametrize(
    "data",
    [
        b'{"$t":"Path","v":"/etc/passwd"}',
        b'{"$t":"os.system","v":"true"}',
        b'{"$t":"ModelRequest","prompt":[]}',
        b'{"$t":"set","v":[1]}',
        b'[1,{"$t":"Unknown"}]',
    ],
)
def test_unknown_tags_raise_cache_error(data: bytes) -> None:
    with pytest.raises(CacheError, match="unknown type"):
        decode(data)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not json",
        b"\x80\x81",
        b'{"$t":"bytes","v":"not base64!"}',
        b'{"$t":"bytes","v":1}',
        b'{"$t":"bytes"}',
        b'{"$t":"tuple","v":"ab"}',
        b'{"$t":"datetime","v":"yesterday"}',
        b'{"$t":"dict","v":[[[1],2]]}',
        b'{"$t":"dict","v":[[1]]}',
        b'{"$t":1}',
        b'{"$t":"TextDelta","id":"x"}',
        b'{"$t":"TextDelta","id":"x","text":"y","__class__":"z"}',
    ],
)
def test_malformed_data_raises_cache_error(data: bytes) -> None:
    with pytest.raises(CacheError):
        decode(data)


def test_a_field_this_version_does_not_know_is_dropped_only_when_asked() -> None:
    # What a newer replica could send: a chunk whose payload carries a field added after this version.
    chunk = Chunk(chunks.TextDelta("t1", "hi"), "run-1", 3)
    newer = json.loads(encode(chunk))
    newer["payload"]["added_later"] = True
    newer["added_later_too"] = {"$t": "tuple", "v": [1]}
    data = json.dumps(newer).encode()
    with pytest.raises(CacheError, match="unknown fields: added_later"):
        decode(data)  # a cache entry or a stored row: refused, so it is read as absent, never half-read
    assert decode(data, ignore_unknown_fields=True) == chunk
    # Only fields are dropped: a type this version does not know is still refused.
    with pytest.raises(CacheError, match="unknown type"):
        decode(b'{"$t":"Unknown","x":1}', ignore_unknown_fields=True)
    with pytest.raises(CacheError, match="malformed"):
        decode(b'{"$t":"TextDelta","id":"x"}', ignore_unknown_fields=True)  # a field it needs is missing


def test_no_pickle() -> None:
    class Sneaky:
        def __reduce__(self) -> tuple[Any, ...]:
            return (print, ("pickle ran",))

    with pytest.raises(CacheError):
        decode(pickle.dumps(Sneaky()))
    with pytest.raises(CacheError):
        decode(pickle.dumps({"a": 1}))
    source = Path(codec.__file__).read_text()
    for unsafe in ("import pickle", "import marshal", "eval(", "exec(", "__import__", "importlib"):
        assert unsafe not in source


def test_values_outside_the_allow_list_do_not_encode() -> None:
    @dataclass
    class NotAllowed:
        x: int = 1

    for value in (NotAllowed(), {1, 2}, object(), Path("/tmp"), bytearray(b"x"), [1, NotAllowed()]):
        with pytest.raises(CacheError, match="cannot cache"):
            encode(value)


def test_self_containing_values_raise_cache_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(CacheError):
        encode(loop)


def test_register_adds_a_type_to_the_allow_list() -> None:
    @dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0
        label: tuple[str, ...] = ()

    with pytest.raises(CacheError):
        decode(b'{"$t":"test-codec-Point","x":1}')
    codec.register(Point, "test-codec-Point")
    codec.register(Point, "test-codec-Point")  # idempotent
    assert encode(Point(1, label=("a",))) == b'{"$t":"test-codec-Point","x":1,"label":{"$t":"tuple","v":["a"]}}'
    assert decode(b'{"$t":"test-codec-Point","x":1}') == Point(1)
    with pytest.raises(ValueError, match="already used"):
        codec.register(Point, "TextDelta")
    with pytest.raises(ValueError, match="reserved"):
        codec.register(Point, "bytes")


def test_every_runtime_dataclass_field_is_encoded() -> None:
    # Guards the generic encoding: every init field of a fully populated payload survives.
    finish = every_payload()[14]
    assert isinstance(finish, chunks.Finish)
    obj = json.loads(encode(finish))
    set_fields = {f.name for f in fields(finish) if getattr(finish, f.name) not in (None, "", [], "finish")}
    assert set_fields <= obj.keys()
