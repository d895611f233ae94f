"""Signals: creation, XML rendering for the model, and the stored form."""

from __future__ import annotations

import base64
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from agentd.runtime.errors import InvalidArgument
from agentd.runtime.messages import FilePart, Message, SignalPart, TextPart
from agentd.runtime.signals import (
    DEFAULT_TAGS,
    SIGNAL_TYPES,
    Signal,
    attribute_text,
    create_message_signal,
    create_signal,
    escape_attribute,
    escape_text,
    from_db_message,
    is_transient_signal_message,
    normalize_attributes,
    render_for_model,
    to_db_message,
    with_delivery_attributes,
)

PNG = FilePart("image/png", data=b"\x89PNG")


def model_text(signal: Signal) -> str:
    """The one text the model sees for a text-only signal."""
    message = render_for_model(signal)
    assert message.role == "user"
    assert len(message.parts) == 1 and isinstance(message.parts[0], TextPart)
    return message.parts[0].text


def fields(err: pytest.ExceptionInfo[InvalidArgument]) -> list[str]:
    return [v.field for v in err.value.violations]


# ---------------------------------------------------------------- types and tags


@pytest.mark.parametrize(
    ("given", "category", "tag"),
    [
        ("user-message", "user", "user"),
        ("system-reminder", "reactive", "system-reminder"),
        ("user", "user", "user"),
        ("state", "state", "state"),
        ("notification", "notification", "notification"),
        ("reactive", "reactive", "system-reminder"),
    ],
)
def test_types_normalise_to_category_and_default_tag(given: str, category: str, tag: str) -> None:
    signal = create_signal(given, "x")
    assert (signal.type, signal.tag_name) == (category, tag)
    assert DEFAULT_TAGS[signal.type] == tag


def test_reactive_without_tag_renders_as_system_reminder() -> None:
    assert model_text(create_signal("reactive", "check CI")) == "<system-reminder>check CI</system-reminder>"


def test_caller_tag_wins_over_default() -> None:
    signal = create_signal("notification", "2 new reviews", tag_name="github-review")
    assert signal.type == "notification" and signal.tag_name == "github-review"
    assert model_text(signal) == "<github-review>2 new reviews</github-review>"


def test_unknown_type_is_rejected_with_advice() -> None:
    with pytest.raises(InvalidArgument) as err:
        create_signal("banana", "x")
    assert err.value.reason == "UNKNOWN_SIGNAL_TYPE"
    assert fields(err) == ["type"]
    description = err.value.violations[0].description
    assert "banana" in description and "tag_name" in description
    assert all(t in description for t in SIGNAL_TYPES)


def test_state_signal_cannot_be_transient_even_false() -> None:
    for flag in (False, True):
        with pytest.raises(InvalidArgument) as err:
            create_signal("state", "x", transient=flag)
        assert fields(err) == ["transient"]
        assert "state signals cannot be transient" in err.value.violations[0].description
    assert create_signal("state", "x").transient is None


def test_reactive_transient_false_is_fine_and_means_not_transient() -> None:
    assert create_signal("reactive", "x", transient=False).transient is None
    assert create_signal("reactive", "x", transient=True).transient is True


def test_defaults_fill_id_and_created_at_in_utc() -> None:
    before = datetime.now(UTC)
    a, b = create_signal("user", "x"), create_signal("user", "x")
    assert a.id != b.id and len(a.id) == 36
    assert a.created_at.tzinfo is not None and before <= a.created_at <= datetime.now(UTC)
    assert a.accepted_at is None


def test_times_accept_iso_strings_and_naive_means_utc() -> None:
    signal = create_signal("user", "x", created_at="2024-05-01T10:00:00Z", accepted_at=datetime(2024, 5, 1, 10, 0, 5))
    assert signal.created_at == datetime(2024, 5, 1, 10, tzinfo=UTC)
    assert signal.accepted_at == datetime(2024, 5, 1, 10, 0, 5, tzinfo=UTC)
    with pytest.raises(InvalidArgument) as err:
        create_signal("user", "x", created_at="yesterday")
    assert fields(err) == ["created_at"]


