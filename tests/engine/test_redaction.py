"""Credentials never reach the ledger, an export or a log line: redaction of URLs, keys and log records."""

from __future__ import annotations

import logging
import sys

import pytest

from engine.provider.calls import ProviderConfig
from engine.redaction import RedactingFormatter, redact, redact_url

SECRET_BASE = "http://alice:pa55word@llm.internal:8000/v1?key=K3Y-VALUE&api_key=AK-VALUE&token=TK-VALUE&version=2"


def test_the_recorded_api_base_keeps_no_credentials_but_stays_readable() -> None:
    config = ProviderConfig(model="openai/x", api_base=SECRET_BASE, api_key="sk-never-recorded-0123456789")
    params = dict((p.name, p.value) for p in config.public_params())
    assert params["api_base"] == (
        "http://[redacted]@llm.internal:8000/v1?key=[redacted]&api_key=[redacted]&token=[redacted]&version=2"
    )
    assert config.api_base == SECRET_BASE, "requests still go to the real URL"
    assert "sk-never" not in repr(config) and "sk-never" not in str(params)


@pytest.mark.parametrize(
    ("text", "kept", "gone"),
    [
        ("connect to https://u:p@h/v1 failed", "https://[redacted]@h/v1", "u:p"),
        ("GET /v1?access_token=abc123&x=1", "x=1", "abc123"),
        ("GET /v1?sig=abc&signature=def;Password=ghi", "sig=[redacted]", "ghi"),
        ("Bearer sk-abcdefghijklmnop in a header", "[redacted] in a header", "sk-abc"),
        ("https://plain.example/v1?model=gpt", "https://plain.example/v1?model=gpt", "[redacted]"),
    ],
)
def test_credentials_in_text_are_redacted_and_the_rest_is_kept(text: str, kept: str, gone: str) -> None:
    assert kept in redact(text) and gone not in redact(text)
    assert redact_url(SECRET_BASE).count("[redacted]") == 4


def test_log_lines_are_redacted_tracebacks_included() -> None:
    formatter = RedactingFormatter("%(levelname)s %(message)s")
    try:
        raise ConnectionError(f"cannot reach {SECRET_BASE}")
    except ConnectionError:
        record = logging.LogRecord("x", logging.ERROR, __file__, 1, "calling %s", (SECRET_BASE,), sys.exc_info())
    line = formatter.format(record)
    assert "pa55word" not in line and "K3Y-VALUE" not in line and "TK-VALUE" not in line
    assert line.count("llm.internal:8000") == 2
