"""Tool workflows: pipelines of tools, agents and workflows an agent runs as
one tool (definition.py), their conditions written as data (conditions.py),
and how a run of one goes (execute.py); their limits (limits.py).

Each name is read from its module on first use (`lazy.lazy_exports`): a
server whose agents run no workflow loads none of them but the limits.
"""

from typing import TYPE_CHECKING

from agentd.runtime.lazy import lazy_exports

if TYPE_CHECKING:
    from agentd.runtime.workflows.conditions import FieldTest
    from agentd.runtime.workflows.definition import (
        Branch,
        Parallel,
        Sequential,
        Step,
        Workflow,
        check_workflows,
        static_workflows,
    )
    from agentd.runtime.workflows.execute import StepFailed, WorkflowHost, workflow_tool
    from agentd.runtime.workflows.limits import WorkflowLimits

__all__ = [
    "Branch",
    "FieldTest",
    "Parallel",
    "Sequential",
    "Step",
    "StepFailed",
    "Workflow",
    "WorkflowHost",
    "WorkflowLimits",
    "check_workflows",
    "static_workflows",
    "workflow_tool",
]

_DEFINITION = "agentd.runtime.workflows.definition"
_EXECUTE = "agentd.runtime.workflows.execute"
_EXPORTS = {
    "Branch": _DEFINITION,
    "FieldTest": "agentd.runtime.workflows.conditions",
    "Parallel": _DEFINITION,
    "Sequential": _DEFINITION,
    "Step": _DEFINITION,
    "StepFailed": _EXECUTE,
    "Workflow": _DEFINITION,
    "WorkflowHost": _EXECUTE,
    "WorkflowLimits": "agentd.runtime.workflows.limits",
    "check_workflows": _DEFINITION,
    "static_workflows": _DEFINITION,
    "workflow_tool": _EXECUTE,
}
__getattr__ = lazy_exports(__name__, _EXPORTS)
