"""The demo model: a small OpenAI-compatible chat-completions endpoint that streams over SSE, with fault tags.

The app mounts it at ``/demo`` (the offline demo model); the tests' scripted upstream extends it.

Guarantees:
- ``POST /v1/chat/completions`` with ``stream: true`` answers with OpenAI-style SSE chunks at a human pace
  (default 30 chunks/s), a final chunk with ``finish_reason`` and, when ``stream_options.include_usage`` is set,
  a usage chunk, then ``data: [DONE]``. A behaviour's reasoning streams first, word by word
  (``reasoning_content`` deltas), then its text.
- Each request follows a ``Behavior`` chosen by ``choose``: here from tags in the last user message
  (``#slow #drop #stall #429 #500 #401 #malformed #html #long``), else a demo answer.
- A request body over ``MAX_BODY_BYTES`` gets 413 without being read into memory (a declared length is refused
  at once, a streamed one as soon as it passes the limit) and a body that is not a JSON object 400; ``records``
  keeps only the last ``MAX_RECORDS`` requests (their messages, chunks sent, when the client disconnected), and
  the per-prompt fault counters at most ``MAX_RECORDS`` prompts: memory stays bounded however long it runs.
- Importing this module changes nothing: the log filter that hides injected drops is installed by
  ``DemoModel()`` and ``serve_in_thread``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from demo.agent import PlannedCall, history_problem, tool_move
from demo.answers import demo_answer

HOSTILE = (
    'Here is some **markup**: <script>window.__pwned = true</script> <img src=x onerror="window.__pwned=true"> '
    '<b>bold?</b> and a [link](javascript:window.__pwned=true) and <a href="javascript:alert(1)">click</a>. '
    "Everything above must show as text."
)


class InjectedDrop(ConnectionAbortedError):
    """Raised inside the response to make the server cut the connection mid-stream (a fault, not a bug)."""


class _HideInjectedDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], InjectedDrop))


_FILTER = _HideInjectedDrops()
MAX_BODY_BYTES = 4_000_000
MAX_RECORDS = 50


def hide_injected_drops() -> None:
    """Keep uvicorn's log free of the tracebacks of drops injected on purpose (idempotent)."""
    logger = logging.getLogger("uvicorn.error")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


@dataclass
class Behavior:
    """How the upstream answers one request."""

    text: str | None = None
    chunk_delay: float = 1 / 30
    first_delay: float = 0.0
    status: int | None = None
    drop_after: int | None = None
    malformed_after: int | None = None
    stall_after: int | None = None
    reasoning: str | None = None
    usage: bool = True
    tool_calls: list[PlannedCall] = field(default_factory=list)


@dataclass
class RequestRecord:
    number: int
    messages: list[dict[str, Any]]
    model: str
    received_at: float
    status: int = 200
    chunks_sent: int = 0
    finished: bool = False
    disconnected_at: float | None = None
    closed_at: float | None = None
    headers: dict[str, str] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)


