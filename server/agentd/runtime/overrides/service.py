"""Editor overrides at work: writing them (field mask, policy, versions),
reading them through each replica's cache, and the agent a run gets with
them applied.

The cache: each process keeps the overrides it read, by tenant-scoped agent
id, for at most `cache_ttl` seconds. A write here replaces its entry before
the write is answered; another process's write reaches it through the store's
`watch` (pub/sub on Redis), which drops the entry. A fetch that an
invalidation overtook is not cached (a generation counter per key), so a
stale read never outlives the invalidation that should have removed it; the
TTL bounds how long a lost invalidation can matter. While the store fails, a
run gets the version last read (expired or not: the default tenant's are read
at start-up); with none read, UNAVAILABLE.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

from agentd.runtime.agent_definition import RequestContext, holds_same, instructions_to_messages, resolve_dynamic
from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.editor import FIELDS, EditorPolicy
from agentd.runtime.errors import FieldViolation, InvalidArgument, NotFound, PermissionDenied, storage_unavailable
from agentd.runtime.identity import DEFAULT_TENANT, scoped
from agentd.runtime.overrides.store import OverrideStore, OverrideValues, OverrideVersion
from agentd.runtime.storage import StorageError
from agentd.runtime.tools import Tool

if TYPE_CHECKING:
    from agentd.runtime.agent import Agent

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "MAX_INSTRUCTIONS_CHARS",
    "Overrides",
    "OverridesUpdate",
    "apply",
    "effective_fields",
    "instructions_text",
]

log = logging.getLogger("agentd.overrides")

#: Bounds on what one override may hold.
MAX_INSTRUCTIONS_CHARS = 100_000
MAX_DESCRIPTION_CHARS = 10_000
#: Entries each process caches (least recently used dropped first).
CACHE_ENTRIES = 10_000
DEFAULT_CACHE_TTL = 30.0

#: Mask paths naming what always comes from the code, or what only the server writes.
_CODE_OWNED = ("id", "name", "model")
_OUTPUT_ONLY = ("agent_id", "version", "updated_by", "update_time", "overridden_fields")
#: What `Overrides._cached` answers for a key with no fresh head cached.
_STALE = object()


@dataclass(frozen=True)
class OverridesUpdate:
    """UpdateAgentOverrides: the request's values and its mask (None: omitted,
    so every populated field)."""

    agent_id: str
    values: OverrideValues
    paths: tuple[str, ...] | None = None


def effective_fields(values: OverrideValues, policy: EditorPolicy) -> OverrideValues:
    """`values` without the fields `policy` locks: what applies, and what is saved."""
    return OverrideValues(
        instructions=values.instructions if policy.instructions else None,
        tools=values.tools if policy.tools else None,
        tool_descriptions=dict(values.tool_descriptions) if policy.tool_descriptions else {},
    )


def _mask(update: OverridesUpdate) -> list[tuple[str, str]]:
    """(the mask path, the field it names) of each path the update writes;
    INVALID_ARGUMENT for a path no override has."""
    if update.paths is None:
        implied = update.values.fields
        return [(p, p) for p in implied]
    out: list[tuple[str, str]] = []
    bad: list[FieldViolation] = []
    for i, path in enumerate(update.paths):
        where = f"update_mask.paths[{i}]"
        head = path.split(".", 1)[0]
        if path == "*":
            out.extend((f, f) for f in FIELDS)
        elif head in _CODE_OWNED:
            bad.append(FieldViolation(where, f"{head} always comes from the agent's code; it cannot be overridden"))
        elif head in _OUTPUT_ONLY:
            bad.append(FieldViolation(where, f"{head} is output only"))
        elif path in FIELDS or (head == "tool_descriptions" and path.count(".") == 1 and path.split(".")[1]):
            out.append((path, head))
        else:
            bad.append(FieldViolation(where, f"{path!r} is not an override field ({', '.join(FIELDS)})"))
    if bad:
        raise InvalidArgument.fields(bad)
    return out


def _merged(current: OverrideValues, update: OverrideValues, paths: list[tuple[str, str]]) -> OverrideValues:
    instructions, tools = current.instructions, current.tools
    descriptions = dict(current.tool_descriptions)
    for path, head in paths:
        if head == "instructions":
            instructions = update.instructions
        elif head == "tools":
            tools = update.tools
        elif path == "tool_descriptions":
            descriptions = dict(update.tool_descriptions)
        else:
            name = path.split(".", 1)[1]
            if name in update.tool_descriptions:
                descriptions[name] = update.tool_descriptions[name]
            else:
                descriptions.pop(name, None)
    return OverrideValues(instructions, tools, descriptions)


def _locked(agent_id: str, fields: Iterable[str], policy: EditorPolicy) -> PermissionDenied | None:
    locked = sorted({f for f in fields if not policy.allows(f)}, key=FIELDS.index)
    if not locked:
        return None
    return PermissionDenied(
        f"agent {agent_id!r} does not allow overriding {', '.join(locked)} (its editor policy)",
        "EDITOR_FIELD_LOCKED",
        {"agent_id": agent_id, "fields": ",".join(locked)},
        [FieldViolation(f"overrides.{f}", "the agent's editor policy makes this field read-only") for f in locked],
    )


@dataclass(frozen=True, slots=True)
class _Applied:
    """An agent with a head of its overrides applied, and what it was made from."""

    head: OverrideVersion
    agent: Agent
    stamp: int
    #: The entries of the agent's tools list (when a list) as they were.
    tools: tuple[Tool, ...]
    copy: Agent


class Overrides:
    """The overrides of the agents one host serves."""

    def __init__(
        self,
        store: OverrideStore,
        catalogue: Callable[[], dict[str, Tool]],
        *,
        cache_ttl: float = DEFAULT_CACHE_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        #: The tools a membership override may name: every hosted agent's own.
        self.catalogue = catalogue
        self.cache_ttl = cache_ttl
        self._clock = clock
        self._cache: OrderedDict[str, tuple[OverrideVersion | None, float]] = OrderedDict()
        #: Bumped by every invalidation of a key ("" for all keys).
        self._generations: dict[str, int] = {}
        self._all_generation = 0
        #: The agents runs got with their overrides applied, by key (bounded as the cache).
        self._copies: dict[str, _Applied] = {}

    async def open(self, agent_ids: Iterable[str] = ()) -> None:
        """Opens the store, and reads the default tenant's overrides of `agent_ids`
        (none is an answer too), so that a storage outage later leaves those
        agents' runs the version read rather than UNAVAILABLE."""
        await self.store.open()
        await self.store.watch(self.invalidate)
        for agent_id in agent_ids:
            key = scoped(DEFAULT_TENANT, agent_id)
            try:
                self._remember(key, await self.store.head(key))
            except StorageError as exc:
                log.warning("overrides of %s: not read at start-up (%s)", key, exc)

    async def close(self) -> None:
        await self.store.close()

    # ------------------------------------------------------------ the cache

    def invalidate(self, key: str | None) -> None:
        """Forgets a cached entry (None: every entry)."""
        if key is None:
            self._all_generation += 1
            self._cache.clear()
            self._generations.clear()
            return
        self._cache.pop(key, None)
        self._generations[key] = self._generations.get(key, 0) + 1

    def _generation(self, key: str) -> tuple[int, int]:
        return self._all_generation, self._generations.get(key, 0)

    def _remember(self, key: str, head: OverrideVersion | None) -> None:
        self._cache[key] = (head, self._clock() + self.cache_ttl)
        self._cache.move_to_end(key)
        while len(self._cache) > CACHE_ENTRIES:
            dropped, _ = self._cache.popitem(last=False)
            self._generations.pop(dropped, None)

    def _cached(self, key: str) -> object:
        """The head cached for `key` while fresh (now the most recent), else _STALE."""
        hit = self._cache.get(key)
        if hit is not None and hit[1] > self._clock():
            self._cache.move_to_end(key)
            return hit[0]
        return _STALE

    async def _head(self, key: str) -> OverrideVersion | None:
        head = self._cached(key)
        return await self._read_head(key) if head is _STALE else cast(OverrideVersion | None, head)

    async def _read_head(self, key: str) -> OverrideVersion | None:
        """The head read from the store (the cached one, stale, when the store fails)."""
        hit = self._cache.get(key)
        generation = self._generation(key)
        try:
            head = await self.store.head(key)
        except StorageError as exc:
            raise_if_cancelling(exc)  # the caller went: no run starts on the version read before
            if hit is None:
                raise storage_unavailable(exc) from exc
            # Storage is down: the last version read beats failing the run (or running the code's).
            log.warning("overrides of %s: storage failed (%s); using the version read before", key, exc)
            return hit[0]
        if self._generation(key) == generation:  # no invalidation overtook the read
            self._remember(key, head)
        return head

    # ------------------------------------------------------------ reading

    async def current(self, agent: Agent, tenant: str) -> OverrideVersion | None:
        """The overrides in effect for `agent` in `tenant`, the fields its policy locks left out."""
        head = await self._head(scoped(tenant, agent.id))
        if head is None:
            return None
        return replace(head, values=effective_fields(head.values, agent.policy))

    async def versions(self, agent: Agent, tenant: str, below: int | None, limit: int) -> list[OverrideVersion]:
        with _storage_errors():
            found = await self.store.versions(scoped(tenant, agent.id), below, limit)
        return [replace(v, values=effective_fields(v.values, agent.policy)) for v in found]

    async def effective(self, agent: Agent, tenant: str) -> Agent:
        """The agent a run in `tenant` gets: the code's, with the overrides
        in effect applied (the code's own object when there are none)."""
        found = self.effective_now(agent, tenant)
        if found is not None:
            return found
        key = scoped(tenant, agent.id)  # (not locked: effective_now answered that)
        return self._applied(agent, key, await self._read_head(key))

    def effective_now(self, agent: Agent, tenant: str) -> Agent | None:
        """`effective` without a coroutine while the head is cached (most runs);
        None when it must be read from the store."""
        key = scoped(tenant, agent.id)
        head = self._cached(key)
        if head is _STALE:  # to be read, unless the agent is locked
            return agent if agent.policy.locked else None
        if head is None or agent.policy.locked:  # no overrides, or none apply: the code's agent
            return agent
        return self._applied(agent, key, cast(OverrideVersion, head))

    def _applied(self, agent: Agent, key: str, head: OverrideVersion | None) -> Agent:
        """`agent` with `head` applied: one copy per head while the agent's
        fields stay as they were (its stamp, and its tools list's entries)."""
        if head is None:
            return agent
        tools = agent.tools
        held = tuple(tools) if type(tools) is list else None  # a list may change in place; a tuple cannot
        kept = self._copies.get(key)
        if (
            kept is not None
            and kept.head is head
            and kept.agent is agent
            and kept.stamp == agent.stamp
            and (held is None or holds_same(held, kept.tools))
        ):
            return kept.copy
        values = effective_fields(head.values, agent.policy)
        if not values.fields:
            return agent
        if values.tools is not None:
            # A membership takes tools from every hosted agent and tool source: read again each run.
            return apply(agent, values, self.catalogue())
        copy = apply(agent, values, {})
        self._copies.pop(key, None)
        self._copies[key] = _Applied(head, agent, agent.stamp, held or (), copy)
        if len(self._copies) > CACHE_ENTRIES:
            del self._copies[next(iter(self._copies))]  # the oldest
        return copy

    # ------------------------------------------------------------ writing

    async def update(self, agent: Agent, tenant: str, update: OverridesUpdate, updated_by: str) -> OverrideVersion:
        paths = _mask(update)
        denied = _locked(agent.id, [head for _, head in paths], agent.policy)
        if denied is not None:
            raise denied
        catalogue = self.catalogue()

        def step(current: OverrideVersion | None) -> OverrideValues:
            base = current.values if current is not None else OverrideValues()
            merged = effective_fields(_merged(base, update.values, paths), agent.policy)
            check_values(agent, merged, catalogue)
            return merged

        return await self._write(agent, tenant, step, updated_by)

    async def delete(self, agent: Agent, tenant: str, updated_by: str) -> OverrideVersion:
        return await self._write(agent, tenant, lambda current: OverrideValues(), updated_by)

    async def restore(self, agent: Agent, tenant: str, version: int, updated_by: str) -> OverrideVersion:
        key = scoped(tenant, agent.id)
        if version < 1:
            raise InvalidArgument.field("version", "must be a version number (1 or more)")
        with _storage_errors():
            old = await self.store.version(key, version)
        if old is None:
            raise NotFound(
                f"agent {agent.id!r} has no overrides version {version} (never written, or pruned)",
                "OVERRIDES_VERSION_NOT_FOUND",
                {"agent_id": agent.id, "version": str(version)},
            )
        values = effective_fields(old.values, agent.policy)  # what the code owns now stays the code's
        check_values(agent, values, self.catalogue(), where="version")
        return await self._write(agent, tenant, lambda current: values, updated_by)

    async def _write(self, agent: Agent, tenant: str, step: Any, updated_by: str) -> OverrideVersion:
        key = scoped(tenant, agent.id)
        self.invalidate(key)  # a read racing the write must not cache what the write replaces
        with _storage_errors():
            made = await self.store.append(key, step, updated_by)
        self._remember(key, made)
        return made


