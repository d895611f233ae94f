"""The `editor` option: its shapes in agentd.toml and on a Python Agent
(`--app`), and the errors that name the offending key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentd import config
from agentd.cli import load_app
from agentd.runtime import Agent
from agentd.runtime.editor import EditorPolicy, editor_policy


@pytest.mark.parametrize(
    ("value", "policy"),
    [
        (None, EditorPolicy(True, True, True)),
        (False, EditorPolicy(False, False, False)),
        ({}, EditorPolicy(False, False, False)),
        ({"instructions": True}, EditorPolicy(True, False, False)),
        ({"tools": True}, EditorPolicy(False, True, True)),
        ({"tools": {"description": True}}, EditorPolicy(False, False, True)),
        ({"instructions": True, "tools": {"description": True}}, EditorPolicy(True, False, True)),
    ],
)
def test_the_seeds_shapes(value: object, policy: EditorPolicy) -> None:
    assert editor_policy(value) == policy
    assert Agent(id="a", editor=value).policy == policy  # type: ignore[arg-type]


def test_agentd_toml_reads_editor_and_names_a_bad_key(tmp_path: Path) -> None:
    path = tmp_path / "agentd.toml"
    path.write_text(
        '[storage]\nbackend = "memory"\n'
        '[[agents]]\nid = "a"\neditor = false\n'
        '[[agents]]\nid = "b"\neditor = { instructions = true, tools = { description = true } }\n'
        '[[agents]]\nid = "c"\n'
    )
    loaded = {a.id: a.policy for a in config.load(path, env={}).agents}
    assert loaded == {
        "a": EditorPolicy(False, False, False),
        "b": EditorPolicy(True, False, True),
        "c": EditorPolicy(True, True, True),
    }
    for bad, message in (
        ("editor = true", "agents[0].editor: false or a table"),
        ("editor = { model = true }", "agents[0].editor: unknown key(s) model"),
        ("editor = { tools = { membership = true } }", "agents[0].editor.tools: true, false or"),
        ('editor = { instructions = "yes" }', "agents[0].editor.instructions: 'yes' is not true or false"),
    ):
        path.write_text(f'[storage]\nbackend = "memory"\n[[agents]]\nid = "a"\n{bad}\n')
        with pytest.raises(config.ConfigError, match=re.escape(message)):
            config.load(path, env={})


def test_an_app_agent_takes_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "editor_app.py").write_text(
        "from agentd.runtime import Agent\nagents = [Agent(id='app', editor={'tools': {'description': True}})]\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    (agent,) = load_app("editor_app").agents
    assert agent.policy == EditorPolicy(False, False, True)
    with pytest.raises(ValueError, match="agent 'x': editor"):
        Agent(id="x", editor=True)
