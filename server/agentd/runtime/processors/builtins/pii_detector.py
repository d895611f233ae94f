"""PIIDetector ("pii-detector"): finds personal data and secrets; blocks, warns, filters or redacts.

Deterministic patterns run first and always apply, judge or no judge:

* `email`: local@domain.tld;
* `phone`: `+` and a country code with 8-15 digits in all (`+1 415-555-0132`,
  `+44 20 7946 0958`, `+49 30 901820`), or the North American 3-3-4 form with
  separators (`(415) 555-0132`, `415.555.0132`); bare digit runs are not phones;
* `credit-card`: 13-19 digits, spaces or dashes allowed between them, starting
  with 2-6 and passing the Luhn check;
* `ssn`: US `ddd-dd-dddd`, area not 000, 666 or 9xx, group not 00, serial not 0000;
* `national-id`: UK National Insurance numbers (`QQ 12 34 56 C`);
* `ip-address`: IPv4 (dotted quad, each octet <= 255) and IPv6 (validated, at
  least one decimal digit, so `Abc::Def` in code is not an address);
* `api-key`: vendor formats (`sk-...`, `sk_live_...`, `AKIA`/`ASIA` + 16,
  `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` + 36, `github_pat_...`, `xoxb-`/`xoxp-`/...,
  `AIza` + 35) whose body mixes letters and digits, and *generic assignments*
  (`api_key=`, `secret:`, `token =`, `password=`, `client_secret=` ...) whose
  value is 20+ token characters and looks random: not UUID-shaped, Shannon
  entropy >= 3.5 bits per character, and at least one run of 8+ characters
  (between `_ - . / + =`) mixing two of lower case, upper case and digits.
  So placeholders (`your_api_key_goes_here`), UUIDs, a commit sha in prose and
  `sk-` inside a word (`task-force`) are not secrets;
* `iban`: country code, check digits, 11-30 more characters, mod-97 valid;
* `address`: a house number, 1-4 capitalised words and a street suffix
  (`221B Baker Street`, `1600 Pennsylvania Avenue`, `10 Main St`);
* `custom_patterns`: `{type: regex}`, each match a finding of that type.

`name`, `date-of-birth`, `url`, `uuid` and `crypto-wallet` are left to the
optional judge (`model`): it answers `{"categories": [{"type", "score"}],
"detections": [{"type", "value", "confidence", "start", "end"}],
"redacted_content"}` at temperature 0; its detections add to the pattern
findings, a category at or above `threshold` flags the message too. A failed
judge call or a malformed answer is logged once and the pattern findings
still apply. The judge runs on whole messages; the stream is checked per
text-delta with the patterns only (a value split over two deltas escapes
there). `process_output_step` checks each step's assistant message whole
(patterns and judge), so such a value is redacted before the next step's
model call, or the thread, sees it; the result hook does not check a text the
step hook already checked.

Strategies: `block` (tripwire), `warn` (one warning and one on_violation,
content unchanged), `filter` (message or chunk dropped), `redact` (default).
The violation detail holds the detected `types`, per-type `counts` and the total
`count` (and with `include_detections` the spans with masked values, never the
raw values). Redaction (`redaction_method`): `mask` (format-preserving, see
`mask_value`), `hash` (`[HASH:<first 8 hex of sha256>]`), `remove`, `placeholder`
(`[EMAIL]`). With the judge's `redacted_content` the patterns run again over it;
otherwise the found spans are replaced. A message flagged only by a category
score (nothing to replace) is kept; such a chunk is dropped.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Unpack

from agentd.runtime.chunks import Chunk
from agentd.runtime.messages import Message
from agentd.runtime.processors.base import (
    HookArgs,
    ProcessInputArgs,
    ProcessOutputResultArgs,
    ProcessOutputStepArgs,
    ProcessOutputStreamArgs,
)
from agentd.runtime.processors.builtins.guardrail import (
    Finding,
    Guardrail,
    GuardrailOptions,
    at_or_above,
    detection_items,
    locate,
    scored_items,
    top_scores,
    verdict,
)
from agentd.runtime.processors.builtins.judge import (
    check_choice,
    check_names,
    check_threshold,
    delta_text,
    quoted,
    text_of,
)

DEFAULT_TYPES = (
    "email",
    "phone",
    "credit-card",
    "ssn",
    "national-id",
    "api-key",
    "ip-address",
    "name",
    "address",
    "date-of-birth",
    "url",
    "uuid",
    "crypto-wallet",
    "iban",
)
STRATEGIES = ("block", "warn", "filter", "redact")
REDACTION_METHODS = ("mask", "hash", "remove", "placeholder")

# ---------------------------------------------------------------- patterns

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-])"
)
_PHONE_INTL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .\-]?(?:\(\d{1,4}\)|\d{1,10})){1,6}(?![\d])")
_PHONE_NANP = re.compile(r"(?<![\w+(])(?:1[ .\-])?(?:\(\d{3}\)[ .\-]?|\d{3}[ .\-])\d{3}[ .\-]\d{4}(?![\d]|-\d)")
_CARD = re.compile(r"(?<![\w+-])[2-6](?:[ -]?\d){12,18}(?![\w-])")
_SSN = re.compile(r"(?<![\w-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\w-])")
_NINO = re.compile(r"\b(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?![\w]|\.\d)")
_IPV6 = re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])")
_VENDOR_KEY = re.compile(
    r"(?<![\w-])(?:"
    r"(?P<p1>sk-(?:proj-|ant-)?)[A-Za-z0-9_\-]{20,}"
    r"|(?P<p2>[spr]k_(?:live|test)_)[A-Za-z0-9]{16,}"
    r"|(?P<p3>AKIA|ASIA)[0-9A-Z]{16}"
    r"|(?P<p4>gh[pousr]_)[A-Za-z0-9]{36}"
    r"|(?P<p5>github_pat_)[A-Za-z0-9_]{22,}"
    r"|(?P<p6>xox[baprs]-)[A-Za-z0-9\-]{10,}"
    r"|(?P<p7>AIza)[0-9A-Za-z_\-]{35}"
    r")(?![\w-])"
)
_KEY_PREFIX = re.compile(
    r"^(?:sk-(?:proj-|ant-)?|[spr]k_(?:live|test)_|AKIA|ASIA|gh[pousr]_|github_pat_|xox[baprs]-|AIza)"
)
_ASSIGNMENT = re.compile(
    r"(?i)(?<![\w-])(?:api[_-]?key|apikey|api[_-]?secret|secret(?:[_-]?key)?|access[_-]?key|access[_-]?token|"
    r"auth[_-]?token|bearer[_-]?token|token|password|passwd|pwd|client[_-]?secret|private[_-]?key)"
    r"[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9_\-+/=.]{20,})"
)
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
_RUNS = re.compile(r"[^_\-./+=]+")
_IBAN = re.compile(r"(?<![\w])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![\w])")
_STREET_SUFFIX = (
    r"Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|"
    r"Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Crescent|Close|Alley"
)
_ADDRESS = re.compile(rf"(?<![\w-])\d{{1,6}}[A-Za-z]?(?: [A-Z][A-Za-z0-9'.-]*){{1,4}} (?:{_STREET_SUFFIX})\b")

#: Which finding wins when two overlap (earlier wins).
_PRIORITY = ("api-key", "credit-card", "iban", "email", "ssn", "national-id", "phone", "ip-address", "address")
PATTERN_TYPES = frozenset(_PRIORITY)


@dataclass(frozen=True, slots=True)
class Detection:
    type: str
    value: str
    start: int
    end: int
    confidence: float = 1.0
    #: "pattern", "custom" or "judge".
    source: str = "pattern"


# Luhn, mod-97 and the phone digit count are kept here rather than taken from
# python-stdnum / phonenumbers: redaction wants recall, and those libraries'
# stricter validity (per-country IBAN layouts, assigned number ranges, a
# default region for national numbers) would let plausible values through.
def luhn_ok(digits: str) -> bool:
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = int(char)
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_ok(value: str) -> bool:
    compact = value.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    rearranged = compact[4:] + compact[:4]
    number = "".join(str(int(c, 36)) for c in rearranged)
    return int(number) % 97 == 1


def shannon_entropy(value: str) -> float:
    counts = Counter(value)
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _classes(text: str) -> int:
    return sum((any(c.islower() for c in text), any(c.isupper() for c in text), any(c.isdigit() for c in text)))


def looks_random(value: str) -> bool:
    """The high-entropy rule for generic secret assignments (see the module doc)."""
    if len(value) < 20 or _UUID.match(value):
        return False
    if shannon_entropy(value) < 3.5:
        return False
    return any(len(run) >= 8 and _classes(run) >= 2 for run in _RUNS.findall(value))


def _vendor_body_ok(value: str) -> bool:
    prefix = _KEY_PREFIX.match(value)
    body = value[prefix.end() :] if prefix else value
    return any(c.isdigit() for c in body) and any(c.isalpha() for c in body)


def _card_ok(value: str) -> bool:
    digits = re.sub(r"\D", "", value)
    return 13 <= len(digits) <= 19 and luhn_ok(digits)


def _phone_ok(value: str) -> bool:
    return 8 <= sum(c.isdigit() for c in value) <= 15


def _ipv6_ok(candidate: str) -> bool:
    groups = [g for g in candidate.split(":") if g]
    if len(groups) < 2 or not any(c.isdigit() for c in candidate):
        return False
    try:
        ipaddress.IPv6Address(candidate)
    except ValueError:
        return False
    return True


Spans = Callable[[str], Iterator[tuple[int, int]]]


def _matches(pattern: re.Pattern[str], ok: Callable[[str], bool] | None = None) -> Spans:
    """The spans of `pattern`'s matches (those `ok` accepts)."""

    def spans(text: str) -> Iterator[tuple[int, int]]:
        for m in pattern.finditer(text):
            if ok is None or ok(m.group()):
                yield m.start(), m.end()

    return spans


