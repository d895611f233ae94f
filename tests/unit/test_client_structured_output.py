"""The Python client's structured_output keyword: a bare schema, or the
schema with its error strategy, fallback value and structuring model."""

from __future__ import annotations

import pytest
from agentd_client import execution_options
from google.protobuf import json_format

from agentd_proto.v1 import options_pb2 as opb

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}


def test_a_bare_schema_and_the_full_form() -> None:
    bare = execution_options(structured_output=CITY).structured_output
    assert json_format.MessageToDict(bare.schema) == CITY and bare.error_strategy == 0
    full = execution_options(
        structured_output={
            "schema": CITY,
            "error_strategy": "fallback",
            "fallback_value": {"city": None},
            "model": "openai/gpt-4o-mini",
            "instructions": "Be exact.",
        }
    ).structured_output
    assert full.error_strategy == opb.STRUCTURED_OUTPUT_ERROR_STRATEGY_FALLBACK
    assert json_format.MessageToDict(full.fallback_value) == {"city": None}
    assert (full.model, full.instructions) == ("openai/gpt-4o-mini", "Be exact.")
    assert not execution_options(structured_output={"schema": CITY}).structured_output.HasField("fallback_value")


def test_an_unknown_error_strategy_is_refused() -> None:
    with pytest.raises(TypeError, match="error_strategy"):
        execution_options(structured_output={"schema": CITY, "error_strategy": "lenient"})
