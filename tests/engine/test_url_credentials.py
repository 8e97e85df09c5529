"""``--api-base`` with ``user:password@`` (issue 42 item 6): the credentials go as HTTP Basic auth, never in the URL
called, by both routes and every dialect of the scripted upstream; a key goes where its provider expects it; a key
for an OpenAI-compatible provider together with URL credentials is refused at start; nothing of them is recorded."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import pytest

from app.config import ConfigError, load_config
from app.providers import check_model
from engine.provider.calls import ProviderConfig
from engine.provider.failures import classify
from engine.provider.light_route import ROUTE_VARIABLE
from engine.provider.routes import open_stream
from engine.provider.url_credentials import split_credentials
from engine.redaction import redact
from tests.support.dialects import MODELS, api_base
from tests.support.engine import TEST_KEY
from tests.support.upstream import Behavior, ScriptedUpstream

ASK = [{"role": "user", "content": "hello there"}]
BASIC = "Basic " + base64.b64encode(b"alice:s3cr et").decode()


def sha(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def with_credentials(url: str) -> str:
    return url.replace("http://", "http://alice:s3cr%20et@")


async def answer(cfg: ProviderConfig) -> list[Any]:
    stream = await open_stream(cfg, ASK)
    try:
        return [piece async for piece in stream]
    finally:
        await stream.aclose()


def test_the_credentials_leave_the_url_and_become_a_basic_header() -> None:
    assert split_credentials("http://alice:s3cr%20et@127.0.0.1:8000/v1") == ("http://127.0.0.1:8000/v1", BASIC)
    assert split_credentials("https://[::1]:9/v1?x=1")[1] is None
    assert split_credentials("http://bob@[::1]:9/v1") == (
        "http://[::1]:9/v1",
        "Basic " + base64.b64encode(b"bob:").decode(),
    )


@pytest.mark.parametrize("route", ["auto", "litellm"])
@pytest.mark.parametrize("key", [TEST_KEY, None], ids=["with-key", "no-key"])
async def test_an_openai_compatible_endpoint_gets_the_url_credentials_as_basic_auth_by_both_routes(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch, route: str, key: str | None
) -> None:
    monkeypatch.setenv(ROUTE_VARIABLE, route)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cfg = ProviderConfig(model=MODELS["openai"], api_base=with_credentials(upstream.base_url), api_key=key)
    assert await answer(cfg), "an answer streamed"
    (request,) = upstream.records
    assert request.headers["authorization-sha256"] == sha(BASIC), "the URL's credentials, as Basic auth"
    assert [p.value for p in cfg.public_params() if p.name == "api_base"] == [
        upstream.base_url.replace("http://", "http://[redacted]@")
    ]


@pytest.mark.parametrize("dialect", ["anthropic", "gemini", "ollama"])
async def test_other_providers_get_their_key_where_they_expect_it_and_the_credentials_as_basic_auth(
    upstream: ScriptedUpstream, dialect: str
) -> None:
    cfg = ProviderConfig(
        model=MODELS[dialect], api_base=with_credentials(api_base(dialect, upstream)), api_key=TEST_KEY
    )
    assert await answer(cfg)
    (request,) = upstream.records
    assert request.headers["authorization-sha256"] == sha(BASIC)
    if dialect == "anthropic":
        assert request.headers["x-api-key-sha256"] == sha(TEST_KEY)
    if dialect == "gemini":
        assert request.headers["x-goog-api-key-sha256"] == sha(TEST_KEY)


async def test_a_failure_from_an_endpoint_with_credentials_records_none_of_them(upstream: ScriptedUpstream) -> None:
    upstream.plan(Behavior(status=401, message="bad credentials"))
    cfg = ProviderConfig(model=MODELS["openai"], api_base=with_credentials(upstream.base_url), api_key=TEST_KEY)
    with pytest.raises(Exception) as caught:  # noqa: PT011 - litellm's type, whatever it is
        await answer(cfg)
    assert "s3cr" not in str(caught.value) and "s3cr" not in classify(caught.value).summary
    assert redact(f"headers={{'Authorization': '{BASIC}'}}") == "headers={'Authorization': 'Basic [redacted]'}"
    assert redact("basic settings: Basic Settings") == "basic settings: Basic Settings", "words stay"


def test_url_credentials_and_a_key_in_the_same_header_are_refused_at_start(
    upstream: ScriptedUpstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--model", MODELS["openai"], "--api-base", with_credentials(upstream.base_url)]
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    check_model(load_config(argv, {}))  # no key: the credentials are the endpoint's
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    with pytest.raises(ConfigError, match=r"^--api-base: its user:password@ goes to the server as HTTP Basic") as e:
        check_model(load_config(argv, {}))
    assert "\n" not in str(e.value) and "s3cr" not in str(e.value) and TEST_KEY not in str(e.value)
    check_model(load_config(["--model", MODELS["openai"], "--api-base", upstream.base_url], {}))