def _secret_assignments(text: str) -> Iterator[tuple[int, int]]:
    """The values of `name = value` assignments that look random."""
    for m in _ASSIGNMENT.finditer(text):
        value = m.group("value").rstrip(".")
        if looks_random(value):
            yield m.start("value"), m.start("value") + len(value)


#: What each type is found by, in the order findings are made.
_FINDERS: tuple[tuple[str, Spans], ...] = (
    ("api-key", _matches(_VENDOR_KEY, _vendor_body_ok)),
    ("api-key", _secret_assignments),
    ("credit-card", _matches(_CARD, _card_ok)),
    ("iban", _matches(_IBAN, iban_ok)),
    ("email", _matches(_EMAIL)),
    ("ssn", _matches(_SSN)),
    ("national-id", _matches(_NINO)),
    ("phone", _matches(_PHONE_INTL, _phone_ok)),
    ("phone", _matches(_PHONE_NANP)),
    ("ip-address", _matches(_IPV4)),
    ("ip-address", _matches(_IPV6, _ipv6_ok)),
    ("address", _matches(_ADDRESS)),
)


def _pattern_findings(text: str, types: frozenset[str]) -> list[Detection]:
    return [
        Detection(kind, text[start:end], start, end)
        for kind, spans in _FINDERS
        if kind in types
        for start, end in spans(text)
    ]