def test_all_problems_are_reported_together() -> None:
    with pytest.raises(InvalidArgument) as err:
        create_signal("banana", "x", tag_name="1abc", attributes={"ok": 1, "a b": 2})
    assert fields(err) == ["type", "tag_name", "attributes[1].name"]
    assert err.value.reason == "UNKNOWN_SIGNAL_TYPE"


def test_text_property_joins_text_parts_with_newlines() -> None:
    assert create_signal("user", [TextPart("a"), PNG, TextPart("b")]).text == "a\nb"
    assert create_signal("user", "plain").text == "plain"


def test_signal_does_not_follow_later_edits_of_the_callers_parts() -> None:
    part = TextPart("before", {"p": {"k": 1}})
    signal = create_signal("reactive", [part])
    part.text = "after"
    assert signal.contents == (TextPart("before", {"p": {"k": 1}}),)


# ---------------------------------------------------------------- contents collapse


def test_single_plain_text_part_collapses_to_a_string() -> None:
    assert create_signal("user", [TextPart("x")]).contents == "x"
    assert create_signal("user", []).contents == ""


def test_single_text_part_with_provider_options_is_not_collapsed() -> None:
    part = TextPart("x", {"anthropic": {"cacheControl": {"type": "ephemeral"}}})
    signal = create_signal("reactive", [part])
    assert signal.contents == (part,)
    back = from_db_message(to_db_message(signal))
    assert back.contents == (part,)


# ---------------------------------------------------------------- message signals


def test_message_signal_from_string_parts_and_object() -> None:
    assert create_message_signal("hi").contents == "hi"
    assert create_message_signal([TextPart("a"), PNG]).contents == (TextPart("a"), PNG)
    signal = create_message_signal(
        {
            "contents": "x",
            "attributes": {"name": "Jane"},
            "metadata": {"m": 1},
            "provider_options": {"o": {}},
        },
        id="s1",
        created_at="2024-01-01T00:00:00Z",
    )
    assert (signal.id, signal.type, signal.tag_name) == ("s1", "user", "user")
    assert signal.attributes == (("name", "Jane"),)
    assert signal.metadata == {"m": 1} and signal.provider_options == {"o": {}}
    assert signal.created_at == datetime(2024, 1, 1, tzinfo=UTC)


def test_message_signal_ignores_a_custom_tag_and_type() -> None:
    signal = create_message_signal({"contents": "x", "tag_name": "custom", "type": "reactive"})
    assert (signal.type, signal.tag_name) == ("user", "user")


def test_plain_message_reaches_the_model_unwrapped() -> None:
    assert model_text(create_message_signal("hi")) == "hi"


def test_message_with_attributes_renders_a_user_element() -> None:
    signal = create_message_signal(
        {"contents": "Use the latest note", "attributes": {"name": "Jane", "sentFrom": "slack"}}
    )
    assert model_text(signal) == '<user name="Jane" sentFrom="slack">Use the latest note</user>'


def test_seed_example_user_with_name_and_from() -> None:
    signal = create_message_signal(
        {"contents": "Can we simplify the API surface?", "attributes": {"name": "Devin", "from": "slack"}}
    )
    assert model_text(signal) == '<user name="Devin" from="slack">Can we simplify the API surface?</user>'


# ---------------------------------------------------------------- delivery attributes


def test_seed_example_delivery_attributes_while_active_and_idle() -> None:
    signal = create_message_signal({"contents": "Also cover the edge cases.", "attributes": {"source": "chat"}})
    active = with_delivery_attributes(signal, {"delivery": "while-active"})
    idle = with_delivery_attributes(signal, {"delivery": "new-message"})
    assert model_text(active) == '<user source="chat" delivery="while-active">Also cover the edge cases.</user>'
    assert model_text(idle) == '<user source="chat" delivery="new-message">Also cover the edge cases.</user>'
    assert signal.attributes == (("source", "chat"),)  # the original is untouched


def test_delivery_attributes_make_a_plain_message_wrapped() -> None:
    signal = with_delivery_attributes(create_message_signal("hi"), [("delivery", "while-active")])
    assert model_text(signal) == '<user delivery="while-active">hi</user>'


