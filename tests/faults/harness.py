"""What the fault tests share: a background Subscribe, and
senders that keep messages flowing into threads while a fault happens."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import grpc

from agentd_proto.v1 import chunk_pb2 as cpb
from agentd_proto.v1 import signal_pb2 as spb
from agentd_proto.v1 import signal_service_pb2 as sspb
from agentd_proto.v1 import signal_service_pb2_grpc, thread_service_pb2_grpc
from agentd_proto.v1 import thread_service_pb2 as tpb
from support.errors import RichError, rich_error
from support.polling import until

TERMINAL = ("finish", "error", "abort")


def is_storage_unavailable(outcome: RichError) -> bool:
    """UNAVAILABLE, reason STORAGE_UNAVAILABLE, with a positive RetryInfo delay."""
    return (
        outcome.code == grpc.StatusCode.UNAVAILABLE
        and outcome.reason == "STORAGE_UNAVAILABLE"
        and outcome.retry_delay is not None
        and outcome.retry_delay > 0
    )


def kind(chunk: cpb.Chunk) -> str:
    return chunk.WhichOneof("payload") or ""


def decision(reply: sspb.SendMessageResponse | sspb.QueueMessageResponse | sspb.SendSignalResponse) -> tuple[str, str]:
    action = reply.decision.WhichOneof("action")
    assert action is not None, reply
    return action, getattr(reply.decision, action).run_id


class Subscription:
    """A thread's Subscribe stream read in the background: every chunk, by run.
    A stream that ends (a server restart, UNAVAILABLE) is reopened, resuming
    after the last offset seen."""

    def __init__(self, addr: str, thread_id: str, resource_id: str = "u1") -> None:
        self.addr, self.thread_id, self.resource_id = addr, thread_id, resource_id
        self.chunks: list[cpb.Chunk] = []
        self.subscribed = asyncio.Event()
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        epoch, after = "", 0
        while True:
            async with grpc.aio.insecure_channel(self.addr) as channel:
                stub = thread_service_pb2_grpc.ThreadServiceStub(channel)
                resume = tpb.ResumePoint(log_epoch=epoch, after_offset=after) if epoch else None
                call = stub.Subscribe(
                    tpb.SubscribeRequest(resource_id=self.resource_id, thread_id=self.thread_id, resume=resume)
                )
                try:
                    async for response in call:
                        if response.HasField("snapshot"):
                            epoch = response.snapshot.log_epoch
                            self.subscribed.set()
                        elif response.HasField("chunks"):
                            self.chunks.extend(response.chunks.chunks)
                            after = self.chunks[-1].offset
                except grpc.aio.AioRpcError:
                    pass
            await asyncio.sleep(0.05)

    def of(self, run_id: str) -> list[cpb.Chunk]:
        return [c for c in self.chunks if c.run_id == run_id]

    def end_of(self, run_id: str) -> cpb.Chunk | None:
        ends = [c for c in self.of(run_id) if kind(c) in TERMINAL]
        return ends[-1] if ends else None

    async def close(self) -> None:
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


@dataclass
class Sent:
    """One message a sender sent, and how it was answered."""

    thread_id: str
    message_id: str
    text: str
    action: str = ""
    run_id: str = ""
    failed: RichError | None = None


@dataclass
class Senders:
    """One sender per thread sends messages one after another (each waits for
    the run it woke to end, so one message is one run) until `stop` is set."""

    addr: str
    agent_id: str
    threads: list[str]
    watchers: dict[str, Subscription]
    sent: list[Sent] = field(default_factory=list)
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    run_timeout: float = 20.0

    def start(self) -> asyncio.Future[list[None]]:
        return asyncio.gather(*(self._send_to(thread) for thread in self.threads))

    async def _send_to(self, thread_id: str) -> None:
        watcher = self.watchers[thread_id]
        i = 0
        async with grpc.aio.insecure_channel(self.addr) as channel:
            stub = signal_service_pb2_grpc.SignalServiceStub(channel)
            while not self.stop.is_set():
                i += 1
                sent = Sent(thread_id, f"{thread_id}-m{i}", f"{thread_id} message {i}")
                self.sent.append(sent)
                target = spb.SignalTarget(resource_id="u1", thread_id=thread_id)
                message = spb.MessageInput(id=sent.message_id, text=sent.text)
                try:  # SendMessage and QueueMessage in turn
                    reply: sspb.SendMessageResponse | sspb.QueueMessageResponse
                    if i % 2:
                        reply = await stub.SendMessage(
                            sspb.SendMessageRequest(agent_id=self.agent_id, target=target, message=message), timeout=10
                        )
                    else:
                        reply = await stub.QueueMessage(
                            sspb.QueueMessageRequest(agent_id=self.agent_id, target=target, message=message), timeout=10
                        )
                except grpc.aio.AioRpcError as error:
                    sent.failed = rich_error(error)
                    await asyncio.sleep(0.05)
                    continue
                sent.action, sent.run_id = decision(reply)
                await until(
                    lambda s=sent: watcher.end_of(s.run_id) is not None,  # type: ignore[misc]
                    within=self.run_timeout,
                    what=f"run {sent.run_id} of {sent.message_id} to end",
                )

    def acknowledged(self) -> list[Sent]:
        return [s for s in self.sent if s.failed is None and s.action]

    def refused(self) -> list[Sent]:
        return [s for s in self.sent if s.failed is not None]


def step_texts(chunks: list[cpb.Chunk]) -> list[str]:
    """The text of each step a run's chunks show (each step is one stored reply)."""
    texts: list[str] = []
    current: list[str] = []
    for chunk in chunks:
        if kind(chunk) == "step_start":
            current = []
        elif kind(chunk) == "text_delta":
            current.append(chunk.text_delta.text)
        elif kind(chunk) == "step_finish":
            texts.append("".join(current))
    return texts