def _resolve(findings: list[Detection]) -> list[Detection]:
    """Non-overlapping findings, by start: patterns by priority, then custom, then judge; longer first."""

    def rank(d: Detection) -> tuple[int, int, int]:
        source = {"pattern": 0, "custom": 1, "judge": 2}.get(d.source, 3)
        priority = _PRIORITY.index(d.type) if d.type in _PRIORITY else len(_PRIORITY)
        return (source, priority, -(d.end - d.start))

    kept: list[Detection] = []
    for d in sorted(findings, key=rank):
        if d.end > d.start and all(d.end <= k.start or d.start >= k.end for k in kept):
            kept.append(d)
    return sorted(kept, key=lambda d: d.start)


def detect_pii(
    text: str,
    types: frozenset[str] | set[str] | None = None,
    custom_patterns: Mapping[str, re.Pattern[str]] | None = None,
) -> list[Detection]:
    """The deterministic findings in `text` (non-overlapping, by position)."""
    wanted = frozenset(types) if types is not None else PATTERN_TYPES
    findings = _pattern_findings(text, wanted)
    for kind, pattern in (custom_patterns or {}).items():
        for m in pattern.finditer(text):
            findings.append(Detection(kind, m.group(), m.start(), m.end(), source="custom"))
    return _resolve(findings)


