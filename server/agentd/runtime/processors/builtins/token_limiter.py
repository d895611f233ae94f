"""TokenLimiter ("token-limiter"): keeps the conversation, and the output, within a token budget.

Counting uses a real BPE tokenizer (tiktoken, `o200k_base` by default) that works
offline: see `get_encoding` for how the encoding file is found without a network.

Input side: all system messages are kept; the other messages are considered from
newest to oldest and kept while they fit `limit - system tokens - 24`
(`best-fit` keeps scanning past a message that does not fit, `contiguous` stops
there). An assistant message with tool calls and the tool-result messages that
follow it are kept or dropped together. process_input trims this call's new input;
process_input_step trims the run's messages (for this request only: stored history
is untouched), unless this processor's process_llm_request also runs for the step,
in which case only the provider prompt of that one call is trimmed.

`memory-only` trims recalled history only, never this call's input, the run's
responses or system messages, and never aborts: when the whole prompt (24 +
system messages + messages) exceeds `limit`, the oldest recalled messages go
until it is at most `limit - at_max_remove_tokens` (25% of the limit by default),
so the next turns do not trim again at once. That mode leaves output alone.

Output side: process_output_stream counts `text-delta` (and `object`) chunks, and
process_output_result trims the assistant text of the response messages. When
`truncate` first withholds output, one transient `data-token-limit-reached`
chunk says so (`{processorId, limit, tokens}`). `limit: 0` withholds
everything. The running count lives in `args.state`, never on the instance.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import importlib.util
import json
import logging
import math
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentd.runtime.chunks import Chunk, Data, ObjectPartial, TextDelta
from agentd.runtime.messages import (
    DataPart,
    FilePart,
    Message,
    Part,
    ReasoningPart,
    SignalPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from agentd.runtime.processors.base import (
    Abort,
    LLMRequestResult,
    ProcessInputArgs,
    ProcessInputStepArgs,
    ProcessLLMRequestArgs,
    Processor,
    ProcessOutputResultArgs,
    ProcessOutputStreamArgs,
)
from agentd.runtime.processors.message_list import MessageList

if TYPE_CHECKING:
    import tiktoken

log = logging.getLogger("agentd.processors.token_limiter")

Strategy = Literal["truncate", "abort"]
CountMode = Literal["cumulative", "part"]
TrimMode = Literal["best-fit", "contiguous", "memory-only"]

#: Overhead per message and per conversation (the chat format's framing tokens).
TOKENS_PER_MESSAGE = 3.8
TOKENS_PER_CONVERSATION = 24
#: An image costs a flat amount; media of unknown size a smaller flat amount.
IMAGE_TOKENS = 765
UNKNOWN_MEDIA_TOKENS = 258
#: JSON-encoded tool args/results are cheaper than their text suggests.
JSON_OVERHEAD = -12

DEFAULT_ENCODING = "o200k_base"
_STRATEGIES = ("truncate", "abort")
_COUNT_MODES = ("cumulative", "part")
_TRIM_MODES = ("best-fit", "contiguous", "memory-only")
#: memory-only frees this share of the limit below it when it trims.
DEFAULT_REMOVE_SHARE = 0.25
#: The chunk that says output is being withheld.
LIMIT_REACHED = "data-token-limit-reached"

# ---------------------------------------------------------------- the offline tokenizer

_LOAD_LOCK = threading.Lock()


def _cache_dir() -> Path:
    """~/.cache/agentd/tiktoken (XDG_CACHE_HOME honoured), else a per-user temp dir."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    candidates = [
        Path(base) / "agentd" / "tiktoken",
        Path(tempfile.gettempdir()) / f"agentd-tiktoken-{os.getuid()}",
    ]
    for candidate in candidates:
        try:
            candidate.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(candidate, os.W_OK):
            return candidate
    raise OSError("no writable cache directory for the tokenizer files")


