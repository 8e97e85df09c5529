"""Who may use this server: the Host allowlist, the same-origin rule, the access token and its rate limit.

Pure decisions on strings, no web framework (``ui.guard`` applies them to every request and websocket).

Guarantees:
- ``parse_authority`` reads a Host header strictly: ``name[:port]``, ``IPv4[:port]`` or ``[IPv6][:port]``, the port
  digits only (0-65535); anything else (``[::1]evil``, ``localhost:evil``, a bare IPv6, a path, user info) is None.
- ``host_allowed``: the Host header (any port) must parse and name a loopback name (127.0.0.1, localhost, ::1),
  the bound address, or a name given with ``--allowed-hosts`` (``*`` allows any well-formed one). On a wildcard
  bind (0.0.0.0, ::) any IP address is also allowed: DNS rebinding needs a name, an address cannot be re-pointed.
- ``origin_allowed``: an ``Origin`` header must be exactly ``scheme://host[:port]`` (no path, not even ``/``) and
  name this server as the browser reached it: the request's scheme (``ws``/``wss`` count as ``http``/``https``),
  the Host header's host and its port, the default port of the scheme when none is written; ``null`` and every
  other site are foreign.
- ``token_matches`` compares in constant time (``hmac.compare_digest``); the cookie holds a value derived from
  the token, never the token itself.
- ``FailedAttempts`` allows ``MAX_FAILURES`` wrong tokens per peer (``peer_key``: an IPv4 address, or an IPv6
  address's /64, which one machine usually holds whole) per ``WINDOW_SECONDS`` (a sliding window), remembers at
  most ``MAX_CLIENTS`` peers and at most ``MAX_FAILURES`` times per peer. It only counts: ``ui.guard`` asks it
  after a token proved wrong, so a correct token is never refused by it.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?\.?")
_PORT = re.compile(r"[0-9]{1,5}")
_ORIGIN = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<authority>[^/?#@\s]+)")
MAX_FAILURES = 10
WINDOW_SECONDS = 60.0
MAX_CLIENTS = 4096


def new_token() -> str:
    """A fresh access token: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


@dataclass(frozen=True)
class AccessPolicy:
    """The rules for one bound server. ``token=None`` means no token is asked (a loopback bind's default)."""

    port: int
    token: str | None = field(default=None, repr=False)
    hosts: frozenset[str] = LOOPBACK_NAMES
    any_address: bool = False
    any_host: bool = False

    @classmethod
    def for_bind(cls, host: str, port: int, *, token: str | None, allowed_hosts: Iterable[str] = ()) -> AccessPolicy:
        extra = {bare_host(h) for h in allowed_hosts if h and h != "*"}
        bound = bare_host(host)
        wildcard = bound in WILDCARD_BINDS
        names = LOOPBACK_NAMES | extra | (set() if wildcard else {bound})
        return cls(port, token, frozenset(names), wildcard, "*" in allowed_hosts)

    @property
    def cookie_name(self) -> str:
        return f"ledgerchat-token-{self.port}"  # cookies ignore the port: one name per server on this host

    @property
    def cookie_value(self) -> str:
        return _derive(self.token or "")

    def host_allowed(self, host_header: str | None) -> bool:
        parsed = parse_authority(host_header or "")
        if parsed is None:
            return False
        host = parsed[0]
        return self.any_host or host in self.hosts or (self.any_address and _is_ip(host))

    def origin_allowed(self, origin: str, host_header: str | None, scheme: str = "http") -> bool:
        """Whether ``origin`` is this server as reached by this request (``scheme`` is the ASGI scope's)."""
        matched = _ORIGIN.fullmatch(origin)
        own_scheme = {"ws": "http", "wss": "https"}.get(scheme, scheme)
        if matched is None or matched["scheme"] != own_scheme or own_scheme not in ("http", "https"):
            return False
        theirs, ours = parse_authority(matched["authority"]), parse_authority(host_header or "")
        if theirs is None or ours is None:
            return False
        default = DEFAULT_PORTS[own_scheme]
        return (theirs[0], theirs[1] or default) == (ours[0], ours[1] or default)

    def token_matches(self, presented: str) -> bool:
        return self.token is not None and hmac.compare_digest(_bytes(presented), _bytes(self.token))

    def cookie_matches(self, presented: str) -> bool:
        return self.token is not None and hmac.compare_digest(_bytes(presented), _bytes(self.cookie_value))


def parse_authority(value: str) -> tuple[str, int | None] | None:
    """``(host, port)`` of a Host header (or an Origin's authority), lower-case, without brackets or a trailing dot;
    None unless it is exactly a name, an IPv4 address or a bracketed IPv6 address, then optionally ``:digits``."""
    value = value.lower()
    if value.startswith("["):
        end = value.find("]")
        host, rest = value[1:end], value[end + 1 :]
        if end < 0 or not _is_ip(host) or ":" not in host:
            return None
    else:
        host, colon, port_text = value.partition(":")
        rest = colon + port_text
        if not _NAME.fullmatch(host):
            return None
        host = host.rstrip(".")
    if not rest:
        return host, None
    if not rest.startswith(":") or not _PORT.fullmatch(rest[1:]) or int(rest[1:]) > 65535:
        return None
    return host, int(rest[1:])


def peer_key(address: str) -> str:
    """What wrong tokens are counted by: the address itself, or an IPv6 address's /64 (one machine's share)."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return str(ip.ipv4_mapped)
    if isinstance(ip, ipaddress.IPv6Address) and not ip.is_loopback:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


def bare_host(value: str) -> str:
    """The host of a Host header or a bind address, lower-case, without port, brackets or a trailing dot."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


class FailedAttempts:
    """Wrong tokens per client address in a sliding window; bounded in memory."""

    def __init__(self, limit: int = MAX_FAILURES, window: float = WINDOW_SECONDS) -> None:
        self.limit, self.window = limit, window
        self._seen: OrderedDict[str, deque[float]] = OrderedDict()

    def blocked(self, client: str, now: float | None = None) -> float:
        """Seconds until ``client`` may try again (0 when it may try now)."""
        now = time.monotonic() if now is None else now
        times = self._recent(client, now)
        return 0.0 if len(times) < self.limit else max(0.0, times[0] + self.window - now)

    def record(self, client: str, now: float | None = None) -> int:
        """Count a wrong token; returns how many this client sent within the window."""
        now = time.monotonic() if now is None else now
        times = self._recent(client, now)
        times.append(now)
        while len(times) > self.limit:  # what a blocked peer keeps sending is not kept
            times.popleft()
        self._seen[client] = times
        self._seen.move_to_end(client)
        while len(self._seen) > MAX_CLIENTS:
            self._seen.popitem(last=False)
        return len(times)

    def _recent(self, client: str, now: float) -> deque[float]:
        times = self._seen.get(client, deque())
        while times and times[0] <= now - self.window:
            times.popleft()
        return times


def _derive(token: str) -> str:
    return hashlib.sha256(b"ledgerchat-cookie\0" + _bytes(token)).hexdigest()


def _bytes(text: str) -> bytes:
    return text.encode("utf-8", "replace")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True
