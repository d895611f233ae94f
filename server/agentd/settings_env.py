"""The AGENTD_* variables read into agentd.toml's tables, by pydantic-settings'
environment source (a table's keys one by one, a list or a table of free keys
as JSON). Loaded only when a variable names one of the tables
(agentd.runtime.lazy): pydantic-settings imports every source it has (the
command line's, dotenv's, the cloud secret stores'), a tenth of a start that
reads no variable."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsError

__all__ = ["NotJSON", "read_variables"]


class NotJSON(ValueError):
    """A variable for a table or a list was not JSON; `table` is its field."""

    def __init__(self, table: str, message: str) -> None:
        super().__init__(message)
        self.table = table


class _Environment(EnvSettingsSource):
    """The AGENTD_* variables of a given environment (not always the process's: tests pass their own)."""

    def __init__(self, settings: type[BaseModel], variables: Mapping[str, str], prefix: str, nesting: str) -> None:
        self._variables = variables
        # The source reads the class's fields only; its options are given here.
        super().__init__(
            cast("type[BaseSettings]", settings),
            case_sensitive=False,
            env_prefix=prefix,
            env_nested_delimiter=nesting,
        )

    def _load_env_vars(self) -> Mapping[str, str | None]:  # pydantic-settings reads os.environ here
        return self._variables


def read_variables(
    settings: type[BaseModel], variables: Mapping[str, str], *, prefix: str, nesting: str
) -> dict[str, Any]:
    """The values `variables` (by lower-cased name) give `settings`' fields;
    NotJSON if a table's or a list's was not JSON."""
    try:
        return _Environment(settings, variables, prefix, nesting)()
    except SettingsError as exc:
        field = re.search(r'field "(\w+)"', str(exc))
        raise NotJSON(field.group(1) if field else "", str(exc)) from None
