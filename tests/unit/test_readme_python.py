"""The README's in-process Python example runs as printed and prints what its
comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_the_python_library_example_runs_as_printed(tmp_path: Path) -> None:
    section = README.read_text().split("## From Python, without a server", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    script = tmp_path / "example.py"
    script.write_text(code.group(1))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    expected = [line.split("# ", 1)[1].split(":")[0].strip() for line in code.group(1).splitlines() if "print(" in line]
    assert done.stdout.splitlines() == expected
