#!/usr/bin/env python3
"""One call to an agentd server that authenticates its callers: a bearer token
over TLS, or a client certificate (mutual TLS).

    agentd token new --tenant acme --subject example --roles writer   # its lines go in agentd.toml
    AGENTD_TOKEN=agentd_... .venv/bin/python clients/python/examples/secure_example.py --addr HOST:PORT --cacert ca.pem
    # mutual TLS: the same command with --cert me.pem --key me-key.pem in place of the token

The token comes from --token, else $AGENTD_TOKEN. Without --cacert the
channel is plaintext, which carries a token only to a loopback address.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from agentd_client import TLS, AgentdClient, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError


async def main(args: argparse.Namespace) -> int:
    tls = TLS(ca_file=args.cacert, cert_file=args.cert, key_file=args.key) if args.cacert else None
    async with AgentdClient(args.addr, token=args.token, tls=tls, timeout=30) as client:
        try:
            result = await client.generate(args.agent, "hello, securely")
        except UnauthenticatedError as err:
            print(f"the server does not know this caller ({err.reason}): check the token or certificate")
            return 1
        except PermissionDeniedError as err:
            print(f"this caller needs the {err.metadata.get('required_role')} role")
            return 1
        except ResourceExhaustedError as err:
            print(f"{err.reason}: try again in {err.retry_delay}s")
            return 1
        print(result.text)
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addr", default="127.0.0.1:50051")
    parser.add_argument("--token", help="bearer token (default: $AGENTD_TOKEN)")
    parser.add_argument("--cacert", help="the CA that signed the server's certificate (PEM)")
    parser.add_argument("--cert", help="client certificate (PEM), for mutual TLS")
    parser.add_argument("--key", help="the client certificate's key (PEM)")
    parser.add_argument("--agent", default="echo")
    sys.exit(asyncio.run(main(parser.parse_args())))
