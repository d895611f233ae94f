"""`UNSET`: "not given", where None is a value of its own (no scope, a JSON null)."""

from __future__ import annotations

import enum
from typing import Final


class Unset(enum.Enum):
    """The type of `UNSET`: "not given" (distinct from None, which means no scope)."""

    UNSET = "UNSET"

    def __repr__(self) -> str:
        return "UNSET"


UNSET: Final = Unset.UNSET
