"""How `agentd serve` schedules its helper threads ([server]
batch_helper_threads, Linux).

A call's work all runs on the event loop's thread. Every other thread of the
process is a helper whose work ends up queued for the loop: grpc's
completion-queue poller (it wakes the loop about four times a unary call),
its event-engine and timer threads, storage's executor, the metrics
endpoint. Under the default policy a helper that wakes preempts the thread
running on its core, so on a busy host the loop is switched out several times
a call for work that only hands it more to do. A SCHED_BATCH thread never
preempts when it wakes: it runs at the next scheduling point, or at once on
an idle core, so an idle host sees no change. Under ghz on two shared cores
it cut agentd's CPU a call by about a sixth (docs/PERFORMANCE.md, 2026-12-06).

The policy is set once the server has started, on the threads there are then:
a thread one of them starts inherits it, one the loop starts later does not.
Lowering a thread's policy needs no privilege.
"""

from __future__ import annotations

import os
import sys
import threading

#: The process's threads, one entry per thread id.
TASKS = "/proc/self/task"


def batch_helpers() -> int:
    """Sets SCHED_BATCH on every thread of this process but the calling one
    (the event loop's); returns how many it set (0 off Linux)."""
    if sys.platform != "linux":
        return 0
    me = threading.get_native_id()
    param = os.sched_param(0)  # (SCHED_BATCH takes priority 0)
    count = 0
    for name in os.listdir(TASKS):
        tid = int(name)
        if tid == me:
            continue
        try:
            os.sched_setscheduler(tid, os.SCHED_BATCH, param)
        except OSError:  # ended meanwhile (or not ours to change): nothing to schedule
            continue
        count += 1
    return count
