"""A replica that does not answer a forwarded request: the caller gets
UNAVAILABLE REPLICA_UNREACHABLE with a retry delay of one lease TTL (by then
the holder has renewed its lease or lost it to a sweep), as RetryInfo says."""

from __future__ import annotations

from typing import Any, cast

import pytest

from agentd.runtime.cluster import Cluster, PeerTimeout
from agentd.runtime.coordination import LocalCoordination
from agentd.runtime.errors import Unavailable
from agentd.runtime.threads import LeasedOwnership, ThreadSettings
from agentd.runtime.threads.peers import AbortForward


class SilentCluster:
    """A cluster whose peers never answer in time."""

    async def request(self, replica: str, request: Any, timeout: float) -> Any:  # noqa: ASYNC109 (Cluster.request)
        raise PeerTimeout(f"{replica} did not answer within {timeout} s")


async def test_a_silent_replica_is_unreachable_with_a_retry_after_one_lease_ttl() -> None:
    settings = ThreadSettings(lease_ttl_ms=1500)
    ownership = LeasedOwnership(LocalCoordination(), cast(Cluster, SilentCluster()), settings)
    with pytest.raises(Unavailable) as raised:
        await ownership.forward("replica-b", AbortForward(resource_id="u1", thread_id="t1", run_id=None))
    assert raised.value.reason == "REPLICA_UNREACHABLE"
    assert raised.value.retry_after == 1.5
