"""Continue: a new attempt of an answer that was cut short, going on from its prefix (``ledger.continuation``).

Guarantees:
- Whether an answer may be continued, and the ``started`` of its continuation, are decided by
  ``ledger.continuation`` (a refusal raises ``InputRejected`` with a sentence; nothing is appended). Nothing else
  is appended before the ``started``: the continuation is its own attempt of the same message, its parent named
  in ``continues``.
- It runs with the model and agent preset of the attempt it continues, is started through the one door
  (``engine.attempts``: claimed first) under the conversation's lock, and is run by an ``AttemptWorker`` like
  any answer: Stop, leaving, timeouts, delete and shutdown reach it through the one cancel path, and its end is
  recorded once. Its first request ends with the prefix as the last assistant content
  (``ledger.continuation_history``: as a prefill where the model takes one, ``engine.provider.calls.takes_prefill``,
  else followed by a request to continue).
- No compaction runs first: the request is the one that was cut short plus at most one short message.
- While the store cannot save, nothing starts (the engine's own sentence, as for Send and Retry).
"""

from __future__ import annotations

from collections.abc import Callable

from engine.attempts import Attempts
from engine.commands.presets import Presets, new_attempt
from ledger import decide
from ledger.continuation import base_of, continuation, refusal


class Continuing:
    """Continue for the engine (``Engine.continue_answer``): attempts start through ``door``, the models and
    presets are ``presets``', and ``saving`` raises the engine's sentence while the store cannot save."""

    def __init__(self, door: Attempts, presets: Presets, saving: Callable[[str | None], None]) -> None:
        self.door, self.presets, self.saving = door, presets, saving

    async def start(self, cid: str, message_id: str) -> str:
        """Continue the answer ``message_id`` (the latest of the shown path); the new attempt's id."""
        door, read = self.door, self.door.read
        conv = decide.existing(read.conversation(cid))
        why = refusal(conv, message_id, streaming=False)
        if why is not None:
            raise decide.InputRejected(why)
        message = conv.messages[message_id]
        base = base_of(conv, conv.attempts[message.selected_attempt_id or message.attempt_ids[-1]])
        assert base is not None  # (refusal checked it)
        provider = self.presets.provider(base.preset[0] if base.preset is not None else None, base.model)
        self.saving(await read.saving_fails())
        await door.peers.writable(cid)
        rt = door.runtimes.of(cid)
        async with rt.lock:
            streaming = rt.active is not None or door.peers.streaming(cid) is not None
            started = continuation(decide.existing(read.conversation(cid)), message_id, new_attempt(provider),
                                   streaming=streaming)  # fmt: skip
            await door.start(rt, None, started, provider)
        return started.attempt_id
