"""Which fields of a code-defined agent editor overrides may change: the
agent's `editor` option, as the seed's Agent has it.

    editor omitted                              instructions and tools (membership and descriptions)
    editor = false                              nothing: the agent is locked
    editor = { instructions = true }            instructions only
    editor = { tools = true }                   tool membership and descriptions
    editor = { tools = { description = true } } tool descriptions only

Keys an `editor` table leaves out are false. `id`, `name` and `model` always
come from the code: no policy makes them overridable.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FIELDS", "EditorPolicy", "editor_policy"]

#: The fields an override may carry, as the contract names them.
FIELDS = ("instructions", "tools", "tool_descriptions")


@dataclass(frozen=True)
class EditorPolicy:
    """Which of an agent's fields the editor's overrides may change."""

    instructions: bool = True
    #: Tool membership (which tools the agent offers).
    tools: bool = True
    tool_descriptions: bool = True

    def allows(self, field: str) -> bool:
        return bool(getattr(self, field))

    @property
    def locked(self) -> bool:
        return not (self.instructions or self.tools or self.tool_descriptions)


def editor_policy(value: Any, where: str = "editor") -> EditorPolicy:
    """The policy of an `editor` value (None: omitted); ValueError naming
    `where` for anything else than the seed's shapes."""
    if value is None:
        return EditorPolicy()
    if isinstance(value, EditorPolicy):
        return value
    if value is False:
        return EditorPolicy(False, False, False)
    if value is True:
        raise ValueError(f"{where}: false or a table (omit it to allow instructions and tools)")
    if not isinstance(value, dict):
        raise ValueError(f"{where}: false, or a table with instructions and tools")
    unknown = sorted(set(value) - {"instructions", "tools"})
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: instructions, tools)")
    instructions = value.get("instructions", False)
    if not isinstance(instructions, bool):
        raise ValueError(f"{where}.instructions: {instructions!r} is not true or false")
    tools = value.get("tools", False)
    if isinstance(tools, bool):
        return EditorPolicy(instructions, tools, tools)
    if not isinstance(tools, dict) or set(tools) - {"description"}:
        raise ValueError(f"{where}.tools: true, false or {{ description = true }}")
    description = tools.get("description", False)
    if not isinstance(description, bool):
        raise ValueError(f"{where}.tools.description: {description!r} is not true or false")
    return EditorPolicy(instructions, False, description)
