"""Run spans in OpenTelemetry's GenAI conventions.

One `invoke_agent {agent}` span per run, a `chat {model}` span per model call
(each retry or fallback its own), an `execute_tool {tool}` span per tool call,
and one `processor {id}` span per processor per phase (the input phase, each
step, the result phase), however many chunks its stream hook saw. A workflow
run as a tool has a `workflow {id}` span under its execute_tool span, and its
steps' spans (execute_tool, invoke_agent, workflow) under that.

Spans are built only when the host's Telemetry has a tracer (the server gives
it one when tracing is on); otherwise every span method here returns at its
first line, and the OpenTelemetry tracing API is not even loaded. Prompt and
completion text are recorded only with `capture_content`
(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true). The same places
count the run and time the model calls in the host's `Metrics` (no-op until
the server enables metrics).
"""

from __future__ import annotations

import json
import time
from contextlib import AbstractContextManager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from agentd.runtime.lazy import lazy
from agentd.runtime.metrics import OFF, Metrics
from agentd.runtime.redact import redact

if TYPE_CHECKING:
    from opentelemetry import trace
    from opentelemetry.trace import Span, SpanContext, SpanKind, Tracer
else:
    trace = lazy("opentelemetry.trace")  # spans on only: the API loads with the first tracer

#: A span context runs started in this context link to instead of descending
#: from: set by long-lived streams (Connect) so one connection does not parent
#: every run it starts, for hours.
LINK_TO: ContextVar[SpanContext | None] = ContextVar("agentd_link_to", default=None)


class Scorekeeper(Protocol):
    """Where an ended run goes to be scored (scoring.Scoring): True when it
    took the run's span, to end it once the scores are on it."""

    def submit(self, run: Any) -> bool: ...


@dataclass
class Telemetry:
    """What a run reports to: the tracer, the metrics and the scorekeeper."""

    tracer: Tracer | None = None
    capture_content: bool = False
    metrics: Metrics = OFF
    #: Scores the runs that answered (the seed's "evaluation and telemetry at run time"); None: no scoring.
    scoring: Scorekeeper | None = None

    def enable(self, provider: Any, *, capture_content: bool = False) -> None:
        self.tracer = provider.get_tracer("agentd")
        self.capture_content = capture_content

    def enable_metrics(self, provider: Any) -> Metrics:
        """Records into `provider` (a MeterProvider) from here on."""
        self.metrics = Metrics(provider)
        return self.metrics

    def workflow(self, workflow_id: str, run_id: str, tool_call_id: str) -> NestedTrace:
        """A workflow run's span, under the current one (the tool call's, or the step's that runs it)."""
        if self.tracer is None:
            return NestedTrace(None)
        attributes = {
            "agentd.workflow.id": workflow_id,
            "agentd.workflow.run.id": run_id,
            "gen_ai.tool.call.id": tool_call_id,
        }
        return NestedTrace(
            self.tracer.start_span(f"workflow {workflow_id}", kind=trace.SpanKind.INTERNAL, attributes=attributes)
        )

    def step_tool(self, tool_name: str, tool_call_id: str, args: Any, step_id: str) -> ToolTrace:
        """A workflow's tool step: an execute_tool span under the workflow's."""
        if self.tracer is None:
            return ToolTrace(None, False)
        attributes = {**_tool_attributes(tool_name, tool_call_id), "agentd.workflow.step.id": step_id}
        span = self.tracer.start_span(f"execute_tool {tool_name}", kind=trace.SpanKind.INTERNAL, attributes=attributes)
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.arguments", _json(args))
        return ToolTrace(span, self.capture_content)

    def run(self, *, agent_id: str, agent_name: str, run_id: str) -> RunTrace:
        metrics = self.metrics
        if self.tracer is None:
            if not metrics.enabled:
                return _QUIET_RUN
            metrics.run_started(agent_id)
            return RunTrace(None, None, False, metrics=metrics, agent_id=agent_id)
        metrics.run_started(agent_id)
        link = LINK_TO.get()
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.id": agent_id,
            "gen_ai.agent.name": agent_name or agent_id,
            "agentd.run.id": run_id,
        }
        if link is not None:  # a root of its own, linked to the caller of the stream that started it
            span = self.tracer.start_span(
                f"invoke_agent {agent_name or agent_id}",
                context=trace.set_span_in_context(trace.INVALID_SPAN),
                kind=trace.SpanKind.INTERNAL,
                attributes=attributes,
                links=[trace.Link(link)] if link.is_valid else [],
            )
        else:
            span = self.tracer.start_span(
                f"invoke_agent {agent_name or agent_id}", kind=trace.SpanKind.INTERNAL, attributes=attributes
            )
        return RunTrace(self.tracer, span, self.capture_content, metrics=self.metrics, agent_id=agent_id)