# ---------------------------------------------------------------- masks


def _mask_chars(text: str, keep: int = 0, char: str = "*", *, which: str = "alnum") -> str:
    """Masks alphanumerics (or digits) except the last `keep` of them; other characters stay."""
    test = str.isdigit if which == "digit" else str.isalnum
    total = sum(1 for c in text if test(c))
    out: list[str] = []
    seen = 0
    for c in text:
        if test(c):
            seen += 1
            out.append(c if seen > total - keep else char)
        else:
            out.append(c)
    return "".join(out)


def _mask_default(value: str) -> str:
    if len(value) <= 3:
        return "*" * len(value)
    return value[0] + _mask_chars(value[1:-1]) + value[-1]


def _mask_email(value: str) -> str:
    local, _, domain = value.rpartition("@")
    local = "*" * len(local) if len(local) <= 2 else local[0] + "*" * (len(local) - 2) + local[-1]
    first, dot, rest = domain.partition(".")
    return f"{local}@{'*' * len(first)}{dot}{rest}"


def _mask_ip(value: str) -> str:
    if ":" in value:
        first, sep, rest = value.partition(":")
        return first + sep + re.sub(r"[0-9A-Fa-f]", "*", rest)
    first, sep, rest = value.partition(".")
    return first + sep + re.sub(r"\d", "*", rest)