@contextmanager
def _storage_errors() -> Iterator[None]:
    """A store that fails is the storage backend failing: UNAVAILABLE, retry later."""
    try:
        yield
    except StorageError as exc:
        raise storage_unavailable(exc) from exc


def check_values(agent: Agent, values: OverrideValues, catalogue: dict[str, Tool], where: str = "overrides") -> None:
    """INVALID_ARGUMENT for values no run could use: too long, unknown tools."""
    bad: list[FieldViolation] = []
    if values.instructions is not None and len(values.instructions) > MAX_INSTRUCTIONS_CHARS:
        bad.append(FieldViolation(f"{where}.instructions", f"longer than {MAX_INSTRUCTIONS_CHARS} characters"))
    own = {t.name for t in agent.static_tools()}
    offered = set(own)
    if values.tools is not None:
        if callable(agent.tools):
            bad.append(FieldViolation(f"{where}.tools", "the agent's tools depend on the request: no membership"))
        seen: set[str] = set()
        for i, name in enumerate(values.tools):
            if name not in own and name not in catalogue:
                bad.append(FieldViolation(f"{where}.tools.names[{i}]", f"no hosted agent has a tool {name!r}"))
            if name in seen:
                bad.append(FieldViolation(f"{where}.tools.names[{i}]", f"{name!r} is listed twice"))
            seen.add(name)
        offered = seen
    for name, description in values.tool_descriptions.items():
        field = f"{where}.tool_descriptions[{name!r}]"
        if not callable(agent.tools) and name not in offered:
            bad.append(FieldViolation(field, f"the agent offers no tool {name!r}"))
        if len(description) > MAX_DESCRIPTION_CHARS:
            bad.append(FieldViolation(field, f"longer than {MAX_DESCRIPTION_CHARS} characters"))
    if bad:
        raise InvalidArgument.fields(bad)