class DemoModel:
    """The ASGI app, how it picks a behaviour per request, and a bounded request log (thread-safe)."""

    max_records: int | None = MAX_RECORDS

    def __init__(self, *, chunk_delay: float = 1 / 30, transient_faults: bool = False) -> None:
        self.chunk_delay = chunk_delay
        self.transient_faults = transient_faults
        self.records: list[RequestRecord] = []
        self.lock = threading.Lock()
        self._numbered = 0
        self._seen: dict[str, int] = {}
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._completions, methods=["POST"])])
        hide_injected_drops()

    def choose(self, messages: list[dict[str, Any]], tools: list[str]) -> Behavior:
        """The behaviour of the next request (called under ``lock``): a tool move when tools are offered and the
        question calls for them, else from the tags in the last user message."""
        move = tool_move(messages, set(tools)) if tools else None
        if move is not None:
            return Behavior(text=move[0], tool_calls=move[1], chunk_delay=self.chunk_delay)
        return self._from_directives(messages)

    async def _completions(self, request: Request) -> Response:
        raw = await _read_limited(request)
        if raw is None:
            return _error(413)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _error(400)
        messages = body.get("messages") or []
        tools = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)]
        with self.lock:
            self._numbered += 1
            record = RequestRecord(
                number=self._numbered,
                messages=messages,
                model=str(body.get("model")),
                received_at=time.monotonic(),
                headers={k.lower(): v for k, v in request.headers.items() if k.lower() != "authorization"},
                tools=tools,
            )
            self.records.append(record)
            if self.max_records is not None and len(self.records) > self.max_records:
                del self.records[: len(self.records) - self.max_records]
            problem = history_problem(messages) if isinstance(messages, list) else "messages must be a list"
            behavior = Behavior(status=400) if problem else self.choose(messages, tools)
        if problem:
            record.status = 400
            return _error(400, problem)
        if behavior.first_delay and behavior.status:
            await asyncio.sleep(behavior.first_delay)
        if behavior.status:
            record.status = behavior.status
            return _error(behavior.status)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        text = behavior.text if behavior.text is not None else demo_answer(_last_user(messages))
        return StreamingResponse(
            self._stream(record, behavior, text, include_usage, str(body.get("model"))),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )

    async def _stream(
        self, record: RequestRecord, b: Behavior, text: str, usage: bool, model: str
    ) -> AsyncIterator[str]:
        pieces = re.findall(r"\s*\S+\s*", text) or ([] if b.tool_calls else [text])
        sent = 0
        try:
            if b.first_delay:
                await asyncio.sleep(b.first_delay)
            for n, piece in enumerate(re.findall(r"\s*\S+\s*", b.reasoning or "")):
                thought = {"role": "assistant", "reasoning_content": piece} if not n else {"reasoning_content": piece}
                yield _sse(_chunk(model, thought))
                await asyncio.sleep(b.chunk_delay)
            for n, piece in enumerate(pieces):
                if b.drop_after is not None and n >= b.drop_after:
                    raise InjectedDrop("upstream dropped the connection (fault injection)")
                if b.malformed_after is not None and n >= b.malformed_after:
                    yield 'data: {"id": "broken", "choices": [{"delta": {"content": "oops"\n\n'
                    record.chunks_sent = sent
                    return
                if b.stall_after is not None and n >= b.stall_after:
                    await asyncio.sleep(3600)
                delta = {"content": piece} if n else {"role": "assistant", "content": piece}
                yield _sse(_chunk(model, delta))
                sent += 1
                record.chunks_sent = sent
                await asyncio.sleep(b.chunk_delay)
            for index, call in enumerate(b.tool_calls):
                async for piece in _call_pieces(model, index, call):
                    yield piece
                    sent += 1
                    record.chunks_sent = sent
                    await asyncio.sleep(b.chunk_delay)
            yield _sse(_chunk(model, {}, finish_reason="tool_calls" if b.tool_calls else "stop"))
            if usage and b.usage:
                prompt_tokens = sum(len(str(m.get("content", "")).split()) for m in record.messages)
                yield _sse(
                    {
                        "id": "chatcmpl-demo",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": model,
                        "choices": [],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": len(pieces),
                            "total_tokens": prompt_tokens + len(pieces),
                        },
                    }
                )
            yield "data: [DONE]\n\n"
            record.finished = True
        except (asyncio.CancelledError, GeneratorExit):
            record.disconnected_at = time.monotonic()
            raise
        finally:
            record.closed_at = time.monotonic()

    def _from_directives(self, messages: list[dict[str, Any]]) -> Behavior:
        prompt = _last_user(messages)
        tags = set(re.findall(r"#(\w+)", prompt))
        key = f"{len(messages)}:{prompt}"
        if len(self._seen) > MAX_RECORDS:
            self._seen.clear()
        seen = self._seen[key] = self._seen.get(key, 0) + 1
        b = Behavior(chunk_delay=self.chunk_delay)
        if "html" in tags:
            b.text = HOSTILE
        if "long" in tags:
            b.text = "\n\n".join(demo_answer(f"{prompt} {n}") for n in range(4))
        if "slow" in tags:
            b.first_delay = 3.0
        # With transient_faults (the demo), a fault hits only the first tries of the same prompt, so that an
        # automatic re-send (429) or a Retry (drop, 500, stall) visibly succeeds afterwards.
        if "429" in tags and (not self.transient_faults or seen <= 1):
            b.status = 429
        if "500" in tags and (not self.transient_faults or seen <= 3):
            b.status = 500
        if "401" in tags:
            b.status = 401
        if "drop" in tags and (not self.transient_faults or seen <= 1):
            b.drop_after = 25
        if "stall" in tags and (not self.transient_faults or seen <= 1):
            b.stall_after = 15
        if "malformed" in tags and (not self.transient_faults or seen <= 1):
            b.malformed_after = 10
        return b


async def _read_limited(request: Request) -> bytes | None:
    """The body, or None as soon as it is known to be over ``MAX_BODY_BYTES`` (declared or received)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        return None
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > MAX_BODY_BYTES:
            return None
    return bytes(body)


def _last_user(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else json.dumps(content)
    return ""


def _chunk(model: str, delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-demo",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


def _sse(payload: dict[str, Any]) -> str:
    return f"data: {json.dumps(payload)}\n\n"


_ERRORS = {
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    429: ("Rate limit reached for requests. Please try again in 1s.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    400: ("The request body must be a JSON object.", "invalid_request_error", None),
    413: ("The request body is too large.", "invalid_request_error", None),
}


async def _call_pieces(model: str, index: int, call: PlannedCall) -> AsyncIterator[str]:
    """A tool call as OpenAI streams it: id and name first, then the arguments string in pieces."""
    first = {
        "index": index,
        "id": call.call_id or f"call_{index}",
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    yield _sse(_chunk(model, {"tool_calls": [first]}))
    size = max(1, -(-len(call.arguments) // max(call.pieces, 1)))
    for start in range(0, len(call.arguments), size):
        piece = {"index": index, "function": {"arguments": call.arguments[start : start + size]}}
        yield _sse(_chunk(model, {"tool_calls": [piece]}))


def _error(status: int, message: str | None = None) -> JSONResponse:
    default, kind, code = _ERRORS.get(status, (f"HTTP {status}", "error", None))
    message = message or default
    return JSONResponse({"error": {"message": message, "type": kind, "code": code}}, status_code=status)


def serve_in_thread(upstream: DemoModel, host: str = "127.0.0.1") -> tuple[str, Callable[[], None]]:
    """Run the upstream on a free port in a thread of its own; return its /v1 base URL and a stop function."""
    import socket

    import uvicorn

    hide_injected_drops()
    sock = socket.socket()
    sock.bind((host, 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(upstream.app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True, name="upstream")
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)

    def stop() -> None:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()

    return f"http://{host}:{port}/v1", stop
