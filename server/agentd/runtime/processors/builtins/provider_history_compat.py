"""ProviderHistoryCompat: makes history written for one provider acceptable to another.

A default error processor with two hooks:

* `process_llm_request` (every model call): each rule's `apply_to_prompt`
  rewrites the outbound prompt before the provider sees it. Rules chain in
  order; the prompt is deep-copied first, so the stored history (and
  `args.prompt`) keeps the originals. Returns a new prompt only when something
  changed.
* `process_api_error` (first attempt only, `retry_count == 0`): a rule whose
  `error_patterns` match the error text (messages, detail messages and raw
  response bodies of the whole cause chain) recovers and asks for a retry:
  - `fix(messages) -> bool` edits the stored messages (the caller's choice for
    custom rules: the change is persisted);
  - `recover_prompt(prompt) -> prompt | None` is remembered in the request
    state and applied to every later outbound prompt of the request, whatever
    the model: the fallback for providers the pre-check cannot identify (e.g. a
    model of that family served through another provider), leaving stored
    history untouched.

Default rules (in order):

1. `anthropic-tool-call-id`: tool-call ids must match ^[a-zA-Z0-9_-]+$. Only
   non-matching ids are rewritten (other characters become `_`, made unique),
   each call and its paired result with the same mapping, in the outbound
   prompt only. Pre-emptive for `anthropic` models; reactive (prompt-only) for
   any model whose error says a tool-use id does not match the pattern.
2. `cerebras-reasoning`: `cerebras` models get no reasoning parts in assistant
   messages; assistant messages left empty are dropped.
3. `anthropic-empty-signed-reasoning`: `anthropic` models get no signed reasoning
   parts whose text is empty (redacted reasoning is kept).
4. `anthropic-foreign-reasoning`: `anthropic` models get only reasoning produced
   by that provider (provider options keyed `anthropic`, or a signature or
   redacted data with no other provider's options).
5. `azure-system-reminder`: for `azure` models (e.g. `azure/...`, `azure-xyz/...`), and only when the
   agent uses observational memory, `<system-reminder ...>` wrappers in system
   and user text become `<memory-context ...>` (avoids content-filter
   rejections). Observational memory is the constructor flag
   `observational_memory`; when it is left unset (None), the request context
   key `agentd.observationalMemory` (reserved: set by the runtime, never by
   callers) decides.

Provider detection reads "provider/model" or "provider:model" strings; the
provider part matches a rule's provider `p` when it is `p` or starts with `p.`
or `p-` (e.g. `azure-xyz`). Objects with a `provider` (or a `spec` string)
and lists of such (fallback chains: any entry) are understood too.
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from agentd.runtime.messages import Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from agentd.runtime.processors.base import (
    APIErrorResult,
    LLMRequestResult,
    ProcessAPIErrorArgs,
    ProcessLLMRequestArgs,
    Processor,
)
from agentd.runtime.processors.builtins.error_chain import chain_texts
from agentd.runtime.processors.factory import dataclass_from_options

PROVIDER_HISTORY_COMPAT_ID = "provider-history-compat"
#: Request-context key (reserved prefix) telling the processor the agent uses
#: observational memory.
OBSERVATIONAL_MEMORY_CONTEXT_KEY = "agentd.observationalMemory"
#: State key: names of the rules whose `recover_prompt` is active for the request.
RECOVERING_RULES_STATE_KEY = "recoveringRules"
#: How many model strings a processor remembers the rules of.
_MODELS_REMEMBERED: Final = 256

PromptRewrite = Callable[[list[Message], Any], list[Message] | None]
PromptRecovery = Callable[[list[Message]], list[Message] | None]
MessagesFix = Callable[[list[Message]], bool]

TOOL_CALL_ID_PATTERN = re.compile(r"^[a-zA-Z0-9_-]+$")
_TOOL_CALL_ID_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]")


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What a rule's `when` sees for one outbound request."""

    model: Any
    request_context: Mapping[str, Any]
    observational_memory: bool