def test_delivery_merge_new_keys_win_in_place_and_new_ones_append() -> None:
    signal = create_signal("reactive", "x", attributes={"a": 1, "b": 2})
    merged = with_delivery_attributes(signal, {"c": 3, "a": "new"})
    assert merged.attributes == (("a", "new"), ("b", 2), ("c", 3))


def test_empty_delivery_attributes_return_the_same_signal() -> None:
    signal = create_signal("reactive", "x", attributes={"a": 1})
    assert with_delivery_attributes(signal, {}) is signal
    assert with_delivery_attributes(signal, None) is signal
    assert with_delivery_attributes(signal, []) is signal


def test_delivery_attributes_are_scalar_only_and_named_validly() -> None:
    signal = create_signal("reactive", "x")
    with pytest.raises(InvalidArgument) as err:
        with_delivery_attributes(signal, {"ok": {"nested": 1}, "bad name": "x"})
    assert fields(err) == ["attributes[0].value", "attributes[1].name"]


def test_normalize_attributes_names_fields_under_the_given_path() -> None:
    assert normalize_attributes({"a": 1, "b": None}) == (("a", 1), ("b", None))
    with pytest.raises(InvalidArgument) as err:
        normalize_attributes([("a", 1), ("a", 2)], path="if_active.attributes", scalar_only=True)
    assert fields(err) == ["if_active.attributes[1].name"]
    assert "duplicate" in err.value.violations[0].description


# ---------------------------------------------------------------- escaping and values


def test_ampersand_is_escaped_once_and_entities_are_escaped_again() -> None:
    assert escape_text("a & b") == "a &amp; b"
    assert escape_text("&amp;") == "&amp;amp;"
    assert escape_text("<b>") == "&lt;b&gt;"
    assert model_text(create_signal("reactive", "Tom & Jerry")) == (
        "<system-reminder>Tom &amp; Jerry</system-reminder>"
    )


def test_quotes_stay_literal_in_text_but_not_in_attributes() -> None:
    signal = create_signal("reactive", "say \"hi\" & 'bye'", attributes={"q": 'it\'s "x"'})
    assert model_text(signal) == ('<system-reminder q="it\'s &quot;x&quot;">say "hi" &amp; \'bye\'</system-reminder>')
    assert escape_attribute('a"b') == "a&quot;b"


def test_seed_example_attribute_escaping() -> None:
    signal = create_signal("reactive", "x", attributes={"from": 'a"b<c'})
    assert model_text(signal) == '<system-reminder from="a&quot;b&lt;c">x</system-reminder>'


def test_numeric_and_boolean_attributes() -> None:
    signal = create_signal("reactive", "x", attributes={"count": 3, "flag": False, "on": True, "ratio": 0.5})
    assert model_text(signal) == ('<system-reminder count="3" flag="false" on="true" ratio="0.5">x</system-reminder>')


def test_integral_floats_render_without_a_fraction() -> None:
    assert attribute_text(3.0) == "3"
    assert attribute_text(-0.0) == "0"
    assert attribute_text(2.5) == "2.5"
    assert attribute_text({"n": 1.0, "l": [2.0, 2.5]}) == '{"n":1,"l":[2,2.5]}'


def test_object_and_array_attributes_render_as_compact_json_in_insertion_order() -> None:
    signal = create_signal(
        "notification", "x", attributes={"data": {"z": "é<", "a": [1, True, None]}, "tags": ["a", "b"]}
    )
    assert model_text(signal) == (
        '<notification data="{&quot;z&quot;:&quot;é&lt;&quot;,&quot;a&quot;:[1,true,null]}" '
        'tags="[&quot;a&quot;,&quot;b&quot;]">x</notification>'
    )


def test_non_json_attribute_values_are_rejected() -> None:
    with pytest.raises(InvalidArgument) as err:
        create_signal("reactive", "x", attributes={"a": object(), "b": float("nan")})
    assert fields(err) == ["attributes[0].value", "attributes[1].value"]


