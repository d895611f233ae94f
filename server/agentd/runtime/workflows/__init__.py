"""Tool workflows: pipelines of tools, agents and workflows an agent runs as
one tool (definition.py), their conditions written as data (conditions.py),
and how a run of one goes (execute.py)."""

from agentd.runtime.workflows.conditions import FieldTest
from agentd.runtime.workflows.definition import (
    Branch,
    Parallel,
    Sequential,
    Step,
    Workflow,
    WorkflowLimits,
    check_workflows,
    static_workflows,
)
from agentd.runtime.workflows.execute import StepFailed, WorkflowHost, workflow_tool

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
