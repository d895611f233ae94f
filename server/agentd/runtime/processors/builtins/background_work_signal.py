"""BackgroundWorkSignal ("background-work-signal", the seed's
createBackgroundWorkSignalProcessor): keeps the calling run's signal access
for its background tool calls.

It only hands the run's `send_signal` to the runtime's background work (under
BACKGROUND_SIGNAL_KEY in the request context, at each step); dispatch,
records, reconciliation and the continuation are the runtime's
(agentd.runtime.background). With it, a background call tells its run
`work-deferred` (status running) as the work starts, and `work-completed` or
`work-failed` once the authoritative result is reconciled, as notification
signals: echoed as chunks, kept in the run's messages. Delivery is in process
and best-effort: a run that has ended (or a delivery that fails) gets nothing,
the result is kept all the same, and nothing is retried or rebuilt. A call in
the foreground never sends them: there is no detached work to report.
"""

from __future__ import annotations

from agentd.runtime.background import BACKGROUND_SIGNAL_KEY
from agentd.runtime.processors.base import ProcessInputStepArgs, Processor


class BackgroundWorkSignal(Processor):
    id = "background-work-signal"
    name = "Background Work Signal"

    def process_input_step(self, args: ProcessInputStepArgs) -> None:
        if args.send_signal is not None:
            args.request_context[BACKGROUND_SIGNAL_KEY] = args.send_signal
