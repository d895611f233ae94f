"""ToolSearchProcessor ("tool-search"): tool discovery over a large tool library.

Instead of sending every tool to the model, an input-lane processor whose
`process_input_step` gives the agent two meta tools:

* `search_tools({"query"})` returns up to `max_results` library tools as
  `[{"name", "description"}]`, best first (see `rank_tools`);
* `load_tool({"name"})` loads a library tool: from the next step on it is sent
  to the model and can be called. An unknown name is an error result that
  lists the closest names.

Each step's tools are restricted to `search_tools`, `load_tool`, the loaded
library tools and the agent's own tools that are not in the library. Loaded
tools stay loaded for the rest of the run (the processor's per-request state);
a new run starts with none loaded. When the step has `active_tools`, the meta
tools and the loaded tools are added to it.

The library is the given `Tool`s (names given as strings pick the agent's tools
of that name), or, when none is given, all the agent's tools of the step: then
only the tools the model loads are sent. In agentd.toml:
`{ name = "tool-search", options = { maxResults = 5, library = ["get_weather", ...] } }`.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Sequence
from typing import Any, Final

from agentd.runtime.processors.base import ProcessInputStepArgs, Processor, StepOverrides
from agentd.runtime.tools import Tool

log = logging.getLogger("agentd.processors.tool_search")

__all__ = ["LOAD_TOOL", "SEARCH_TOOLS", "ToolSearchProcessor", "rank_tools", "tokenize"]

SEARCH_TOOLS: Final = "search_tools"
LOAD_TOOL: Final = "load_tool"
_LOADED = "loaded"

#: Scores per query word: a word of the tool name outweighs a word of the description.
NAME_EXACT = 3.0
NAME_PARTIAL = 2.0
DESCRIPTION_EXACT = 1.0
DESCRIPTION_PARTIAL = 0.5
#: Added when the whole query is the tool's name.
WHOLE_NAME = 10.0
#: Shortest word that counts for a partial (prefix) match.
MIN_PARTIAL = 3

_WORD = re.compile(r"[a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def tokenize(text: str) -> list[str]:
    """Lower-case words: split on anything not a letter or digit, and at camelCase
    humps ("getWeather", "get_weather" and "get-weather" all give get, weather)."""
    return _WORD.findall(_CAMEL.sub(" ", text).lower())


def _stem(word: str) -> str:
    """A light plural strip: "tools" -> "tool", "forecasts" -> "forecast"."""
    return word[:-1] if len(word) > MIN_PARTIAL and word.endswith("s") and not word.endswith("ss") else word


def _partial(query_word: str, word: str) -> bool:
    """One word starts with the other (both at least MIN_PARTIAL long)."""
    if len(query_word) < MIN_PARTIAL or len(word) < MIN_PARTIAL:
        return False
    return word.startswith(query_word) or query_word.startswith(word)


def _word_score(query_word: str, words: set[str], exact: float, partial: float) -> float:
    if query_word in words:
        return exact
    return partial if any(_partial(query_word, w) for w in words) else 0.0


def score_tool(query: str, tool: Tool) -> float:
    """The keyword score of `tool` for `query` (0 when nothing matches).

    Every distinct query word (after `tokenize` and a light plural strip)
    scores once: NAME_EXACT when it is a word of the tool name, else
    NAME_PARTIAL when it is a prefix of one (or one is a prefix of it), else
    DESCRIPTION_EXACT / DESCRIPTION_PARTIAL the same way for the description.
    WHOLE_NAME is added when the query, normalised, is the tool's name."""
    query_words = {_stem(w) for w in tokenize(query)}
    if not query_words:
        return 0.0
    name_words = {_stem(w) for w in tokenize(tool.name)}
    description_words = {_stem(w) for w in tokenize(tool.description or "")}
    score = 0.0
    for word in query_words:
        by_name = _word_score(word, name_words, NAME_EXACT, NAME_PARTIAL)
        score += by_name or _word_score(word, description_words, DESCRIPTION_EXACT, DESCRIPTION_PARTIAL)
    if tokenize(query) == tokenize(tool.name):
        score += WHOLE_NAME
    return score


def rank_tools(query: str, library: Sequence[Tool], limit: int) -> list[Tool]:
    """Tools with a score above 0, highest first; ties by name."""
    scored = [(score_tool(query, t), t.name, t) for t in library]
    ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
    return [t for _, _, t in ranked[: max(0, limit)]]


