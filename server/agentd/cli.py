"""`agentd serve`: start the server from agentd.toml (and an optional Python app module)."""

from __future__ import annotations

from agentd import generated_code

# The code the standard library writes as text while the server's modules load
# (dataclasses' methods, typing's forward references) comes compiled from the
# install's cache: compiling it at each start was a third of the start.
with generated_code.cached():
    import argparse
    import asyncio
    import gc
    import importlib
    import ipaddress
    import logging
    import os
    import signal
    import sys
    from collections.abc import Callable, Coroutine, Sequence
    from importlib.metadata import version
    from typing import TYPE_CHECKING, Any

    from agentd import config as config_mod
    from agentd.grpc.gate import Gate
    from agentd.grpc.server import AgentdServer
    from agentd.grpc.tracing import OtelEnvironmentError
    from agentd.helper_threads import batch_helpers
    from agentd.remote import TargetPolicy, remote_factory
    from agentd.runtime import attachments
    from agentd.runtime.agent import Agent
    from agentd.runtime.cluster import ClusterError
    from agentd.runtime.coordination import CoordinationError
    from agentd.runtime.errors import AgentdError
    from agentd.runtime.host import App, Host
    from agentd.runtime.lazy import lazy
    from agentd.runtime.processors.catalogue import default_registry
    from agentd.runtime.redact import install_log_redaction, redact
    from agentd.runtime.storage import StorageError
    from agentd.runtime.tools import Tool
    from agentd.tokens import new_token

if TYPE_CHECKING:
    from agentd import chat
    from agentd.runtime.workflows import definition as workflow_definition
else:
    chat = lazy("agentd.chat")  # `agentd chat` only: the server never loads the terminal client
    workflow_definition = lazy("agentd.runtime.workflows.definition")  # an app's workflows only

log = logging.getLogger("agentd")
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")


def load_app(module_name: str | None) -> App:
    """What a `--app` module contributes: `agents` (a list, or a function
    returning one), `processors` (name → factory taking the options dict),
    `step_functions` (name → prepare_step callable), the `tools` and
    `workflows` agentd.toml's `[[workflows]]` may name, and `setup(host)`,
    which returns agents built on the host's backends (its storage, its caches)."""
    if not module_name:
        return App()
    if os.getcwd() not in sys.path:  # like other app servers: the app lives beside you, not beside agentd
        sys.path.insert(0, os.getcwd())
    module = importlib.import_module(module_name)
    agents = getattr(module, "agents", [])
    if callable(agents):
        agents = agents()
    if not isinstance(agents, (list, tuple)) or not all(isinstance(a, Agent) for a in agents):
        raise config_mod.ConfigError(f"--app {module_name}: `agents` must be a list of agentd.runtime.Agent")
    processors = dict(getattr(module, "processors", {}))
    step_functions = dict(getattr(module, "step_functions", {}))
    setup = getattr(module, "setup", None)
    if setup is not None and not callable(setup):
        raise config_mod.ConfigError(f"--app {module_name}: `setup` must be a function taking the host")
    tools = list(getattr(module, "tools", []))
    if not all(isinstance(t, Tool) for t in tools):
        raise config_mod.ConfigError(f"--app {module_name}: `tools` must be a list of agentd.runtime.Tool")
    workflows = list(getattr(module, "workflows", []))
    if not all(isinstance(w, workflow_definition.Workflow) for w in workflows):
        raise config_mod.ConfigError(f"--app {module_name}: `workflows` must be a list of agentd.runtime.Workflow")
    return App(
        list(agents),
        processors,
        step_functions,
        tools=tools,
        workflows=workflows,
        setup=_checked(module_name, setup) if setup else None,
    )


def _checked(module_name: str, setup: Callable[[Host], Any]) -> Callable[[Host], list[Agent]]:
    def checked(host: Host) -> list[Agent]:
        agents = setup(host)
        agents = [] if agents is None else agents
        if not isinstance(agents, (list, tuple)) or not all(isinstance(a, Agent) for a in agents):
            raise config_mod.ConfigError(
                f"--app {module_name}: `setup(host)` must return a list of agentd.runtime.Agent (or None)"
            )
        return list(agents)

    return checked


