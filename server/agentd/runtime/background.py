"""Background tools: a call to a tool marked `background` answers at once with
a deferred result, and the work goes on in this process after the run moves
on or ends.

    start(detached)   records the work (Storage), holds its lease, runs it
    recover()         reports failed the work a stopped process left behind

When the work ends its result is reconciled into the thread as the call's
result: into the calling run's transcript while that run still calls the
model (its model sees it at its next call, and the run saves it), and into
the stored message once the run has ended, or as a message of its own when
the run saved nothing. Then a continuation run is woken on the thread through
the thread runtime's routing, as a queued message would wake it (on whichever
replica holds the thread), and the record is deleted.

Durable: the record is written before the call answers, so a process that
stops leaves it behind, and the next `recover()` (at start-up, and each sweep
on replicas) reconciles the call as failed and wakes the thread. A record is
taken over only when its lease is free: the replica running it renews it.

Bounded: at most `max_jobs` background calls run at once per process; a call
beyond that answers an error result at once.

The `background-work-signal` input processor puts the run's `send_signal`
under BACKGROUND_SIGNAL_KEY; work started by such a run tells it work-deferred
(status running) as it starts and work-completed / work-failed once the result
is reconciled, if the run still takes signals then: delivery is in process and
best-effort, never retried, and a run that ended is never rebuilt for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from agentd.runtime.cancellation import raise_if_cancelling
from agentd.runtime.coordination import Coordination, CoordinationError, LeaseKeeper, LeaseUnavailable
from agentd.runtime.messages import JSON, Message, Signal, ToolCallPart, ToolResultPart, new_id
from agentd.runtime.signals import create_signal
from agentd.runtime.storage import BackgroundTask, Storage, StorageError
from agentd.runtime.tool_payloads import ToolPayloadTransform, show_call, show_result

__all__ = [
    "BACKGROUND_SIGNAL_KEY",
    "DEFAULT_MAX_JOBS",
    "TASK_PREFIX",
    "BackgroundFull",
    "BackgroundWork",
    "Detached",
    "background_lease",
    "is_deferred",
]

log = logging.getLogger("agentd.background")

#: Request-context key: the run's send_signal, put there by `background-work-signal`.
BACKGROUND_SIGNAL_KEY = "agentd.backgroundWorkSignal"
#: Background calls running at once in one process, unless configured.
DEFAULT_MAX_JOBS = 16
LEASE_TTL_MS = 15_000
#: How a background task's id begins.
TASK_PREFIX = "bg_"
#: Why work that a stopped process left behind failed.
LOST = "the server stopped before the background work finished"

Outcome = Literal["completed", "failed"]
SendSignal = Callable[..., Awaitable[Any]]


def background_lease(task_id: str) -> str:
    """The lease key the replica running a task holds while it runs."""
    return f"background:{task_id}"


def is_deferred(result: JSON, task_id: str | None = None) -> bool:
    """Whether a tool result is still a background call's deferred answer (of `task_id`, when given)."""
    if not isinstance(result, dict) or result.get("status") != "running":
        return False
    found = result.get("taskId")
    return found == task_id if task_id is not None else isinstance(found, str) and found.startswith(TASK_PREFIX)


class BackgroundFull(Exception):
    """As many background calls run as the process allows."""


@dataclass(eq=False)
class Detached:
    """What a run hands over for one background call."""

    task: BackgroundTask
    #: The call's deferred result, as the run shows and keeps it: reconciled in place while the run is live.
    placeholder: ToolResultPart
    #: The call itself (the tool and its hooks): the authoritative result.
    work: Callable[[], Awaitable[ToolResultPart]]
    #: Whether the calling run still calls the model (a result reconciled now reaches its transcript).
    live: Callable[[], bool]
    transform: ToolPayloadTransform | None = None
    #: The run's send_signal when it has `background-work-signal`.
    notify: SendSignal | None = None