def provider_name(spec: str) -> str:
    return spec.split("/", 1)[0] if "/" in spec else spec


def model_name(spec: str) -> str:
    return spec.split("/", 1)[1] if "/" in spec else spec


@dataclass
class _ProcessorSpan:
    """A processor's span in a run, with the hooks it ran and its time."""

    span: Span
    hooks: list[str] = field(default_factory=list)
    calls: int = 0
    busy: float = 0.0


class RunTrace:
    """The spans of one run (every span method is a no-op without a tracer), and its metrics."""

    def __init__(
        self,
        tracer: Tracer | None,
        span: Span | None = None,
        capture_content: bool = False,
        *,
        metrics: Metrics | None = None,
        agent_id: str = "",
    ) -> None:
        self.tracer = tracer
        self.span = span
        self.capture_content = capture_content
        #: None: not a started run's (nothing is counted).
        self.metrics = metrics
        self.agent_id = agent_id
        self.phase = "input"
        self._processors: dict[str, _ProcessorSpan] = {}
        #: The run's end time while scoring holds its span open (`end(hold=True)`).
        self._held: int | None = None
        #: Whether `end` records anything (a span, or metrics that are on): else the loop skips it.
        self.recording = span is not None or (metrics is not None and metrics.enabled)

    def _child(self, name: str, kind: SpanKind, attributes: dict[str, Any]) -> Span | None:
        if self.tracer is None or self.span is None:
            return None
        return self.tracer.start_span(
            name, context=trace.set_span_in_context(self.span), kind=kind, attributes=attributes
        )

    def event(self, name: str, **attributes: Any) -> None:
        if self.span is not None:
            self.span.add_event(name, {k: v for k, v in attributes.items() if v is not None})

    # ------------------------------------------------------------ model calls and tools

    def chat(self, spec: str, step_number: int, prompt: Any, *, replayed: bool = False) -> ChatTrace:
        """A model call's span; `replayed`: a cached answer, which no model makes (no model metrics)."""
        counted = not replayed and self.metrics is not None and self.metrics.enabled
        if not counted and (self.tracer is None or self.span is None):
            return _UNRECORDED  # nothing to record: no attributes to build, no clock to read
        model = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(spec),
            "gen_ai.request.model": model_name(spec),
        }
        span = self._child(
            f"chat {model_name(spec)}", trace.SpanKind.CLIENT, {**model, "agentd.step.number": step_number}
        )
        if span is not None and self.capture_content:
            span.set_attribute("gen_ai.input.messages", _json(prompt))
        return ChatTrace(span, self.capture_content, None if replayed else self.metrics, model)

    def tool(self, tool_name: str, tool_call_id: str, args: Any) -> ToolTrace:
        span = self._child(
            f"execute_tool {tool_name}", trace.SpanKind.INTERNAL, _tool_attributes(tool_name, tool_call_id)
        )
        if span is not None and self.capture_content:
            span.set_attribute("gen_ai.tool.call.arguments", _json(args))
        return ToolTrace(span, self.capture_content)

    # ------------------------------------------------------------ processors

    def processor_called(self, processor_id: str, hook: str, seconds: float, tripwire: str | None = None) -> None:
        """One hook call finished; its time joins the processor's span for this phase."""
        if self.tracer is None or self.span is None:
            return
        entry = self._processors.get(processor_id)
        if entry is None:
            span = self.tracer.start_span(
                f"processor {processor_id}",
                context=trace.set_span_in_context(self.span),
                start_time=time.time_ns() - int(seconds * 1e9),
                attributes={"agentd.processor.id": processor_id, "agentd.processor.phase": self.phase},
            )
            entry = self._processors[processor_id] = _ProcessorSpan(span)
        if hook not in entry.hooks:
            entry.hooks.append(hook)
        entry.calls += 1
        entry.busy += seconds
        if tripwire is not None:
            entry.span.add_event("agentd.tripwire", {"agentd.tripwire.reason": tripwire})
            entry.span.set_attribute("agentd.tripwire", True)

    def end_phase(self, next_phase: str, step_number: int | None = None) -> None:
        """Ends the processor spans of the phase that closed (`step_number`: the
        next phase is that step's, "step N", named only when spans are kept)."""
        if self.span is None:  # no processor span was started (processor_called): none to end, no phase read
            return
        if step_number is not None:
            next_phase = f"{next_phase} {step_number}"
        for entry in self._processors.values():
            entry.span.set_attributes(
                {
                    "agentd.processor.hooks": entry.hooks,
                    "agentd.processor.calls": entry.calls,
                    "agentd.processor.busy_ms": round(entry.busy * 1000, 3),
                }
            )
            entry.span.end()
        self._processors = {}
        self.phase = next_phase

    # ------------------------------------------------------------ the end

    def end(
        self,
        *,
        thread_id: str | None,
        finish_reason: str,
        input_tokens: int | None,
        output_tokens: int | None,
        model: str,
        tripwire: Any = None,
        error: Any = None,
        aborted: Any = None,
        text: str = "",
        hold: bool = False,
    ) -> None:
        """Ends the run's span; `hold`: not yet, scoring adds its events first
        and `release` ends it (at this end time)."""
        if self.metrics is not None:  # how it ended: a tripped or aborted run's reason says less
            ended = "aborted" if aborted is not None else "tripwire" if tripwire is not None else finish_reason
            self.metrics.run_finished(self.agent_id, ended)
        if self.span is None:
            return
        self.end_phase("done")
        span = self.span
        attributes: dict[str, Any] = {"gen_ai.response.finish_reasons": [finish_reason]}
        if thread_id:
            attributes["gen_ai.conversation.id"] = thread_id
        if model:
            attributes["gen_ai.request.model"] = model_name(model)
            attributes["gen_ai.provider.name"] = provider_name(model)
        if input_tokens is not None:
            attributes["gen_ai.usage.input_tokens"] = input_tokens
        if output_tokens is not None:
            attributes["gen_ai.usage.output_tokens"] = output_tokens
        if self.capture_content and text:
            attributes["gen_ai.output.messages"] = _completion(text)
        span.set_attributes(attributes)
        if tripwire is not None:
            span.add_event(
                "agentd.tripwire",
                {
                    "agentd.tripwire.processor_id": tripwire.processor_id or "",
                    "agentd.tripwire.reason": tripwire.reason,
                    "agentd.tripwire.retry": tripwire.retry,
                },
            )
        if error is not None:
            span.set_attribute("error.type", error.reason)
            span.set_status(trace.Status(trace.StatusCode.ERROR, redact(error.message)))
        elif aborted is not None:
            span.set_attribute("error.type", aborted.reason)
            span.set_status(trace.Status(trace.StatusCode.ERROR, aborted.message or aborted.reason))
        if hold:
            self._held = time.time_ns()
            return
        span.end()

    def evaluation(self, name: str, value: float, *, label: str = "", explanation: str = "") -> None:
        """A score of the run: a `gen_ai.evaluation.result` event on its span
        (the explanation only with capture_content: a judge's reason may quote the answer)."""
        self.event(
            "gen_ai.evaluation.result",
            **{
                "gen_ai.evaluation.name": name,
                "gen_ai.evaluation.score.value": value,
                "gen_ai.evaluation.score.label": label or None,
                "gen_ai.evaluation.explanation": redact(explanation) if self.capture_content and explanation else None,
            },
        )

    def release(self) -> None:
        """Ends a span `end(hold=True)` kept open, with the run's end time."""
        held, self._held = self._held, None
        if self.span is not None and held is not None:
            self.span.end(end_time=held)