def build_host(config_path: str | None, app_module: str | None) -> tuple[config_mod.Config, Host]:
    app = load_app(app_module)
    # `remote` beside the built-ins; an app's own processor by that name wins, as any does.
    targets = TargetPolicy()
    registry = default_registry().extended({"remote": remote_factory(policy=targets)}).extended(app.processors)
    cfg = config_mod.load(config_path, registry=registry, app=app)
    targets.seal(cfg.remote_processors.allowed_targets)  # agentd.toml's entries are built: calls' entries are checked
    try:
        host = Host.from_config(cfg, app, registry)
    except ValueError as exc:  # what only the whole host shows: a workflow cycle, one nested too deep
        raise config_mod.ConfigError(str(exc)) from None
    attachments.ALLOW_PRIVATE_NETWORKS = cfg.attachments.allow_private_networks  # process-wide, like the limits
    return cfg, host


async def serve(args: argparse.Namespace) -> int:
    cfg, agentd_host = build_host(args.config, args.app)
    host = args.host or cfg.server.host
    port = args.port if args.port is not None else cfg.server.port
    grace = args.grace if args.grace is not None else cfg.server.shutdown_grace_seconds
    check_exposure(host, cfg.auth.modes, cfg.auth.allow_unauthenticated_network)
    server = AgentdServer(
        agentd_host,
        shutdown_grace=grace,
        dispatch_interval=cfg.threads.notification_dispatch_interval_seconds,
        health_probe_interval=cfg.server.health_probe_seconds,
        max_message_bytes=cfg.server.max_message_bytes,
        gate=Gate(cfg.auth.authenticator(), cfg.auth.limits, agentd_host.cache),
        tls=cfg.server.tls,
        reflection_mode=cfg.server.reflection,
        default_deadline=cfg.server.default_deadline_seconds,
        metrics_port=cfg.server.metrics_port,
        metrics_host=host,
    )
    try:
        bound = await server.start(f"{host}:{port}")
    except OSError as exc:
        raise OSError(f"{exc}; choose another port with --port or AGENTD_PORT (or [server] port)") from None
    if cfg.server.batch_helper_threads:
        log.debug("%d helper threads scheduled SCHED_BATCH", batch_helpers())
    # What start-up built (modules, registries, the host) lives as long as the
    # process: frozen, the collector's full passes no longer walk it on every
    # run's garbage.
    gc.freeze()
    log.info("agentd serving on %s:%d (%d agents, on %s)", host, bound, len(server.host.agents), loop_name())

    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("shutting down (grace %.1fs)", grace)
    await server.stop()
    return 0


def check_exposure(host: str, modes: Sequence[str], allowed: bool) -> None:
    """No authentication is for loopback: anything else must say so."""
    if tuple(modes) != ("none",) or _loopback(host):
        return
    if not allowed:
        raise config_mod.ConfigError(
            f"auth.mode is none, but the server would listen on {host}, beyond this machine: set [auth] mode "
            "(token, jwt or mtls), or allow_unauthenticated_network = true to accept every caller as admin"
        )
    log.warning(
        "AUTHENTICATION IS OFF on %s: anyone who reaches this port is an admin of every tenant "
        "([auth] allow_unauthenticated_network = true)",
        host,
    )


def _loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


#: `--loop`'s choices.
LOOPS = ("auto", "uvloop", "asyncio")


def run_loop(name: str, main: Coroutine[Any, Any, int]) -> int:
    """`main` on the event loop `name`: uvloop's, asyncio's, or (`auto`)
    uvloop's where it is installed and asyncio's elsewhere. uvloop is loaded
    by name, only when asked for: agentd runs without it (Windows has none)."""
    if name == "asyncio":
        return asyncio.run(main)
    try:
        uvloop = importlib.import_module("uvloop")
    except ModuleNotFoundError:
        if name == "auto":
            return asyncio.run(main)
        main.close()
        raise config_mod.ConfigError("--loop uvloop needs uvloop: pip install uvloop") from None
    result: int = uvloop.run(main)
    return result


def loop_name() -> str:
    """The running event loop, as `--loop` names it (for the start-up line)."""
    return "uvloop" if type(asyncio.get_running_loop()).__module__.startswith("uvloop") else "asyncio"