class BackgroundWork:
    """Background calls of one process."""

    def __init__(
        self, storage: Storage, coordination: Coordination, *, replica_id: str, max_jobs: int = DEFAULT_MAX_JOBS
    ) -> None:
        if max_jobs < 1:
            raise ValueError("max_jobs must be at least 1")
        self.storage = storage
        self.coordination = coordination
        self.replica_id = replica_id
        self.max_jobs = max_jobs
        #: `settled(run_id)` returns once a thread-bound run has ended and its messages are saved.
        self.settled: Callable[[str], Awaitable[None]] | None = None
        #: `route(task, signal)`: the continuation into the task's thread, queued
        #: behind an active run (the host routes it through the thread runtime).
        self.route: Callable[[BackgroundTask, Signal], Awaitable[Any]] | None = None
        self._jobs: dict[str, asyncio.Task[None]] = {}
        self._closed = False

    def __len__(self) -> int:
        """Background calls running in this process."""
        return len(self._jobs)

    def _owner(self, task_id: str) -> str:
        return f"{self.replica_id}/{task_id}"

    # ------------------------------------------------------------ starting

    async def start(self, detached: Detached) -> JSON:
        """Records and starts the work; the deferred result the call answers
        with. BackgroundFull at the cap; StorageError when it cannot be recorded
        (then nothing runs: work that could be forgotten is never started)."""
        task = detached.task
        if self._closed:
            raise BackgroundFull("the server is shutting down; no new background calls")
        if len(self._jobs) >= self.max_jobs:
            raise BackgroundFull(f"{self.max_jobs} background calls are running; try again later")
        task.replica = self.replica_id
        await self.storage.save_background_task(task)
        # Held before the call answers, so no sweep takes the record for one nobody runs.
        keeper = LeaseKeeper(self.coordination, background_lease(task.task_id), self._owner(task.task_id), LEASE_TTL_MS)
        held: LeaseKeeper | None = keeper
        try:
            await keeper.__aenter__()
        except (LeaseUnavailable, CoordinationError, OSError):
            log.warning("background task %s runs without its lease: a sweep may report it failed", task.task_id)
            held = None
        job = asyncio.get_running_loop().create_task(self._run(detached, held), name=f"background {task.task_id}")
        self._jobs[task.task_id] = job
        job.add_done_callback(lambda _: self._jobs.pop(task.task_id, None))
        await self._notify(detached, "work-deferred", "running")
        return {
            "status": "running",
            "taskId": task.task_id,
            "message": f"{task.tool_name} runs in the background; its result will follow in this thread",
        }

    async def _run(self, detached: Detached, keeper: LeaseKeeper | None) -> None:
        task = detached.task
        try:
            try:
                outcome = await detached.work()
            except asyncio.CancelledError:
                raise  # the process stops: the record stays, and the next start reports it
            except Exception as exc:
                outcome = ToolResultPart(task.tool_call_id, task.tool_name, str(exc), True, task.args)
            await self._finish(detached, outcome)
        except asyncio.CancelledError:
            # The process stops: the record stays, and the lease is let go below,
            # so another replica reports the work failed now rather than at its expiry.
            current = asyncio.current_task()
            if current is not None:
                current.uncancel()
        except Exception:
            log.exception("background task %s: its result could not be reconciled; a restart reports it", task.task_id)
        finally:
            if keeper is not None:
                with contextlib.suppress(Exception):
                    await keeper.__aexit__(None, None, None)

    # ------------------------------------------------------------ ending

    async def _finish(self, detached: Detached, outcome: ToolResultPart) -> None:
        task = detached.task
        show_result(outcome, detached.transform)
        status: Outcome = "failed" if outcome.is_error else "completed"
        if detached.live():  # the calling run's model sees it at its next call, and the run saves it
            placeholder = detached.placeholder
            placeholder.result, placeholder.is_error, placeholder.display = (
                outcome.result,
                outcome.is_error,
                outcome.display,
            )
            await self._notify(detached, f"work-{status}", status)
        if self.settled is not None:
            await self.settled(task.run_id)
        await self._reconcile(task, outcome, detached.transform)
        await self._continue(task, status)
        await self.storage.delete_background_task(task.task_id)

    async def _notify(self, detached: Detached, event: str, status: str) -> None:
        """Best-effort, in process: only into the calling run while it takes signals, never retried."""
        if detached.notify is None or not detached.live():
            return
        task = detached.task
        try:
            await detached.notify(
                type="notification",
                tag_name=event,
                contents=f"{event}: {task.tool_call_id}",
                metadata={
                    "originRunId": task.run_id,
                    "originToolCallId": task.tool_call_id,
                    "taskId": task.task_id,
                    "invocationKind": "tool",
                    "disposition": "deferred",
                    "status": status,
                },
            )
        except Exception:
            log.debug("background task %s: %s not delivered", task.task_id, event, exc_info=True)

    async def _reconcile(
        self, task: BackgroundTask, outcome: ToolResultPart, transform: ToolPayloadTransform | None
    ) -> Outcome:
        """The stored call's result becomes the authoritative one (a message of
        its own when the run saved no message holding the call); how the call
        ended, as stored (a result reconciled before is left as it is)."""
        stored = await self.storage.get_messages([task.message_id])
        if stored:
            message = stored[0]
            for i, part in enumerate(message.parts):
                if isinstance(part, ToolResultPart) and part.tool_call_id == task.tool_call_id:
                    if not is_deferred(part.result, task.task_id):
                        return "failed" if part.is_error else "completed"
                    message.parts[i] = outcome
                    await self.storage.save_messages([message])
                    return "failed" if outcome.is_error else "completed"
        call = ToolCallPart(task.tool_call_id, task.tool_name, task.args)
        show_call(call, transform)
        message = Message(
            role="assistant",
            parts=[call, outcome],
            id=new_id("msg_"),
            thread_id=task.thread_id,
            resource_id=task.resource_id,
        )
        await self.storage.save_messages([message])
        return "failed" if outcome.is_error else "completed"

    async def _continue(self, task: BackgroundTask, status: Outcome) -> None:
        """Wakes a run on the thread (queued behind an active one), wherever the thread is held."""
        if self.route is None:
            return
        signal = create_signal(
            "notification",
            f"The background call {task.tool_call_id} of {task.tool_name} {status}; "
            "its result is now the call's result in this thread.",
            tag_name=f"background-task-{status}",
            attributes={"toolName": task.tool_name, "toolCallId": task.tool_call_id, "taskId": task.task_id},
            id=f"background:{task.task_id}",  # a retry after a restart is the same request
        )
        await self.route(task, signal)

    # ------------------------------------------------------------ recovery

    async def recover(self) -> int:
        """Reports failed the recorded work nobody runs (its lease is free):
        a stopped process's, or a dead replica's; how many."""
        try:
            tasks = await self.storage.list_background_tasks()
        except StorageError as exc:
            raise_if_cancelling(exc)  # stopped while it read: it stops
            log.exception("could not read the background work left behind; it is looked at again later")
            return 0
        failed = 0
        for task in tasks:
            if task.task_id in self._jobs:
                continue
            owner = self._owner(task.task_id)
            try:
                if not await self.coordination.acquire(background_lease(task.task_id), owner, LEASE_TTL_MS):
                    continue  # a live replica runs it
            except (CoordinationError, OSError):
                continue
            try:
                outcome = ToolResultPart(task.tool_call_id, task.tool_name, LOST, True, task.args)
                await self._reconcile(task, outcome, None)
                await self._continue(task, "failed")
                await self.storage.delete_background_task(task.task_id)
                failed += 1
                log.warning(
                    "background task %s (%s) was left unfinished: reported failed", task.task_id, task.tool_name
                )
            except Exception:
                log.exception("background task %s: could not report it failed; looked at again later", task.task_id)
            finally:
                with contextlib.suppress(Exception):
                    await self.coordination.release(background_lease(task.task_id), owner)
        return failed

    async def close(self) -> None:
        """Stops the work still running: its records stay for the next start to report."""
        self._closed = True
        jobs = list(self._jobs.values())
        for job in jobs:
            job.cancel()
        if jobs:
            await asyncio.wait(jobs, timeout=5)
