"""agentd: an agent runtime served over gRPC."""

__version__ = "0.1.0"
