"""The three Python distributions agree on the Python they need, and what
`make run` installs (the server's own dependencies) holds none of the dev
extra's tools."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYPROJECTS = ("pyproject.toml", "gen/python/pyproject.toml", "clients/python/pyproject.toml")


def project(path: str) -> dict[str, Any]:
    table: dict[str, Any] = tomllib.loads((ROOT / path).read_text(encoding="utf-8"))["project"]
    return table


def name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower()


def test_every_distribution_needs_the_same_python() -> None:
    assert {project(path)["requires-python"] for path in PYPROJECTS} == {">=3.11"}


def test_serving_installs_no_dev_tool() -> None:
    server = project("pyproject.toml")
    runtime = {name(r) for path in PYPROJECTS for r in project(path)["dependencies"]}
    dev = {name(r) for r in server["optional-dependencies"]["dev"]}
    tools = {"mypy", "ruff", "pytest", "hypothesis", "grpcio-tools", "buf-bin", "mypy-protobuf"}
    assert tools <= dev and not runtime & tools, (tools - dev, runtime & tools)
