"""What a message asks the engine for (Retry, Retry with…, Continue, Edit, versions, attempts, Branch, Run/Skip),
for one page.

Guarantees: every action goes through the engine for the conversation the page shows (nothing without one); a
refusal (``InputRejected``) becomes one notice and changes nothing (an edit keeps its editor open with the text);
Retry and Edit use the model and agent preset the page has picked unless one is named; a branch opens the new
chat, with the text of a user message it was branched at as a draft in its box, and says that it is a new chat
(its title names the answer or message it branched from).
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TypeVar

from engine.commands import Engine, InputRejected
from engine.people import PERSONAL, Viewer
from engine.tools import ToolDescribed
from ledger.errors import StoreError
from ledger.events import ApprovalScope
from ui.notices import notice
from ui.question_form import answer_question
from ui.widgets import Actions

T = TypeVar("T")


class MessageActions:
    def __init__(
        self,
        engine: Engine,
        *,
        cid: Callable[[], str | None],
        model: Callable[[], str],
        preset: Callable[[], str | None] = lambda: None,
        open_chat: Callable[[str], object],
        open_audit: Callable[[str], None],
        drafts: dict[str, str],
        viewer: Viewer = PERSONAL,
    ) -> None:
        self.engine, self.cid, self.model, self.preset, self.viewer = engine, cid, model, preset, viewer
        self.open_chat, self.open_audit, self.drafts = open_chat, open_audit, drafts
        self._preset_names: dict[tuple[str, int], str | None] = {}

    def actions(self) -> Actions:
        return Actions(
            retry=self.retry,
            select=lambda message_id, attempt_id: self._do(self.engine.select_attempt, message_id, attempt_id),
            audit=self.open_audit,
            decide=self.decide,
            edit=self.edit,
            select_version=lambda message_id: self._do(self.engine.select_version, message_id),
            branch=self.branch,
            open_chat=self.open_chat,
            models=self.engine.settings.models,
            answer=lambda question_id, action, content: answer_question(
                self.engine, self.cid(), question_id, action, content
            ),
            compact_retry=self.compact_and_retry,
            retry_summary=self.retry_summary,
            presets=lambda: tuple((p.preset_id, p.name) for p in self.engine.presets.all(self.viewer)),
            preset_name=self.preset_name,
            retry_preset=self.retry_preset,
            continue_answer=lambda message_id: self._do_async(self.engine.continue_answer, message_id),
            describe=self.describe_tool,
        )

    def preset_name(self, preset_id: str, version: int) -> str | None:
        """A preset's name as it was at that version (an attempt's footer, the compare view); a version never
        changes, so it is read once; None where it cannot be read."""
        key = (preset_id, version)
        if key not in self._preset_names:
            try:
                preset = self.engine.presets.get(preset_id, version)
            except StoreError:
                return None
            self._preset_names[key] = preset.name if preset is not None else None
        return self._preset_names[key]

    def describe_tool(self, server: str, tool: str) -> ToolDescribed | None:
        """The tool's description as its server lists it now (an approval card shows it)."""
        return self.engine.tools.describe(server, tool) if self.engine.tools is not None else None

    def decide(self, call_id: str, run_it: bool, scope: ApprovalScope) -> None:
        """A tool call's Run or Skip; an answer that came second (another tab answered first) is refused quietly:
        the card shows the first answer as soon as it is in the ledger."""
        cid = self.cid()
        with contextlib.suppress(InputRejected):
            if cid is not None:
                self.engine.decide_tool(cid, call_id, run_it, scope)

    async def retry(self, message_id: str, model: str | None = None) -> None:
        await self._do_async(self.engine.retry, message_id, model or self.model(), self.preset())

    async def retry_preset(self, message_id: str, preset: str) -> None:  # that preset's model, instructions, tools
        await self._do_async(self.engine.retry, message_id, None, preset)

    async def compact_and_retry(self, message_id: str) -> None:
        await self._do_async(self.engine.compact_and_retry, message_id, self.model())

    async def retry_summary(self, message_id: str) -> None:
        await self._do_async(self.engine.retry_compaction, message_id, self.model())

    async def edit(self, message_id: str, text: str) -> bool:
        return await self._do_async(self.engine.edit, message_id, text, self.model(), None, self.preset()) is not None

    def branch(self, message_id: str) -> None:
        made = self._do(self.engine.branch, message_id)
        if made is None:
            return
        new_cid, draft = made
        if draft is not None:
            self.drafts[new_cid] = draft
        self.open_chat(new_cid)
        branched = self.engine.conversation(new_cid)
        title = branched.title if branched is not None else "a new chat"
        notice(f"You are in a new chat, “{title}”; the original chat is unchanged.", "info", multi_line=True)

    def _do(self, operation: Callable[..., T], *args: object) -> T | None:
        cid = self.cid()
        if cid is None:
            return None
        try:
            return operation(cid, *args)
        except InputRejected as exc:
            notice(str(exc), "warning")
            return None

    async def _do_async(self, operation: Callable[..., Awaitable[T]], *args: object) -> T | None:
        cid = self.cid()
        if cid is None:
            return None
        try:
            return await operation(cid, *args)
        except InputRejected as exc:
            notice(str(exc), "warning")
            return None
