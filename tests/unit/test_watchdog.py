"""The suite's per-test timeout (support/watchdog.py) ends a test whose loop
sits idle on uvloop, where pytest-timeout's SIGALRM never runs: the hung test
fails with the stack it waits in, and the session goes on to the next one. A
test hung with no loop to cancel ends the session, with its thread's stack."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]

CONFTEST = """
import uvloop
from support.watchdog import timeout_timer, watched

pytest_timeout_set_timer = timeout_timer

def pytest_asyncio_loop_factories(config, item):
    return {"uvloop": watched(uvloop.new_event_loop)}
"""

HUNG = """
import asyncio
import pytest

@pytest.mark.timeout(1)
async def test_waits_forever():
    await asyncio.Event().wait()

async def test_the_next_one_runs():
    pass
"""


HUNG_SYNC = """
import time
import pytest

@pytest.mark.timeout(1)
def test_sleeps_past_its_time():
    time.sleep(60)
"""


def session(tmp_path: Path, tests: str) -> tuple[int, str]:
    """A pytest session over `tests` with the suite's watchdog: its exit code and output."""
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_hung.py").write_text(tests, encoding="utf-8")
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_mode = auto\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=50,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.timeout(120)
@pytest.mark.parametrize(
    ("tests", "said"),
    [
        pytest.param(
            HUNG,
            [
                "1 failed, 1 passed",  # the session went on
                "watchdog: test_hung.py::test_waits_forever still running after 1s",
                "await asyncio.Event().wait()",  # where its task waits
            ],
            id="idle-on-uvloop-fails-and-the-session-goes-on",
        ),
        pytest.param(
            HUNG_SYNC,
            [
                "watchdog: test_hung.py::test_sleeps_past_its_time still running after 1s",
                "no event loop is running",
                "time.sleep(60)",  # the main thread's stack
            ],
            id="sync-ends-the-session",
        ),
    ],
)
def test_a_test_past_its_time_fails_saying_where_it_waits(tmp_path: Path, tests: str, said: list[str]) -> None:
    code, out = session(tmp_path, tests)
    assert code == 1, out
    for text in said:
        assert text in out, out
