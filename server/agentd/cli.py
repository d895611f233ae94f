"""`agentd serve`: start the server from agentd.toml (and an optional Python app module)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import signal
import sys
from collections.abc import Sequence

from agentd import config as config_mod
from agentd.grpc.server import AgentdServer
from agentd.runtime.agent import Agent
from agentd.runtime.host import Host
from agentd.runtime.registry import AgentRegistry

log = logging.getLogger("agentd")


def load_app_agents(module_name: str) -> list[Agent]:
    """Agents from a Python module: an `agents` list, or a function returning one."""
    module = importlib.import_module(module_name)
    agents = getattr(module, "agents", None)
    if callable(agents):
        agents = agents()
    if not isinstance(agents, (list, tuple)) or not all(isinstance(a, Agent) for a in agents):
        raise config_mod.ConfigError(f"--app {module_name}: define `agents`, a list of agentd.runtime.Agent")
    return list(agents)


def build_host(cfg: config_mod.Config, app: str | None) -> Host:
    agents = list(cfg.agents)
    if app:
        agents.extend(load_app_agents(app))
    return Host(agents=AgentRegistry(agents))


async def serve(args: argparse.Namespace) -> int:
    cfg = config_mod.load(args.config)
    host = args.host or cfg.server.host
    port = args.port if args.port is not None else cfg.server.port
    grace = args.grace if args.grace is not None else cfg.server.shutdown_grace_seconds
    server = AgentdServer(build_host(cfg, args.app), shutdown_grace=grace)
    bound = await server.start(f"{host}:{port}")
    log.info("agentd serving on %s:%d (%d agents)", host, bound, len(server.host.agents))

    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("shutting down (grace %.1fs)", grace)
    await server.stop()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentd", description="agentd: an agent runtime served over gRPC")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="start the gRPC server")
    s.add_argument("--config", help="path to agentd.toml (default: $AGENTD_CONFIG)")
    s.add_argument("--host", help="listen address (default: $AGENTD_HOST, then the config, then 127.0.0.1)")
    s.add_argument(
        "--port", type=int, help="listen port (default: $AGENTD_PORT, then the config, then 50051)"
    )
    s.add_argument("--app", help="Python module defining `agents` to host besides the config's")
    s.add_argument("--grace", type=float, help="shutdown grace period in seconds")
    s.add_argument("--log-level", default="INFO")
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    try:
        return asyncio.run(serve(args))
    except config_mod.ConfigError as exc:
        print(f"agentd: configuration error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"agentd: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
