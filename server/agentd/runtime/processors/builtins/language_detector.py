"""LanguageDetector ("language-detector"): detects the language of input messages; can translate or block.

For each input message with at least `min_text_length` characters of text, the
judge (temperature 0) answers `{"iso_code": str | null, "confidence": number | null,
"translated_text": str | null}` (a translation only with strategy `translate`,
into the first target language). A detection below `threshold` changes nothing.
A target language (or no detection) is recorded in the message metadata;
a non-target language is handled by the strategy:

* `detect` (default): recorded in the metadata only;
* `warn`: recorded, plus one warning and one on_violation;
* `block`: tripwire `Non-target language detected: Language detected: <Name> (<code>) with confidence <0.00>`;
* `translate`: the message becomes the judge's translation (the original text
  kept in the metadata with `preserve_original`).

Metadata: `message.metadata["language_detection"] = {detected_language, iso_code,
confidence, is_target_language, target_languages, translation?: {original_language,
target_language, translation_confidence}, original_content?}`.
A failed judge call or a malformed answer leaves the message as it is (one warning).

Log records on `agentd.processors.language-detector`, as Mastra's: a non-target
language at INFO (`Language detected: ...`; `Translated from <Name>: ...` when
translated, `Blocking: ...` when blocked), `warn` and a translation the judge did
not give at WARNING. With `include_detection_details`, content already in a
target language is logged too (`Content in target language: ...`), and every
record carries the detection (`extra={"language_detection": {...}}`, the
metadata above) for a structured log handler.

`translation_quality` (`speed`, `balanced`, `quality`; default `quality`) tells
the judge what to favour when it translates: a quick literal translation, or a
careful one that keeps meaning, tone and formatting.

Options: model (required), target_languages ["English", "en"], threshold 0.7,
strategy detect, preserve_original true, min_text_length 10, include_detection_details
false, translation_quality quality, instructions, provider_options.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Unpack

from agentd.runtime.messages import Message, TextPart
from agentd.runtime.processors.base import ProcessInputArgs
from agentd.runtime.processors.builtins.guardrail import Guardrail, GuardrailOptions, verdict
from agentd.runtime.processors.builtins.judge import (
    check_choice,
    check_names,
    check_non_negative_int,
    check_threshold,
    quoted,
    text_of,
)

STRATEGIES = ("detect", "translate", "block", "warn")
TRANSLATION_QUALITIES = ("speed", "balanced", "quality")
#: What each translation_quality asks of the judge.
_QUALITY_PROMPTS = {
    "speed": "Favour speed: a quick, literal translation is enough.",
    "balanced": "Balance speed and accuracy: a faithful translation without polishing.",
    "quality": "Favour accuracy: a careful, idiomatic translation that keeps the meaning, tone and formatting.",
}
#: How long a translation without a confidence is trusted.
DEFAULT_CONFIDENCE = 0.95

LANGUAGES: dict[str, str] = {
    "en": "English",
    "es": "Spanish",
    "fr": "French",
    "de": "German",
    "it": "Italian",
    "pt": "Portuguese",
    "ru": "Russian",
    "ja": "Japanese",
    "ko": "Korean",
    "zh": "Chinese",
    "ar": "Arabic",
    "hi": "Hindi",
    "nl": "Dutch",
    "sv": "Swedish",
    "da": "Danish",
    "no": "Norwegian",
    "fi": "Finnish",
    "pl": "Polish",
    "tr": "Turkish",
    "he": "Hebrew",
    "th": "Thai",
    "vi": "Vietnamese",
    "id": "Indonesian",
    "ms": "Malay",
    "uk": "Ukrainian",
    "cs": "Czech",
    "hu": "Hungarian",
    "ro": "Romanian",
    "bg": "Bulgarian",
    "hr": "Croatian",
    "sk": "Slovak",
    "sl": "Slovenian",
    "et": "Estonian",
    "lv": "Latvian",
    "lt": "Lithuanian",
    "el": "Greek",
    "ca": "Catalan",
}
_CODES = {name.lower(): code for code, name in LANGUAGES.items()}


def language_code(code_or_name: str) -> str:
    """The lower-case primary code of a code (`en`, `en-US`) or a known name (`English`)."""
    lowered = code_or_name.strip().lower()
    return _CODES.get(lowered) or lowered.replace("_", "-").split("-")[0]


def language_name(code_or_name: str) -> str:
    return LANGUAGES.get(language_code(code_or_name), code_or_name)


def verdict_schema(*, translate: bool) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "iso_code": {"type": ["string", "null"], "pattern": "^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$"},
        "confidence": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
    }
    return verdict(properties, required="iso_code", text="translated_text" if translate else None)


class LanguageDetector(Guardrail):
    id = "language-detector"
    name = "Language Detector"
    strategies = STRATEGIES
    default_strategy = "detect"

    def __init__(
        self,
        *,
        target_languages: list[str] | None = None,
        threshold: float = 0.7,
        preserve_original: bool = True,
        min_text_length: int = 10,
        include_detection_details: bool = False,
        translation_quality: str = "quality",
        **options: Unpack[GuardrailOptions],
    ) -> None:
        super().__init__(**options)
        self.include_detection_details = bool(include_detection_details)
        self.translation_quality = check_choice("translation_quality", translation_quality, TRANSLATION_QUALITIES)
        self.target_languages = check_names("target_languages", target_languages, default=("English", "en"))
        self.threshold = check_threshold(threshold)
        self.preserve_original = bool(preserve_original)
        self.min_text_length = check_non_negative_int("min_text_length", min_text_length)
        translate = self.strategy == "translate"
        self.instructions = self.custom_instructions or (
            "You are a language detection specialist. Identify the language of the content as an ISO 639-1 code "
            "with a confidence from 0 to 1 (null when there is no natural language)."
            + (" When asked, also translate it faithfully, keeping its formatting." if translate else "")
            + '\nAnswer with JSON only: {"iso_code": "..", "confidence": 0.0'
            + (', "translated_text": "..."}.' if translate else "}.")
        )
        self.schema = verdict_schema(translate=self.strategy == "translate")
        #: Target languages as lower-case primary codes.
        self._targets = {language_code(t) for t in self.target_languages}

    @property
    def translation_target(self) -> str:
        return language_name(self.target_languages[0])

    def is_target(self, code_or_name: str) -> bool:
        return language_code(code_or_name) in self._targets

    async def _one(self, message: Message, args: ProcessInputArgs) -> Message | None:
        """The message to keep in place of `message`, or None to keep it as it is."""
        text = text_of(message)
        if not text or len(text) < self.min_text_length:
            return None
        prompt = f"Detect the language of the following content.\n\n{quoted(text)}\n\n"
        prompt += f"Target languages: {', '.join(self.target_languages)}"
        if self.strategy == "translate":
            prompt += (
                f"\nIf it is not in a target language, also provide translated_text: "
                f"the content translated into {self.translation_target}. {_QUALITY_PROMPTS[self.translation_quality]}"
            )
        answer = await self.ask(self.instructions, prompt, self.schema, args)
        if answer is None:
            return None
        code = answer.get("iso_code")
        confidence = answer.get("confidence")
        translated = answer.get("translated_text")
        if confidence is None and isinstance(translated, str):
            confidence = DEFAULT_CONFIDENCE
        if confidence is not None and confidence < self.threshold:
            return None
        info: dict[str, Any] = {"target_languages": list(self.target_languages)}
        if not code or self.is_target(str(code)):
            first = self.target_languages[0]
            info.update(
                detected_language=language_name(str(code)) if code else language_name(first),
                iso_code=str(code).lower() if code else language_code(first),
                confidence=float(confidence) if code and confidence is not None else DEFAULT_CONFIDENCE,
                is_target_language=True,
            )
            if self.include_detection_details:
                self._log(
                    logging.INFO,
                    "Content in target language: "
                    + _alert(info["detected_language"], info["iso_code"], info["confidence"]),
                    message,
                    info,
                )
            return _with_metadata(message, info)
        code = str(code).lower()
        name = language_name(code)
        score = float(confidence) if confidence is not None else DEFAULT_CONFIDENCE
        info.update(detected_language=name, iso_code=code, confidence=score, is_target_language=False)
        alert = _alert(name, code, score)
        reason = f"Non-target language detected: {alert}"
        detail = {
            "detected_language": name,
            "iso_code": code,
            "confidence": score,
            "target_languages": list(self.target_languages),
            "phase": "input",
        }
        if self.strategy == "block":
            self._log(logging.INFO, f"Blocking: {reason}", message, info)
            args.abort(reason, metadata=detail)
        if self.strategy == "warn":
            self.warn(args, "input", reason, detail)
        if self.strategy == "detect":
            self._log(logging.INFO, alert, message, info)
        if self.strategy == "translate":
            if not isinstance(translated, str) or not translated.strip():
                self._log(logging.WARNING, f"No translation available, keeping original: {alert}", message, info)
                return _with_metadata(message, info)
            info["translation"] = {
                "original_language": name,
                "target_language": self.translation_target,
                "translation_confidence": score,
            }
            if self.preserve_original:
                info["original_content"] = text
            translated_message = dataclasses.replace(message, parts=[TextPart(translated)])
            self._log(logging.INFO, f"Translated from {name}: {alert}", message, info)
            return _with_metadata(translated_message, info)
        return _with_metadata(message, info)

    def _log(self, level: int, text: str, message: Message, info: dict[str, Any]) -> None:
        """One record naming the message; with include_detection_details it carries the detection too."""
        extra = {"language_detection": dict(info)} if self.include_detection_details else None
        self.log.log(level, "%s (message %s)", text, message.id, extra=extra)

    async def process_input(self, args: ProcessInputArgs) -> list[Message] | None:
        with self.aborting_on_error(args, "Language detection"):
            out: list[Message] = []
            changed = False
            for message in args.messages:
                replaced = await self._one(message, args)
                out.append(message if replaced is None else replaced)
                changed = changed or replaced is not None
            return out if changed else None


def _alert(name: str, code: str, confidence: float) -> str:
    return f"Language detected: {name} ({code}) with confidence {confidence:.2f}"


def _with_metadata(message: Message, info: dict[str, Any]) -> Message:
    return dataclasses.replace(message, metadata={**message.metadata, "language_detection": info})