def _csv(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class _Version(argparse.Action):
    """`--version`, with the version read from the package's metadata only
    when asked (reading it was 1% of every start)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"agentd {version('agentd')}")
        parser.exit()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agentd", description="agentd: an agent runtime served over gRPC")
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="start the gRPC server")
    s.add_argument(
        "--config",
        help=f"path to agentd.toml (default: $AGENTD_CONFIG, then ./{config_mod.DEFAULT_CONFIG} if there is one)",
    )
    s.add_argument("--host", help="listen address (default: $AGENTD_HOST, then the config, then 127.0.0.1)")
    s.add_argument("--port", type=int, help="listen port (default: $AGENTD_PORT, then the config, then 50051)")
    s.add_argument("--app", help="Python module defining `agents` to host besides the config's")
    s.add_argument("--grace", type=float, help="shutdown grace period in seconds")
    s.add_argument("--log-level", type=str.lower, choices=LOG_LEVELS, default="info", help="(default: info)")
    s.add_argument(
        "--loop",
        choices=LOOPS,
        default=os.environ.get("AGENTD_LOOP", "auto"),
        help="the event loop (default: $AGENTD_LOOP, then auto: uvloop where it is installed, asyncio elsewhere)",
    )
    c = sub.add_parser("chat", help="talk to an agent on a running server, in this terminal")
    c.add_argument("--agent", required=True, help="the agent's id")
    c.add_argument("--thread", help="the thread to join or start (default: a new one)")
    c.add_argument("--resource", default=os.environ.get("USER") or "terminal", help="the thread's resource id")
    c.add_argument(
        "--addr",
        default=os.environ.get("AGENTD_ADDR", "127.0.0.1:50051"),
        help="the server's address (default: $AGENTD_ADDR, then 127.0.0.1:50051)",
    )
    c.add_argument("--provider-options", help="JSON provider options for the runs this chat wakes")
    c.add_argument("--token", help="bearer token for a server with [auth] (default: $AGENTD_TOKEN)")
    c.add_argument("--tls", action="store_true", help="connect over TLS, trusting the system's roots")
    c.add_argument("--tls-ca", help="connect over TLS, trusting this CA (PEM)")
    c.add_argument("--tls-cert", help="client certificate (PEM) for mutual TLS, with --tls-key")
    c.add_argument("--tls-key", help="the client certificate's key (PEM)")
    t = sub.add_parser("token", help="make a bearer token for [auth] mode token")
    t_sub = t.add_subparsers(dest="token_command", required=True)
    n = t_sub.add_parser("new", help="print a fresh token once, and the [[auth.tokens]] lines that admit it")
    n.add_argument("--tenant", required=True)
    n.add_argument("--subject", required=True, help="who uses it, e.g. billing-service")
    n.add_argument("--roles", required=True, help="comma-separated: reader, writer, admin")
    n.add_argument("--resources", default="*", help="comma-separated resource-id patterns (default: *)")
    args = parser.parse_args(argv)
    if args.command == "token":
        try:
            token, lines = new_token(args.tenant, args.subject, _csv(args.roles), _csv(args.resources))
        except ValueError as exc:
            print(f"agentd token new: {exc}", file=sys.stderr)
            return 2
        print(f"token (shown once; agentd keeps only its hash): {token}\n\n# agentd.toml\n{lines}")
        return 0
    if args.command == "chat":
        if (args.tls_cert is None) != (args.tls_key is None):
            parser.error("--tls-cert and --tls-key go together")
        return chat.run(args)
    if args.loop not in LOOPS:  # argparse checks a given --loop, not its default from the environment
        parser.error(f"AGENTD_LOOP={args.loop!r}: choose one of {', '.join(LOOPS)}")
    install_log_redaction()
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return run_loop(args.loop, serve(args))
    except (config_mod.ConfigError, OtelEnvironmentError) as exc:
        print(f"agentd: configuration error: {redact(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"agentd: {redact(str(exc))}", file=sys.stderr)
        return 1
    except (AgentdError, StorageError, ClusterError, CoordinationError) as exc:
        # A backend that is down at start-up (Redis, the SQLite file): say which, no traceback.
        print(f"agentd: cannot start: {redact(str(exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
