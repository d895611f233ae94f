"""UnicodeNormalizer ("unicode-normalizer"): normalises the text of the input messages.

For every text part of this call's input messages: NFKC normalisation; optional
control-character stripping; whitespace collapsing; trimming. On any error the
messages are left as they were.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import unicodedata

from agentd.runtime.messages import Message, Part, TextPart
from agentd.runtime.processors.base import ProcessInputArgs, Processor

log = logging.getLogger("agentd.processors.unicode_normalizer")

#: C0 and C1 controls except tab, LF and CR (emoji and other astral characters stay).
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
#: Everything but tab/LF/CR, printable ASCII and U+00A0-U+FFFF (drops astral characters such as emoji).
_NOT_BASIC = re.compile(r"[^\t\n\r\x20-\x7e\u00a0-\uffff]")
_NEWLINES = re.compile(r"\r\n?")
_NEWLINE_RUNS = re.compile(r"\n+")
_SPACE_RUNS = re.compile(r"[ \t]+")


class UnicodeNormalizer(Processor):
    id = "unicode-normalizer"
    name = "Unicode Normalizer"

    def __init__(
        self,
        *,
        strip_control_chars: bool = False,
        preserve_emojis: bool = True,
        collapse_whitespace: bool = True,
        trim: bool = True,
    ) -> None:
        for option, value in (
            ("strip_control_chars", strip_control_chars),
            ("preserve_emojis", preserve_emojis),
            ("collapse_whitespace", collapse_whitespace),
            ("trim", trim),
        ):
            if not isinstance(value, bool):
                raise ValueError(f"{option} must be a boolean")
        self.id = type(self).id
        self.strip_control_chars = strip_control_chars
        self.preserve_emojis = preserve_emojis
        self.collapse_whitespace = collapse_whitespace
        self.trim = trim

    def normalize(self, text: str) -> str:
        text = unicodedata.normalize("NFKC", text)
        if self.strip_control_chars:
            text = (_CONTROLS if self.preserve_emojis else _NOT_BASIC).sub("", text)
        if self.collapse_whitespace:
            text = _NEWLINES.sub("\n", text)
            text = _NEWLINE_RUNS.sub("\n", text)
            text = _SPACE_RUNS.sub(" ", text)
        if self.trim:
            text = text.strip()
        return text

    def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        try:
            out: list[Message] = []
            changed = False
            for message in args.messages:
                parts: list[Part] = []
                touched = False
                for part in message.parts:
                    if isinstance(part, TextPart):
                        text = self.normalize(part.text)
                        if text != part.text:
                            part = dataclasses.replace(part, text=text)
                            touched = True
                    parts.append(part)
                out.append(dataclasses.replace(message, parts=parts) if touched else message)
                changed = changed or touched
        except Exception:
            log.exception("unicode normalisation failed; the messages are left unchanged")
            return None
        return out if changed else None
