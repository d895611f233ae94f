"""ToolSearchProcessor ("tool-search"): tool discovery over a large tool library.

Instead of sending every tool to the model, an input-lane processor whose
`process_input_step` gives the agent two meta tools and a system message that
explains them:

* `search_tools({"query"})` answers `{"results": [{"name", "description",
  "score"}], "message"}`: up to `max_results` library tools whose keyword score
  (see `score_tool`, rounded to 2 places) is above `min_score`, best first,
  descriptions cut to 150 characters. The message says how many were found,
  or that none were.
* `load_tool({"toolName"})` or `load_tool({"toolNames": [...]})` loads library
  tools: from the next step on they are sent to the model and can be called.
  One name answers `{"success", "message", "toolName", "loaded"}`, a list
  `{"success", "message", "loadedCount", "loaded", "notFound",
  "alreadyLoaded"}`; an unknown single name suggests the closest names.

With `auto_load`, `search_tools` loads what it finds (the answer carries an
`activation` receipt naming them) and `load_tool` is not offered.

Each step's tools are the meta tools, the loaded library tools and the agent's
own tools that are not in the library. When the step has `active_tools`, the
meta tools and the loaded tools are added to it.

Loaded tools stay loaded for the rest of the run (`storage="run"`, the
processor's per-request state: a new run starts with none). With
`storage="context"` a run also starts with the tools that earlier
`load_tool` / auto-loading `search_tools` results in its messages (recalled
history, or history the caller sends) loaded: a thread with memory keeps its
tools across runs, on every replica, and a tool whose result leaves the
recalled window is unloaded.

`filter(ToolSearchFilterArgs)` (sync or async; an exception means False) hides
a tool from this request: phase "search" (search answers), "load" (load_tool,
auto-loading, and re-checking names a context brought) and "active" (sent to
the model).

The library is the given `Tool`s (names given as strings pick the agent's tools
of that name), or, when none is given, all the agent's tools of the step: then
only the tools the model loads are sent. In agentd.toml:
`{ name = "tool-search", options = { maxResults = 5, minScore = 1, autoLoad = false,
storage = "context", library = ["get_weather", ...] } }`.
"""

from __future__ import annotations

import difflib
import inspect
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.messages import Message, ToolResultPart
from agentd.runtime.processors.base import ProcessInputStepArgs, Processor, StepOverrides
from agentd.runtime.tools import Tool

log = logging.getLogger("agentd.processors.tool_search")

__all__ = [
    "AUTO_LOAD_ACTIVATION",
    "LOAD_TOOL",
    "SEARCH_TOOLS",
    "ToolSearchFilterArgs",
    "ToolSearchProcessor",
    "rank_tools",
    "score_tool",
    "tokenize",
]

SEARCH_TOOLS: Final = "search_tools"
LOAD_TOOL: Final = "load_tool"
#: The receipt's type and version in an auto-loading search answer (Mastra's).
AUTO_LOAD_ACTIVATION: Final = "tool-search-auto-load"
AUTO_LOAD_VERSION: Final = 1
#: Longest description in a search answer; longer ones are cut to 147 characters and "...".
DESCRIPTION_LIMIT: Final = 150
_META = (SEARCH_TOOLS, LOAD_TOOL)
_LOADED = "loaded"
_CONTEXT_READ = "context_read"

Phase = Literal["search", "load", "active"]
Storage = Literal["run", "context"]
_STORAGES = ("run", "context")

_SYSTEM = (
    f"Tools are found with {SEARCH_TOOLS}: call it with a keyword query. To use a tool it finds, call {LOAD_TOOL} "
    "with its toolName (or several at once with toolNames); a tool must be loaded before it can be called, and it "
    "can be called from your next step on."
)
_SYSTEM_AUTO_LOAD = (
    f"Tools are found with {SEARCH_TOOLS}: call it with a keyword query. The tools it finds are loaded at once "
    "(there is no separate load step) and can be called directly from your next step on."
)

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


def _scored(query: str, library: Iterable[Tool]) -> list[tuple[float, Tool]]:
    """(score, tool) above 0, highest first; ties by name."""
    scored = [(score_tool(query, t), t) for t in library]
    return sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1].name))