def _mask_key(value: str) -> str:
    prefix = _KEY_PREFIX.match(value)
    keep = prefix.end() if prefix else min(4, len(value) // 5)
    return value[:keep] + "*" * (len(value) - keep)


def mask_value(kind: str, value: str, *, preserve_format: bool = True) -> str:
    """Format-preserving masks: email keeps the first and last character of the
    local part and masks the first domain label; phone masks digits except the
    last four with X; card, SSN and national id mask all but the last four with
    *; an API key keeps its vendor prefix (else its first 4 characters); an IP
    address keeps its first octet (group); a UUID masks its hex digits; a crypto
    wallet keeps 4 + 4 characters; an IBAN keeps the first 2 and last 4; anything
    else keeps its first and last character (3 or fewer: all masked).
    preserve_format=False: up to 8 `*`."""
    if not preserve_format:
        return "*" * min(len(value), 8)
    if kind == "email" and "@" in value:
        return _mask_email(value)
    if kind == "phone":
        return _mask_chars(value, 4, "X", which="digit")
    if kind in ("credit-card", "ssn"):
        return _mask_chars(value, 4, which="digit")
    if kind == "national-id":
        return _mask_chars(value, 4)
    if kind == "api-key":
        return _mask_key(value)
    if kind == "ip-address":
        return _mask_ip(value)
    if kind == "uuid":
        return re.sub(r"[0-9A-Fa-f]", "*", value)
    if kind == "crypto-wallet" and len(value) > 8:
        return value[:4] + "*" * (len(value) - 8) + value[-4:]
    if kind == "iban" and len(value) > 6:
        return value[:2] + _mask_chars(value[2:], 4)
    return _mask_default(value)


def redact_value(kind: str, value: str, method: str = "mask", *, preserve_format: bool = True) -> str:
    if method == "hash":
        return f"[HASH:{hashlib.sha256(value.encode()).hexdigest()[:8]}]"
    if method == "remove":
        return ""
    if method == "placeholder":
        return f"[{kind.upper()}]"
    return mask_value(kind, value, preserve_format=preserve_format)


def redact_text(text: str, detections: list[Detection], method: str = "mask", *, preserve_format: bool = True) -> str:
    """`text` with each detection's span replaced (spans must not overlap)."""
    for d in sorted(detections, key=lambda d: d.start, reverse=True):
        text = text[: d.start] + redact_value(d.type, d.value, method, preserve_format=preserve_format) + text[d.end :]
    return text


# ---------------------------------------------------------------- the processor


def verdict_schema(types: tuple[str, ...], *, redact: bool) -> dict[str, Any]:
    return verdict(
        {"categories": scored_items("type", types), "detections": detection_items(types)},
        required="detections",
        text="redacted_content" if redact else None,
    )


@dataclass
class Findings:
    detections: list[Detection] = field(default_factory=list)
    #: Types flagged by a judge category score only.
    category_types: list[str] = field(default_factory=list)
    judge_redacted: str | None = None

    @property
    def flagged(self) -> bool:
        return bool(self.detections or self.category_types)

    @property
    def types(self) -> list[str]:
        return list(dict.fromkeys([d.type for d in self.detections] + self.category_types))


class PIIDetector(Guardrail):
    id = "pii-detector"
    name = "PII Detector"
    strategies = STRATEGIES
    default_strategy = "redact"
    model_required = False  # the patterns run without a judge

    def __init__(
        self,
        *,
        detection_types: list[str] | None = None,
        threshold: float = 0.6,
        redaction_method: str = "mask",
        include_detections: bool = False,
        preserve_format: bool = True,
        custom_patterns: dict[str, str] | None = None,
        **options: Unpack[GuardrailOptions],
    ) -> None:
        super().__init__(**options)
        self.detection_types = check_names("detection_types", detection_types, default=DEFAULT_TYPES)
        self.threshold = check_threshold(threshold)
        self.redaction_method = check_choice("redaction_method", redaction_method, REDACTION_METHODS)
        self.include_detections = bool(include_detections)
        self.preserve_format = bool(preserve_format)
        self.instructions = self.custom_instructions or self._default_instructions()
        self.custom_patterns: dict[str, re.Pattern[str]] = {}
        if custom_patterns is not None:
            if not isinstance(custom_patterns, dict):
                raise ValueError("custom_patterns must be an object of type -> regular expression")
            for kind, pattern in custom_patterns.items():
                try:
                    self.custom_patterns[str(kind)] = re.compile(str(pattern))
                except re.error as exc:
                    raise ValueError(f"custom_patterns[{kind!r}]: {exc}") from None
        self.pattern_types = frozenset(self.detection_types) & PATTERN_TYPES
        self.schema = verdict_schema(self.detection_types, redact=self.strategy == "redact")

    def _default_instructions(self) -> str:
        return (
            "You are a PII detection specialist. Find personally identifiable information and secrets of these "
            f"types: {', '.join(self.detection_types)}.\n"
            "Report only the types actually present: categories with a score from 0 to 1 and detections with the "
            "exact value and its start/end offsets in the content; use empty lists when there is none.\n"
            'Answer with JSON only: {"categories": [{"type": "...", "score": 0.0}], "detections": [{"type": "...", '
            '"value": "...", "confidence": 0.0, "start": 0, "end": 0}]'
            + (', "redacted_content": "..."}.' if self.strategy == "redact" else "}.")
        )

    def scan(self, text: str) -> list[Detection]:
        """The deterministic findings (patterns and custom patterns)."""
        return detect_pii(text, self.pattern_types, self.custom_patterns)

    # ------------------------------------------------------------ findings

    async def _findings(self, text: str, args: HookArgs) -> Findings:
        findings = Findings(self.scan(text))
        if self.model is None:
            return findings
        prompt = "Analyse the following content for PII"
        if self.strategy == "redact":
            prompt += " and provide redacted_content with every detected value replaced"
        answer = await self.ask(self.instructions, f"{prompt}:\n\n{quoted(text)}", self.schema, args)
        if answer is None:
            return findings  # fail open: the pattern findings still apply
        judged = list(findings.detections)
        for item in answer.get("detections") or []:
            confidence = item.get("confidence")
            for start, end in locate(text, item):
                judged.append(
                    Detection(
                        item["type"],
                        text[start:end],
                        start,
                        end,
                        float(confidence) if isinstance(confidence, (int, float)) else 1.0,
                        "judge",
                    )
                )
        findings.detections = _resolve(judged)
        found = {d.type for d in findings.detections}
        scores = top_scores(answer.get("categories"), "type")
        findings.category_types = [t for t in at_or_above(scores, self.threshold) if t not in found]
        redacted = answer.get("redacted_content")
        if isinstance(redacted, str) and redacted != text:
            findings.judge_redacted = redacted
        return findings

    def _redacted(self, text: str, findings: Findings) -> str | None:
        if findings.judge_redacted is not None:
            base = findings.judge_redacted
            return redact_text(base, self.scan(base), self.redaction_method, preserve_format=self.preserve_format)
        if findings.detections:
            return redact_text(text, findings.detections, self.redaction_method, preserve_format=self.preserve_format)
        return None

    def _finding(self, text: str, findings: Findings) -> Finding | None:
        if not findings.flagged:
            return None
        counts = dict(Counter(d.type for d in findings.detections))
        count = len(findings.detections)
        types = findings.types
        message = f"PII detected. Types: {', '.join(types)}"
        if count:
            message += f" ({count} detection{'s' if count != 1 else ''})"
        detail: dict[str, Any] = {"types": types, "counts": counts, "count": count}
        if self.include_detections:
            detail["detections"] = [
                {
                    "type": d.type,
                    "start": d.start,
                    "end": d.end,
                    "redacted_value": mask_value(d.type, d.value, preserve_format=self.preserve_format),
                    "source": d.source,
                }
                for d in findings.detections
            ]
        return Finding(message, detail, self._redacted(text, findings) if self.strategy == "redact" else None)

    async def _find(self, text: str, args: HookArgs) -> Finding | None:
        return self._finding(text, await self._findings(text, args))

    # ------------------------------------------------------------ hooks

    async def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        return await self.guard_messages(args, args.messages, "input", lambda text: self._find(text, args))

    def process_output_stream(self, args: ProcessOutputStreamArgs) -> Chunk | None:
        text = delta_text(args.part)
        if not text:
            return args.part
        return self.on_chunk(args, args.part, self._finding(text, Findings(self.scan(text))))

    async def process_output_step(self, args: ProcessOutputStepArgs) -> list[Message] | None:
        """The step's assistant message, whole, before the next step (or the
        thread) sees it: a value split over two deltas escapes the stream check."""
        last = next((i for i in range(len(args.messages) - 1, -1, -1) if args.messages[i].role == "assistant"), None)
        if last is None:
            return None
        checked: dict[str, str] = args.state.setdefault("step_checked", {})
        guarded = await self.guard_messages(
            args, args.messages[: last + 1], "output-step", lambda text: self._find(text, args), only_last=True
        )
        kept = (guarded if guarded is not None else args.messages[: last + 1])[-1:]
        if kept and kept[0].id == args.messages[last].id:
            checked[kept[0].id] = text_of(kept[0])  # the result hook need not judge this text again
        if guarded is None:
            return None
        return guarded + args.messages[last + 1 :]

    async def process_output_result(self, args: ProcessOutputResultArgs) -> list[Message] | None:
        checked: dict[str, str] = args.state.get("step_checked", {})

        async def find(text: str) -> Finding | None:
            return None if text in checked.values() else await self._find(text, args)

        return await self.guard_messages(args, args.messages, "output-result", find)
