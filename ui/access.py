"""Who may use this server: the Host allowlist, the same-origin rule, the access token and its rate limit.

Pure decisions on strings, no web framework (``ui.guard`` applies them to every request and websocket).

Guarantees:
- ``host_allowed``: the Host header (port ignored) must be a loopback name (127.0.0.1, localhost, ::1), the bound
  address, or a name given with ``--allowed-hosts`` (``*`` allows any). On a wildcard bind (0.0.0.0, ::) any IP
  address is also allowed: DNS rebinding needs a name, an address cannot be re-pointed at another server.
- ``origin_allowed``: an ``Origin`` header must name exactly this server as the browser reached it (scheme-less
  ``host[:port]`` equal to the Host header); ``null`` and every other site are foreign.
- ``token_matches`` compares in constant time (``hmac.compare_digest``); the cookie holds a value derived from
  the token, never the token itself.
- ``FailedAttempts`` allows ``MAX_FAILURES`` wrong tokens per client address per ``WINDOW_SECONDS`` (a sliding
  window) and remembers at most ``MAX_CLIENTS`` addresses.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Iterable
from dataclasses import dataclass, field

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD_BINDS = frozenset({"0.0.0.0", "::", ""})
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
        if not host_header:
            return False
        if self.any_host:
            return True
        host = bare_host(host_header)
        return host in self.hosts or (self.any_address and _is_ip(host))

    def origin_allowed(self, origin: str, host_header: str | None) -> bool:
        scheme, sep, rest = origin.partition("://")
        if not sep or scheme.lower() not in ("http", "https") or not host_header:
            return False
        return rest.rstrip("/").lower() == host_header.lower()

    def token_matches(self, presented: str) -> bool:
        return self.token is not None and hmac.compare_digest(_bytes(presented), _bytes(self.token))

    def cookie_matches(self, presented: str) -> bool:
        return self.token is not None and hmac.compare_digest(_bytes(presented), _bytes(self.cookie_value))


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
