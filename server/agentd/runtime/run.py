"""A run as its callers see it: the handle a started run returns and the
results it produces. The loop that runs it is agentd.runtime.loop."""

from agentd.runtime.agent import RunHandle, drain, start_run
from agentd.runtime.results import RunResult, StepResult

__all__ = ["RunHandle", "RunResult", "StepResult", "drain", "start_run"]