def _blob_sources(name: str) -> list[tuple[str, str | None]]:
    """(url, sha256) of the BPE files tiktoken's own constructor for `name`
    would download, read from the constructor's constants (no URL is hard-coded
    here). A constructor that delegates to another one (e.g. a variant of
    o200k_base) has none of its own: then every known blob is returned."""
    import tiktoken.registry

    tiktoken.registry.list_encoding_names()  # loads the plugin constructors
    constructors = tiktoken.registry.ENCODING_CONSTRUCTORS or {}

    def sources(constructor: Any) -> list[tuple[str, str | None]]:
        code = getattr(constructor, "__code__", None)
        consts = [c for c in (code.co_consts if code else ()) if isinstance(c, str)]
        urls = [c for c in consts if "://" in c and c.endswith(".tiktoken")]
        hashes = [c for c in consts if len(c) == 64 and all(ch in "0123456789abcdef" for ch in c)]
        if len(urls) == len(hashes):
            return list(zip(urls, hashes, strict=True))
        return [(url, None) for url in urls]

    own = sources(constructors.get(name))
    if own:
        return own
    return [source for constructor in constructors.values() for source in sources(constructor)]


def _bundled_blob(file_name: str) -> Path | None:
    """The path of a data file of the bpe-openai package, found without
    importing it (its import eagerly builds every encoding it ships)."""
    spec = importlib.util.find_spec("bpe_openai")
    for location in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(location) / "data" / file_name
        if candidate.is_file():
            return candidate
    return None


def _seed(cache_dir: Path, url: str, expected_sha256: str | None) -> bool:
    """Places the BPE file that the `bpe-openai` package ships (gzipped) in
    `cache_dir` under the name tiktoken gives its cache entry for `url`. The
    file is used only when its sha256 is the one tiktoken expects."""
    blob_name = url.rsplit("/", 1)[-1]
    target = cache_dir / hashlib.sha1(url.encode()).hexdigest()
    if target.exists():
        data = target.read_bytes()
        if expected_sha256 is None or hashlib.sha256(data).hexdigest() == expected_sha256:
            return True
    packed_path = _bundled_blob(f"{blob_name}.gz")
    if packed_path is None:
        return False
    packed = packed_path.read_bytes()
    data = gzip.decompress(packed)
    if expected_sha256 is not None and hashlib.sha256(data).hexdigest() != expected_sha256:
        log.warning("the bundled %s does not have the hash tiktoken expects; not used", blob_name)
        return False
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, target)
    return True


def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """A tiktoken encoding that loads without a network.

    tiktoken downloads its BPE file on first use and keeps it in
    TIKTOKEN_CACHE_DIR under the sha1 of the download URL. The `bpe-openai`
    package ships the same files gzipped; their content has exactly the sha256
    tiktoken checks. So the file is unpacked into the cache directory under the
    name tiktoken looks for (the URL and hash are read from tiktoken's own
    constructor), and tiktoken then builds the encoding itself (pattern, special
    tokens, hash check) finding its file already cached. A TIKTOKEN_CACHE_DIR set
    by the user is used as is; otherwise ~/.cache/agentd/tiktoken is pointed to
    for the duration of the load only. Encodings are cached per process."""
    import tiktoken
    import tiktoken.registry

    cached = tiktoken.registry.ENCODINGS.get(name)
    if cached is not None:
        return cached
    with _LOAD_LOCK:
        cached = tiktoken.registry.ENCODINGS.get(name)
        if cached is not None:
            return cached
        user_dir = os.environ.get("TIKTOKEN_CACHE_DIR")
        try:
            cache_dir = Path(user_dir) if user_dir else _cache_dir()
            cache_dir.mkdir(parents=True, exist_ok=True)
            seeded = [_seed(cache_dir, url, sha) for url, sha in _blob_sources(name)]
        except (OSError, ValueError) as exc:
            log.warning("could not prepare the offline tokenizer files: %s", exc)
            seeded = []
        if user_dir or not any(seeded):
            return _load(name)
        previous = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
        try:
            return _load(name)
        finally:
            if previous is None:
                os.environ.pop("TIKTOKEN_CACHE_DIR", None)
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = previous


def _load(name: str) -> tiktoken.Encoding:
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except ValueError:
        raise
    except Exception as exc:
        raise RuntimeError(
            f"could not load the {name!r} tokenizer (offline it needs the bpe-openai package's files): {exc}"
        ) from exc


