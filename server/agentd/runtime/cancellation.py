"""A failure that is a cancellation in disguise.

Code a run awaits (a processor's hook, a callback, a tool, a model or cache
call) may be cancelled there, its caller gone, its deadline past or the run
aborted, and raise an error of its own instead: cleanup that failed, a
library that wraps the cancellation. Where the run would log a failure and
go on, it asks `raise_if_cancelling` first, and where a failure would end
it, `cancelling`: while its task is being cancelled, the failure is the
cancellation still, and the run ends as a cancelled run does rather than
going on (or failing) without its caller.

Not for a run's ending (saving an aborted run's partial output): by then
the task's count still holds the cancellation the run is ending on, so a
failure there cannot be told from a new cancellation; the ending goes on.
(Its on_finish callbacks run in a task of their own, loop/after_run.py, whose
count holds their own cancellations alone: there it applies.)
"""

from __future__ import annotations

import asyncio


def cancelling() -> bool:
    """True while the current task is being cancelled (a cancellation not taken back)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def raise_if_cancelling(error: BaseException) -> None:
    """Raises CancelledError, from `error`, when the current task is being cancelled."""
    if cancelling():
        raise asyncio.CancelledError from error
