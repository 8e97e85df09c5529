"""A stream cut before its end is a lost connection on every route and in every dialect, never a complete answer.

Three cuts, each after three words of the answer (``Behavior.drop_how``): a body that ends cleanly but without the
dialect's end marker (OpenAI's ``finish_reason``/``[DONE]``, Anthropic's ``message_stop``, Gemini's
``finishReason``, Ollama's ``done: true``), as a proxy's idle timeout ends it; a TCP reset; and a chunked body
closed without its last chunk. Every dialect is read by its light route and by litellm's plain route
(``LEDGER_CHAT_STREAM_ROUTE=litellm``). In each: the attempt ends failed as ``connection`` with the delivered
words kept on it, the next request does not carry them as an answer, and Retry answers in full.
"""

from __future__ import annotations

import json
import socket

import pytest

from engine.provider.light_route import ROUTE_VARIABLE
from tests.support.dialects import DIALECTS
from tests.support.engine import EngineFactory, current_attempt, finished, follow_up_is_accepted
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until

CUTS = ("clean", "reset", "incomplete")
#: (dialect, route): every dialect by its light route and by litellm's plain one.
ROUTED = [(d, r) for d in DIALECTS for r in ("light", "litellm")]
WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"


@pytest.mark.parametrize("how", CUTS)
@pytest.mark.parametrize(("dialect", "route"), ROUTED, ids=[f"{d}-{r}" for d, r in ROUTED])
async def test_a_cut_stream_is_a_lost_connection_kept_on_screen_and_out_of_the_next_request(
    dialect: str,
    route: str,
    how: str,
    engines: EngineFactory,
    upstream: ScriptedUpstream,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ROUTE_VARIABLE, "litellm" if route == "litellm" else "auto")
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, drop_after=3, drop_how=how, chunk_delay=0.005))
    _, m1 = await engine.submit(cid, "spell it")
    await finished(engine, cid)
    cut = current_attempt(engine, cid, m1)
    assert (cut.status, cut.error_type) == ("failed", "connection"), (cut.status, cut.error_type, cut.error_summary)
    assert cut.text == "alpha bravo charlie ", "the delivered words stay on the answer"
    assert len(upstream.records) == 1, "a cut after text was delivered is never re-sent"

    sent = await follow_up_is_accepted(engine, cid, upstream)
    assert "charlie" not in json.dumps(sent) and [m["role"] for m in sent] == ["user", "user"]

    upstream.plan(Behavior(text=WORDS, chunk_delay=0.002))
    await engine.retry(cid, m1)
    await finished(engine, cid)
    again = current_attempt(engine, cid, m1)
    assert (again.status, again.text) == ("complete", WORDS) and again.attempt_id != cut.attempt_id


async def test_a_reset_drop_really_resets_the_connection(upstream: ScriptedUpstream) -> None:
    """The fault itself: the server aborts the socket (RST), the client's read fails with a reset, not an end."""
    upstream.plan(Behavior(text=WORDS, drop_after=3, drop_how="reset", chunk_delay=0.005))
    host, port = upstream.base_url.removeprefix("http://").split("/")[0].split(":")
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head + body)
        received, error = b"", None
        try:
            while piece := sock.recv(65536):
                received += piece
        except ConnectionResetError as exc:
            error = exc
    assert b'"content": "charlie' in received and b'"content": "delta' not in received
    assert error is not None, "the connection ended with a FIN, not a reset"
    await wait_until(lambda: upstream.last.closed_at is not None, 5, "the upstream's stream to end")
