"""Reading agentd's Prometheus endpoint in tests: every sample by name and labels."""

from __future__ import annotations

import asyncio
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

__all__ = ["Samples", "scrape", "scraped", "value"]

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(port: int) -> Samples:
    """Every sample of the endpoint, by name and labels (the scope labels left out)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        assert reply.status == 200 and reply.headers["Content-Type"].startswith("text/plain")
        body = reply.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            labels = frozenset((k, v) for k, v in sample.labels.items() if not k.startswith("otel_scope_"))
            samples[(sample.name, labels)] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def scraped(port: int) -> Samples:
    return await asyncio.to_thread(scrape, port)
