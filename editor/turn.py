"""One ``session/prompt``: a message sent through the engine, its turn streamed to the editor from the ledger, and
the prompt answered once the turn has ended.

Guarantees:
- The prompt's files are stored as the page stores attachments (``Engine.files.accept``: by sha256, images
  re-encoded) and sent with its text; a file the limits or the model refuse refuses the prompt (invalid params,
  the sentence the page shows) before anything is recorded.
- The turn's updates are ``editor.projection.project`` of the conversation's events since the prompt began
  (subscribed before the message is sent), sent one at a time in ledger order, each once.
- The prompt is answered only after the attempt's ``persisted`` event and after every update up to it was written:
  whatever ended the turn (its own end, the editor's ``session/cancel``, a Stop in the browser or from another
  instance, a timeout), the last ``agent_message_chunk`` precedes the answer, and the chunks sent are the attempt's
  text (for a stopped turn: the interrupted message's). A failure answers with a JSON-RPC error
  (``editor.words.failure``), never with ``end_turn``.
- ``cancel`` enters the engine's one cancel path with source ``acp`` (also when it arrives before the attempt
  started: the attempt is then cancelled as soon as it has begun).
- A tool call the policy asks about becomes one ``session/request_permission`` (allow once, allow always: a grant
  for this chat, reject), answered through ``Engine.decide_tool``; an answer ``cancelled`` is a Skip unless the
  turn is being cancelled (the cancel path answers it then). A request still open when the turn ends is no longer
  awaited (its answer, if one comes, changes nothing).
- A tool's question (elicitation) is put to the editor or declined (``editor.questions``); one still open when the
  turn ends is no longer awaited.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence

from acp import Client, RequestError
from acp.schema import AllowedOutcome, PermissionOption, PromptResponse, ToolCallUpdate
from immutables import Map

import editor.questions as questions
from editor.projection import Sent, project
from editor.words import failure, stop_reason
from engine.commands import Engine, InputRejected
from ledger.events import AnyEvent, ApprovalAsked, ApprovalScope, Attachment, QuestionAsked
from ledger.state import AttemptState, State

log = logging.getLogger("ledger_chat.editor")
File = tuple[str, bytes]  # a file of the prompt: its name and bytes (``editor.words.prompt_files``)

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"
OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Always allow in this chat", kind="allow_always"),
    PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"),
]


class Turn:
    """One prompt's turn in conversation ``cid``, told to the editor as session ``session_id``."""

    def __init__(self, engine: Engine, client: Client, session_id: str, cid: str, editor_asks: bool = False) -> None:
        self.engine, self.client, self.session_id, self.cid = engine, client, session_id, cid
        self.editor_asks = editor_asks  # the editor takes form questions (``editor.questions.can_ask``)
        self.events: list[AnyEvent] = []
        self.changed = asyncio.Event()
        self.attempt_id: str | None = None
        self.cancelling = False
        self.asking: set[asyncio.Task[None]] = set()
        self.reacted = 0  # events already looked at for approvals and questions

    def listen(self, event: AnyEvent) -> None:
        if event.conversation_id == self.cid:
            self.events.append(event)
            self.changed.set()

    async def run(
        self, text: str, preset: str | None = None, model: str | None = None, files: Sequence[File] = (),
        fetched: Sequence[Attachment] = (),
    ) -> PromptResponse:  # fmt: skip
        """Send ``text`` with ``fetched`` (stored already: a "/" prompt's, ``editor.prompts``) and ``files``
        (answered with agent ``preset`` by ``model``), stream the turn, answer when it has ended (or raise the
        ``RequestError`` it ends with)."""
        unsubscribe = self.engine.subscribe(self.listen)
        try:
            conv = self.engine.conversation(self.cid)
            if conv is None:
                raise RequestError.invalid_params({"details": f"the conversation {self.cid} no longer exists"})
            sent = Sent(State(Map({self.cid: conv})))
            if self.engine.is_streaming(self.cid):
                raise RequestError.invalid_request({"details": "an answer is already streaming in this conversation"})
            try:
                accepted = [await self.engine.files.accept(name, data) for name, data in files]
                attached = (*fetched, *accepted)
                _, answer_id = await self.engine.send(self.cid, text, model, attached, preset)
            except InputRejected as exc:
                raise RequestError.invalid_params({"details": str(exc)}) from None
            self.attempt_id = self._attempt_of(answer_id)
            if self.cancelling:  # the editor cancelled while the message was being sent
                await self.engine.cancel(self.cid, "acp", attempt_id=self.attempt_id)
            attempt = await self._stream(sent)
        finally:
            unsubscribe()
            for task in self.asking:
                task.cancel()
        reason = stop_reason(attempt)
        if reason is None:
            raise failure(attempt)
        return PromptResponse(stop_reason=reason)

    async def cancel(self) -> None:
        """The editor's ``session/cancel``: the one cancel path, source ``acp``."""
        self.cancelling = True
        if self.attempt_id is not None:
            await self.engine.cancel(self.cid, "acp", attempt_id=self.attempt_id)

    async def _stream(self, sent: Sent) -> AttemptState:
        """Send every update of the attempt until its ``persisted`` has been sent; its state then."""
        assert self.attempt_id is not None
        while True:
            updates, sent = project(self.attempt_id, self.events, sent)
            for update in updates:
                try:
                    await self.client.session_update(self.session_id, update)
                except ConnectionError:  # the editor went away: its turn stops through the one cancel path
                    await self.engine.cancel(self.cid, "acp", attempt_id=self.attempt_id)
                    raise
            self._react(sent.seen)
            conv = sent.state.conversations.get(self.cid)
            attempt = conv.attempts.get(self.attempt_id) if conv is not None else None
            if attempt is None or attempt.persisted:
                if attempt is None:
                    raise RequestError.internal_error({"details": "the conversation was deleted during the turn"})
                return attempt
            if sent.seen == len(self.events):
                self.changed.clear()
                await self.changed.wait()

    def _attempt_of(self, answer_id: str) -> str:
        conv = self.engine.conversation(self.cid)
        message = conv.messages.get(answer_id) if conv is not None else None
        if message is None or message.current_attempt_id is None:
            raise RequestError.internal_error({"details": "the message was queued, not answered"})
        return message.current_attempt_id

    def _react(self, upto: int) -> None:
        """Ask the editor about each approval and each question asked in ``events[reacted:upto]``."""
        for event in self.events[self.reacted : upto]:
            if isinstance(event, ApprovalAsked) and event.attempt_id == self.attempt_id:
                task = asyncio.get_running_loop().create_task(self._ask(event), name=f"permission {event.call_id}")
                self.asking.add(task)
                task.add_done_callback(self.asking.discard)
            elif isinstance(event, QuestionAsked) and event.attempt_id == self.attempt_id:
                why = questions.reason(event, self.editor_asks)
                if why is not None:
                    questions.decline(self.engine, self.cid, event, why)
                    continue
                asking = questions.ask(self.engine, self.client, self.session_id, self.cid, event)
                task = asyncio.get_running_loop().create_task(asking, name=f"question {event.question_id}")
                self.asking.add(task)
                task.add_done_callback(self.asking.discard)
        self.reacted = max(self.reacted, upto)

    async def _ask(self, asked: ApprovalAsked) -> None:
        call = ToolCallUpdate(tool_call_id=asked.call_id, title=f"{asked.tool} ({asked.server})", status="pending")
        try:
            response = await self.client.request_permission(self.session_id, call, OPTIONS)
        except Exception as exc:  # noqa: BLE001 - an error, a malformed answer, a closed editor: never a hang
            log.info("the editor did not answer the permission for %s: %s", asked.call_id, exc)
            if not self.cancelling and not isinstance(exc, ConnectionError):  # (a closed editor: its cancel ends it)
                with contextlib.suppress(InputRejected):
                    self.engine.decide_tool(self.cid, asked.call_id, False, "once")  # a Skip: the turn goes on
            return
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) and self.cancelling:
            return  # the cancel path answers a call that waits (its approval given ``by: stop``)
        run = isinstance(outcome, AllowedOutcome) and outcome.option_id in (ALLOW_ONCE, ALLOW_ALWAYS)
        always = isinstance(outcome, AllowedOutcome) and outcome.option_id == ALLOW_ALWAYS
        scope: ApprovalScope = "chat" if always else "once"
        try:
            self.engine.decide_tool(self.cid, asked.call_id, run, scope)
        except InputRejected as exc:
            log.info("the permission for %s came too late: %s", asked.call_id, exc)
