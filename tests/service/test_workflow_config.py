"""Workflow declarations that cannot run are refused when `agentd serve`
loads them (agentd.toml's `[[workflows]]` and an --app module's), each with a
message naming what is wrong: a cycle, nesting too deep, a parallel step too
wide, a name nothing defines, a condition that is not a field test."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from agentd import cli, config
from agentd.runtime.host import Host

APP = """
from agentd.runtime import Agent, Tool, Workflow, Step

tools = [Tool("noop", "Does nothing", lambda a: a)]
"""

BASE = """
[[agents]]
id = "desk"
model = "local/echo"
"""


def build(tmp_path: Path, toml: str, app: str = APP) -> Host:
    (tmp_path / "agentd.toml").write_text(BASE + textwrap.dedent(toml))
    module = f"wf_app_{abs(hash((toml, app)))}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(app))
    sys.path.insert(0, str(tmp_path))
    try:
        return cli.build_host(str(tmp_path / "agentd.toml"), module)[1]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)


def refused(tmp_path: Path, toml: str, app: str = APP) -> str:
    with pytest.raises(config.ConfigError) as info:
        build(tmp_path, toml, app)
    return str(info.value)


def test_a_valid_declaration_loads_and_links_the_app_modules_workflows(tmp_path: Path) -> None:
    app = (
        APP
        + """
workflows = [Workflow("py-flow", [tools[0]])]
agents = [Agent(id="py", workflows=["ok"])]
"""
    )
    host = build(
        tmp_path,
        """
        [[agents]]
        id = "runner"
        workflows = ["ok", "py-flow"]
        [[workflows]]
        id = "ok"
        steps = [
          { tool = "noop" },
          { parallel = [ { tool = "noop", id = "a" }, { agent = "desk" } ] },
          { workflow = "py-flow" },
        ]
    """,
        app,
    )
    runner, py = host.agents.get("runner"), host.agents.get("py")
    assert [w.id for w in runner.workflows] == ["ok", "py-flow"]
    assert py.workflows == [runner.workflows[0]]  # named by id in Python, linked to agentd.toml's


def test_a_workflow_that_runs_itself_is_refused(tmp_path: Path) -> None:
    message = refused(
        tmp_path,
        """
        [[workflows]]
        id = "loop"
        steps = [ { tool = "noop" }, { workflow = "loop" } ]
    """,
    )
    assert message == (
        "workflow 'loop' runs itself (workflow 'loop' → workflow 'loop'): a workflow cannot take part in its own steps"
    )


def test_a_cycle_through_another_workflow_or_an_agent_is_refused(tmp_path: Path) -> None:
    through_workflow = refused(
        tmp_path,
        """
        [[workflows]]
        id = "a"
        steps = [ { workflow = "b" } ]
        [[workflows]]
        id = "b"
        steps = [ { branch = [ { when = { field = "x", exists = true }, step = { workflow = "a" } } ] } ]
    """,
    )
    assert "workflow 'a' runs itself (workflow 'a' → workflow 'b' → workflow 'a')" in through_workflow
    (tmp_path / "agentd.toml").unlink()
    through_agent = refused(
        tmp_path,
        """
        [[agents]]
        id = "runner"
        model = "local/echo"
        workflows = ["w"]
        [[workflows]]
        id = "w"
        steps = [ { agent = "runner" } ]
    """,
    )
    assert "workflow 'w' runs itself (workflow 'w' → agent 'runner' → workflow 'w')" in through_agent


def test_a_cycle_declared_in_python_is_refused(tmp_path: Path) -> None:
    app = (
        APP
        + """
w = Workflow("w")
agent = Agent(id="py", workflows=[w])
w.steps = [Step(agent)]
agents = [agent]
"""
    )
    assert "workflow 'w' runs itself (workflow 'w' → agent 'py' → workflow 'w')" in refused(tmp_path, "", app)


def test_a_python_step_that_runs_nothing_is_refused(tmp_path: Path) -> None:
    app = (
        APP
        + """
workflows = [Workflow("w", [Step("noop")])]
"""
    )
    assert "workflow 'w' steps[0]: a step runs a Tool, an Agent or a Workflow, not 'noop'" in refused(tmp_path, "", app)


def test_a_workflow_cannot_take_a_name_its_agent_uses_for_a_tool(tmp_path: Path) -> None:
    app = (
        APP
        + """