def thread_problems(
    messages: list[tpb.Message],
    watcher: Subscription,
    sent: list[Sent],
    *,
    failed_ends: set[tuple[str, str]],
) -> list[str]:
    """A thread's stored messages against what its messages were answered and
    what its subscriber saw:
    - every acknowledged message is stored; nothing refused is, nor was it in a run that finished;
    - every run seen ended, with `finish` or one of `failed_ends` ((kind, reason) pairs);
    - the replies stored are exactly the steps of the runs that finished, plus those
      of a run that saved and then failed (its messages stored, no finished run took
      them): nothing ran twice, nothing was lost."""
    problems: list[str] = []
    signals = {m.id for m in messages if m.role == 4}
    replies = Counter(m.parts[0].text.text for m in messages if m.role == 2)
    took: dict[str, list[str]] = {}
    for chunk in watcher.chunks:
        if kind(chunk) == "signal":
            took.setdefault(chunk.run_id, []).append(chunk.signal.signal.id)
    ends = {run_id: watcher.end_of(run_id) for run_id in took}
    for s in sent:
        if s.failed is None and s.message_id not in signals:
            end = watcher.end_of(s.run_id)
            problems.append(f"{s.message_id} answered {s.action} is not stored (its run ended {end})")
        if s.failed is not None:
            # A wake whose run failed in set-up is refused: that run's start is seen, and its error.
            seen = [ends[r] for r, ids in took.items() if s.message_id in ids]
            if s.message_id in signals or any(e is None or kind(e) == "finish" for e in seen):
                problems.append(f"{s.message_id} was refused ({s.failed}) but is stored or was run")
    finished = {r for r, end in ends.items() if end is not None and kind(end) == "finish"}
    taken_by_finished = {i for r in finished for i in took[r]}
    expected = Counter(text for r in finished for text in step_texts(watcher.of(r)))
    for run_id, end in ends.items():
        if end is None:
            problems.append(f"run {run_id} (took {took[run_id]}) has not ended")
        elif kind(end) != "finish":
            if (kind(end), end.abort.reason or end.error.reason) not in failed_ends:
                problems.append(f"run {run_id} (took {took[run_id]}) ended with {end}")
            elif not taken_by_finished & set(took[run_id]) and set(took[run_id]) <= signals:  # saved, then failed
                expected.update(step_texts(watcher.of(run_id)))
    if replies != expected:
        problems.append(
            f"{watcher.thread_id}: replies {sorted(replies.elements())} != expected {sorted(expected.elements())}"
        )
    return problems


async def stored(addr: str, thread_id: str) -> list[tpb.Message]:
    """Every message stored in the thread, oldest first."""
    async with grpc.aio.insecure_channel(addr) as channel:
        listed = await thread_service_pb2_grpc.ThreadServiceStub(channel).ListMessages(
            tpb.ListMessagesRequest(thread_id=thread_id, page_size=1000), timeout=10
        )
    return list(listed.messages)


async def settle(check: Callable[[], Awaitable[list[str]]], within: float, what: str) -> None:
    """Polls `check` until it finds no problem, and still none a moment later (a
    late duplicate would show); fails with the problems it last found."""
    problems: list[str] = []

    async def none() -> bool:
        problems[:] = await check()
        return not problems

    try:
        await until(none, within=within, what=what, step=0.2)
        await asyncio.sleep(1.0)
        assert await none()
    except AssertionError:
        raise AssertionError(f"{what}:\n" + "\n".join(problems[:10])) from None
