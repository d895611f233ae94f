"""The README's raw-stub code is excerpts of examples/, verbatim: each code
block of "From code (raw stubs)" appears in one of the files the prose before
it links to (tests/e2e/test_examples.py builds and runs those files)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```(\w*)\n(.*?)```", re.S)
LINK = re.compile(r"\]\((examples/[^)]+)\)")


def raw_stubs_section() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## From code (raw stubs)\n", 1)[1].split("\n## ", 1)[0]


def test_every_raw_stub_excerpt_is_in_the_example_it_names() -> None:
    section = raw_stubs_section()
    checked: set[str] = set()
    prose_start = 0
    for block in BLOCK.finditer(section):
        prose, (language, code) = section[prose_start : block.start()], block.groups()
        prose_start = block.end()
        if language == "sh":
            continue
        files = LINK.findall(prose)
        assert files, f"no examples/ file linked before the {language or 'plain'} block:\n{code}"
        holders = [f for f in files if code in (ROOT / f).read_text(encoding="utf-8")]
        assert holders, f"this {language or 'plain'} block is not in {files} as printed:\n{code}"
        checked.update(holders)
    assert {"examples/python/stream.py", "examples/go/main.go", "examples/ts/src/stream.ts"} <= checked


def test_the_commands_run_files_that_exist() -> None:
    commands = BLOCK.search(raw_stubs_section())
    assert commands is not None and commands.group(1) == "sh"
    for path in re.findall(r"\bexamples/[\w/.]+", commands.group(2)):
        assert (ROOT / path).exists(), path
