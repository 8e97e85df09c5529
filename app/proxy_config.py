"""``--forwarded-allow-ips`` (or ``LEDGERCHAT_FORWARDED_ALLOW_IPS``): the proxies whose ``X-Forwarded-For`` and
``X-Forwarded-Proto`` headers are believed (``app.serve`` hands them to uvicorn; none by default).

Guarantees: ``trusted_proxies(args, environ)`` is the comma-separated list, command line first, each an IP address
or network (``10.0.0.0/8``) or ``*`` (any peer: only when nothing but the proxy can reach the port); anything else
raises ``ValueError`` with one line naming it (``app.config`` turns it into a ``ConfigError``).
"""

from __future__ import annotations

import argparse
import ipaddress
from collections.abc import Mapping

VARIABLE = "LEDGERCHAT_FORWARDED_ALLOW_IPS"


def proxy_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--forwarded-allow-ips",
        default=argparse.SUPPRESS,
        help="comma-separated proxy addresses or networks whose X-Forwarded-For/-Proto are believed (default none)",
    )


def trusted_proxies(args: argparse.Namespace, environ: Mapping[str, str]) -> tuple[str, ...]:
    given = getattr(args, "forwarded_allow_ips", None) or environ.get(VARIABLE, "")
    proxies = tuple(p.strip() for p in given.split(",") if p.strip())
    for proxy in proxies:
        try:
            ipaddress.ip_network("0.0.0.0/0" if proxy == "*" else proxy, strict=False)
        except ValueError:
            raise ValueError(
                f"--forwarded-allow-ips: {proxy!r} is not an IP address or network (e.g. 127.0.0.1 or 10.0.0.0/8)"
            ) from None
    return proxies