def encoding_names() -> list[str]:
    try:
        import tiktoken
    except ImportError as exc:
        raise ImportError("token-limiter needs the tiktoken and bpe-openai packages") from exc
    return list(tiktoken.list_encoding_names())


# ---------------------------------------------------------------- counting


def _json(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return str(value)


def _signal_text(signal: Any) -> str:
    contents = getattr(signal, "contents", signal)
    return contents if isinstance(contents, str) else _json(contents)


def _file_tokens(part: FilePart) -> float:
    if part.media_type.startswith("image/"):
        return IMAGE_TOKENS
    if part.data is None:
        return UNKNOWN_MEDIA_TOKENS
    return math.ceil(len(part.data) / 4)


# ---------------------------------------------------------------- the processor


class TokenLimiter(Processor):
    """Limits the tokens sent to and produced by the model. See the module docs."""

    id = "token-limiter"
    name = "Token Limiter"

    def __init__(
        self,
        limit: int,
        *,
        strategy: Strategy = "truncate",
        count_mode: CountMode = "cumulative",
        trim_mode: TrimMode = "best-fit",
        at_max_remove_tokens: int | None = None,
        encoding: str = DEFAULT_ENCODING,
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise ValueError(f"limit must be a non-negative integer, not {limit!r}")
        if strategy not in _STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(_STRATEGIES)}, not {strategy!r}")
        if count_mode not in _COUNT_MODES:
            raise ValueError(f"count_mode must be one of {', '.join(_COUNT_MODES)}, not {count_mode!r}")
        if trim_mode not in _TRIM_MODES:
            raise ValueError(f"trim_mode must be one of {', '.join(_TRIM_MODES)}, not {trim_mode!r}")
        if at_max_remove_tokens is None:
            at_max_remove_tokens = math.floor(limit * DEFAULT_REMOVE_SHARE)
        if (
            isinstance(at_max_remove_tokens, bool)
            or not isinstance(at_max_remove_tokens, int)
            or not 0 <= at_max_remove_tokens <= limit
        ):
            raise ValueError(
                f"at_max_remove_tokens must be an integer from 0 to the limit ({limit}), not {at_max_remove_tokens!r}"
            )
        if encoding not in encoding_names():
            raise ValueError(f"unknown encoding {encoding!r} (known: {', '.join(encoding_names())})")
        self.id = type(self).id
        self.limit = limit
        self.strategy: Strategy = strategy
        self.count_mode: CountMode = count_mode
        self.trim_mode: TrimMode = trim_mode
        self.at_max_remove_tokens = at_max_remove_tokens
        self.encoding = encoding

    # ------------------------------------------------------------ counting

    def count_tokens(self, text: str) -> int:
        """BPE tokens of `text` (special-token text counts as ordinary text)."""
        if not text:
            return 0
        return len(get_encoding(self.encoding).encode_ordinary(text))

    def count_message(self, message: Message) -> float:
        """count(role + content) + 3.8; tool args/results as JSON (-12 each),
        images 765, media of unknown size 258, other media bytes/4."""
        text: list[str] = [message.role]
        extra = 0.0
        for part in message.parts:
            text_of, part_extra = self._part(part)
            text.append(text_of)
            extra += part_extra
        return max(0.0, self.count_tokens("".join(text)) + TOKENS_PER_MESSAGE + extra)

    def _part(self, part: Part) -> tuple[str, float]:
        if isinstance(part, TextPart | ReasoningPart):
            return part.text, 0.0
        if isinstance(part, ToolCallPart):
            if part.args is None:
                return part.tool_name, 0.0
            return part.tool_name + _json(part.args), JSON_OVERHEAD
        if isinstance(part, ToolResultPart):
            return _json(part.result), JSON_OVERHEAD
        if isinstance(part, FilePart):
            return "", _file_tokens(part)
        if isinstance(part, DataPart):
            return _json(part.data), 0.0
        if isinstance(part, SignalPart):
            return _signal_text(part.signal), 0.0
        return _json(part), 0.0

    def count_messages(self, messages: Sequence[Message]) -> float:
        return sum(self.count_message(m) for m in messages)

    # ------------------------------------------------------------ input side

    def trim(self, messages: Sequence[Message], system_messages: Sequence[Message], abort: Abort) -> list[Message]:
        """The messages to keep (in order): newest first within the budget.
        Aborts when there is nothing to send, when the system messages alone
        reach the limit, or when no message fits."""
        system_tokens = self.count_messages(system_messages)
        if not messages and not system_messages:
            abort("TokenLimiter: no messages to process; the model cannot be called with no messages")
        if system_tokens >= self.limit:
            abort(
                f"TokenLimiter: the system messages alone ({_fmt(system_tokens)} tokens) "
                f"reach the token limit of {self.limit}",
                metadata={"systemTokens": system_tokens, "limit": self.limit},
            )
        if not messages:
            return []
        budget = self.limit - system_tokens - TOKENS_PER_CONVERSATION
        used = 0.0
        kept: set[int] = set()
        for group in reversed(_groups(messages)):
            tokens = sum(self.count_message(messages[i]) for i in group)
            if used + tokens <= budget:
                used += tokens
                kept.update(group)
            elif self.trim_mode == "contiguous":
                break
        if not kept:
            abort(
                f"TokenLimiter: no message fits the token limit of {self.limit} "
                f"({_fmt(system_tokens)} tokens of system messages, {_fmt(max(budget, 0))} left)",
                metadata={
                    "systemTokens": system_tokens,
                    "limit": self.limit,
                    "remainingBudget": budget,
                    "messageCount": len(messages),
                },
            )
        return [m for i, m in enumerate(messages) if i in kept]

    def trim_memory(self, message_list: MessageList) -> MessageList | None:
        """memory-only: drops the oldest recalled messages (whole tool groups)
        while the prompt is over the limit, down to `limit - at_max_remove_tokens`.
        The list itself when it changed, else None."""
        messages = message_list.get_all()
        system = message_list.all_system_messages()
        total = TOKENS_PER_CONVERSATION + self.count_messages(system) + self.count_messages(messages)
        if total <= self.limit:
            return None
        target = self.limit - self.at_max_remove_tokens
        removable = {m.id for m in message_list.get_remembered()}
        removed: list[str] = []
        for group in _groups(messages):
            if total <= target:
                break
            if not all(messages[i].id in removable for i in group):
                continue  # a group that holds this call's input (or output) stays whole
            removed.extend(messages[i].id for i in group)
            total -= sum(self.count_message(messages[i]) for i in group)
        if not removed:
            return None
        message_list.remove_by_ids(removed)
        return message_list

    def process_input(self, args: ProcessInputArgs) -> list[Message] | MessageList | None:
        if self.trim_mode == "memory-only":
            return self.trim_memory(args.message_list)
        if not args.messages and len(args.message_list):
            return None  # no new input (e.g. a continuation): nothing to trim here
        kept = self.trim(args.messages, args.system_messages, args.abort)
        return kept if len(kept) != len(args.messages) else None

    def process_input_step(self, args: ProcessInputStepArgs) -> list[Message] | MessageList | None:
        if self.trim_mode == "memory-only":
            return self.trim_memory(args.message_list)
        if args.llm_request_stage:
            return None  # process_llm_request trims this step's prompt instead
        system = [*args.system_messages, *_tagged_system(args)]
        kept = self.trim(args.messages, system, args.abort)
        return kept if len(kept) != len(args.messages) else None

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult | None:
        if self.trim_mode == "memory-only":
            return None  # it trims what memory recalled, at the input hooks
        system = [m for m in args.prompt if m.role == "system"]
        others = [m for m in args.prompt if m.role != "system"]
        kept = self.trim(others, system, args.abort)
        if len(kept) == len(others):
            return None
        keep_ids = {id(m) for m in kept}
        return LLMRequestResult(prompt=[m for m in args.prompt if m.role == "system" or id(m) in keep_ids])

    # ------------------------------------------------------------ output side

    def _chunk_tokens(self, part: Chunk) -> int | None:
        payload = part.payload
        if isinstance(payload, TextDelta):
            return self.count_tokens(payload.text)
        if isinstance(payload, ObjectPartial):
            return self.count_tokens(_json(payload.object))
        return None  # not counted

    def _exceeded(self, current: float) -> str:
        return f"Token limit of {self.limit} exceeded (current: {_fmt(current)})"

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        tokens = None if self.trim_mode == "memory-only" else self._chunk_tokens(args.part)
        if tokens is None:
            return args.part
        state = args.state
        if state.get("truncated"):
            return None  # cumulative truncate: everything counted after the limit is dropped
        current = tokens if self.count_mode == "part" else state.get("output_tokens", 0) + tokens
        if self.count_mode == "cumulative":
            state["output_tokens"] = current
        if current <= self.limit:
            return args.part
        if self.strategy == "abort":
            args.abort(self._exceeded(current))
        if self.count_mode == "cumulative":
            state["truncated"] = True
        if not state.get("limit_reached_notified") and args.emit_after is not None:
            # Once per request: truncation is never silent, and never a flood.
            state["limit_reached_notified"] = True
            notice = Data(LIMIT_REACHED, {"processorId": self.id, "limit": self.limit, "tokens": current}, None, True)
            args.emit_after(Chunk(notice, args.part.run_id, 0))
        return None

    def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message] | None:
        """Keeps assistant text while it fits, cuts the first overflowing text
        part to its longest fitting prefix and empties the rest (or aborts)."""
        if self.trim_mode == "memory-only":
            return None
        total = 0
        changed: list[Message] = []
        for message in args.messages:
            if message.role != "assistant":
                changed.append(message)
                continue
            parts: list[Part] = []
            touched = False
            for part in message.parts:
                if not isinstance(part, TextPart):
                    parts.append(part)
                    continue
                tokens = self.count_tokens(part.text)
                current = tokens if self.count_mode == "part" else total + tokens
                if current <= self.limit:
                    total = current
                    parts.append(part)
                    continue
                if self.strategy == "abort":
                    args.abort(self._exceeded(current))
                room = self.limit - (0 if self.count_mode == "part" else total)
                prefix = self._longest_prefix(part.text, room)
                total = self.limit if self.count_mode == "cumulative" else total
                parts.append(dataclasses.replace(part, text=prefix))
                touched = True
            changed.append(dataclasses.replace(message, parts=parts) if touched else message)
        if all(a is b for a, b in zip(changed, args.messages, strict=True)):
            return None
        return changed

    def _longest_prefix(self, text: str, room: int) -> str:
        """The longest prefix of `text` with at most `room` tokens (binary search on characters)."""
        if room <= 0:
            return ""
        low, high = 0, len(text)
        while low < high:
            mid = (low + high + 1) // 2
            if self.count_tokens(text[:mid]) <= room:
                low = mid
            else:
                high = mid - 1
        return text[:low]


#: The reference name of the same processor.
TokenLimiterProcessor = TokenLimiter


def _fmt(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"


def _tagged_system(args: ProcessInputStepArgs) -> list[Message]:
    """System messages owned by processors (e.g. memory): they join the prompt too."""
    untagged = {id(m) for m in args.message_list.system_messages}
    return [m for m in args.message_list.all_system_messages() if id(m) not in untagged]


def _groups(messages: Sequence[Message]) -> list[list[int]]:
    """Indexes grouped so that an assistant message with tool calls stays with
    the tool-result-only messages that follow it."""
    groups: list[list[int]] = []
    open_calls: set[str] = set()
    for index, message in enumerate(messages):
        results = [p for p in message.parts if isinstance(p, ToolResultPart)]
        only_results = bool(message.parts) and len(results) == len(message.parts)
        if groups and only_results and any(r.tool_call_id in open_calls for r in results):
            groups[-1].append(index)
            continue
        groups.append([index])
        open_calls = {p.tool_call_id for p in message.parts if isinstance(p, ToolCallPart)}
        open_calls -= {r.tool_call_id for r in results}
    return groups