class ChatTrace:
    """One model call's span, and its duration and tokens in the metrics."""

    def __init__(
        self,
        span: Span | None,
        capture_content: bool,
        metrics: Metrics | None = None,
        model: dict[str, str] | None = None,
    ) -> None:
        self.span = span
        self.capture_content = capture_content
        self.metrics = metrics
        self.model = model or {}
        self.started = time.perf_counter()

    def end(
        self,
        *,
        finish_reason: str | None = None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        from_cache: bool = False,
        text: str = "",
        error: BaseException | None = None,
        tripwire: str | None = None,
    ) -> None:
        metrics, self.metrics = self.metrics, None  # counted once, whichever way the call left
        if metrics is not None:
            metrics.model_call(
                self.model,
                time.perf_counter() - self.started,
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                error_type=None if error is None else _error_type(error),
            )
        span = self.span
        if span is None:
            return
        self.span = None  # ended once, whichever way the call left
        if finish_reason is not None:
            span.set_attribute("gen_ai.response.finish_reasons", [finish_reason])
        if input_tokens is not None:
            span.set_attribute("gen_ai.usage.input_tokens", input_tokens)
        if output_tokens is not None:
            span.set_attribute("gen_ai.usage.output_tokens", output_tokens)
        if from_cache:
            span.set_attribute("agentd.response_cache.hit", True)
        if self.capture_content and text:
            span.set_attribute("gen_ai.output.messages", _completion(text))
        if tripwire is not None:
            span.add_event("agentd.tripwire", {"agentd.tripwire.reason": tripwire})
        if error is not None:
            message = redact(str(error))
            # Not record_exception: its message and stack trace would carry what a provider quoted back.
            span.add_event("exception", {"exception.type": type(error).__name__, "exception.message": message})
            span.set_attribute("error.type", _error_type(error))
            span.set_status(trace.Status(trace.StatusCode.ERROR, message))
        span.end()