def rank_tools(query: str, library: Sequence[Tool], limit: int) -> list[Tool]:
    """Tools with a score above 0, highest first; ties by name."""
    return [t for _, t in _scored(query, library)[: max(0, limit)]]


def _near_matches(name: str, library: Sequence[Tool], limit: int) -> list[str]:
    names = [t.name for t in library]
    close = difflib.get_close_matches(name, names, n=limit, cutoff=0.5)
    for tool in rank_tools(name, library, limit):
        if tool.name not in close:
            close.append(tool.name)
    return close[:limit]


def _short(description: str) -> str:
    if len(description) <= DESCRIPTION_LIMIT:
        return description
    return description[: DESCRIPTION_LIMIT - 3] + "..."


@dataclass(frozen=True, slots=True)
class ToolSearchFilterArgs:
    """What a tool-search `filter` decides on: may this request see `tool` in `phase`?"""

    tool_name: str
    tool: Tool
    request_context: Mapping[str, Any]
    phase: Phase


ToolFilter = Callable[[ToolSearchFilterArgs], bool | Awaitable[bool]]


def _names_from_result(tool_name: str, result: Any) -> list[str]:
    """The names a stored load_tool / auto-loading search_tools answer loaded."""
    if not isinstance(result, dict):
        return []
    if tool_name == LOAD_TOOL:
        loaded = result.get("loaded") if isinstance(result.get("success"), bool) else None
    else:  # only an explicit receipt counts: a plain search loaded nothing
        activation = result.get("activation")
        ok = isinstance(activation, dict) and activation.get("type") == AUTO_LOAD_ACTIVATION
        loaded = activation.get("loaded") if ok and isinstance(activation, dict) else None
    if not isinstance(loaded, list):
        return []
    return [name for name in loaded if isinstance(name, str) and name]


def loaded_in_context(messages: Iterable[Message]) -> list[str]:
    """Tool names that the meta tools' results in `messages` loaded, in order.
    Only assistant messages count (where the loop writes tool results): a
    caller's user message shaped like a result loads nothing."""
    names: dict[str, None] = {}
    for message in messages:
        if message.role != "assistant":
            continue
        for part in message.parts:
            if isinstance(part, ToolResultPart) and part.tool_name in _META and not part.is_error:
                names.update(dict.fromkeys(_names_from_result(part.tool_name, part.result)))
    return list(names)


def _requested_names(args: Any) -> list[str] | str:
    """The names a load_tool call asks for (toolNames, toolName, or `name`, the
    older spelling), deduplicated, or the message explaining what is missing."""
    if isinstance(args, str):
        args = {"toolName": args}
    if not isinstance(args, dict):
        return "Give toolName (a string) or toolNames (a list of strings)."
    single = args.get("toolName", args.get("name"))
    many = args.get("toolNames")
    if many is not None and (not isinstance(many, list) or not all(isinstance(n, str) for n in many)):
        return "toolNames must be a list of tool names."
    if single is not None and not isinstance(single, str):
        return "toolName must be a string."
    names = [n.strip() for n in [*(many or []), *([single] if single else [])] if n.strip()]
    if not names:
        return "toolNames must not be empty." if many is not None else "Give toolName or toolNames to load."
    return list(dict.fromkeys(names))


