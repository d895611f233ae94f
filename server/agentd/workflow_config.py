"""agentd.toml's `[[workflows]]` (their limits are settings.py's), and the names they
use: a step's tool (a `--app` module's `tools`), agent (any hosted agent) or
workflow (agentd.toml's or the module's `workflows`), and an agent's
`workflows = [...]`. Names are linked here; cycles, depth and width are
checked once the host holds every agent (runtime.workflows.check_workflows).

    [[workflows]]
    id = "triage"
    description = "Classify a ticket, then route it"
    input_schema = { type = "object", properties = { text = { type = "string" } }, required = ["text"] }
    steps = [
      { tool = "classify" },
      { parallel = [ { agent = "summarizer" }, { tool = "lookup", id = "facts" } ] },
      { branch = [
          { when = { field = "facts.priority", gte = 3 }, step = { workflow = "escalate" } },
          { when = { field = "facts.priority", lt = 3 }, step = { sequence = [ { tool = "archive" } ] } },
      ] },
    ]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentd.runtime.agent import Agent
from agentd.runtime.host import App
from agentd.runtime.lazy import lazy
from agentd.runtime.tools import Tool

if TYPE_CHECKING:
    from agentd.runtime.workflows import conditions as _conditions
    from agentd.runtime.workflows import definition as _definition
    from agentd.runtime.workflows.definition import Node, Workflow
else:
    # With the first `[[workflows]]` entry or agent's `workflows`: a configuration without loads neither.
    _conditions = lazy("agentd.runtime.workflows.conditions")
    _definition = lazy("agentd.runtime.workflows.definition")

_WORKFLOW_KEYS = {"id", "description", "input_schema", "steps"}
_LEAVES = ("tool", "agent", "workflow")
_COMBINATORS = ("sequence", "parallel", "branch")


class WorkflowConfigError(ValueError):
    """A `[[workflows]]` entry is invalid; the message names the key."""


class Linker:
    """Resolves the names a configuration's workflows and agents use."""

    def __init__(self, agents: Sequence[Agent], app: App) -> None:
        self.tools: dict[str, Tool] = {t.name: t for t in app.tools}
        self.agents: dict[str, Agent] = {a.id: a for a in [*agents, *app.agents]}
        self.workflows: dict[str, Workflow] = {w.id: w for w in app.workflows}
        self.app = app

    def workflows_of(self, tables: Any) -> list[Workflow]:
        """`[[workflows]]`: every entry declared first, then their steps (which may name each other)."""
        if not isinstance(tables, list):
            raise WorkflowConfigError("workflows: a list of [[workflows]] tables")
        declared: list[tuple[Workflow, dict[str, Any], str]] = []
        for i, table in enumerate(tables):
            where = f"workflows[{i}]"
            if not isinstance(table, dict):
                raise WorkflowConfigError(f"{where}: must be a table")
            _keys(table, _WORKFLOW_KEYS, where)
            workflow_id = table.get("id")
            if not isinstance(workflow_id, str) or not workflow_id:
                raise WorkflowConfigError(f"{where}.id: required, a non-empty string")
            if workflow_id in self.workflows:
                raise WorkflowConfigError(f"{where}.id: {workflow_id!r} is defined twice")
            schema = table.get("input_schema", {"type": "object"})
            if not isinstance(schema, dict):
                raise WorkflowConfigError(f"{where}.input_schema: a JSON Schema table")
            workflow = _definition.Workflow(
                workflow_id, description=str(table.get("description", "")), input_schema=schema
            )
            self.workflows[workflow_id] = workflow
            declared.append((workflow, table, where))
        for workflow, table, where in declared:
            steps = table.get("steps")
            if not isinstance(steps, list) or not steps:
                raise WorkflowConfigError(f"{where}.steps: a non-empty list of steps")
            workflow.steps = [self.node(s, f"{where}.steps[{j}]") for j, s in enumerate(steps)]
        return [w for w, _, _ in declared]

    def node(self, entry: Any, where: str) -> Node:
        if not isinstance(entry, dict):
            raise WorkflowConfigError(f"{where}: a table with one of {', '.join(_LEAVES + _COMBINATORS)}")
        kinds = [k for k in _LEAVES + _COMBINATORS if k in entry]
        if len(kinds) != 1:
            raise WorkflowConfigError(f"{where}: exactly one of {', '.join(_LEAVES + _COMBINATORS)}")
        kind = kinds[0]
        if kind in _LEAVES:
            _keys(entry, {kind, "id"}, where)
            step_id = entry.get("id", "")
            if not isinstance(step_id, str):
                raise WorkflowConfigError(f"{where}.id: a string")
            return _definition.Step(self.target(kind, entry[kind], f"{where}.{kind}"), step_id)
        _keys(entry, {kind}, where)
        items = entry[kind]
        if not isinstance(items, list) or not items:
            raise WorkflowConfigError(f"{where}.{kind}: a non-empty list")
        if kind == "branch":
            cases: list[tuple[Any, Node]] = []
            for k, case in enumerate(items):
                cwhere = f"{where}.branch[{k}]"
                if not isinstance(case, dict) or "when" not in case or "step" not in case:
                    raise WorkflowConfigError(f"{cwhere}: a table with when (a field test) and step")
                _keys(case, {"when", "step"}, cwhere)
                try:
                    condition = _conditions.FieldTest(case["when"], f"{cwhere}.when")
                except ValueError as exc:
                    raise WorkflowConfigError(str(exc)) from None
                cases.append((condition, self.node(case["step"], f"{cwhere}.step")))
            return _definition.Branch(tuple(cases))
        nodes = tuple(self.node(s, f"{where}.{kind}[{k}]") for k, s in enumerate(items))
        return _definition.Parallel(nodes) if kind == "parallel" else _definition.Sequential(nodes)

    def target(self, kind: str, name: Any, where: str) -> Tool | Agent | Workflow:
        if not isinstance(name, str) or not name:
            raise WorkflowConfigError(f"{where}: a {kind} name")
        tables: dict[str, Mapping[str, Tool | Agent | Workflow]] = {
            "tool": self.tools,
            "agent": self.agents,
            "workflow": self.workflows,
        }
        known = tables[kind]
        if name not in known:
            offered = ", ".join(sorted(known)) or "none"
            source = {
                "tool": "the --app module's `tools`",
                "agent": "the hosted agents",
                "workflow": "[[workflows]] and the --app module's `workflows`",
            }[kind]
            raise WorkflowConfigError(f"{where}: no {kind} {name!r} in {source} (known: {offered})")
        return known[name]

    def agent_workflows(self, names: Any, where: str) -> list[Workflow]:
        """An agent's `workflows = ["id", ...]`."""
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise WorkflowConfigError(f"{where}: a list of workflow ids")
        missing = [n for n in names if n not in self.workflows]
        if missing:
            known = ", ".join(sorted(self.workflows)) or "none"
            raise WorkflowConfigError(f"{where}: no workflow {missing[0]!r} (known: {known})")
        return [self.workflows[n] for n in names]

    def link_app_agents(self) -> None:
        """`--app` agents may name workflows by id too."""
        for agent in self.app.agents:
            if not callable(agent.workflows) and any(isinstance(w, str) for w in agent.workflows):
                agent.workflows = [
                    self.agent_workflows([w], f"--app agent {agent.id!r} workflows")[0] if isinstance(w, str) else w
                    for w in agent.workflows
                ]


def _keys(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise WorkflowConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})"
        )