def _near_matches(name: str, library: Sequence[Tool], limit: int) -> list[str]:
    names = [t.name for t in library]
    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.5)
    for tool in rank_tools(name, library, limit):
        if tool.name not in close:
            close.append(tool.name)
    return close[:limit]


class ToolSearchProcessor(Processor):
    id = "tool-search"
    name = "Tool search"
    description = "Lets the agent search a tool library and load only the tools it needs."

    def __init__(self, library: Sequence[Tool | str] | None = None, *, max_results: int = 5) -> None:
        if isinstance(library, str | bytes) or (library is not None and not isinstance(library, Sequence)):
            raise ValueError("tool-search: library must be a list of tools or tool names")
        for item in library or ():
            if not isinstance(item, Tool | str):
                raise ValueError(f"tool-search: library entries must be tools or tool names, got {item!r}")
        if isinstance(max_results, bool) or not isinstance(max_results, int | float) or max_results < 1:
            raise ValueError(f"tool-search: maxResults must be a whole number of at least 1, got {max_results!r}")
        if max_results != int(max_results):
            raise ValueError(f"tool-search: maxResults must be a whole number, got {max_results!r}")
        self.library = None if library is None else list(library)
        self.max_results = int(max_results)

    def _library(self, agent_tools: dict[str, Tool]) -> dict[str, Tool]:
        if self.library is None:
            return {name: t for name, t in agent_tools.items() if name not in (SEARCH_TOOLS, LOAD_TOOL)}
        library: dict[str, Tool] = {}
        for item in self.library:
            if isinstance(item, Tool):
                library[item.name] = item
            elif item in agent_tools:
                library[item] = agent_tools[item]
            else:
                log.warning("%s: the library names %r, which the agent does not have", self.id, item)
        return library

    def process_input_step(self, args: ProcessInputStepArgs) -> StepOverrides:
        library = self._library(args.tools)
        loaded: list[str] = args.state.setdefault(_LOADED, [])
        tools: dict[str, Tool] = {
            SEARCH_TOOLS: self._search_tool(library),
            LOAD_TOOL: self._load_tool(library, loaded),
        }
        for name, agent_tool in args.tools.items():
            if name in (SEARCH_TOOLS, LOAD_TOOL):
                log.warning("%s: the agent's own tool %r is replaced by the meta tool", self.id, name)
            elif name not in library:
                tools[name] = agent_tool
        for name in loaded:
            if name in library:
                tools[name] = library[name]
        active = args.active_tools
        if active is not None:
            active = tuple(dict.fromkeys([*active, SEARCH_TOOLS, LOAD_TOOL, *loaded]))
        return StepOverrides(tools=tools, active_tools=active)

    def _search_tool(self, library: dict[str, Tool]) -> Tool:
        tools = list(library.values())
        limit = self.max_results

        def search(args: Any) -> list[dict[str, str]]:
            query = args.get("query") if isinstance(args, dict) else args
            if not isinstance(query, str) or not query.strip():
                raise ValueError("search_tools needs a non-empty query string")
            return [{"name": t.name, "description": t.description} for t in rank_tools(query, tools, limit)]

        return Tool(
            SEARCH_TOOLS,
            f"Search the tool library ({len(tools)} tools) by keywords. Returns the best matching tools' names "
            f"and descriptions (at most {limit}). Load a tool with {LOAD_TOOL} before calling it.",
            search,
            {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "Keywords describing the tool you need"}},
                "required": ["query"],
            },
        )

    def _load_tool(self, library: dict[str, Tool], loaded: list[str]) -> Tool:
        tools = list(library.values())
        limit = self.max_results

        def load(args: Any) -> dict[str, str]:
            name = args.get("name") if isinstance(args, dict) else args
            if not isinstance(name, str) or not name.strip():
                raise ValueError("load_tool needs the name of a tool (find it with search_tools)")
            name = name.strip()
            if name not in library:
                near = _near_matches(name, tools, limit)
                hint = f" Did you mean: {', '.join(near)}?" if near else f" Use {SEARCH_TOOLS} to find tools."
                raise ValueError(f"Unknown tool {name!r}.{hint}")
            if name in loaded:
                return {"name": name, "status": "already loaded"}
            loaded.append(name)
            return {"name": name, "status": "loaded", "message": f"{name} is available from your next step on."}

        return Tool(
            LOAD_TOOL,
            f"Load a tool from the library by its exact name (as returned by {SEARCH_TOOLS}); it can be called "
            "from the next step on and stays loaded for the rest of the run.",
            load,
            {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "The exact tool name"}},
                "required": ["name"],
            },
        )
