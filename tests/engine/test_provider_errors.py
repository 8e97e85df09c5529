"""Errors as people read them, from every dialect: the provider's own message, its error type and the HTTP status
it sent, never a bytes literal or JSON on the page; the status in the ledger is the one sent (Anthropic's 529
stays 529); the body stays in the ledger for the audit; a ``retry-after`` is honoured by the automatic re-send."""

from __future__ import annotations

import json

import pytest

from engine.commands.engine import Engine
from ledger.events.core import Failed
from ledger.state import AttemptState
from tests.support.dialects import DIALECTS, OVERLOADED
from tests.support.engine import EngineFactory, current_attempt, finished
from tests.support.upstream import Behavior, ScriptedUpstream
from ui.format import announcement, error_title
from ui.money import answer_cost

#: The error type each dialect's body names for a status (``None``: Ollama's body is a bare message).
KINDS = {
    "openai": {400: "invalid_request_error", 401: "invalid_request_error", 429: "requests", 503: "server_error"},
    "anthropic": {
        400: "invalid_request_error",
        401: "authentication_error",
        429: "rate_limit_error",
        529: "overloaded_error",
    },
    "gemini": {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"},
    "ollama": {400: None, 401: None, 429: None, 503: None},
}
OVERLOADED_WORDS = "Overloaded right now"  # an error the provider sends inside the stream
ERROR_TYPES = {400: "bad_request", 401: "auth", 429: "rate_limit", 503: "server", 529: "server"}
CASES = [(d, s) for d in DIALECTS for s in (400, 401, 429, OVERLOADED[d])]


def failures(engine: Engine, cid: str) -> list[Failed]:
    return [e for e in engine.events(cid) if isinstance(e, Failed)]


async def asked(
    engine: Engine, cid: str, upstream: ScriptedUpstream, *plan: Behavior, text: str = "hi"
) -> AttemptState:
    """The answer to ``text`` once it ended, the upstream doing ``plan``."""
    upstream.plan(*plan)
    _, answer = await engine.submit(cid, text)
    await finished(engine, cid)
    return current_attempt(engine, cid, answer)


@pytest.mark.parametrize(("dialect", "status"), CASES, ids=[f"{d}-{s}" for d, s in CASES])
async def test_an_error_reads_as_the_providers_sentence_with_the_status_it_sent(
    dialect: str, status: int, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines(max_resends=0)
    cid = engine.create_conversation()
    attempt = await asked(engine, cid, upstream, Behavior(status=status, message=f"injected {status}"))
    (failed,) = failures(engine, cid)
    assert attempt.status == "failed" and failed.http_status == attempt.http_status == status
    assert failed.error_type == ERROR_TYPES[status]
    shown = [error_title(attempt), attempt.error_summary or "", announcement(attempt)]  # what the page shows
    for line in (*shown, failed.summary):
        assert "b'" not in line and '{"' not in line and "Exception" not in line, line
    kind = KINDS[dialect][status]
    assert f"injected {status} ({kind + ', ' if kind else ''}HTTP {status})." in failed.summary
    assert f"(HTTP {status})" in error_title(attempt)
    assert failed.body is not None and f"injected {status}" in json.dumps(json.loads(failed.body))


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_the_automatic_resend_waits_the_retry_after_the_provider_asked_for(
    dialect: str, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines(resend_backoff=0.01)
    cid = engine.create_conversation()
    attempt = await asked(engine, cid, upstream, Behavior(status=429, retry_after=0.4), Behavior(text="after the wait"))
    assert attempt.text == "after the wait"
    first, second = upstream.records
    assert second.received_at - first.received_at >= 0.4
    (failed,) = failures(engine, cid)
    assert failed.will_retry and failed.retry_after == 0.4 and "It asked to wait 0.4 s." in failed.summary


async def test_a_wait_longer_than_the_cap_is_not_resent_and_the_failure_says_how_long(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = "anthropic"
    engine = engines()
    cid = engine.create_conversation()
    attempt = await asked(engine, cid, upstream, Behavior(status=529, retry_after=600))
    (failed,) = failures(engine, cid)
    assert len(upstream.records) == 1 and not failed.will_retry and failed.http_status == 529
    assert "It asked to wait 600 s." in (attempt.error_summary or "")


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_an_error_the_provider_sends_inside_the_stream_reads_as_its_words_not_as_a_dropped_connection(
    dialect: str, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    attempt = await asked(
        engine, cid, upstream, Behavior(text="PARTIAL " * 30, error_after=3, message=OVERLOADED_WORDS)
    )
    (failed,) = failures(engine, cid)
    assert attempt.status == "failed" and failed.error_type == "server" and failed.http_status is None
    assert failed.summary.startswith(f"The provider stopped the answer with an error: {OVERLOADED_WORDS}")
    assert "b'" not in failed.summary and '{"' not in failed.summary and "{'" not in failed.summary
    assert len(upstream.records) == 1, "text was delivered: nothing is re-sent"


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_request_the_provider_refused_is_not_charged_and_one_cut_mid_stream_is(
    dialect: str, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines(max_resends=0)
    cid = engine.create_conversation()
    refused = await asked(engine, cid, upstream, Behavior(status=400, message="prompt is too long"))
    assert refused.metrics is not None and (refused.metrics.input_tokens, refused.metrics.output_tokens) == (0, 0)
    conv = engine.conversation(cid)
    assert conv is not None and answer_cost(conv, refused) == "not charged"  # the footer's words
    cut = await asked(engine, cid, upstream, Behavior(text="PARTIAL " * 30, error_after=3, message=OVERLOADED_WORDS))
    assert cut.status == "failed" and cut.metrics is not None and cut.metrics.input_tokens > 0
    conv = engine.conversation(cid)
    assert conv is not None and answer_cost(conv, cut) != "not charged"