agents = [Agent(id="py", tools=tools, workflows=[Workflow("noop", [tools[0]])])]
"""
    )
    assert "agent 'py': workflow tool name(s) ['noop'] are taken by another of its tools" in refused(tmp_path, "", app)


def test_nesting_and_width_are_bounded(tmp_path: Path) -> None:
    deep = refused(
        tmp_path,
        """
        [workflow_limits]
        max_depth = 2
        [[workflows]]
        id = "top"
        steps = [ { workflow = "middle" } ]
        [[workflows]]
        id = "middle"
        steps = [ { workflow = "bottom" } ]
        [[workflows]]
        id = "bottom"
        steps = [ { tool = "noop" } ]
    """,
    )
    assert deep == "workflow 'top' nests 3 workflows deep, over workflow_limits.max_depth = 2"
    wide = refused(
        tmp_path,
        """
        [workflow_limits]
        max_parallel = 2
        [[workflows]]
        id = "wide"
        steps = [ { parallel = [
          { tool = "noop", id = "a" }, { tool = "noop", id = "b" }, { tool = "noop", id = "c" },
        ] } ]
    """,
    )
    assert wide == "workflow 'wide' steps[0]: 3 steps side by side, over workflow_limits.max_parallel = 2"
    assert refused(tmp_path, "[workflow_limits]\nmax_depth = 0\n") == "workflow_limits.max_depth: 0 is under 1"


def test_the_limits_come_from_the_environment_too() -> None:
    loaded = config.load(None, env={"AGENTD_WORKFLOW_LIMITS__MAX_PARALLEL": "3"})
    assert (loaded.workflow_limits.max_depth, loaded.workflow_limits.max_parallel) == (8, 3)
    with pytest.raises(config.ConfigError) as info:
        config.load(None, env={"AGENTD_WORKFLOW_LIMITS__MAX_DEPTH": "0"})
    assert str(info.value) == "workflow_limits.max_depth (from AGENTD_WORKFLOW_LIMITS__MAX_DEPTH): '0' is under 1"


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        (
            '[[workflows]]\nid = "w"\nsteps = [ { tool = "nope" } ]\n',
            "workflows[0].steps[0].tool: no tool 'nope' in the --app module's `tools` (known: noop)",
        ),
        (
            '[[workflows]]\nid = "w"\nsteps = [ { agent = "ghost" } ]\n',
            "workflows[0].steps[0].agent: no agent 'ghost' in the hosted agents (known: desk)",
        ),
        (
            '[[workflows]]\nid = "w"\n'
            'steps = [ { branch = [ { when = { field = "x", like = 1 }, step = { tool = "noop" } } ] } ]\n',
            "workflows[0].steps[0].branch[0].when: unknown key(s) like",
        ),
        (
            '[[workflows]]\nid = "w"\nsteps = [ { parallel = [ { tool = "noop" }, { tool = "noop" } ] } ]\n',
            "workflow 'w' steps[0]: step ids ['noop'] appear twice in one parallel step",
        ),
        ('[[workflows]]\nid = "w"\nsteps = []\n', "workflows[0].steps: a non-empty list of steps"),
        (
            '[[workflows]]\nid = "w"\nsteps = [ { tool = "noop", agent = "desk" } ]\n',
            "workflows[0].steps[0]: exactly one of",
        ),
        ('[[agents]]\nid = "x"\nworkflows = ["missing"]\n', "agents[1].workflows: no workflow 'missing' (known: none)"),
        (
            '[[workflows]]\nid = "w"\ninput_schema = { type = "thing" }\nsteps = [ { tool = "noop" } ]\n',
            "workflow 'w': input_schema is not a JSON Schema",
        ),
    ],
)
def test_what_cannot_be_linked_is_named(tmp_path: Path, toml: str, expected: str) -> None:
    assert expected in refused(tmp_path, toml)


@pytest.mark.timeout(60)  # were the cycle let through, agentd would serve
def test_agentd_serve_says_configuration_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "agentd.toml").write_text(BASE + '[[workflows]]\nid = "loop"\nsteps = [ { workflow = "loop" } ]\n')
    assert cli.main(["serve", "--config", str(tmp_path / "agentd.toml")]) == 2
    assert "agentd: configuration error: workflow 'loop' runs itself" in capsys.readouterr().err