def _tools(tools: Sequence[Tool], values: OverrideValues, catalogue: dict[str, Tool]) -> list[Tool]:
    if values.tools is not None:
        own = {t.name: t for t in tools}
        tools = [own.get(name) or catalogue[name] for name in values.tools if name in own or name in catalogue]
    return [
        replace(t, description=values.tool_descriptions[t.name]) if t.name in values.tool_descriptions else t
        for t in tools
    ]


def apply(agent: Agent, values: OverrideValues, catalogue: dict[str, Tool]) -> Agent:
    """A copy of `agent` with `values` applied (the code's agent is shared by every run: never changed)."""
    changes: dict[str, Any] = {}
    if values.instructions is not None:
        changes["instructions"] = values.instructions
    if values.tools is not None or values.tool_descriptions:
        code_tools = agent.tools
        if callable(code_tools):

            async def tools(context: RequestContext) -> list[Tool]:
                return _tools(await resolve_dynamic(code_tools, context), values, catalogue)

            changes["tools"] = tools
        else:
            changes["tools"] = _tools(code_tools, values, catalogue)
    copy = replace(agent, **changes)
    copy.lane_cache = agent.lane_cache  # overrides change no processor: the lanes stay the code's
    return copy


def instructions_text(agent: Agent) -> str:
    """The agent's instructions as GetAgent shows them ("" when they depend on the request)."""
    if callable(agent.instructions):
        return ""
    return "\n\n".join(m.text for m in instructions_to_messages(agent.instructions))
