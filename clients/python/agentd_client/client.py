"""`AgentdClient`: agentd's four services behind one asyncio object."""

# `timeout=` is the gRPC idiom: a per-call deadline (seconds), as on the unary calls.
# ruff: noqa: ASYNC109

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from google.protobuf import duration_pb2, empty_pb2, field_mask_pb2

from agentd_proto.v1 import (
    agent_service_pb2,
    cache_service_pb2,
    message_pb2,
    score_pb2,
    signal_pb2,
    signal_service_pb2,
    thread_service_pb2,
)

from ._values import from_value, to_struct, to_value
from .connection import Connection, MetadataArg
from .options import OPTION_KEYWORDS, execution_options
from .overrides import OverridesMixin
from .session import ClientTool, ConnectSession, ToolHandler
from .signals import (
    IfActiveArg,
    IfIdleArg,
    if_active_pb,
    if_idle_pb,
    message_input,
    notification_input,
    notification_status,
    priority,
    signal_input,
    state_signal_input,
    stream_options_pb,
)
from .streams import RunStream, Subscription
from .types import (
    Attributes,
    CacheEntry,
    CacheStats,
    GenerateResult,
    MessagesInput,
    NotificationResult,
    Pager,
    Routing,
    run_input,
)


class AgentdClient(OverridesMixin, Connection):
    """An asyncio client for an agentd server.

        async with AgentdClient("127.0.0.1:50051") as client:
            result = await client.generate("echo", "hello")
            async for chunk in client.stream("echo", "hello"):
                ...

    - `token`: a bearer token sent as `authorization: Bearer <token>` on
      every call; None reads `$AGENTD_TOKEN` (`token=""`: none). Over
      plaintext it is sent only to a loopback target, unless
      `allow_insecure_token=True`.
    - `tls`: `TLS(ca_file=..., cert_file=..., key_file=...)` (mutual TLS with
      the client certificate), True for TLS with the system roots,
      `grpc.ssl_channel_credentials(...)`, or None for a plaintext channel.
    - `timeout`: the default deadline (seconds) of unary calls, Generate
      included; streams have none unless a call passes `timeout=`.
    - `keepalive_time_ms`: HTTP/2 keepalive pings (channel option).
    - `metadata`: sent with every call.
    - `channel_options`: extra gRPC channel options; `channel`: use this
      channel instead of creating one (it is not closed by the client; a
      token then rides as metadata).

    Every failure raises `AgentdError` (`.code`, `.reason`, `.violations`,
    ...); `UnauthenticatedError`, `PermissionDeniedError` and
    `ResourceExhaustedError` are its subclasses for those codes.
    When opentelemetry is installed and a span is current, calls carry its
    W3C `traceparent`.

    Editor overrides (`get_agent_overrides`, `update_agent_overrides`, ...):
    see `agentd_client.overrides`.
    """

    # --------------------------------------------------------------- agents

    async def list_agents(
        self, *, metadata_filter: Mapping[str, Any] | None = None, page_size: int = 0, timeout: float | None = None
    ) -> list[agent_service_pb2.Agent]:
        """Every agent (all pages), optionally only those whose metadata matches."""

        async def fetch(token: str) -> tuple[list[agent_service_pb2.Agent], str]:
            request = agent_service_pb2.ListAgentsRequest(page_size=page_size, page_token=token)
            if metadata_filter is not None:
                request.metadata_filter.CopyFrom(to_struct(metadata_filter))
            response = await self._unary("agents", "ListAgents", request, timeout)
            return list(response.agents), response.next_page_token

        return await Pager(fetch).all()

    async def get_agent(self, agent_id: str, *, timeout: float | None = None) -> agent_service_pb2.Agent:
        """One agent; `AgentdError` NOT_FOUND (AGENT_NOT_FOUND) when unknown."""
        request = agent_service_pb2.GetAgentRequest(agent_id=agent_id)
        response = await self._unary("agents", "GetAgent", request, timeout)
        return response.agent  # type: ignore[no-any-return]

    def list_scores(
        self,
        *,
        agent_id: str = "",
        thread_id: str = "",
        run_id: str = "",
        scorer: str = "",
        start_time: datetime.datetime | None = None,
        end_time: datetime.datetime | None = None,
        page_size: int = 0,
    ) -> Pager[score_pb2.Score]:
        """The live scorers' scores, newest first, filtered by agent, thread,
        run, scorer and creation time (`start_time` <= t < `end_time`):
        `async for score in client.list_scores(agent_id="support")`."""

        async def fetch(token: str) -> tuple[list[score_pb2.Score], str]:
            request = score_pb2.ListScoresRequest(
                agent_id=agent_id,
                thread_id=thread_id,
                run_id=run_id,
                scorer=scorer,
                page_size=page_size,
                page_token=token,
            )
            if start_time is not None:
                request.start_time.FromDatetime(start_time)
            if end_time is not None:
                request.end_time.FromDatetime(end_time)
            response = await self._unary("agents", "ListScores", request)
            return list(response.scores), response.next_page_token

        return Pager(fetch)

    async def generate(
        self,
        agent: str,
        input: MessagesInput,
        *,
        timeout: float | None = None,
        metadata: MetadataArg = None,
        **options: Any,
    ) -> GenerateResult:
        """Run `agent` to completion on `input` (a string, or messages) with the
        option keywords (see `agentd_client.options`)."""
        text, messages = run_input(input)
        request = agent_service_pb2.GenerateRequest(
            agent_id=agent, text=text, messages=messages, options=execution_options(**options)
        )
        return GenerateResult(await self._unary("agents", "Generate", request, timeout, metadata))

    def stream(
        self,
        agent: str,
        input: MessagesInput,
        *,
        keep_running: bool = False,
        timeout: float | None = None,
        metadata: MetadataArg = None,
        **options: Any,
    ) -> RunStream:
        """Run `agent` and stream its chunks: `async for chunk in client.stream(...)`.

        Returns a `RunStream` (also `.batches()`, `.text`, `.finish`, `.cancel()`).
        """
        text, messages = run_input(input)
        request = agent_service_pb2.StreamRequest(
            agent_id=agent,
            text=text,
            messages=messages,
            options=execution_options(**options),
            keep_running=keep_running,
        )
        md = self._metadata(metadata)
        return RunStream(lambda: self._stub("agents").Stream(request, timeout=timeout, metadata=md))

    def stream_batches(self, agent: str, input: MessagesInput, **kwargs: Any) -> Any:
        """Like `stream`, yielding each response batch (a list of chunks)."""
        return self.stream(agent, input, **kwargs).batches()

    # -------------------------------------------------------------- threads

    async def create_thread(
        self,
        resource_id: str,
        *,
        thread_id: str = "",
        title: str = "",
        metadata: Mapping[str, Any] | None = None,
        timeout: float | None = None,
    ) -> thread_service_pb2.Thread:
        thread = thread_service_pb2.Thread(id=thread_id, resource_id=resource_id, title=title)
        if metadata is not None:
            thread.metadata.CopyFrom(to_struct(metadata))
        response = await self._unary(
            "threads", "CreateThread", thread_service_pb2.CreateThreadRequest(thread=thread), timeout
        )
        return response.thread  # type: ignore[no-any-return]

    async def get_thread(
        self, thread_id: str, *, resource_id: str = "", timeout: float | None = None
    ) -> thread_service_pb2.GetThreadResponse:
        """The thread (`.thread`) and its active run id (`.active_run_id`, empty when idle)."""
        request = thread_service_pb2.GetThreadRequest(thread_id=thread_id, resource_id=resource_id)
        return await self._unary("threads", "GetThread", request, timeout)  # type: ignore[no-any-return]

    def list_threads(
        self, resource_id: str, *, metadata_filter: Mapping[str, Any] | None = None, page_size: int = 0
    ) -> Pager[thread_service_pb2.Thread]:
        """A resource's threads, newest first: `async for thread in client.list_threads(r)`."""

        async def fetch(token: str) -> tuple[list[thread_service_pb2.Thread], str]:
            request = thread_service_pb2.ListThreadsRequest(
                resource_id=resource_id, page_size=page_size, page_token=token
            )
            if metadata_filter is not None:
                request.metadata_filter.CopyFrom(to_struct(metadata_filter))
            response = await self._unary("threads", "ListThreads", request)
            return list(response.threads), response.next_page_token

        return Pager(fetch)

    async def update_thread(
        self,
        thread_id: str,
        *,
        title: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        resource_id: str = "",
        timeout: float | None = None,
    ) -> thread_service_pb2.Thread:
        """Set the title and/or metadata (only those given)."""
        thread = thread_service_pb2.Thread(id=thread_id, resource_id=resource_id)
        paths = []
        if title is not None:
            thread.title = title
            paths.append("title")
        if metadata is not None:
            thread.metadata.CopyFrom(to_struct(metadata))
            paths.append("metadata")
        if not paths:
            raise ValueError("update_thread: give title and/or metadata")
        request = thread_service_pb2.UpdateThreadRequest(
            thread=thread, update_mask=field_mask_pb2.FieldMask(paths=paths)
        )
        response = await self._unary("threads", "UpdateThread", request, timeout)
        return response.thread  # type: ignore[no-any-return]

    async def delete_thread(self, thread_id: str, *, resource_id: str = "", timeout: float | None = None) -> None:
        request = thread_service_pb2.DeleteThreadRequest(thread_id=thread_id, resource_id=resource_id)
        await self._unary("threads", "DeleteThread", request, timeout)

    def list_messages(
        self,
        thread_id: str,
        *,
        resource_id: str = "",
        page_size: int = 0,
        descending: bool = False,
        start_time: datetime.datetime | None = None,
        end_time: datetime.datetime | None = None,
        include_system_reminders: bool = False,
    ) -> Pager[message_pb2.Message]:
        """A thread's messages by creation time: `async for m in client.list_messages(t)`
        walks every page; `.pages()` yields the pages; `await ....all()` collects."""

        order = thread_service_pb2.SORT_ORDER_DESCENDING if descending else thread_service_pb2.SORT_ORDER_ASCENDING

        async def fetch(token: str) -> tuple[list[message_pb2.Message], str]:
            request = thread_service_pb2.ListMessagesRequest(
                thread_id=thread_id,
                resource_id=resource_id,
                page_size=page_size,
                page_token=token,
                order=order,
                include_system_reminders=include_system_reminders,
            )
            if start_time is not None:
                request.start_time.FromDatetime(start_time)
            if end_time is not None:
                request.end_time.FromDatetime(end_time)
            response = await self._unary("threads", "ListMessages", request)
            return list(response.messages), response.next_page_token

        return Pager(fetch)

    async def abort_run(
        self, thread_id: str, *, resource_id: str = "", run_id: str = "", timeout: float | None = None
    ) -> str | None:
        """Abort the thread's active run (only `run_id` when given); returns the
        aborted run's id, or None when none was. `thread_id=""` with `run_id`
        aborts a run without a thread (Generate or Stream without memory)."""
        request = thread_service_pb2.AbortRunRequest(thread_id=thread_id, resource_id=resource_id, run_id=run_id)
        response = await self._unary("threads", "AbortRun", request, timeout)
        return response.run_id if response.aborted else None

    def subscribe(
        self,
        thread_id: str,
        *,
        resource_id: str = "",
        after: tuple[str, int] | None = None,
        reconnect: bool = True,
        hide_signals: Sequence[str] = (),
        metadata: MetadataArg = None,
        max_reconnect_attempts: int = 8,
    ) -> Subscription:
        """Follow a thread's chunks across runs: `async for chunk in client.subscribe(t, resource_id=r)`.

        `after=(log_epoch, offset)` resumes after that offset. With `reconnect`
        the subscription resumes by itself after UNAVAILABLE and fell-behind.
        """
        return Subscription(
            self.threads_stub,
            thread_id,
            resource_id,
            after=after,
            reconnect=reconnect,
            hide_signals=hide_signals,
            metadata=lambda: self._metadata(metadata),
            max_reconnect_attempts=max_reconnect_attempts,
        )

    def connect(
        self,
        agent: str,
        thread_id: str,
        resource_id: str,
        *,
        tools: Mapping[str, ToolHandler | ClientTool] | None = None,
        hide_signals: Sequence[str] = (),
        after: tuple[str, int] | None = None,
        reconnect: bool = True,
        metadata: MetadataArg = None,
        stream_options: Any = None,
        max_reconnect_attempts: int = 8,
        **options: Any,
    ) -> ConnectSession:
        """A bidirectional session on a thread (`async with client.connect(...) as s`).

        `tools` maps client tool names to handlers (`fn(args)` or `fn(args,
        call)`, sync or async) or `ClientTool(handler, description,
        input_schema)`; they are declared on the runs this session wakes and
        answered automatically. Option keywords (or `stream_options`) are the
        options of runs this session's sends wake.
        """
        run_options = stream_options_pb(stream_options)
        unknown = set(options) - OPTION_KEYWORDS
        if unknown:
            raise TypeError(f"connect: unknown keyword(s): {', '.join(sorted(unknown))}")
        if options:
            base = {"options": run_options} if run_options is not None else {}
            run_options = execution_options(**base, **options)
        return ConnectSession(
            self.threads_stub,
            agent,
            thread_id,
            resource_id,
            tools=tools,
            stream_options=run_options,
            hide_signals=hide_signals,
            after=after,
            reconnect=reconnect,
            metadata=lambda: self._metadata(metadata),
            max_reconnect_attempts=max_reconnect_attempts,
        )

    # -------------------------------------------------------------- signals

    @staticmethod
    def _target(thread_id: str, resource_id: str, run_id: str) -> signal_pb2.SignalTarget:
        return signal_pb2.SignalTarget(run_id=run_id, resource_id=resource_id, thread_id=thread_id)

    async def send_message(
        self,
        agent: str,
        text: str = "",
        *,
        thread_id: str = "",
        resource_id: str = "",
        run_id: str = "",
        parts: Iterable[Any] | None = None,
        message_id: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        if_active: IfActiveArg = None,
        if_idle: IfIdleArg = None,
        active_attributes: Attributes = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
        call_metadata: MetadataArg = None,
    ) -> Routing:
        """Send a user message into a thread (or run): delivered into the active
        run, or wakes the idle thread (a run that belongs to the server)."""
        request = signal_service_pb2.SendMessageRequest(
            agent_id=agent,
            target=self._target(thread_id, resource_id, run_id),
            message=message_input(text, parts, message_id, attributes, metadata, provider_options),
        )
        active = if_active_pb(if_active, active_attributes)
        if active is not None:
            request.if_active.CopyFrom(active)
        idle = if_idle_pb(if_idle, idle_attributes, stream_options)
        if idle is not None:
            request.if_idle.CopyFrom(idle)
        response = await self._unary("signals", "SendMessage", request, timeout, call_metadata)
        return Routing.of(response.signal if response.HasField("signal") else None, response.decision)

    async def queue_message(
        self,
        agent: str,
        text: str = "",
        *,
        thread_id: str = "",
        resource_id: str = "",
        run_id: str = "",
        parts: Iterable[Any] | None = None,
        message_id: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        if_idle: IfIdleArg = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
        call_metadata: MetadataArg = None,
    ) -> Routing:
        """Queue a user message for the thread's next turn (wake when idle)."""
        request = signal_service_pb2.QueueMessageRequest(
            agent_id=agent,
            target=self._target(thread_id, resource_id, run_id),
            message=message_input(text, parts, message_id, attributes, metadata, provider_options),
        )
        idle = if_idle_pb(if_idle, idle_attributes, stream_options)
        if idle is not None:
            request.if_idle.CopyFrom(idle)
        response = await self._unary("signals", "QueueMessage", request, timeout, call_metadata)
        return Routing.of(response.signal if response.HasField("signal") else None, response.decision)

    async def send_signal(
        self,
        agent: str,
        type: str = "user",
        text: str = "",
        *,
        thread_id: str = "",
        resource_id: str = "",
        run_id: str = "",
        parts: Iterable[Any] | None = None,
        signal_id: str = "",
        tag_name: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        transient: bool | None = None,
        if_active: IfActiveArg = None,
        if_idle: IfIdleArg = None,
        active_attributes: Attributes = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
        call_metadata: MetadataArg = None,
    ) -> Routing:
        """Send a signal: `type` is "user", "state", "reactive" or "notification"."""
        request = signal_service_pb2.SendSignalRequest(
            agent_id=agent,
            target=self._target(thread_id, resource_id, run_id),
            signal=signal_input(
                type, text, parts, signal_id, tag_name, attributes, metadata, provider_options, transient
            ),
        )
        active = if_active_pb(if_active, active_attributes)
        if active is not None:
            request.if_active.CopyFrom(active)
        idle = if_idle_pb(if_idle, idle_attributes, stream_options)
        if idle is not None:
            request.if_idle.CopyFrom(idle)
        response = await self._unary("signals", "SendSignal", request, timeout, call_metadata)
        return Routing.of(response.signal if response.HasField("signal") else None, response.decision)

    async def send_state_signal(
        self,
        agent: str,
        lane: str,
        text: str = "",
        *,
        thread_id: str = "",
        resource_id: str = "",
        run_id: str = "",
        value: Any = None,
        delta: Any = None,
        mode: str | int = "snapshot",
        cache_key: str = "",
        parts: Iterable[Any] | None = None,
        signal_id: str = "",
        tag_name: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        provider_options: Mapping[str, Any] | None = None,
        if_active: IfActiveArg = None,
        if_idle: IfIdleArg = None,
        active_attributes: Attributes = None,
        idle_attributes: Attributes = None,
        stream_options: Any = None,
        timeout: float | None = None,
        call_metadata: MetadataArg = None,
    ) -> Routing:
        """Send named thread state on `lane` ("skipped_unchanged" when equal to
        the lane's current state); `Routing.version` is the lane's version."""
        request = signal_service_pb2.SendStateSignalRequest(
            agent_id=agent,
            target=self._target(thread_id, resource_id, run_id),
            state=state_signal_input(
                lane,
                text,
                value=value,
                delta=delta,
                mode=mode,
                cache_key=cache_key,
                parts=parts,
                signal_id=signal_id,
                tag_name=tag_name,
                attributes=attributes,
                metadata=metadata,
                provider_options=provider_options,
            ),
        )
        active = if_active_pb(if_active, active_attributes)
        if active is not None:
            request.if_active.CopyFrom(active)
        idle = if_idle_pb(if_idle, idle_attributes, stream_options)
        if idle is not None:
            request.if_idle.CopyFrom(idle)
        response = await self._unary("signals", "SendStateSignal", request, timeout, call_metadata)
        return Routing.of(response.signal if response.HasField("signal") else None, response.decision, response.version)

    async def send_notification(
        self,
        agent: str,
        *,
        thread_id: str,
        resource_id: str,
        source: str,
        kind: str,
        summary: str,
        priority: str | int | None = None,
        payload: Any = None,
        source_id: str = "",
        dedupe_key: str = "",
        coalesce_key: str = "",
        attributes: Attributes = None,
        metadata: Mapping[str, Any] | None = None,
        idle_stream_options: Any = None,
        timeout: float | None = None,
        call_metadata: MetadataArg = None,
    ) -> NotificationResult:
        """Create (or merge) a notification inbox record; the agent's delivery
        policy decides what happens now. `priority`: "low", "medium", "high", "urgent"."""
        request = signal_service_pb2.SendNotificationRequest(
            agent_id=agent,
            resource_id=resource_id,
            thread_id=thread_id,
            notification=notification_input(
                source,
                kind,
                summary,
                priority_=priority,
                payload=payload,
                source_id=source_id,
                dedupe_key=dedupe_key,
                coalesce_key=coalesce_key,
                attributes=attributes,
                metadata=metadata,
            ),
        )
        options = stream_options_pb(idle_stream_options)
        if options is not None:
            request.idle_stream_options.CopyFrom(options)
        response = await self._unary("signals", "SendNotification", request, timeout, call_metadata)
        routing = None
        if response.HasField("routing"):
            routing = Routing.of(response.signal if response.HasField("signal") else None, response.routing)
        return NotificationResult(response.notification, response.decision, routing)

    def list_notifications(
        self,
        thread_id: str,
        *,
        resource_id: str = "",
        agent_id: str = "",
        statuses: Iterable[str | int] = (),
        priorities: Iterable[str | int] = (),
        source: str = "",
        search: str = "",
        page_size: int = 0,
    ) -> Pager[signal_pb2.Notification]:
        """A thread's notification records, newest update first (a `Pager`)."""

        async def fetch(token: str) -> tuple[list[signal_pb2.Notification], str]:
            request = signal_service_pb2.ListNotificationsRequest(
                thread_id=thread_id,
                resource_id=resource_id,
                agent_id=agent_id,
                statuses=[notification_status(s) for s in statuses],  # type: ignore[misc]
                priorities=[priority(p) for p in priorities],  # type: ignore[misc]
                source=source,
                search=search,
                page_size=page_size,
                page_token=token,
            )
            response = await self._unary("signals", "ListNotifications", request)
            return list(response.notifications), response.next_page_token

        return Pager(fetch)

    async def update_notification_status(
        self, thread_id: str, notification_id: str, status: str | int, *, timeout: float | None = None
    ) -> signal_pb2.Notification:
        """Mark a notification "seen", "dismissed" or "archived"."""
        request = signal_service_pb2.UpdateNotificationStatusRequest(
            thread_id=thread_id,
            notification_id=notification_id,
            status=notification_status(status),  # type: ignore[arg-type]
        )
        response = await self._unary("signals", "UpdateNotificationStatus", request, timeout)
        return response.notification  # type: ignore[no-any-return]

    # ---------------------------------------------------------------- cache

    async def get_cache_entry(self, key: str, *, timeout: float | None = None) -> CacheEntry:
        response = await self._unary("cache", "GetCacheEntry", cache_service_pb2.GetCacheEntryRequest(key=key), timeout)
        return CacheEntry(response.found, from_value(response.value) if response.found else None)

    async def set_cache_entry(
        self,
        key: str,
        value: Any,
        *,
        ttl: float | datetime.timedelta | None = None,
        pinned: bool = False,
        timeout: float | None = None,
    ) -> None:
        """Store a JSON value; `ttl` in seconds (or a timedelta), unset: the backend default."""
        request = cache_service_pb2.SetCacheEntryRequest(key=key, value=to_value(value), pinned=pinned)
        if ttl is not None:
            seconds = ttl.total_seconds() if isinstance(ttl, datetime.timedelta) else float(ttl)
            duration = duration_pb2.Duration()
            duration.FromNanoseconds(round(seconds * 1e9))
            request.ttl.CopyFrom(duration)
        await self._unary("cache", "SetCacheEntry", request, timeout)

    async def delete_cache_entry(self, key: str, *, timeout: float | None = None) -> bool:
        response = await self._unary(
            "cache", "DeleteCacheEntry", cache_service_pb2.DeleteCacheEntryRequest(key=key), timeout
        )
        return bool(response.deleted)

    async def clear_cache(self, prefix: str, *, timeout: float | None = None) -> int:
        """Delete every key starting with `prefix`; returns how many."""
        response = await self._unary("cache", "ClearCache", cache_service_pb2.ClearCacheRequest(prefix=prefix), timeout)
        return int(response.deleted_count)

    async def get_cache_stats(self, *, timeout: float | None = None) -> CacheStats:
        r = await self._unary("cache", "GetCacheStats", cache_service_pb2.GetCacheStatsRequest(), timeout)
        return CacheStats(r.hits, r.misses, r.writes, r.errors, r.size, r.backend)

    async def invalidate_response_cache(
        self, agent_id: str, *, scope: str | None = None, no_scope: bool = False, timeout: float | None = None
    ) -> int:
        """Delete an agent's response-cache entries (of one scope, or only the
        unscoped ones with `no_scope=True`); returns how many."""
        if scope is not None and no_scope:
            raise ValueError("invalidate_response_cache: scope or no_scope, not both")
        request = cache_service_pb2.InvalidateResponseCacheRequest(agent_id=agent_id)
        if scope is not None:
            request.scope = scope
        elif no_scope:
            request.no_scope.CopyFrom(empty_pb2.Empty())
        response = await self._unary("cache", "InvalidateResponseCache", request, timeout)
        return int(response.deleted_count)
