"""Ledger Chat as an Agent Client Protocol agent: the methods an editor calls, each on the engine's face.

Guarantees:
- ``initialize`` answers protocol version 1 (``PROTOCOL_VERSION``) with ``loadSession`` and embedded context.
- A session is a conversation and its id is the conversation's id: ``session/new`` creates one (recording the
  editor's ``cwd`` in its ``created`` event); ``session/load`` opens one from the ledger (made here, in the
  browser or by another instance) and replays its history (``editor.replay``) before it answers.
- ``session/prompt`` runs one ``editor.turn.Turn``; a session not opened on this connection, or one whose prompt is
  still running, is refused with a JSON-RPC error (invalid params, invalid request) and changes nothing.
- ``session/cancel`` hands the running turn to the one cancel path (source ``acp``); for no running turn it does
  nothing. ``cancel_all`` does the same for every session (the editor went away).
- The agent presets are the session's modes (``modes`` on ``session/new`` and ``session/load``): a session starts
  with the default preset (a loaded one with its last answer's, if that preset still exists); ``session/set_mode``
  chooses another for the next prompts, and an unknown one is refused (invalid params) and changes nothing.
- The client's ``mcpServers`` are not started (this part of the bridge runs the app's tool servers only); the log
  says so once per session that named some.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from acp import PROTOCOL_VERSION, Client, RequestError
from acp.schema import (
    AgentCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from editor.replay import replayed
from editor.turn import Turn
from editor.words import prompt_text
from engine.commands import Engine, InputRejected
from ledger.errors import StoreError
from ledger.presets import DEFAULT_ID

log = logging.getLogger("ledger_chat.editor")


@dataclass(slots=True)
class Session:
    cid: str
    turn: Turn | None = None
    preset: str = DEFAULT_ID  # the agent preset the next prompt runs with (the session's mode)


class LedgerAgent:
    """The agent side of one editor connection (``on_connect`` hands it the client to call back)."""

    def __init__(self, engine: Engine, version: str = "0.1.0") -> None:
        self.engine, self.version = engine, version
        self.sessions: dict[str, Session] = {}
        self.client: Client | None = None

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:  # fmt: skip
        capabilities = AgentCapabilities(
            load_session=True, prompt_capabilities=PromptCapabilities(embedded_context=True)
        )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=capabilities,
            agent_info=Implementation(name="ledger-chat", title="Ledger Chat", version=self.version),
        )

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        self._tool_servers_not_started(mcp_servers)
        try:
            cid = await self.engine.start_conversation(cwd=cwd)  # taken for writing first, off the loop
        except (InputRejected, StoreError) as exc:
            raise RequestError.internal_error({"details": str(exc)}) from None
        self.sessions[cid] = Session(cid)
        log.info("session %s: a new conversation for %s", cid, cwd)
        return NewSessionResponse(session_id=cid, modes=self._modes(DEFAULT_ID))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:  # fmt: skip
        self._tool_servers_not_started(mcp_servers)
        conv = await self.engine.load(session_id)
        if conv is None:
            raise RequestError.invalid_params({"details": f"no conversation {session_id} in this ledger"})
        session = self.sessions.setdefault(session_id, Session(session_id, preset=self.engine.presets.of_chat(conv)))
        for update in replayed(conv):
            await self._client().session_update(session_id, update)
        return LoadSessionResponse(modes=self._modes(session.preset))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        """Choose the agent preset of the session's next prompts."""
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"details": f"no session {session_id} here"})
        if mode_id not in {p.preset_id for p in self.engine.presets.all()}:
            raise RequestError.invalid_params({"details": f"no agent preset {mode_id!r} (see the session's modes)"})
        session.preset = mode_id
        return SetSessionModeResponse()

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
        session.turn = Turn(self.engine, self._client(), session_id, session.cid)
        try:
            return await session.turn.run(prompt_text(prompt), session.preset)
        finally:
            session.turn = None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None or session.turn is None:
            log.info("session/cancel for %s: no prompt running", session_id)
            return
        await session.turn.cancel()

    async def cancel_all(self) -> None:
        """Every running turn through the one cancel path, source ``acp`` (the editor disconnected)."""
        for session in list(self.sessions.values()):
            if session.turn is not None:
                await session.turn.cancel()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    def _modes(self, current: str) -> SessionModeState:
        """The agent presets as modes (each described by its instructions' first line, or its model)."""
        modes = [
            SessionMode(id=p.preset_id, name=p.name, description=(p.instructions.strip().splitlines() or [""])[0][:120]
                        or (f"the model {p.model}" if p.model else "the app's model, no instructions"))
            for p in self.engine.presets.all()
        ]  # fmt: skip
        return SessionModeState(current_mode_id=current, available_modes=modes)

    def _client(self) -> Client:
        if self.client is None:
            raise RequestError.internal_error({"details": "no client connected"})
        return self.client

    def _tool_servers_not_started(self, servers: list[Any] | None) -> None:
        if servers:
            names = ", ".join(str(getattr(s, "name", "?")) for s in servers)
            log.warning("the editor's MCP servers (%s) are not started: this bridge runs the app's tool servers", names)