def test_state_attributes_are_scalar_only() -> None:
    with pytest.raises(InvalidArgument) as err:
        create_signal("state", "x", attributes={"tabs": [1, 2]})
    assert fields(err) == ["attributes[0].value"]
    assert create_signal("reactive", "x", attributes={"tabs": [1, 2]}).attributes == (("tabs", [1, 2]),)


def test_null_attribute_is_dropped() -> None:
    signal = create_signal("reactive", "x", attributes={"a": None, "b": "1"})
    assert model_text(signal) == '<system-reminder b="1">x</system-reminder>'


def test_all_null_attributes_on_a_user_message_leave_it_plain() -> None:
    signal = create_message_signal({"contents": "hi", "attributes": {"a": None, "b": None}})
    assert model_text(signal) == "hi"


def test_all_null_attributes_on_other_categories_still_wrap() -> None:
    assert model_text(create_signal("reactive", "x", attributes={"a": None})) == (
        "<system-reminder>x</system-reminder>"
    )


# ---------------------------------------------------------------- names


@pytest.mark.parametrize("name", ["1abc", "a b", "a:b", "", "-a", "a/b", "é"])
def test_bad_tag_and_attribute_names_are_rejected(name: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        create_signal("reactive", "x", tag_name=name)
    assert fields(err) == ["tag_name"]
    assert "invalid signal XML tag name" in err.value.violations[0].description
    with pytest.raises(InvalidArgument) as err:
        create_signal("reactive", "x", attributes={"ok": 1, name: 2})
    assert fields(err) == ["attributes[1].name"]
    assert "invalid signal XML attribute name" in err.value.violations[0].description


@pytest.mark.parametrize("name", ["x.y-z_1", "_a", "A", "github-review"])
def test_good_tag_and_attribute_names_are_accepted(name: str) -> None:
    signal = create_signal("reactive", "x", tag_name=name, attributes={name: "v"})
    assert model_text(signal) == f'<{name} {name}="v">x</{name}>'


# ---------------------------------------------------------------- prompt shapes


def test_empty_contents_render_self_closing() -> None:
    assert model_text(create_signal("reactive", "")) == "<system-reminder />"
    assert model_text(create_signal("state", "", attributes={"id": "browser"})) == '<state id="browser" />'


def test_two_text_parts_join_with_a_newline_in_one_element() -> None:
    signal = create_signal("reactive", [TextPart("one"), TextPart("two")])
    assert model_text(signal) == "<system-reminder>one\ntwo</system-reminder>"


def test_image_only_signal_gets_a_self_closing_marker_in_front() -> None:
    signal = create_signal("notification", [PNG], attributes={"source": "camera"})
    parts = render_for_model(signal).parts
    assert parts == [TextPart('<notification source="camera" />'), PNG]


def test_text_and_image_wrap_only_the_first_text_part() -> None:
    signal = create_signal("reactive", [PNG, TextPart("look <here>"), TextPart("and here")])
    parts = render_for_model(signal).parts
    assert parts == [
        PNG,
        TextPart("<system-reminder>look &lt;here&gt;</system-reminder>"),
        TextPart("and here"),
    ]


def test_per_part_provider_options_force_the_parts_form() -> None:
    cache = {"anthropic": {"cacheControl": {"type": "ephemeral"}}}
    signal = create_signal("reactive", [TextPart("a", cache), TextPart("b")])
    parts = render_for_model(signal).parts
    assert parts == [TextPart("<system-reminder>a</system-reminder>", cache), TextPart("b")]


def test_user_message_with_parts_and_no_attributes_passes_parts_through() -> None:
    signal = create_message_signal([TextPart("a"), PNG])
    assert render_for_model(signal).parts == [TextPart("a"), PNG]


def test_signal_provider_options_go_on_the_message() -> None:
    signal = create_signal("reactive", "x", provider_options={"openai": {"store": False}})
    message = render_for_model(signal)
    assert message.provider_options == {"openai": {"store": False}}
    assert message.id == signal.id


def test_rendered_parts_are_copies() -> None:
    signal = create_message_signal([TextPart("a"), PNG])
    rendered = render_for_model(signal).parts[0]
    assert isinstance(rendered, TextPart)
    rendered.text = "edited by a processor"
    assert signal.contents[0] == TextPart("a")


def test_seed_example_max_steps_reminder_with_int_and_protobuf_float() -> None:
    for step in (5, 5.0):
        signal = create_signal(
            "reactive", "Maximum steps reached.", attributes={"reason": "max-steps-reached", "step": step}
        )
        assert model_text(signal) == (
            '<system-reminder reason="max-steps-reached" step="5">Maximum steps reached.</system-reminder>'
        )


def test_seed_example_github_reminder() -> None:
    signal = create_signal("reactive", "PR comment", attributes={"source": "github", "pr": "123"})
    assert model_text(signal) == '<system-reminder source="github" pr="123">PR comment</system-reminder>'


# ---------------------------------------------------------------- stored form


def full_signal(**changes: object) -> Signal:
    signal = create_signal(
        "reactive",
        [
            TextPart("see", {"p": {"x": 1}}),
            FilePart("application/pdf", url="https://x/y.pdf", filename="y.pdf"),
        ],
        tag_name="ci",
        attributes=[("z", 1), ("a", {"k": [1, 2]}), ("m", None)],
        metadata={"origin": "webhook"},
        provider_options={"anthropic": {"cacheControl": {"type": "ephemeral"}}},
        transient=True,
        created_at=datetime(2024, 3, 1, 12, 0, 0, 123456, tzinfo=UTC),
        accepted_at=datetime(2024, 3, 1, 12, 0, 1, tzinfo=UTC),
    )
    return replace(signal, **changes)  # type: ignore[arg-type]


def test_db_message_shape() -> None:
    signal = full_signal()
    row = to_db_message(signal, thread_id="t1", resource_id="r1")
    assert (row.role, row.id, row.thread_id, row.resource_id) == ("signal", signal.id, "t1", "r1")
    assert row.created_at == signal.created_at
    assert row.provider_options == signal.provider_options
    assert row.parts == [SignalPart(replace(signal, thread_id="t1", resource_id="r1"))]
    assert row.metadata == {
        "signal": {
            "id": signal.id,
            "type": "reactive",
            "tagName": "ci",
            "createdAt": "2024-03-01T12:00:00.123456Z",
            "acceptedAt": "2024-03-01T12:00:01Z",
            "attributes": {"z": 1, "a": {"k": [1, 2]}, "m": None},
            "metadata": {"origin": "webhook"},
            "transient": True,
        }
    }
    assert list(row.metadata["signal"]["attributes"]) == ["z", "a", "m"]


def test_db_message_leaves_out_what_is_absent() -> None:
    signal = create_signal("user", "hi")
    assert set(to_db_message(signal).metadata["signal"]) == {"id", "type", "tagName", "createdAt"}


@pytest.mark.parametrize(
    "signal",
    [
        full_signal(),
        full_signal(thread_id="t1", resource_id="r1"),
        create_signal("user", "plain"),
        create_signal("state", "", attributes={"id": "browser"}, metadata={"v": 1}),
        create_message_signal({"contents": [TextPart("a"), PNG], "attributes": {"name": "Devin"}}),
    ],
)
def test_db_round_trip_is_equal(signal: Signal) -> None:
    assert from_db_message(to_db_message(signal, signal.thread_id, signal.resource_id)) == signal


def test_db_round_trip_takes_the_rows_thread() -> None:
    signal = create_signal("user", "x")
    back = from_db_message(to_db_message(signal, thread_id="t1", resource_id="r1"))
    assert back == replace(signal, thread_id="t1", resource_id="r1")


def test_metadata_only_row_round_trips_through_its_text_parts() -> None:
    """A row whose store kept metadata and plain parts, not the embedded signal."""
    part = TextPart("see", {"p": {"x": 1}})
    signal = full_signal(contents=(part,), transient=None)
    row = to_db_message(signal)
    row.parts = [part]
    assert from_db_message(row) == signal


def test_from_db_message_rejects_other_roles() -> None:
    with pytest.raises(ValueError):
        from_db_message(Message.user("hi"))


def legacy_row(signal_meta: dict[str, object], parts: list[object] | None = None) -> Message:
    return Message(
        role="signal",
        id="row-1",
        parts=parts if parts is not None else [TextPart("from parts")],  # type: ignore[arg-type]
        metadata={"signal": signal_meta},
        created_at=datetime(2023, 1, 1, tzinfo=UTC),
        thread_id="t",
        resource_id="r",
    )


def test_legacy_row_contents_as_a_string() -> None:
    signal = from_db_message(legacy_row({"type": "system-reminder", "contents": "stashed"}))
    assert (signal.type, signal.tag_name, signal.contents) == ("reactive", "system-reminder", "stashed")
    assert (signal.id, signal.created_at, signal.thread_id) == (
        "row-1",
        datetime(2023, 1, 1, tzinfo=UTC),
        "t",
    )


def test_legacy_row_parts_with_mime_type() -> None:
    stash = [
        {"type": "text", "text": "a"},
        {"type": "file", "data": "https://x/f.pdf", "mimeType": "application/pdf"},
        {
            "type": "file",
            "data": base64.b64encode(b"bytes").decode(),
            "mediaType": "text/plain",
            "filename": "f",
        },
    ]
    signal = from_db_message(legacy_row({"type": "user-message", "contents": stash}))
    assert signal.contents == (
        TextPart("a"),
        FilePart("application/pdf", url="https://x/f.pdf"),
        FilePart("text/plain", data=b"bytes", filename="f"),
    )


def test_legacy_row_user_wrapper_and_list_of_wrappers() -> None:
    wrapper = {"role": "user", "content": [{"type": "text", "text": "a"}, "b"]}
    assert from_db_message(legacy_row({"contents": wrapper})).contents == (TextPart("a"), TextPart("b"))
    both = [wrapper, {"role": "user", "content": "c"}]
    assert from_db_message(legacy_row({"contents": both})).contents == (
        TextPart("a"),
        TextPart("b"),
        TextPart("c"),
    )


def test_legacy_image_part_without_media_type_defaults_to_png() -> None:
    stash = [{"type": "image", "image": "https://x/cat"}]
    assert from_db_message(legacy_row({"contents": stash})).contents == (FilePart("image/png", url="https://x/cat"),)


@pytest.mark.parametrize(
    "stash", [42, {"type": "video"}, [{"type": "file", "data": "x"}], [{"type": "file", "data": "!!"}]]
)
def test_undecodable_stash_falls_back_to_the_row_parts(stash: object) -> None:
    assert from_db_message(legacy_row({"contents": stash})).contents == "from parts"


def test_legacy_row_without_type_is_a_user_message() -> None:
    signal = from_db_message(legacy_row({}))
    assert (signal.type, signal.tag_name, signal.contents) == ("user", "user", "from parts")


def test_legacy_row_transient_counts_only_when_exactly_true() -> None:
    assert from_db_message(legacy_row({"type": "reactive", "transient": True})).transient is True
    assert from_db_message(legacy_row({"type": "reactive", "transient": "yes"})).transient is None


def test_state_row_with_a_transient_key_is_rejected() -> None:
    with pytest.raises(InvalidArgument) as err:
        from_db_message(legacy_row({"type": "state", "transient": False}))
    assert fields(err) == ["transient"]


def test_is_transient_signal_message() -> None:
    assert is_transient_signal_message(to_db_message(create_signal("reactive", "x", transient=True)))
    assert not is_transient_signal_message(to_db_message(create_signal("reactive", "x")))
    assert not is_transient_signal_message(legacy_row({"transient": "true"}))
    fake = Message(role="user", parts=[TextPart("x")], metadata={"signal": {"transient": True}})
    assert not is_transient_signal_message(fake)


def test_created_at_keeps_microseconds_through_the_row() -> None:
    when = datetime(2024, 1, 1, tzinfo=UTC) + timedelta(microseconds=7)
    row = to_db_message(create_signal("user", "x", created_at=when))
    row.parts = []  # decode from metadata alone
    assert from_db_message(row).created_at == when
