"""Attachments the model cannot fetch itself: downloaded before the call, and
what happens when the download fails (agentd.runtime.attachments), through the
real agent loop with a real HTTP file server on a loopback port."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from agentd.runtime import Agent, ExecutionOptions
from agentd.runtime import attachments as attachments_module
from agentd.runtime.attachments import (
    DOWNLOAD_ASSETS_FAILED,
    UNAVAILABLE_ATTACHMENTS_KEY,
    model_fetches,
    prepare_attachments,
    record_key,
)
from agentd.runtime.clone import clone
from agentd.runtime.memory import Memory
from agentd.runtime.messages import FilePart, Message, TextPart
from agentd.runtime.models.base import ModelAPIError, ModelEvent, ModelRequest
from agentd.runtime.models.local import LocalModel
from agentd.runtime.options import MemoryOptions, ThreadRef
from agentd.runtime.processors.base import APIErrorResult, ProcessAPIErrorArgs, Processor
from agentd.runtime.processors.builtins.stream_error_retry import is_transient_error
from agentd.runtime.processors.message_list import MessageList
from agentd.runtime.storage import InMemoryStorage, MessageQuery
from agentd.runtime.tools import tool
from fakes.file_server import FileServer

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PLACEHOLDER = "[Attachment unavailable: cat.png]"

# ---------------------------------------------------------------- fixtures


@pytest.fixture
def files(monkeypatch: pytest.MonkeyPatch) -> Iterator[FileServer]:
    """A file server on loopback, which agentd may download from only when told
    (`[attachments] allow_private_networks`): these tests tell it."""
    monkeypatch.setattr(attachments_module, "ALLOW_PRIVATE_NETWORKS", True)
    with FileServer() as server:
        yield server


@dataclass
class Seen:
    model: str
    prompt: list[Message]

    def files(self) -> list[FilePart]:
        return [p for m in self.prompt for p in m.parts if isinstance(p, FilePart)]

    def texts(self) -> list[str]:
        return [p.text for m in self.prompt for p in m.parts if isinstance(p, TextPart)]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[Seen]:
    """What each local model call received."""
    seen: list[Seen] = []
    original = LocalModel.stream

    def spy(model: LocalModel, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        seen.append(Seen(model.spec, clone(request.prompt)))
        return original(model, request)

    monkeypatch.setattr(LocalModel, "stream", spy)
    return seen


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    """The warnings logged so far by agentd.attachments."""
    caplog.set_level(logging.WARNING, logger="agentd.attachments")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "agentd.attachments"]


def photo(url: str, filename: str | None = "cat.png", text: str = "what is this?") -> Message:
    return Message(role="user", parts=[TextPart(text), FilePart("image/png", url=url, filename=filename)])


def stored_file(message: Message) -> FilePart:
    return next(p for p in message.parts if isinstance(p, FilePart))


class SwapURL(Processor):
    """Replaces a URL that failed to download with a fresh one, and retries."""

    id = "swap-url"

    def __init__(self, replacement: str) -> None:
        self.replacement = replacement
        self.errors: list[BaseException] = []

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        self.errors.append(args.error)
        error = args.error
        if not isinstance(error, ModelAPIError) or error.details.get("id") != DOWNLOAD_ASSETS_FAILED:
            return None
        for message in args.message_list.get_all():
            for part in message.parts:
                if isinstance(part, FilePart) and part.url == error.details["url"]:
                    part.url = self.replacement
        return APIErrorResult(retry=True)


class RetryDownloads(Processor):
    """Asks for a retry of every failed download, fixing nothing."""

    id = "retry-downloads"

    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        self.errors.append(args.error)
        if isinstance(args.error, ModelAPIError) and args.error.provider_code == DOWNLOAD_ASSETS_FAILED:
            return APIErrorResult(retry=True)
        return None


# ---------------------------------------------------------------- downloads


async def test_a_download_puts_bytes_in_the_request_and_the_stored_message_keeps_the_url(
    files: FileServer, calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    url = files.add("/cat.png", PNG, "image/png")
    message = photo(url)
    result = await Agent(id="a").generate(message)
    assert result.error is None
    [seen] = calls
    [sent] = seen.files()
    assert (sent.data, sent.url, sent.media_type, sent.filename) == (PNG, None, "image/png", "cat.png")
    assert (stored_file(message).url, stored_file(message).data) == (url, None)
    assert UNAVAILABLE_ATTACHMENTS_KEY not in message.metadata
    assert files.hits("/cat.png") == 1 and warnings() == []


async def test_a_later_step_does_not_download_again(files: FileServer, calls: list[Seen]) -> None:
    url = files.add("/cat.png", PNG, "image/png")

    @tool("look", "Looks closer")
    def look(args: dict[str, Any]) -> str:
        return "a cat"

    agent = Agent(id="a", model="local/scripted", tools=[look])
    script = [{"toolCalls": [{"id": "c1", "name": "look", "args": {}}]}, {"text": "a cat"}]
    result = await agent.generate(photo(url), ExecutionOptions(provider_options={"local": {"script": script}}))
    assert result.error is None and result.text == "a cat" and len(result.steps) == 2
    assert [[f.data for f in c.files()] for c in calls] == [[PNG], [PNG]]
    assert files.hits("/cat.png") == 1


async def test_a_valid_data_url_is_sent_as_bytes(calls: list[Seen], warnings: Callable[[], list[str]]) -> None:
    message = photo("data:image/png;base64,iVBORw0KGgo=")
    result = await Agent(id="a").generate(message)
    assert result.error is None
    [sent] = calls[0].files()
    assert sent.data == b"\x89PNG\r\n\x1a\n" and sent.url is None
    assert stored_file(message).url == "data:image/png;base64,iVBORw0KGgo=" and warnings() == []


# ---------------------------------------------------------------- recovering


async def test_a_failed_download_reaches_the_error_processor_which_swaps_the_url(
    files: FileServer, calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    expired = files.url("/expired.png")  # 404
    fresh = files.add("/cat.png", PNG, "image/png")
    swap = SwapURL(fresh)
    message = photo(expired)
    result = await Agent(id="a", error_processors=[swap]).generate(message)
    assert result.error is None
    [error] = swap.errors
    assert isinstance(error, ModelAPIError)
    assert error.provider_code == DOWNLOAD_ASSETS_FAILED and error.status_code is None and not error.retryable
    assert error.details["id"] == DOWNLOAD_ASSETS_FAILED and error.details["url"] == expired
    assert error.__cause__ is None and error.__context__ is None
    assert not is_transient_error(error)  # the default retry processor leaves it alone
    [seen] = calls  # the failed attempt never reached the model
    assert [f.data for f in seen.files()] == [PNG]
    assert stored_file(message).url == fresh  # the swap sticks in the stored message
    assert (files.hits("/expired.png"), files.hits("/cat.png")) == (1, 1)
    assert warnings() == [] and UNAVAILABLE_ATTACHMENTS_KEY not in message.metadata


async def test_a_server_error_is_not_resent_by_the_default_retry_processor(files: FileServer) -> None:
    url = files.add("/cat.png", PNG, "image/png")
    files.fail("/cat.png", status=503)
    swap = SwapURL(url)  # swapping to the same URL: one deliberate retry
    agent = Agent(id="a", error_processors=[swap])
    await agent.generate(photo(url))
    assert [type(e) for e in swap.errors] == [ModelAPIError]  # only the first failure raised
    assert files.hits("/cat.png") == 2  # one download per call: no blind resends


async def test_the_fallback_model_gets_its_turn(files: FileServer, calls: list[Seen]) -> None:
    url = files.add("/cat.png", PNG, "image/png")
    files.fail("/cat.png", status=503, times=1)
    agent = Agent(id="a", model="local/scripted", fallback_models=["local/echo"])
    options = ExecutionOptions(provider_options={"local": {"scripts": {"scripted": [{"text": "primary"}]}}})
    result = await agent.generate(photo(url), options)
    assert result.error is None and result.model == "local/echo"
    assert [(c.model, [f.data for f in c.files()]) for c in calls] == [("local/echo", [PNG])]
    assert files.hits("/cat.png") == 2


async def test_a_fallback_model_that_fetches_urls_gets_the_url(
    files: FileServer, calls: list[Seen], monkeypatch: pytest.MonkeyPatch
) -> None:
    fetching = property(lambda self: frozenset({"image/"}) if self.model_id == "echo" else frozenset())
    monkeypatch.setattr(LocalModel, "fetches_urls", fetching, raising=False)
    url = files.url("/cat.png")
    files.fail("/cat.png", status=500)
    agent = Agent(id="a", model="local/scripted", fallback_models=["local/echo"])
    options = ExecutionOptions(provider_options={"local": {"scripts": {"scripted": [{"text": "primary"}]}}})
    result = await agent.generate(photo(url), options)
    assert result.error is None and result.model == "local/echo"
    [seen] = calls
    assert [(f.url, f.data) for f in seen.files()] == [(url, None)]
    assert files.hits("/cat.png") == 1  # only the primary model needed a download


async def test_a_retry_that_fixes_nothing_gets_the_placeholder(
    files: FileServer, calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    url = files.url("/cat.png")
    files.fail("/cat.png", status=500)
    retry = RetryDownloads()
    message = photo(url)
    result = await Agent(id="a", error_processors=[retry]).generate(message)
    assert result.error is None and PLACEHOLDER in result.text
    assert len(retry.errors) == 1  # the second failure did not raise
    [seen] = calls
    assert seen.files() == [] and PLACEHOLDER in seen.texts()
    assert len(warnings()) == 1 and "cat.png" in warnings()[0]
    assert message.metadata[UNAVAILABLE_ATTACHMENTS_KEY] == [url]
    assert stored_file(message).url == url  # the attachment stays in the history
    assert files.hits("/cat.png") == 2


# ---------------------------------------------------------------- nothing recovers (needs the loop's last retry)


async def test_when_nothing_recovers_the_turn_still_succeeds_with_a_placeholder(
    files: FileServer, calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    url = files.url("/cat.png")
    files.fail("/cat.png", status=503)
    message = photo(url)
    result = await Agent(id="a").generate(message)  # default error processors, no fallback model
    assert result.error is None
    assert PLACEHOLDER in result.text
    [seen] = calls
    assert seen.files() == [] and PLACEHOLDER in seen.texts()
    assert len(warnings()) == 1
    assert message.metadata[UNAVAILABLE_ATTACHMENTS_KEY] == [url]
    assert files.hits("/cat.png") == 2  # the first call and its one retry


async def test_when_nothing_recovers_with_fallbacks_the_turn_still_succeeds(
    files: FileServer, calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    url = files.url("/cat.png")
    files.fail("/cat.png", status=503)
    agent = Agent(id="a", model="local/scripted", fallback_models=["local/echo"])
    options = ExecutionOptions(provider_options={"local": {"scripts": {"scripted": [{"text": "primary"}]}}})
    result = await agent.generate(photo(url), options)
    assert result.error is None and result.model == "local/echo" and PLACEHOLDER in result.text
    assert len(warnings()) == 1 and files.hits("/cat.png") == 2


async def test_a_later_turn_shows_the_placeholder_without_downloading(
    files: FileServer, calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    storage = InMemoryStorage()
    agent = Agent(id="a", memory=Memory(storage))
    bound = ExecutionOptions(memory=MemoryOptions("u1", ThreadRef("t1")))
    url = files.url("/cat.png")
    files.fail("/cat.png", status=503)
    first = await agent.generate(photo(url), bound)
    assert first.error is None
    downloads = files.hits("/cat.png")
    page = await storage.list_messages(MessageQuery("t1"))
    user = next(m for m in page.messages if m.role == "user")
    assert user.metadata[UNAVAILABLE_ATTACHMENTS_KEY] == [url]
    assert stored_file(user).url == url  # the attachment stays in the thread's history

    second = await agent.generate("and now?", bound)
    assert second.error is None
    assert files.hits("/cat.png") == downloads  # no new download
    assert calls[-1].files() == [] and PLACEHOLDER in calls[-1].texts()
    assert len(warnings()) == 1  # warned on the first turn only


async def test_an_undecodable_data_url_is_replaced_at_once(
    calls: list[Seen], warnings: Callable[[], list[str]]
) -> None:
    bad = "data:image/png;base64,@@not base64@@"
    retry = RetryDownloads()
    message = photo(bad)
    result = await Agent(id="a", error_processors=[retry]).generate(message)
    assert result.error is None and PLACEHOLDER in result.text
    assert retry.errors == []  # no error: a retry could not fix it
    [seen] = calls
    assert seen.files() == [] and PLACEHOLDER in seen.texts()
    assert len(warnings()) == 1
    assert message.metadata[UNAVAILABLE_ATTACHMENTS_KEY] == [record_key(bad)]
    assert record_key(bad).startswith("data:sha256,")


# ---------------------------------------------------------------- prepare_attachments alone


@dataclass
class FakeModel:
    provider: str
    model_id: str = "m"

    @property
    def spec(self) -> str:
        return f"{self.provider}/{self.model_id}"

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        raise NotImplementedError


def one_file(url: str, media_type: str = "image/png", filename: str | None = None) -> tuple[ModelRequest, MessageList]:
    message = Message(role="user", parts=[FilePart(media_type, url=url, filename=filename)])
    message_list = MessageList()
    message_list.add(message)
    return ModelRequest(prompt=[clone(message)]), message_list


async def prepared_part(url: str, model: Any = None, media_type: str = "image/png") -> Any:
    request, message_list = one_file(url, media_type)
    out = await prepare_attachments(request, model or FakeModel("local"), message_list, {})
    return out.prompt[0].parts[0]


async def download_error(url: str) -> ModelAPIError:
    request, message_list = one_file(url)
    with pytest.raises(ModelAPIError) as raised:
        await prepare_attachments(request, FakeModel("google"), message_list, {})
    assert raised.value.details["url"] == url
    return raised.value


def test_which_models_fetch_urls_themselves() -> None:
    def fetches(provider: str, url: str, media_type: str) -> bool:
        return model_fetches(FakeModel(provider), FilePart(media_type, url=url))

    assert fetches("openai", "https://x/a.png", "image/png")
    assert not fetches("openai", "https://x/a.pdf", "application/pdf")
    assert fetches("anthropic", "https://x/a.pdf", "application/pdf")
    assert not fetches("anthropic", "https://x/a.txt", "text/plain")
    assert not fetches("google", "https://x/a.png", "image/png")
    assert fetches("google", "gs://bucket/a.png", "image/png")
    assert not fetches("local", "https://x/a.png", "image/png")
    assert not fetches("unknown", "https://x/a.png", "image/png")
    assert not fetches("openai", "ftp://x/a.png", "image/png")  # media-type entries cover http(s) only

    own = FakeModel("local")
    own.fetches_urls = frozenset({"s3:*", "https://cdn.example/"})  # type: ignore[attr-defined]
    assert model_fetches(own, FilePart("application/zip", url="s3://b/k.zip"))
    assert model_fetches(own, FilePart("application/zip", url="https://cdn.example/k.zip"))
    assert not model_fetches(own, FilePart("image/png", url="https://other.example/k.png"))


async def test_parts_the_model_fetches_are_left_alone(files: FileServer) -> None:
    url = files.add("/a.png", PNG, "image/png")
    part = await prepared_part(url, FakeModel("openai"))
    assert (part.url, part.data) == (url, None) and files.hits() == 0
    pdf_url = files.add("/a.pdf", b"%PDF-1.4", "application/pdf")
    pdf = await prepared_part(pdf_url, FakeModel("openai"), "application/pdf")
    assert (pdf.url, pdf.data) == (None, b"%PDF-1.4") and files.hits("/a.pdf") == 1


async def test_a_generic_media_type_takes_the_served_one(files: FileServer) -> None:
    url = files.add("/a", PNG, "image/png; charset=binary")
    part = await prepared_part(url, media_type="image/*")
    assert (part.media_type, part.data) == ("image/png", PNG)


async def test_download_limits(files: FileServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(attachments_module, "MAX_DOWNLOAD_BYTES", 16)
    big = files.add("/big.png", PNG, "image/png")
    assert "larger than 16 bytes" in (await download_error(big)).details["reason"]

    monkeypatch.setattr(attachments_module, "DOWNLOAD_TIMEOUT_SECONDS", 0.2)
    slow = files.add("/slow.png", b"x", "image/png")
    files.delay("/slow.png", 1.0)
    error = await download_error(slow)
    assert "timed out" in str(error.details["reason"])


async def test_downloads_from_loopback_are_refused_by_default(
    files: FileServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(attachments_module, "ALLOW_PRIVATE_NETWORKS", False)
    url = files.add("/cat.png", PNG, "image/png")
    reason = str((await download_error(url)).details["reason"])
    assert "is not a public address (127.0.0.1)" in reason
    by_name = url.replace("127.0.0.1", "localhost")  # a name that resolves there is refused too
    assert "not a public address" in str((await download_error(by_name)).details["reason"])
    assert files.hits("/cat.png") == 0  # refused before a request was sent
    monkeypatch.setattr(attachments_module, "ALLOW_PRIVATE_NETWORKS", True)
    assert (await prepared_part(url)).data == PNG


async def test_only_http_is_downloaded(files: FileServer) -> None:
    assert "cannot download ftp URLs" in (await download_error("ftp://127.0.0.1/a.png")).details["reason"]
    assert "cannot download file URLs" in (await download_error("file:///etc/hostname")).details["reason"]
    files.redirect("/to-file.png", "file:///etc/hostname")
    assert (await download_error(files.url("/to-file.png"))).details["reason"] == "HTTP 302"
    target = files.add("/cat.png", PNG, "image/png")
    files.redirect("/moved.png", target)
    assert (await prepared_part(files.url("/moved.png"))).data == PNG


async def test_every_first_failure_of_a_call_is_listed_and_the_next_failure_is_a_placeholder(
    files: FileServer,
) -> None:
    a, b, ok = files.url("/a.png"), files.url("/b.png"), files.add("/ok.png", PNG, "image/png")
    message = Message(
        role="user",
        parts=[FilePart("image/png", url=a), FilePart("image/png", url=b), FilePart("image/png", url=ok)],
    )
    message_list = MessageList()
    message_list.add(message)
    state: dict[str, Any] = {}
    with pytest.raises(ModelAPIError) as raised:
        await prepare_attachments(ModelRequest(prompt=[clone(message)]), FakeModel("local"), message_list, state)
    assert raised.value.details["url"] == a and raised.value.details["urls"] == [a, b]
    out = await prepare_attachments(ModelRequest(prompt=[clone(message)]), FakeModel("local"), message_list, state)
    assert [getattr(p, "text", None) or p.data for p in out.prompt[0].parts] == [  # type: ignore[union-attr]
        "[Attachment unavailable: a.png]",
        "[Attachment unavailable: b.png]",
        PNG,
    ]
    assert message.metadata[UNAVAILABLE_ATTACHMENTS_KEY] == [a, b]
    assert files.hits("/ok.png") == 1  # downloaded once, kept for the retry
    again = await prepare_attachments(ModelRequest(prompt=[clone(message)]), FakeModel("local"), message_list, state)
    assert [type(p).__name__ for p in again.prompt[0].parts] == ["TextPart", "TextPart", "FilePart"]
    assert (files.hits("/a.png"), files.hits("/b.png")) == (2, 2)  # no third try


def test_agentd_toml_lets_a_deployment_download_from_its_own_network(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentd import cli, config

    monkeypatch.setattr(attachments_module, "ALLOW_PRIVATE_NETWORKS", False)
    path = tmp_path / "agentd.toml"
    path.write_text('[storage]\nbackend = "memory"\n')
    assert config.load(path, env={}).attachments.allow_private_networks is False
    path.write_text('[storage]\nbackend = "memory"\n\n[attachments]\nallow_private_networks = true\n')
    cli.build_host(str(path), None)
    assert attachments_module.ALLOW_PRIVATE_NETWORKS is True
    path.write_text('[attachments]\nallow_private_networks = "yes"\n')
    with pytest.raises(config.ConfigError, match="not true or false"):
        config.load(path, env={})
    path.write_text("[attachments]\nallow_everything = true\n")
    with pytest.raises(config.ConfigError, match="unknown key"):
        config.load(path, env={})
