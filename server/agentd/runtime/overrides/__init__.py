"""Editor overrides: an operator's changes to a code-defined agent, stored,
versioned and applied to the runs that follow (see policy, store, service)."""

from agentd.runtime.editor import FIELDS, EditorPolicy, editor_policy
from agentd.runtime.overrides.service import Overrides, OverridesUpdate, effective_fields, instructions_text
from agentd.runtime.overrides.store import (
    MAX_VERSIONS,
    InMemoryOverrideStore,
    OverrideStore,
    OverrideValues,
    OverrideVersion,
)

__all__ = [
    "FIELDS",
    "MAX_VERSIONS",
    "EditorPolicy",
    "InMemoryOverrideStore",
    "OverrideStore",
    "OverrideValues",
    "OverrideVersion",
    "Overrides",
    "OverridesUpdate",
    "editor_policy",
    "effective_fields",
    "instructions_text",
]
