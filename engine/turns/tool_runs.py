"""Running the tool calls of one finished step, and what a Stop does to them.

Guarantees:
- Calls run one at a time, in the order the model wrote them; each gets **exactly one** ``tool_result``:
  ``ok`` or ``error`` (what the server returned, or why it could not run: malformed arguments, an unknown tool,
  a server that is down or died mid-call, a deadline), ``declined`` (the user pressed Skip), ``cancelled`` or
  ``not_run`` (a Stop, below). A tool error is a result the model sees, never a failed attempt.
- Stop while a call runs: the call's task is cancelled, which makes the MCP SDK send ``notifications/cancelled``
  to the server; the call then has ``tool_grace`` seconds to end; what it returned in that time is recorded,
  otherwise ``cancelled`` with a sentence saying the user stopped it before it returned. Calls not yet dispatched
  (including one waiting for Run/Skip) get ``not_run``. Then the cancellation goes on. A call waiting for the
  answer to its question (``engine.turns.questions``) has it answered ``cancel`` first and ``ANSWERED_GRACE``
  seconds to end by itself (its real outcome is recorded: what it returned, as ``cancelled`` when it returned
  normally, since the Stop's answer is what ended it; an error stays an error), then it is cancelled as above.
- Before a call is dispatched its approval policy is carried out (``engine.turns.approving``): it runs, waits for
  a person, or is answered ``declined`` (skipped, or a policy that forbids it). A remote server's first call in the
  chat since it was added or changed is preceded by what the server is (``engine.turns.server_notes``).
- Progress from the server is recorded at most four times a second per call (and always the last one).
- A result is recorded whole: its content parts and structured content with its text, through the one stale gate
  (``AttemptRun.record_result``).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from engine.provider import allows
from engine.tools import CallOutcome, ResolvedTool, ToolHub, ToolServerError
from engine.turns.approving import approved
from engine.turns.attempt import AttemptRun, PendingCall
from engine.turns.questions import asker, stop_questions
from engine.turns.server_notes import note_used
from engine.turns.settings import Limits
from ledger.events import ToolDispatched, ToolProgress, ToolStatus

PROGRESS_SECONDS = 0.25
ANSWERED_GRACE = 1.0  # seconds a call whose question Stop answered cancel gets to end by itself


async def run_tools(run: AttemptRun, calls: list[PendingCall], hub: ToolHub | None, limits: Limits) -> None:
    """Give every call of the step its one result (see the module's guarantees)."""
    pending = list(calls)
    undispatched: list[PendingCall] = []
    running: tuple[PendingCall, asyncio.Task[CallOutcome], float] | None = None
    try:
        while pending:
            call = pending.pop(0)
            undispatched = [call, *pending]
            target = _target(run, call, hub)
            if target is None:
                continue
            resolved, arguments = target
            server, tool = resolved.server, resolved.tool
            assert hub is not None
            if not await approved(run, call, resolved, hub):  # asked, refused or skipped: answered there
                continue
            note_used(run, hub, call.call_id, server)  # a remote server's first call here: what it is, before it runs
            run.append(ToolDispatched(**run.ids, call_id=call.call_id, server=server))
            assert hub is not None
            ask = asker(run, call.call_id)  # a question the tool asks waits for the person (engine.turns.questions)
            task = asyncio.get_running_loop().create_task(hub.call(server, tool, arguments, _progress(run, call), ask))
            running = (call, task, time.monotonic())
            undispatched = list(pending)
            status, outcome = await _outcome(asyncio.shield(task))
            took = _elapsed(run, running[2])
            run.record_result(
                call.call_id, status, outcome.text, took, outcome.parts, outcome.structured, outcome.whole
            )
            running = None
    except asyncio.CancelledError:
        if running is not None:
            await _stop_running(run, *running, grace=limits.tool_grace)
        for call in undispatched:
            run.record_result(call.call_id, "not_run", _not_run_words(run), None)
        raise
    except Exception as exc:  # a bug here must still leave every call answered (the history stays valid)
        if running is not None:
            running[1].cancel()
            run.record_result(running[0].call_id, "error", f"The call was abandoned ({type(exc).__name__}).", None)
        for call in undispatched:
            run.record_result(call.call_id, "not_run", "Not run: the turn ended with an error before it.", None)
        raise


def _target(run: AttemptRun, call: PendingCall, hub: ToolHub | None) -> tuple[ResolvedTool, dict[str, Any]] | None:
    """Where the call goes, or None after recording why it cannot run."""
    resolved = hub.resolve(call.name) if hub is not None else None
    if resolved is None or not allows(run.provider.preset, resolved.server, resolved.tool):  # the preset's tools
        withheld = hub.withheld_reason(call.name) if hub is not None else None
        words = f"The tool {call.name!r} was not run: it {withheld}." if withheld else None
        run.record_result(call.call_id, "error", words or f"No tool named {call.name!r} is available.", None)
        return None
    try:
        arguments = json.loads(call.arguments) if call.arguments.strip() else {}
    except (ValueError, RecursionError) as exc:
        run.record_result(
            call.call_id, "error", f"The arguments were not valid JSON ({exc}); the tool did not run.", None
        )
        return None
    if not isinstance(arguments, dict):
        run.record_result(call.call_id, "error", "The arguments must be a JSON object; the tool did not run.", None)
        return None
    return resolved, arguments


async def _outcome(awaitable: asyncio.Future[CallOutcome]) -> tuple[ToolStatus, CallOutcome]:
    try:
        outcome = await awaitable
    except ToolServerError as exc:
        status: ToolStatus = getattr(exc, "status", "error")  # a sign-in that ended (engine.tools.oauth_words)
        return status, CallOutcome(
            f"{exc}." if status != "error" else f"The tool did not return a result: {exc}.", True
        )
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - a broken call is a result the model sees, not a crash
        return "error", CallOutcome(f"The tool call failed ({type(exc).__name__}: {exc}).", True)
    return ("error" if outcome.is_error else "ok"), outcome


async def _stop_running(
    run: AttemptRun, call: PendingCall, task: asyncio.Task[CallOutcome], started: float, *, grace: float
) -> None:
    asked = stop_questions(run, call.call_id)  # a waiting question is answered cancel: the tool may end by itself
    if asked:
        await asyncio.wait({task}, timeout=min(grace, ANSWERED_GRACE))
    if not task.done():
        task.cancel()  # the SDK sends the server the cancel of this request (its transport's way)
        await asyncio.wait({task}, timeout=grace)
    if task.done() and not task.cancelled():
        status, outcome = await _outcome(task)
        if asked and status == "ok":  # it ended because the Stop answered its question cancel: its words, not done
            status = "cancelled"
    else:
        status, outcome = "cancelled", CallOutcome(_stopped_words(run, asked), True)
    took = _elapsed(run, started)
    run.record_result(call.call_id, status, outcome.text, took, outcome.parts, outcome.structured, outcome.whole)


def _progress(run: AttemptRun, call: PendingCall) -> Any:
    last = [0.0]

    async def report(progress: float, total: float | None, message: str | None) -> None:
        now = time.monotonic()
        if now - last[0] < PROGRESS_SECONDS and not (total and progress >= total):
            return
        last[0] = now
        conv = run.view()
        attempt = conv.attempts.get(run.attempt_id) if conv is not None else None
        known = attempt.tool_calls.get(call.call_id) if attempt is not None else None
        if known is None or known.answered:  # progress after the result is news to nobody
            return
        run.append(
            ToolProgress(
                **run.ids,
                call_id=call.call_id,
                progress=float(progress),
                total=total,
                message=message,
            )
        )

    return report


def _elapsed(run: AttemptRun, started: float) -> float:
    seconds = time.monotonic() - started
    run.tool_seconds += seconds
    return round(seconds * 1000, 1)


def _stopped_words(run: AttemptRun, asked: bool = False) -> str:
    who = "the user stopped it" if run.cancel is None or run.cancel.source == "user" else _why(run)
    waiting = " while it waited for an answer to its question (answered: cancel)" if asked else ""
    return f"Cancelled: {who}{waiting} before the tool returned; the tool server was told to cancel."


def _not_run_words(run: AttemptRun) -> str:
    who = "the user stopped the turn" if run.cancel is None or run.cancel.source == "user" else _why(run)
    return f"Not run: {who} before this call was dispatched."


def _why(run: AttemptRun) -> str:
    source = run.cancel.source if run.cancel else "user"
    return {
        "navigation": "the user left the chat",
        "disconnect": "the page was closed",
        "delete": "the chat was deleted",
        "timeout": "the turn timed out",
        "shutdown": "the app was shutting down",
        "account": "the account was disabled",
        "acp": "the editor stopped the turn",
    }.get(source, "the turn was stopped")
