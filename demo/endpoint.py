"""The demo model's HTTP side: an OpenAI-compatible chat-completions endpoint with a bounded request log.

The app mounts it at ``/demo`` (the offline demo model); the tests' scripted upstream extends it.

Guarantees:
- ``POST /v1/chat/completions`` with ``stream: true`` answers with the SSE stream of ``demo.stream`` at a human
  pace (default 30 chunks/s), or with an OpenAI-style JSON error when the behaviour is an HTTP status (after its
  ``first_delay``). A history a provider would refuse (``demo.agent.history_problem``) gets 400 with its message.
- Each request follows a ``Behavior`` chosen by ``choose`` (called under ``lock``): a tool move when tools are
  offered and the question calls for them (``demo.agent.tool_move``), else the fault tags of the last user
  message (``demo.behavior``), else a demo answer.
- A request body over ``MAX_BODY_BYTES`` gets 413 without being read into memory (a declared length is refused
  at once, a streamed one as soon as it passes the limit) and a body that is not a JSON object 400; ``records``
  keeps only the last ``max_records`` requests (their messages, headers but ``authorization``, chunks sent, when
  the client disconnected): memory stays bounded however long it runs.
- Importing this module changes nothing: the log filter that hides injected drops is installed by
  ``DemoModel()`` and ``serve_in_thread``.
- ``HOSTILE``, ``Behavior`` and ``RequestRecord`` are importable from here too (the tests' scripted upstream).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from demo.agent import history_problem, tool_move
from demo.answers import demo_answer
from demo.behavior import HOSTILE, Behavior, FaultTags, last_user
from demo.stream import RequestRecord, answer_stream, hide_injected_drops

__all__ = ["HOSTILE", "MAX_BODY_BYTES", "MAX_RECORDS", "Behavior", "DemoModel", "RequestRecord", "serve_in_thread"]

MAX_BODY_BYTES = 4_000_000
MAX_RECORDS = 50
ERRORS = {
    401: ("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"),
    429: ("Rate limit reached for requests. Please try again in 1s.", "requests", "rate_limit_exceeded"),
    500: ("The server had an error while processing your request.", "server_error", None),
    400: ("The request body must be a JSON object.", "invalid_request_error", None),
    413: ("The request body is too large.", "invalid_request_error", None),
}


class DemoModel:
    """The ASGI app, how it picks a behaviour per request, and a bounded request log (thread-safe)."""

    max_records: int | None = MAX_RECORDS

    def __init__(self, *, chunk_delay: float = 1 / 30, transient_faults: bool = False) -> None:
        self.chunk_delay = chunk_delay
        self.transient_faults = transient_faults
        self.records: list[RequestRecord] = []
        self.lock = threading.Lock()
        self._numbered = 0
        self._tags = FaultTags()
        self.app = Starlette(routes=[Route("/v1/chat/completions", self._completions, methods=["POST"])])
        hide_injected_drops()

    def choose(self, messages: list[dict[str, Any]], tools: list[str]) -> Behavior:
        """The behaviour of the next request (called under ``lock``): a tool move when tools are offered and the
        question calls for them, else from the tags in the last user message."""
        move = tool_move(messages, set(tools)) if tools else None
        if move is not None:
            return Behavior(text=move[0], tool_calls=move[1], chunk_delay=self.chunk_delay)
        return self._tags.behavior(messages, chunk_delay=self.chunk_delay, transient=self.transient_faults)

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
        text = behavior.text if behavior.text is not None else demo_answer(last_user(messages))
        return StreamingResponse(
            answer_stream(record, behavior, text, include_usage, str(body.get("model"))),
            media_type="text/event-stream",
            headers={"cache-control": "no-cache"},
        )


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


def _error(status: int, message: str | None = None) -> JSONResponse:
    default, kind, code = ERRORS.get(status, (f"HTTP {status}", "error", None))
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
