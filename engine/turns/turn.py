"""An attempt as a loop of steps: call the model, run the tools it asked for, call it again with the results.

Guarantees:
- Each step records ``step_started``, streams one model call (``engine.turns.streaming``), and when the stream ends on
  its own records ``step_finished`` with that step's usage. A step that wrote no tool call ends the attempt
  (``Completed``, usage summed over the steps when every step reported it).
- A step's tool calls are recorded complete only once the step has finished streaming, then run
  (``engine.turns.tool_runs``); the next step sends the history the ledger gives for this attempt so far
  (``ledger.history.attempt_entries``): exactly what a later turn will send for it.
- Requests carry the history's files and tool results as content parts (``engine.files.content``): each step's
  request is built from the ledger, so a Retry, an edit and a Branch send the same bytes as the first request.
- The first model call waits for litellm's import and for the tool servers to settle (ready or failed, at most
  the first-chunk timeout) before any timeout of its own starts: a turn sent right after start-up is not cut short.
  Then a remote server the chat used that the turn no longer offers is recorded as gone (``engine.turns.server_notes``).
- A run whose owner claim was lost (``AttemptRun.lost``) makes no further model call: checked before each step.
- Before each step the spend guard (``EngineSettings.spend``) is asked for the chat's owner: over a limit, the
  attempt ends failed (``spend_limit``) with the guard's sentence, before that step's request (every tool call of
  the steps before has its result: the history stays valid; a title or compaction so ends without a request).
- After ``max_steps`` steps that all asked for tools the attempt ends failed (``step_limit``) with a readable
  reason; the last step's calls are not run (no step would read their results) and each gets a ``not_run``.
- Before the step limit, the loop guard (``engine.turns.loop_guard``, ``Limits.loop_guard``): the same tool with the
  same arguments that many times in a row ends the attempt failed (``tool_loop``) with its own sentence; the
  step's calls are not run, each gets a ``not_run`` saying why.
"""

from __future__ import annotations

from typing import Any

from engine.files import messages_async
from engine.offline import ready
from engine.provider import Failure, offered, takes_prefill, with_instructions
from engine.tools import ToolHub
from engine.turns.attempt import AttemptRun, Broken, Completed, Outcome
from engine.turns.loop_guard import LoopGuard
from engine.turns.server_notes import note_gone
from engine.turns.settings import EngineSettings
from engine.turns.streaming import stream_step
from engine.turns.tool_runs import run_tools
from ledger.continuation_history import request_history
from ledger.events import StepFinished, Usage
from ledger.history import attempt_entries


async def run_turn(run: AttemptRun, settings: EngineSettings, hub: ToolHub | None) -> Outcome:
    limits = settings.limits
    await ready()
    if hub is not None:
        await hub.settled(limits.first_chunk_timeout)
    note_gone(run, hub)  # a remote server this chat used is no longer offered: its audit says why
    base = run.messages = await first_messages(run, settings)
    guard = LoopGuard(limits.loop_guard)
    for number in range(1, limits.max_steps + 1):
        if run.lost:  # another instance owns the attempt's end: no further model call
            return Completed(None, None)
        over = await _over_limit(run, settings)
        if over is not None:  # at a step boundary: every call of the steps before has its result
            return Broken(Failure(error_type="spend_limit", summary=over), run.request_id)
        run.begin_step(number)
        offer = offered(hub, run.provider.preset) if run.purpose == "answer" else []  # a summary offers no tools
        outcome = await stream_step(run, settings, offer)
        if isinstance(outcome, Broken):
            return outcome
        run.step_usage.append(outcome.usage)
        run.step_reported = None  # the step's usage is its own now (``step_finished``)
        run.append(StepFinished(**run.ids, step=number, finish_reason=outcome.finish_reason, usage=outcome.usage))
        calls = run.complete_calls(lambda name: _server_of(hub, name))
        if not calls:
            return Completed(outcome.finish_reason, total_usage(run.step_usage))
        tripped = guard.check((call.name, call.arguments) for call in calls)
        if tripped is not None:  # the same call again and again: run nothing more, say why
            for call in calls:
                run.record_result(call.call_id, "not_run", tripped.not_run, None)
            return Broken(Failure(error_type="tool_loop", summary=tripped.summary), run.request_id)
        if number == limits.max_steps:  # no step would read the results: run nothing, answer every call
            for call in calls:
                run.record_result(
                    call.call_id, "not_run", f"Not run: the turn reached its step limit ({number}).", None
                )
            break
        await run_tools(run, calls, hub, limits)
        conv = run.view()
        if conv is None:
            return Completed(outcome.finish_reason, None)
        entries = attempt_entries(conv.attempts[run.attempt_id], limits.tool_result_chars)
        run.messages = [*base, *await messages_async(entries, run.model, settings.files.read)]
    failure = Failure(
        error_type="step_limit",
        summary=f"The model kept asking for tools; the turn stopped at the step limit ({limits.max_steps} steps).",
    )
    return Broken(failure, run.request_id)


async def first_messages(run: AttemptRun, settings: EngineSettings) -> list[dict[str, Any]]:
    """The history the attempt was started with (``run.context_ids``), its files as content parts
    (``engine.files.content``) and tool results as ``engine.tools.result_parts`` makes them, after the preset's
    instructions (``engine.provider.preset_request.with_instructions``: the one place they enter a request)."""
    conv = run.view()
    if conv is None or run.message_id not in conv.messages:
        return with_instructions(run.messages, run.provider.preset)
    limit, prefill = settings.limits.tool_result_chars, takes_prefill(run.model)  # a continuation's prefix
    history = request_history(conv, run.attempt_id, prefill=prefill, tool_result_chars=limit)
    return with_instructions(await messages_async(history, run.model, settings.files.read), run.provider.preset)


def total_usage(steps: list[Usage | None]) -> Usage | None:
    """Tokens over every step, or None when a step's usage is missing (the turn is then counted locally)."""
    if not steps or any(u is None or u.estimated for u in steps):
        return None
    return Usage(
        input_tokens=sum(u.input_tokens for u in steps if u),
        output_tokens=sum(u.output_tokens for u in steps if u),
        cached_tokens=sum(u.cached_tokens for u in steps if u),
        reasoning_tokens=sum(u.reasoning_tokens for u in steps if u),
        cache_write_tokens=sum(u.cache_write_tokens for u in steps if u),
    )


async def _over_limit(run: AttemptRun, settings: EngineSettings) -> str | None:
    """The spend limit's sentence when the chat's owner reached it (``engine.spend``), else None."""
    if settings.spend is None:
        return None
    conv = run.view()
    found = await settings.spend.over(conv.owner if conv is not None else None)
    return found.sentence if found is not None else None


def _server_of(hub: ToolHub | None, name: str) -> str | None:
    resolved = hub.resolve(name) if hub is not None else None
    return resolved.server if resolved is not None else None
