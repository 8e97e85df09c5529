"""The demo model's HTTP side: one endpoint per provider dialect, with a bounded request log.

The app mounts it at ``/demo`` (the offline demo model, OpenAI's dialect); the tests' scripted upstream extends it.

Guarantees:
- ``POST /v1/chat/completions`` (OpenAI), ``/v1/messages`` (Anthropic), ``/models/{model}:streamGenerateContent``
  (Gemini, also under ``/v1beta``) and ``/api/chat`` (Ollama) answer with that dialect's stream
  (``demo.dialects``) at a human pace (default 30 chunks/s), or with that provider's JSON error when the behaviour
  is an HTTP status (after its ``first_delay``). A history the provider would refuse gets its 400 and message.
- Each request follows a ``Behavior`` chosen by ``choose`` (called under ``lock``): a tool move when tools are
  offered and the question calls for them (``demo.agent.tool_move``), else the fault tags of the last user
  message (``demo.behavior``), else a demo answer.
- A request body over ``MAX_BODY_BYTES`` gets 413 without being read into memory (a declared length is refused
  at once, a streamed one as soon as it passes the limit) and a body that is not a JSON object 400; ``records``
  keeps only the last ``max_records`` requests (their messages in OpenAI's shape, headers but the key, chunks
  sent, when the client disconnected; of a key header a SHA-256 of its value): memory stays
  bounded however long it runs.
- Importing this module changes nothing: the log filter that hides injected drops is installed by
  ``DemoModel()`` and ``serve_in_thread``.
- ``HOSTILE``, ``Behavior`` and ``RequestRecord`` are importable from here too (the tests' scripted upstream).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from demo.agent import tool_move
from demo.answers import demo_answer
from demo.behavior import HOSTILE, Behavior, FaultTags, last_user
from demo.continuation import continued, rest
from demo.dialects import DIALECTS, Dialect
from demo.persona import follow
from demo.stream import RequestRecord, hide_injected_drops, tracked

__all__ = ["HOSTILE", "MAX_BODY_BYTES", "MAX_RECORDS", "Behavior", "DemoModel", "RequestRecord", "serve_in_thread"]

SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key"}

MAX_BODY_BYTES = 80_000_000  # a message's 50 MB of files, as base64 in JSON, fits
MAX_RECORDS = 50


def recorded_headers(request: Request) -> dict[str, str]:
    """The request's headers but its credentials: of each key header only a SHA-256 of its value, and of
    ``Authorization`` its scheme (a test can tell which credential arrived without any credential being kept)."""
    headers = {k.lower(): v for k, v in request.headers.items() if k.lower() not in SECRET_HEADERS}
    for name in SECRET_HEADERS:
        value = request.headers.get(name)
        if value:
            headers[f"{name}-sha256"] = hashlib.sha256(value.encode()).hexdigest()
    if "authorization" in request.headers:
        headers["authorization-scheme"] = request.headers["authorization"].partition(" ")[0]
    return headers


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
        self.app = _NoteTransport(
            Starlette(
                routes=[
                    Route("/v1/chat/completions", self._dialect("openai"), methods=["POST"]),
                    Route("/v1/messages", self._dialect("anthropic"), methods=["POST"]),
                    Route("/api/chat", self._dialect("ollama"), methods=["POST"]),
                    Route("/models/{call:str}", self._dialect("gemini"), methods=["POST"]),
                    Route("/v1beta/models/{call:str}", self._dialect("gemini"), methods=["POST"]),
                ]
            )
        )
        hide_injected_drops()

    def choose(self, messages: list[dict[str, Any]], tools: list[str]) -> Behavior:
        """The behaviour of the next request (called under ``lock``): a tool move when tools are offered and the
        question calls for them, else from the tags in the last user message."""
        move = tool_move(messages, set(tools)) if tools else None
        if move is not None:
            return Behavior(text=move[0], tool_calls=move[1], chunk_delay=self.chunk_delay)
        return self._tags.behavior(messages, chunk_delay=self.chunk_delay, transient=self.transient_faults)

    def _dialect(self, name: str) -> Callable[[Request], Awaitable[Response]]:
        dialect = DIALECTS[name]

        async def endpoint(request: Request) -> Response:
            return await self._answer(request, dialect)

        return endpoint

    async def _answer(self, request: Request, dialect: Dialect) -> Response:
        raw = await _read_limited(request)
        if raw is None:
            return dialect.error(413, "The request body is too large.", None)
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return dialect.error(400, "The request body must be a JSON object.", None)
        call = request.path_params.get("call")
        if call is not None and not str(call).endswith(":streamGenerateContent"):
            return dialect.error(404, f"{call} is not served here: only streamGenerateContent", None)
        parsed = dialect.read(body, str(call).removesuffix(":streamGenerateContent") if call else None)
        with self.lock:
            self._numbered += 1
            record = RequestRecord(
                number=self._numbered,
                messages=parsed.messages,
                model=parsed.model,
                received_at=time.monotonic(),
                headers=recorded_headers(request),
                tools=parsed.tools,
                dialect=dialect.name,
                raw=body,
            )
            self.records.append(record)
            if self.max_records is not None and len(self.records) > self.max_records:
                del self.records[: len(self.records) - self.max_records]
            going_on = continued(parsed.messages)  # Continue: the question's answer, from where it stopped
            asked = going_on[0] if going_on is not None else parsed.messages
            behavior = Behavior(status=400) if parsed.problem else self.choose(asked, parsed.tools)
        if parsed.problem:
            record.status = 400
            return dialect.error(400, parsed.problem, None)
        if behavior.first_delay and behavior.status:
            await asyncio.sleep(behavior.first_delay)
        if behavior.status:
            record.status = behavior.status
            message = dialect.too_long if behavior.too_long else behavior.message
            return dialect.error(behavior.status, message, behavior.retry_after)
        prompt = last_user(asked)  # an agent preset's instructions shape the answer (demo.persona)
        text = behavior.text if behavior.text is not None else follow(asked, demo_answer(prompt), prompt)
        own = going_on is not None and (behavior.text is None or text.startswith(going_on[1].rstrip()))
        if going_on is not None and own and not behavior.tool_calls:  # the demo's answer goes on (a test's: as planned)
            text = rest(text, going_on[1])
        return StreamingResponse(
            tracked(record, dialect.frames(record, behavior, text, parsed), request.scope.get(TRANSPORT)),
            media_type=dialect.media_type,
            headers={"cache-control": "no-cache"},
        )


TRANSPORT = "demo.transport"


class _NoteTransport:
    """The ASGI app with the connection's transport in its scope (``TRANSPORT``), where the server hands the app
    its own ``send`` (uvicorn's ``RequestResponseCycle.send``): a ``reset`` drop aborts it; None elsewhere."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, TRANSPORT: getattr(getattr(send, "__self__", None), "transport", None)}
        await self.app(scope, receive, send)


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
