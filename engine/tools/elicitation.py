"""Questions from tools over MCP (elicitation), on both revisions a server can negotiate, and a deadline that
pauses while a person answers.

Guarantees:
- 2025-11-25: the server sends an ``elicitation/create`` request while the call runs; ``Elicitations.callback`` (the
  ``ClientSession``'s elicitation callback, which also declares the form and url capabilities) hands it to the
  call in flight on that connection (that revision's request names no call: with several calls in flight on one
  server, the earliest one is asked).
- 2026-07-28: the server answers ``tools/call`` with an ``input_required`` result; ``drive_call`` asks each
  embedded elicitation, then re-sends the request with the responses and the opaque ``request_state``
  (multi-round-trip requests, at most ``MAX_ROUNDS``). An embedded sampling or roots request is declined with a
  sentence (sampling and roots are deprecated; this client never offers them): the call ends as a tool error.
- ``Deadline`` is the call's own deadline (the SDK's ``read_timeout_seconds`` is a total one): it does not run
  while a question waits for a person; past it the call's task is cancelled (the SDK tells the server) and
  ``CallTimedOut`` is raised. Cancelling the caller cancels the request the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from engine.tools.asking import Question, QuestionAnswer

T = TypeVar("T")
Ask = Callable[[Question], Awaitable[QuestionAnswer]]
MAX_ROUNDS = 10
DECLINED_SAMPLING = (
    "The tool asked this client to sample a model (MCP sampling) or list its roots; Ledger Chat offers neither "
    "(both are deprecated since MCP 2026-07-28), so the request was declined and the call ended."
)


class TimedOut(Exception):
    """The call's own deadline passed (time spent waiting for a person's answer not counted)."""


class Deadline:
    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._used, self._since, self._paused = 0.0, time.monotonic(), 0
        self._changed = asyncio.Event()
        self.waited = 0.0  # seconds spent waiting for a person

    def pause(self) -> None:
        if self._paused == 0:
            now = time.monotonic()
            self._used += now - self._since
            self._since = now
        self._paused += 1
        self._changed.set()

    def resume(self) -> None:
        self._paused -= 1
        if self._paused == 0:
            now = time.monotonic()
            self.waited += now - self._since
            self._since = now
        self._changed.set()

    def remaining(self) -> float:
        if self.seconds is None or self._paused:
            return math.inf
        return self.seconds - self._used - (time.monotonic() - self._since)

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Await ``coro`` as a task of its own, cancelled (and ``TimedOut`` raised) past the deadline."""
        task = asyncio.get_running_loop().create_task(coro)
        try:
            while True:
                self._changed.clear()
                left = self.remaining()
                if left <= 0:
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, Exception):
                        await task
                    raise TimedOut
                changed = asyncio.ensure_future(self._changed.wait())
                try:
                    await asyncio.wait(
                        {task, changed}, timeout=None if math.isinf(left) else left, return_when=asyncio.FIRST_COMPLETED
                    )
                finally:
                    changed.cancel()
                if task.done():
                    return task.result()
        finally:
            if not task.done():
                task.cancel()  # the SDK sends the server the cancel of this request
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await asyncio.shield(task)


class Elicitations:
    """The calls in flight on one connection that may be asked something (2025-11-25's callback)."""

    def __init__(self) -> None:
        self._inflight: dict[int, tuple[Ask, Deadline]] = {}
        self.revision = ""

    @contextlib.contextmanager
    def inflight(self, ask: Ask | None, deadline: Deadline) -> Any:
        key = id(deadline)
        if ask is not None:
            self._inflight[key] = (ask, deadline)
        try:
            yield
        finally:
            self._inflight.pop(key, None)

    def deadline_of(self, ask: Ask) -> Deadline | None:
        """The deadline of the call in flight that asks with ``ask`` (None: no such call)."""
        return next((d for a, d in self._inflight.values() if a is ask), None)

    async def callback(self, context: Any, params: Any) -> Any:
        from mcp import types

        if not self._inflight:
            return types.ElicitResult(action="cancel")  # asked outside any call: nobody to show it to
        ask, deadline = next(iter(self._inflight.values()))
        answer = await ask_person(ask, deadline, question_of(params, self.revision))
        return types.ElicitResult(action=answer.action, content=answer.content)


async def ask_person(ask: Ask, deadline: Deadline, question: Question) -> QuestionAnswer:
    deadline.pause()
    try:
        return await ask(question)
    finally:
        deadline.resume()


def question_of(params: Any, revision: str) -> Question:
    if getattr(params, "mode", "form") == "url":
        return Question(
            "url", params.message, url=params.url, elicitation_id=params.elicitation_id or "", revision=revision
        )
    schema = params.requested_schema
    schema = schema if isinstance(schema, dict) else schema.model_dump(by_alias=True, exclude_none=True)
    return Question("form", params.message, schema=schema, revision=revision)


async def drive_call(
    session: Any, name: str, arguments: dict[str, Any], progress: Any, ask: Ask | None, deadline: Deadline
) -> Any:
    """``tools/call`` to its final result, answering ``input_required`` rounds (see the module's guarantees)."""
    from mcp import MCPError, types

    async def send(responses: Any, state: str | None) -> Any:
        return await session.call_tool(
            name,
            arguments,
            progress_callback=progress,
            input_responses=responses,
            request_state=state,
            allow_input_required=True,
        )

    result = await deadline.run(send(None, None))
    rounds, pause = 0, 0.05
    while isinstance(result, types.InputRequiredResult):
        rounds += 1
        if rounds > MAX_ROUNDS:
            raise MCPError(types.INTERNAL_ERROR, f"the server asked for input more than {MAX_ROUNDS} times")
        responses: dict[str, Any] = {}
        for key, request in (result.input_requests or {}).items():
            if not isinstance(request, types.ElicitRequest) or ask is None:
                raise MCPError(types.INVALID_REQUEST, DECLINED_SAMPLING if ask is not None else "nobody to ask")
            answer = await ask_person(ask, deadline, question_of(request.params, session.protocol_version or ""))
            responses[key] = types.ElicitResult(action=answer.action, content=answer.content)
        if not responses:
            await asyncio.sleep(pause)  # only request_state: the server is working; ask again shortly
            pause = min(pause * 2, 0.25)
        result = await deadline.run(send(responses or None, result.request_state))
    return result