class NestedTrace:
    """A span that the work it covers runs under (`active()`)."""

    def __init__(self, span: Span | None) -> None:
        self.span = span

    def active(self) -> AbstractContextManager[Any]:
        """The span as the current one while its work runs: what that starts nests under it."""
        if self.span is None:
            return nullcontext()
        return trace.use_span(self.span, record_exception=False, set_status_on_exception=False)

    def finish(self, *, error_type: str | None = None, message: str = "") -> None:
        span = self.span
        if span is None:
            return
        self.span = None
        if error_type is not None:
            span.set_attribute("error.type", error_type)
            span.set_status(trace.Status(trace.StatusCode.ERROR, redact(message)[:200]))
        span.end()


class ToolTrace(NestedTrace):
    """An execute_tool span: a sub-agent's run or a workflow nests under it."""

    def __init__(self, span: Span | None, capture_content: bool) -> None:
        super().__init__(span)
        self.capture_content = capture_content

    def end(self, *, result: Any = None, is_error: bool = False) -> None:
        span = self.span
        if span is None:
            return
        if self.capture_content:
            span.set_attribute("gen_ai.tool.call.result", _json(result))
        self.finish(error_type="tool_error" if is_error else None, message=str(result))


def _tool_attributes(tool_name: str, tool_call_id: str) -> dict[str, Any]:
    return {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool_name, "gen_ai.tool.call.id": tool_call_id}


def _error_type(error: BaseException) -> str:
    return getattr(error, "reason", None) or type(error).__name__


def _json(value: Any) -> str:
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)


def _completion(text: str) -> str:
    return _json([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


#: The trace of a model call nothing records (no span, no metrics): shared, as its `end` changes nothing.
_UNRECORDED: Final = ChatTrace(None, False)

#: The trace of a run nothing records (no tracer, metrics off): shared, as
#: nothing changes it (each span method returns at its first line; `recording`
#: is False, so the loop never ends it; a Metrics that is off stays off).
_QUIET_RUN: Final = RunTrace(None, None, False, metrics=OFF)