@dataclass(frozen=True, slots=True)
class CompatRule:
    """One compatibility rule.

    `apply_to_prompt(prompt, model)` returns a new prompt or None (unchanged) and
    must not modify the prompt it is given; it runs only for models of
    `providers` (any model when empty) and when `when(context)` holds (if set).
    `error_patterns` (regexes, case-insensitive) select errors for `fix` and
    `recover_prompt` (see the module docstring).
    """

    name: str
    error_patterns: tuple[str | re.Pattern[str], ...] = ()
    fix: MessagesFix | None = None
    apply_to_prompt: PromptRewrite | None = None
    recover_prompt: PromptRecovery | None = None
    providers: tuple[str, ...] = ()
    when: Callable[[RuleContext], bool] | None = None
    _compiled: tuple[re.Pattern[str], ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("a compat rule needs a name")
        compiled = tuple(
            p if isinstance(p, re.Pattern) else re.compile(p, re.IGNORECASE | re.DOTALL) for p in self.error_patterns
        )
        object.__setattr__(self, "_compiled", compiled)

    def matches_error(self, texts: Iterable[str]) -> bool:
        texts = list(texts)
        return any(p.search(t) for p in self._compiled for t in texts)

    def applies_to(self, context: RuleContext) -> bool:
        if not _for_provider(self, context.model):
            return False
        return self.when is None or bool(self.when(context))


def _for_provider(rule: CompatRule, model: Any) -> bool:
    """The provider half of `applies_to`: `model` is served by one of the rule's providers (or it names none)."""
    return not rule.providers or served_by_any(model, rule.providers)


# ---------------------------------------------------------------- provider detection


# Every model call asks of the same few model strings: each is parsed once.
@functools.lru_cache(maxsize=1024)
def _spec_provider(spec: str) -> str | None:
    head, sep, _rest = spec.strip().partition("/")
    if not sep:
        head, sep, _rest = spec.strip().partition(":")
    return head.lower() if sep and head else None


@functools.lru_cache(maxsize=1024)
def _spec_served_by_any(spec: str, names: tuple[str, ...]) -> bool:
    return any(model_is_provider(spec, name) for name in names)


def served_by_any(model: Any, names: tuple[str, ...]) -> bool:
    """True when `model` is served by one of `names` (see model_is_provider)."""
    if isinstance(model, str) and isinstance(names, tuple):  # a list given for a tuple is not hashable
        return _spec_served_by_any(model, names)
    return any(model_is_provider(model, name) for name in names)


def provider_of(model: Any) -> str | None:
    """The provider part of "provider/model" or "provider:model" (lower-cased)."""
    if isinstance(model, str):
        return _spec_provider(model)
    provider = getattr(model, "provider", None)
    if isinstance(provider, str) and provider:
        return provider.lower()
    spec = getattr(model, "spec", None)
    return provider_of(spec) if isinstance(spec, str) else None


def model_is_provider(model: Any, name: str) -> bool:
    """True when `model` (or any entry of a list of models) is served by `name`."""
    if isinstance(model, (list, tuple)):
        return any(model_is_provider(getattr(m, "model", m), name) for m in model)
    provider = provider_of(model)
    if provider is None:
        return False
    name = name.lower()
    return provider == name or provider.startswith((f"{name}.", f"{name}-"))


# ---------------------------------------------------------------- rule helpers


def _with_parts(message: Message, parts: list[Any]) -> Message:
    return replace(message, parts=parts)


def rewrite_tool_call_ids(prompt: list[Message]) -> list[Message] | None:
    """Rewrites tool-call ids not matching ^[a-zA-Z0-9_-]+$ (calls and their
    results share one mapping); None when every id already matches."""
    ids: list[str] = []
    for message in prompt:
        for part in message.parts:
            if isinstance(part, (ToolCallPart, ToolResultPart)):
                ids.append(part.tool_call_id)
    bad = [i for i in dict.fromkeys(ids) if not TOOL_CALL_ID_PATTERN.match(i)]
    if not bad:
        return None
    taken = {i for i in ids if TOOL_CALL_ID_PATTERN.match(i)}
    mapping: dict[str, str] = {}
    for old in bad:
        base = _TOOL_CALL_ID_BAD_CHARS.sub("_", old) or "tool_call"
        new, n = base, 1
        while new in taken:
            n += 1
            new = f"{base}_{n}"
        taken.add(new)
        mapping[old] = new
    out: list[Message] = []
    for message in prompt:
        if not any(isinstance(p, (ToolCallPart, ToolResultPart)) and p.tool_call_id in mapping for p in message.parts):
            out.append(message)
            continue
        parts = [
            replace(p, tool_call_id=mapping[p.tool_call_id])
            if isinstance(p, (ToolCallPart, ToolResultPart)) and p.tool_call_id in mapping
            else p
            for p in message.parts
        ]
        out.append(_with_parts(message, parts))
    return out


def _strip_reasoning(prompt: list[Message], drop: Callable[[ReasoningPart], bool]) -> list[Message] | None:
    """Removes matching reasoning parts of assistant messages; drops assistant
    messages left empty. None when nothing matched."""
    changed = False
    out: list[Message] = []
    for message in prompt:
        if message.role != "assistant" or not any(isinstance(p, ReasoningPart) and drop(p) for p in message.parts):
            out.append(message)
            continue
        changed = True
        parts = [p for p in message.parts if not (isinstance(p, ReasoningPart) and drop(p))]
        if parts:
            out.append(_with_parts(message, parts))
    return out if changed else None


def strip_all_reasoning(prompt: list[Message], _model: Any = None) -> list[Message] | None:
    return _strip_reasoning(prompt, lambda _p: True)


def _is_empty_signed(part: ReasoningPart) -> bool:
    return bool(part.signature) and not part.text.strip() and not part.redacted_data


def strip_empty_signed_reasoning(prompt: list[Message], _model: Any = None) -> list[Message] | None:
    return _strip_reasoning(prompt, _is_empty_signed)


def _is_from_anthropic(part: ReasoningPart) -> bool:
    options = part.provider_options or {}
    if "anthropic" in options:
        return True
    return bool(part.signature or part.redacted_data) and not options


def strip_foreign_reasoning(prompt: list[Message], _model: Any = None) -> list[Message] | None:
    return _strip_reasoning(prompt, lambda p: not _is_from_anthropic(p))


_REMINDER_OPEN = re.compile(r"<system-reminder(?=[\s/>])")
_REMINDER_CLOSE = re.compile(r"</system-reminder\s*>")


def rename_system_reminders(prompt: list[Message], _model: Any = None) -> list[Message] | None:
    """`<system-reminder ...>`/`</system-reminder>` → `<memory-context ...>`/`</memory-context>`
    in system and user text parts."""
    changed = False
    out: list[Message] = []
    for message in prompt:
        if message.role not in ("system", "user"):
            out.append(message)
            continue
        parts: list[Any] = []
        touched = False
        for part in message.parts:
            if isinstance(part, TextPart):
                text = _REMINDER_OPEN.sub("<memory-context", part.text)
                text = _REMINDER_CLOSE.sub("</memory-context>", text)
                if text != part.text:
                    part = replace(part, text=text)
                    touched = True
            parts.append(part)
        changed = changed or touched
        out.append(_with_parts(message, parts) if touched else message)
    return out if changed else None


def _uses_observational_memory(context: RuleContext) -> bool:
    return context.observational_memory


def default_rules() -> list[CompatRule]:
    """The built-in rules, in order (fresh objects)."""
    return [
        CompatRule(
            name="anthropic-tool-call-id",
            error_patterns=(
                r"tool_use\.id\b.*should match pattern",
                r"tool_use_id\b.*should match pattern",
                r"tool_call_id\b.*invalid",
                r"invalid\b.*tool_call_id",
            ),
            apply_to_prompt=lambda prompt, _model: rewrite_tool_call_ids(prompt),
            recover_prompt=rewrite_tool_call_ids,
            providers=("anthropic",),
        ),
        CompatRule(name="cerebras-reasoning", apply_to_prompt=strip_all_reasoning, providers=("cerebras",)),
        CompatRule(
            name="anthropic-empty-signed-reasoning",
            apply_to_prompt=strip_empty_signed_reasoning,
            providers=("anthropic",),
        ),
        CompatRule(
            name="anthropic-foreign-reasoning",
            apply_to_prompt=strip_foreign_reasoning,
            providers=("anthropic",),
        ),
        CompatRule(
            name="azure-system-reminder",
            apply_to_prompt=rename_system_reminders,
            providers=("azure",),
            when=_uses_observational_memory,
        ),
    ]


def _rule(value: Any, index: int) -> CompatRule:
    if isinstance(value, CompatRule):
        return value
    if isinstance(value, Mapping):
        rule: CompatRule = dataclass_from_options(
            CompatRule, value, f"additional_rules[{index}]", tuples=("error_patterns", "providers")
        )
        return rule
    raise ValueError(f"additional_rules[{index}] must be a CompatRule or a dict")


#: Built once: every run's error lane gets a fresh ProviderHistoryCompat, and
#: the rules (frozen, their patterns compiled) are the same for all of them.
_DEFAULT_RULES: Final = tuple(default_rules())


class ProviderHistoryCompat(Processor):
    """Provider compatibility rules for outbound prompts (see the module docstring).

    Options: `additional_rules` (CompatRule or dicts, appended after the
    defaults; names must be unique), `observational_memory` (bool; None: read
    the request context key `agentd.observationalMemory`).
    """

    id = PROVIDER_HISTORY_COMPAT_ID
    name = "Provider History Compat"

    def __init__(
        self,
        *,
        additional_rules: Sequence[CompatRule | Mapping[str, Any]] | None = None,
        observational_memory: bool | None = None,
    ) -> None:
        if additional_rules is not None and not isinstance(additional_rules, (list, tuple)):
            raise ValueError("additional_rules must be a list")
        rules = [*_DEFAULT_RULES, *(_rule(r, i) for i, r in enumerate(additional_rules or ()))]
        names = [r.name for r in rules]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate compat rule name(s): {', '.join(duplicates)}")
        self.rules: tuple[CompatRule, ...] = tuple(rules)
        self.observational_memory = observational_memory
        #: Per model string: whether any rule's rewrite is for that model's provider
        #: (its `when` still decides per request). Bounded: models come from agents.
        self._rewrites_for: dict[str, bool] = {}

    def _may_rewrite(self, model: Any) -> bool:
        """False when no rule's `apply_to_prompt` is for `model`'s provider: then
        only a recovering rule can change the prompt."""
        if not isinstance(model, str):  # not a key to remember it by
            return self._rewrites(model)
        known = self._rewrites_for.get(model)
        if known is None:
            if len(self._rewrites_for) >= _MODELS_REMEMBERED:
                self._rewrites_for.clear()
            known = self._rewrites_for[model] = self._rewrites(model)
        return known

    def _rewrites(self, model: Any) -> bool:
        return any(r.apply_to_prompt is not None and _for_provider(r, model) for r in self.rules)

    def _context(self, args: ProcessLLMRequestArgs) -> RuleContext:
        observational = self.observational_memory
        if observational is None:
            observational = bool(args.request_context.get(OBSERVATIONAL_MEMORY_CONTEXT_KEY))
        return RuleContext(args.model, args.request_context, observational)

    def wants_llm_request(self, state: Mapping[str, Any], model: str) -> bool:
        """False when process_llm_request would change nothing (the runner then
        does not call it): no rule is recovering and none rewrites for `model`."""
        return bool(state.get(RECOVERING_RULES_STATE_KEY)) or self._may_rewrite(model)

    def process_llm_request(self, args: ProcessLLMRequestArgs) -> LLMRequestResult | None:
        if not self.wants_llm_request(args.state, args.model):
            return None  # what the loop below finds, without a context and a check per rule
        context = self._context(args)
        recovering = set(args.state.get(RECOVERING_RULES_STATE_KEY, ()))
        steps: list[tuple[CompatRule, bool]] = []
        for rule in self.rules:
            preemptive = rule.apply_to_prompt is not None and rule.applies_to(context)
            reactive = rule.recover_prompt is not None and rule.name in recovering
            if preemptive or reactive:
                steps.append((rule, preemptive))
        if not steps:
            return None
        prompt = copy.deepcopy(args.prompt)
        touched = False
        for rule, preemptive in steps:
            if preemptive and rule.apply_to_prompt is not None:
                rewritten = rule.apply_to_prompt(prompt, args.model)
                if rewritten is not None:
                    prompt, touched = rewritten, True
            if rule.name in recovering and rule.recover_prompt is not None:
                recovered = rule.recover_prompt(prompt)
                if recovered is not None:
                    prompt, touched = recovered, True
        if not touched or prompt == args.prompt:
            return None
        return LLMRequestResult(prompt=prompt)

    def process_api_error(self, args: ProcessAPIErrorArgs) -> APIErrorResult | None:
        if args.retry_count != 0:
            return None
        texts = chain_texts(args.error)
        changed = False
        for rule in self.rules:
            if not rule.error_patterns or not rule.matches_error(texts):
                continue
            if rule.fix is not None and rule.fix(args.message_list.get_all()):
                changed = True
            if rule.recover_prompt is not None:
                recovering: list[str] = args.state.setdefault(RECOVERING_RULES_STATE_KEY, [])
                if rule.name in recovering:
                    continue
                # Retry only when the recovery would change what is sent.
                history = [*args.message_list.all_system_messages(), *args.message_list.get_all()]
                if rule.recover_prompt(copy.deepcopy(history)) is not None:
                    recovering.append(rule.name)
                    changed = True
        return APIErrorResult(retry=True) if changed else None
