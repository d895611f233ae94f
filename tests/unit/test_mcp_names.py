"""The names MCP tools are offered to models under (runtime/mcp_tools/names.py)."""

from __future__ import annotations

import re

from agentd.runtime.mcp_tools.names import MAX_NAME, offered_names

#: What OpenAI, Anthropic and Google all take.
EVERY_PROVIDER = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$")


def test_a_name_every_provider_takes_is_kept() -> None:
    assert offered_names(["add", "get-weather", "_private", "A1"]) == {
        "add": "add",
        "get-weather": "get-weather",
        "_private": "_private",
        "A1": "A1",
    }


def test_other_names_are_rewritten_into_that_shape() -> None:
    names = offered_names(["files.read", "search/web", "über", "1st", "a b"])
    assert names == {
        "files.read": "files_read",
        "search/web": "search_web",
        "über": "_ber",
        "1st": "_1st",
        "a b": "a_b",
    }


def test_collisions_and_long_names_get_a_stable_suffix_whatever_the_order() -> None:
    listed = ["a.b", "a_b", "a/b", "x" * 80, "y." * 40]
    names = offered_names(listed)
    assert names["a_b"] == "a_b"  # already fine: kept
    assert names["a.b"] != names["a/b"] and {names["a.b"], names["a/b"]}.isdisjoint({"a_b"})
    assert len(set(names.values())) == len(listed)
    assert all(EVERY_PROVIDER.match(name) and len(name) <= MAX_NAME for name in names.values())
    assert offered_names(reversed(listed)) == names
