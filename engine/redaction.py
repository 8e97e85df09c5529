"""Credentials never leave the process: redaction for failure summaries, recorded parameters and log lines.

Guarantees:
- ``redact(text)`` replaces anything that looks like a credential (API keys, bearer tokens, the value of an
  ``Authorization: Basic`` header, the values of ``*KEY*``/``*TOKEN*``/``*SECRET*`` environment variables, and URL
  credentials) with ``[redacted]``.
- ``redact_url(text)`` removes the ``user:password@`` part of every URL in the text and the values of
  secret-looking query keys (``key``, ``api_key``, ``token``, ``sig``, ...), keeping the rest readable.
- ``RedactingFormatter`` applies ``redact`` to every formatted log line, tracebacks included.
"""

from __future__ import annotations

import base64
import logging
import os
import re

_KEYLIKE = re.compile(r"\b(?:sk|pk|rk|key|api|AIza)[-_A-Za-z0-9]*[-_][A-Za-z0-9*_\-]{8,}|Bearer\s+\S+", re.IGNORECASE)
_BASIC = re.compile(r"\bBasic\s+(?P<value>[A-Za-z0-9+/]{4,}={0,2})")
_USERINFO = re.compile(r"(?P<scheme>\b[a-z][a-z0-9+.-]*://)[^/\s@?#]+@", re.IGNORECASE)
_SECRET_NAME = r"[\w.-]*(?:key|token|secret|password|passwd|pwd|sig|signature|auth|credential)[\w.-]*"
_SECRET_QUERY = re.compile(rf"(?P<name>[?&;]{_SECRET_NAME}=)[^&;#\s]*", re.IGNORECASE)


def redact(text: str) -> str:
    """Remove anything that looks like a credential, and the values of *_API_KEY environment variables."""
    for name, value in os.environ.items():
        if value and len(value) >= 8 and ("KEY" in name or "TOKEN" in name or "SECRET" in name):
            text = text.replace(value, "[redacted]")
    return _BASIC.sub(_basic, _KEYLIKE.sub("[redacted]", redact_url(text)))


def _basic(found: re.Match[str]) -> str:
    """``Basic <base64 of user:password>`` (an Authorization value) loses its value; other words stay."""
    try:
        decoded = base64.b64decode(found["value"], validate=True)
    except ValueError:
        return found[0]
    return "Basic [redacted]" if b":" in decoded else found[0]


def redact_url(text: str) -> str:
    """A URL (or text holding URLs) without ``user:password@`` and without the values of secret query keys."""
    text = _USERINFO.sub(r"\g<scheme>[redacted]@", text)
    return _SECRET_QUERY.sub(r"\g<name>[redacted]", text)


class RedactingFormatter(logging.Formatter):
    """A log formatter whose output never carries a credential."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))
