"""Processor options as they arrive: camelCase keys, and numbers from a
protobuf Struct, where every number is a float."""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

import pytest

from agentd.grpc import values
from agentd.runtime.cache import InMemoryServerCache
from agentd.runtime.errors import InvalidArgument
from agentd.runtime.options import ProcessorSpec
from agentd.runtime.processors.builtins.response_cache import ResponseCache
from agentd.runtime.processors.builtins.stream_error_retry import RetryMatcher, StreamErrorRetryProcessor
from agentd.runtime.processors.builtins.token_cost_control import TokenCostControl
from agentd.runtime.processors.catalogue import BUILTINS, builtin_class, default_registry, with_response_cache
from agentd.runtime.processors.factory import camel, declared_options, from_options, int_options
from agentd.runtime.processors.registry import ProcessorRegistry

JUDGE = "local/scripted"
#: What a built-in needs besides the option under test.
REQUIRED: dict[str, dict[str, Any]] = {
    "language-detector": {"model": JUDGE},
    "moderation": {"model": JUDGE},
    "prompt-injection-detector": {"model": JUDGE},
    "system-prompt-scrubber": {"model": JUDGE},
    "token-limiter": {"limit": 100},
    "token-cost-control": {"maxCost": 1},
}
#: Every processor a server can build by name: the built-ins and the cache-bound ones.
CLASSES = {cls.id: cls for cls in (*map(builtin_class, BUILTINS), ResponseCache, TokenCostControl)}
#: (name, option) for every option a processor declares as an int.
INT_OPTIONS = sorted((name, option) for name, cls in CLASSES.items() for option in int_options(cls))


def registry() -> ProcessorRegistry:
    return with_response_cache(default_registry(), {"memory": InMemoryServerCache()})


def over_grpc(options: dict[str, Any]) -> dict[str, Any]:
    """The options as a servicer hands them over: through a protobuf Struct."""
    return values.from_struct(values.to_struct(options))


def test_the_int_options_are_found_from_the_declarations() -> None:
    assert set(CLASSES) == registry().names()
    assert {
        ("token-limiter", "limit"),
        ("stream-error-retry-processor", "max_retries"),
        ("tool-call-filter", "filter_after_tool_steps"),
        ("batch-parts", "batch_size"),
    } <= set(INT_OPTIONS)
    assert ("stream-error-retry-processor", "max_retry_after_ms") not in INT_OPTIONS  # a float is welcome there


@pytest.mark.parametrize(("name", "option"), INT_OPTIONS)
def test_an_integral_float_is_taken_as_an_int(name: str, option: str) -> None:
    options = over_grpc({**REQUIRED.get(name, {}), camel(option): 2})
    assert type(options[camel(option)]) is float  # what a Struct makes of 2
    processor = registry().build(ProcessorSpec(name, None, options))
    value = getattr(processor, option)
    assert value == 2 and type(value) is int
    options[camel(option)] = 2.5
    with pytest.raises(InvalidArgument, match=f"{option}|{camel(option)}"):
        registry().build(ProcessorSpec(name, None, options))


def test_a_whole_max_tokens_over_grpc_is_taken_and_a_fraction_refused() -> None:
    # maxTokens may also be a table or a function, so it is no plain int option; its parser checks.
    built = registry().build(ProcessorSpec("token-cost-control", None, over_grpc({"maxTokens": 2})))
    assert isinstance(built, TokenCostControl) and built.max_tokens is not None and built.max_tokens.fixed == 2
    with pytest.raises(InvalidArgument, match="maxTokens"):
        registry().build(ProcessorSpec("token-cost-control", None, over_grpc({"maxTokens": 2.5})))


def test_zero_and_nested_int_options_over_grpc() -> None:
    built = registry().build(ProcessorSpec("tool-call-filter", None, over_grpc({"filterAfterToolSteps": 0})))
    assert built.filter_after_tool_steps == 0 and type(built.filter_after_tool_steps) is int  # type: ignore[attr-defined]
    assert int_options(RetryMatcher) == {"max_retries"}
    options = over_grpc({"maxRetries": 3, "matchers": [{"match": "overloaded", "maxRetries": 2}]})
    retry = registry().build(ProcessorSpec("stream-error-retry-processor", None, options))
    assert isinstance(retry, StreamErrorRetryProcessor) and retry.max_retries == 3
    assert [(e.name, e.max_retries, type(e.max_retries)) for e in retry._entries] == [("matcher[0]", 2, int)]
    with pytest.raises(InvalidArgument, match="max_retries"):
        registry().build(
            ProcessorSpec("stream-error-retry-processor", None, {"matchers": [{"match": "x", "maxRetries": 1.5}]})
        )


class Plain:
    id = "plain"

    def __init__(self, *, count: int = 1, ratio: float = 0.5, label: str = "") -> None:
        self.count, self.ratio, self.label = count, ratio, label


def test_from_options_reads_camel_case_and_names_what_it_does_not_take() -> None:
    built = from_options(Plain)(over_grpc({"count": 3, "ratio": 1, "label": "x"}))
    assert (built.count, type(built.count), built.ratio, type(built.ratio)) == (3, int, 1.0, float)
    with pytest.raises(InvalidArgument, match=r"plain: unknown option 'colour' \(takes: count, ratio, label\)"):
        from_options(Plain)({"colour": "red"})
    with pytest.raises(InvalidArgument, match="option 'count' given twice"):
        from_options(Plain)({"count": 1, "Count": 2})


class Common(TypedDict, total=False):
    size: int
    name: str


class Typed:
    id = "typed"

    def __init__(self, *, flag: bool = False, **options: Unpack[Common]) -> None:
        self.flag, self.options = flag, options


def test_options_declared_by_typed_keywords_are_taken_and_no_others() -> None:
    assert declared_options(Typed).names == ("flag", "size", "name") and int_options(Typed) == {"size"}
    built = from_options(Typed)(over_grpc({"flag": True, "size": 4, "name": "x"}))
    assert built.flag is True and built.options == {"size": 4, "name": "x"} and type(built.options["size"]) is int
    with pytest.raises(InvalidArgument, match=r"unknown option 'colour' \(takes: flag, size, name\)"):
        from_options(Typed)({"colour": "red"})
