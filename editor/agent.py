"""Ledger Chat as an Agent Client Protocol agent: the methods an editor calls, each on the engine's face.

Guarantees:
- ``initialize`` answers protocol version 1 (``PROTOCOL_VERSION``) with ``loadSession``, embedded context, images
  when a model the app offers takes them (``engine.files.models``; a prompt's images are its message's files:
  ``editor.words.prompt_files``) and ``mcpCapabilities.http`` (the app's MCP client speaks streamable HTTP).
- A session is a conversation and its id is the conversation's id: ``session/new`` creates one (recording the
  editor's ``cwd`` in its ``created`` event); ``session/load`` opens one from the ledger (made here, in the
  browser or by another instance) and replays its history (``editor.replay``) before it answers.
- The client's ``mcpServers`` of ``session/new`` and ``session/load`` are that session's own tool servers
  (``editor.servers``): offered to the model in that conversation only, stopped when the connection ends (after
  its turns were cancelled) or when a later ``session/load`` names others (refused while a prompt runs).
- A tool's question is put to an editor whose ``initialize`` declared form elicitation (``editor.questions``),
  declined for any other.
- ``session/prompt`` runs one ``editor.turn.Turn``; a session not opened on this connection, or one whose prompt is
  still running, is refused with a JSON-RPC error (invalid params, invalid request) and changes nothing.
- ``session/cancel`` hands the running turn to the one cancel path (source ``acp``); for no running turn it does
  nothing. ``close`` cancels every running turn the same way, then stops the sessions' servers (the editor went).
- The agent presets are the session's modes, its config option ``mode`` and its "/" commands; the model is its
  config option ``model`` (``editor.choices``). ``session/new`` and ``session/load`` answer both (a loaded
  session starts with its last answer's preset and model); ``available_commands_update`` follows the answer
  (``answered``: once it was written). ``session/set_mode`` and ``session/set_config_option`` choose for the next
  prompts; an unknown value is refused (invalid params) and changes nothing.
- The tool servers' prompts are "/" commands too (``editor.prompts``: ``/server.prompt``, listed once the
  session's servers have started, at most ``SETTLE_SECONDS`` later); one runs as its prompt's messages, stored by
  sha256 as attachments of the user message (as the page's "/" menu does), the text after it its arguments.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.helpers import update_current_mode
from acp.schema import (
    AgentCapabilities,
    ConfigOptionUpdate,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

import editor.prompts as prompt_commands
import editor.servers as servers
from editor.choices import Choice, command_of, commands, config_options, modes
from editor.questions import can_ask
from editor.replay import replayed
from editor.turn import Turn
from editor.words import prompt_files, prompt_text
from engine.commands import Engine, InputRejected
from engine.files import models
from ledger.errors import StoreError

log = logging.getLogger("ledger_chat.editor")
SETTLE_SECONDS = 15.0  # how long the commands wait for the session's tool servers to start (their prompts)


@dataclass(slots=True)
class Session:
    cid: str
    choice: Choice  # the agent preset and model the next prompts run with
    turn: Turn | None = None
    servers: tuple[str, ...] = field(default=())  # the names of its own tool servers (``editor.servers``)


class LedgerAgent:
    """The agent side of one editor connection (``on_connect`` hands it the client to call back)."""

    def __init__(self, engine: Engine, version: str = "0.1.0") -> None:
        self.engine, self.version = engine, version
        self.sessions: dict[str, Session] = {}
        self.client: Client | None = None
        self.fresh: set[str] = set()  # sessions whose ``session/new`` answer is on its way (``answered``)
        self.tasks: set[asyncio.Task[None]] = set()
        self.editor_asks = False

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:  # fmt: skip
        self.editor_asks = can_ask(client_capabilities)  # a tool's questions go to the editor (editor.questions)
        offered = self.engine.settings.models  # images: declared when a model the app offers takes them
        images = await asyncio.to_thread(lambda: any(models.takes_images(m) for m in offered))
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(embedded_context=True, image=images),
            mcp_capabilities=McpCapabilities(http=True),
        )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            agent_info=Implementation(name="ledger-chat", title="Ledger Chat", version=self.version),
        )

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        configs = servers.configs_of(self.engine, mcp_servers, cwd)  # refused before anything is made
        try:
            cid = await self.engine.start_conversation(cwd=cwd)  # taken for writing first, off the loop
        except (InputRejected, StoreError) as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        session = self.sessions[cid] = Session(cid, Choice.of(self.engine, None))
        await servers.start(self.engine, cid, configs)
        session.servers = tuple(c.name for c in configs)
        log.info("session %s: a new conversation for %s", cid, cwd)
        self.fresh.add(cid)
        choice = session.choice
        return NewSessionResponse(
            session_id=cid, modes=modes(self.engine, choice), config_options=config_options(self.engine, choice)
        )

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:  # fmt: skip
        configs = servers.configs_of(self.engine, mcp_servers, cwd)
        conv = await self.engine.load(session_id)
        if conv is None:
            raise RequestError.invalid_params({"details": f"no conversation {session_id} in this ledger"})
        session = self.sessions.setdefault(session_id, Session(session_id, Choice.of(self.engine, conv)))
        if session.turn is not None:  # its tool servers are in use
            raise RequestError.invalid_request({"details": f"a prompt is running in session {session_id}"})
        await servers.start(self.engine, session_id, configs)
        session.servers = tuple(c.name for c in configs)
        for update in replayed(conv):
            await self._client().session_update(session_id, update)
        await self._client().session_update(session_id, await self._commands(session_id))
        choice = session.choice
        return LoadSessionResponse(modes=modes(self.engine, choice), config_options=config_options(self.engine, choice))

    def answered(self, message: dict[str, Any]) -> None:
        """An answer was written: after a ``session/new`` one, the session's commands follow (a stream observer)."""
        result = message.get("result")
        cid = result.get("sessionId") if isinstance(result, dict) else None
        if cid in self.fresh:
            self.fresh.discard(cid)
            task = asyncio.get_running_loop().create_task(self._tell_commands(cid), name=f"commands of {cid}")
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """Choose the agent preset of the session's next prompts (its model too, when the preset names one)."""
        session = self._session(session_id)
        model = session.choice.model
        session.choice.choose_preset(self.engine, mode_id)
        if session.choice.model != model:
            options = config_options(self.engine, session.choice)
            await self._client().session_update(session_id, ConfigOptionUpdate(
                session_update="config_option_update", config_options=options))  # fmt: skip
        return SetSessionModeResponse()

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:  # fmt: skip
        """Choose the agent preset (``mode``) or the model (``model``) of the session's next prompts."""
        session = self._session(session_id)
        preset = session.choice.preset
        session.choice.choose(self.engine, config_id, value)
        if session.choice.preset != preset:
            await self._client().session_update(session_id, update_current_mode(session.choice.preset))
        return SetSessionConfigOptionResponse(config_options=config_options(self.engine, session.choice))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params(
                {"details": f"no session {session_id} here: open it with session/new or session/load first"}
            )
        if session.turn is not None:
            raise RequestError.invalid_request(
                {"details": f"a prompt is already running in session {session_id}: cancel it or wait for its end"}
            )
        preset, text = command_of(self.engine, prompt_text(prompt))
        if preset is not None and not text.strip():  # "/name" alone: the preset of the next prompts
            await self.set_session_mode(session_id, preset)
            await self._client().session_update(session_id, update_current_mode(preset))
            return PromptResponse(stop_reason="end_turn")
        choice = Choice(session.choice.preset, session.choice.model)  # "/name text": that preset, this prompt only
        if preset is not None:
            choice.choose_preset(self.engine, preset)
        session.turn = Turn(self.engine, self._client(), session_id, session.cid, self.editor_asks)
        try:
            fetched, text = await prompt_commands.command(self.engine, session.cid, text)  # "/server.prompt ..."
            return await session.turn.run(text, choice.preset, choice.model, prompt_files(prompt), fetched or ())
        finally:
            session.turn = None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.turn is None:
            log.info("session/cancel for %s: no prompt running", session_id)
            return
        await session.turn.cancel()

    async def cancel_all(self) -> None:
        """Every running turn through the one cancel path, source ``acp``."""
        for session in list(self.sessions.values()):
            if session.turn is not None:
                await session.turn.cancel()

    async def close(self) -> None:
        """The editor went: every running turn cancelled (source ``acp``), then every session's servers stopped."""
        await self.cancel_all()
        for task in list(self.tasks):
            task.cancel()
        for session in list(self.sessions.values()):
            await servers.stop(self.engine, session.cid)

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def _commands(self, session_id: str) -> Any:
        """The presets and the tool servers' prompts as commands, once the session's servers have started (or
        ``SETTLE_SECONDS`` have passed)."""
        if self.engine.tools is not None:
            await self.engine.tools.of_chat(session_id).settled(SETTLE_SECONDS)
        return commands(self.engine, await prompt_commands.offered(self.engine, session_id))

    async def _tell_commands(self, session_id: str) -> None:
        try:
            await self._client().session_update(session_id, await self._commands(session_id))
        except (ConnectionError, RequestError) as exc:
            log.info("the commands of session %s were not sent: %s", session_id, exc)

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"details": f"no session {session_id} here"})
        return session

    def _client(self) -> Client:
        if self.client is None:
            raise RequestError.internal_error({"details": "no client connected"})
        return self.client