class ToolSearchProcessor(Processor):
    id = "tool-search"
    name = "Tool search"
    description = "Lets the agent search a tool library and load only the tools it needs."

    def __init__(
        self,
        library: Sequence[Tool | str] | None = None,
        *,
        max_results: int = 5,
        min_score: float = 0.0,
        auto_load: bool = False,
        storage: Storage = "run",
        filter: ToolFilter | None = None,
    ) -> None:
        if isinstance(library, str | bytes) or (library is not None and not isinstance(library, Sequence)):
            raise ValueError("tool-search: library must be a list of tools or tool names")
        for item in library or ():
            if not isinstance(item, Tool | str):
                raise ValueError(f"tool-search: library entries must be tools or tool names, got {item!r}")
        if isinstance(max_results, bool) or not isinstance(max_results, int | float) or max_results < 1:
            raise ValueError(f"tool-search: maxResults must be a whole number of at least 1, got {max_results!r}")
        if max_results != int(max_results):
            raise ValueError(f"tool-search: maxResults must be a whole number, got {max_results!r}")
        if isinstance(min_score, bool) or not isinstance(min_score, int | float) or not 0 <= min_score < float("inf"):
            raise ValueError(f"tool-search: minScore must be a number >= 0, got {min_score!r}")
        if not isinstance(auto_load, bool):
            raise ValueError(f"tool-search: autoLoad must be true or false, got {auto_load!r}")
        if storage not in _STORAGES:
            raise ValueError(f"tool-search: storage must be one of {', '.join(_STORAGES)}, got {storage!r}")
        if filter is not None and not callable(filter):
            raise ValueError("tool-search: filter must be a function (set it from Python, in an --app module)")
        self.library = None if library is None else list(library)
        self.max_results = int(max_results)
        self.min_score = float(min_score)
        self.auto_load = auto_load
        self.storage: Storage = storage
        self.filter = filter

    def _library(self, agent_tools: dict[str, Tool]) -> dict[str, Tool]:
        if self.library is None:
            return {name: t for name, t in agent_tools.items() if name not in _META}
        library: dict[str, Tool] = {}
        for item in self.library:
            if isinstance(item, Tool):
                library[item.name] = item
            elif item in agent_tools:
                library[item] = agent_tools[item]
            else:
                log.warning("%s: the library names %r, which the agent does not have", self.id, item)
        return library

    async def _allowed(self, tool: Tool, context: Mapping[str, Any], phase: Phase) -> bool:
        if self.filter is None:
            return True
        try:
            verdict = self.filter(ToolSearchFilterArgs(tool.name, tool, context, phase))
            if inspect.isawaitable(verdict):
                verdict = await verdict
        except Exception as exc:
            raise_if_cancelling(exc)
            log.warning(
                "%s: the filter raised on %s (%s); the tool is hidden", self.id, tool.name, phase, exc_info=True
            )
            return False
        return bool(verdict)

    def _loaded(self, args: ProcessInputStepArgs) -> list[str]:
        loaded: list[str] = args.state.setdefault(_LOADED, [])
        if self.storage == "context" and not args.state.get(_CONTEXT_READ):
            args.state[_CONTEXT_READ] = True  # read once: later steps add through the meta tools
            loaded.extend(n for n in loaded_in_context(args.messages) if n not in loaded)
        return loaded

    async def process_input_step(self, args: ProcessInputStepArgs) -> StepOverrides:
        library = self._library(args.tools)
        context = args.request_context
        loaded = self._loaded(args)
        tools: dict[str, Tool] = {SEARCH_TOOLS: self._search_tool(library, loaded, context)}
        if not self.auto_load:
            tools[LOAD_TOOL] = self._load_tool(library, loaded, context)
        for name, agent_tool in args.tools.items():
            if name in _META:
                log.warning("%s: the agent's own tool %r is replaced by the meta tool", self.id, name)
            elif name not in library:
                tools[name] = agent_tool
        for name in loaded:
            tool = library.get(name)
            if tool is None or name in tools:
                continue
            # A name a context brought is checked as a load would be: it is evidence, not permission.
            if self.storage == "context" and not await self._allowed(tool, context, "load"):
                continue
            if await self._allowed(tool, context, "active"):
                tools[name] = tool
        active = args.active_tools
        if active is not None:
            meta = [n for n in _META if n in tools]
            active = tuple(dict.fromkeys([*active, *meta, *(n for n in loaded if n in tools)]))
        system = Message.system(_SYSTEM_AUTO_LOAD if self.auto_load else _SYSTEM)
        return StepOverrides(tools=tools, active_tools=active, system_messages=[*args.system_messages, system])

    async def _search(self, query: str, library: Sequence[Tool], context: Mapping[str, Any]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for score, tool in _scored(query, library):
            if len(found) >= self.max_results:
                break
            if score <= self.min_score or not await self._allowed(tool, context, "search"):
                continue
            found.append({"name": tool.name, "description": _short(tool.description or ""), "score": round(score, 2)})
        return found

    def _search_tool(self, library: dict[str, Tool], loaded: list[str], context: Mapping[str, Any]) -> Tool:
        tools = list(library.values())

        async def search(args: Any) -> dict[str, Any]:
            query = args.get("query") if isinstance(args, dict) else args
            if not isinstance(query, str) or not query.strip():
                raise ValueError("search_tools needs a non-empty query string")
            results = await self._search(query, tools, context)
            if not results:
                return {"results": [], "message": f'No tools found matching "{query}". Try different keywords.'}
            if not self.auto_load:
                return {
                    "results": results,
                    "message": f"Found {len(results)} tool(s). Load them with {LOAD_TOOL} (toolName, or "
                    "toolNames for several) to make them available.",
                }
            results = [r for r in results if await self._allowed(library[r["name"]], context, "load")]
            if not results:
                return {"results": [], "message": f'No tools available to load matching "{query}". Try other keywords.'}
            names = [r["name"] for r in results]
            fresh = [n for n in names if n not in loaded]
            loaded.extend(fresh)
            again = " Some were already loaded." if len(fresh) < len(names) else ""
            return {
                "results": results,
                "activation": {"type": AUTO_LOAD_ACTIVATION, "version": AUTO_LOAD_VERSION, "loaded": names},
                "message": f"Found and loaded {len(names)} tool(s): {', '.join(names)}. "
                f"Call them directly from your next step on.{again}",
            }

        how = (
            "The tools found are loaded at once and can be called from your next step on."
            if self.auto_load
            else f"Load a tool with {LOAD_TOOL} before calling it."
        )
        return Tool(
            SEARCH_TOOLS,
            f"Search the tool library ({len(tools)} tools) by keywords. Returns the best matching tools' names, "
            f"descriptions and scores (at most {self.max_results}). {how}",
            search,
            {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "Keywords describing the tool you need"}},
                "required": ["query"],
            },
        )

    def _load_tool(self, library: dict[str, Tool], loaded: list[str], context: Mapping[str, Any]) -> Tool:
        async def load(args: Any) -> dict[str, Any]:
            requested = _requested_names(args)
            if isinstance(requested, str):
                return {"success": False, "message": requested}
            many = isinstance(args, dict) and args.get("toolNames") is not None
            fresh: list[str] = []
            already: list[str] = []
            missing: list[str] = []
            for name in requested:
                tool = library.get(name)
                if tool is None or not await self._allowed(tool, context, "load"):
                    missing.append(name)
                elif name in loaded:
                    already.append(name)
                else:
                    fresh.append(name)
            loaded.extend(fresh)
            if not many and len(requested) == 1:
                return await self._loaded_one(requested[0], fresh, already, library, context)
            parts = []
            if fresh:
                parts.append(f"Loaded: {', '.join(fresh)} (available from your next step on)")
            if already:
                parts.append(f"Already loaded: {', '.join(already)}")
            if missing:
                parts.append(f"Not found: {', '.join(missing)}")
            answer: dict[str, Any] = {"success": not missing, "message": " | ".join(parts), "loadedCount": len(fresh)}
            for key, names in (("loaded", fresh), ("notFound", missing), ("alreadyLoaded", already)):
                if names:
                    answer[key] = names
            return answer

        return Tool(
            LOAD_TOOL,
            f"Load tools from the library by their exact names (as returned by {SEARCH_TOOLS}): toolName for one, "
            "toolNames for several at once. They can be called from the next step on and stay loaded.",
            load,
            {
                "type": "object",
                "properties": {
                    "toolName": {"type": "string", "description": "The exact name of a tool to load"},
                    "toolNames": {
                        "type": "array",
                        "items": {"type": "string"},
                        "description": "Exact names of several tools to load in one call",
                    },
                },
            },
        )

    async def _loaded_one(
        self, name: str, fresh: list[str], already: list[str], library: dict[str, Tool], context: Mapping[str, Any]
    ) -> dict[str, Any]:
        if already:
            return {"success": True, "message": f"{name} is already loaded.", "toolName": name, "loaded": [name]}
        if fresh:
            message = f"{name} is loaded and available from your next step on."
            return {"success": True, "message": message, "toolName": name, "loaded": [name]}
        near = [
            n
            for n in _near_matches(name, list(library.values()), self.max_results)
            if await self._allowed(library[n], context, "load")
        ][:3]
        hint = f" Did you mean: {', '.join(near)}?" if near else f" Use {SEARCH_TOOLS} to find tools."
        return {"success": False, "message": f"Unknown tool {name!r}.{hint}", "toolName": name}
