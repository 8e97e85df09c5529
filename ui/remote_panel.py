"""The remote tool servers in the Tools panel: the ones a person uses (their own and, in team mode, the team's), each
with its address, an on/off switch, the tools it listed, Connect, Sign out and Remove; and a form to add one (a
name and a streamable-HTTP URL; stdio commands stay in the configuration file).

Guarantees:
- A projection of ``engine.tools.RemoteServers.visible`` for the page's person (``Viewer``), rebuilt after each
  change made here and when the list changed (``refresh``): the servers another instance changed (read again by
  ``engine.tools.AppHub`` once the store's stamp says so) show within ``SECONDS`` more, through one poll for every
  page of the process (``ui.watch``); the marker ``remote-servers`` holds one
  ``data-remote-server=<name>`` row per server with ``data-enabled``.
- Changes go through ``RemoteServers`` (who may change what is decided there): a refusal is one notice in its words.
  In team mode only an admin sees "For the whole team"; Switch, Remove are offered only to who may change it.
- Adding connects at once (Connect does the same): the server's tools are listed, or its sign-in is shown here as
  "Sign in to <name>" (``ui.sign_in_card``) until the browser comes back or Cancel; what ended it is one line in
  words (``engine.tools.SignInEnded``). Sign out forgets only this person's tokens for it.
- Nothing secret is shown: no token, no header; the sign-in link carries only the authorization request.
"""

from __future__ import annotations

import functools
import weakref
from urllib.parse import urlsplit

from nicegui import ui

from engine.people import Viewer
from engine.tools import (
    Changer,
    Question,
    QuestionAnswer,
    RemoteRefused,
    RemoteServer,
    RemoteServers,
    ToolServerError,
)
from ui.notices import notice
from ui.sign_in_card import sign_in_link
from ui.watch import Watch

SECONDS = 1.0  # as the configured servers' poll (``ui.context.TOOLS_SECONDS``)
_WATCHES: weakref.WeakKeyDictionary[RemoteServers, Watch[tuple[RemoteServer, ...]]] = weakref.WeakKeyDictionary()


def servers_watch(remote: RemoteServers) -> Watch[tuple[RemoteServer, ...]]:
    """The process's one poll of the servers as ``remote`` read them last."""
    watch = _WATCHES.get(remote)
    if watch is None:
        watch = _WATCHES[remote] = Watch(lambda: tuple(remote.servers), SECONDS)
    return watch


class RemotePanel:
    def __init__(self, remote: RemoteServers, viewer: Viewer) -> None:
        self.remote, self.viewer = remote, viewer
        self.who = Changer(viewer.person, viewer.team, viewer.admin)
        self.pending: dict[str, Question] = {}
        self.words: dict[str, str] = {}
        self._shown: object = None
        self.box = ui.column().classes("w-full gap-1 lc-tools").mark("remote-servers")
        self.refresh()
        servers_watch(remote).follow(lambda _: self.refresh())

    def refresh(self) -> None:
        state = (tuple(self.remote.visible(self.viewer.person)), tuple(self.pending), tuple(self.words.items()))
        if state == self._shown:
            return
        self._shown = state
        self.box.clear()
        with self.box:
            ui.label("Remote tool servers").classes("text-sm font-medium")
            for server in state[0]:
                self._row(server)
            self._add_form()

    def _row(self, server: RemoteServer) -> None:
        changeable = self.who.may_change(server)
        with (
            ui.column()
            .classes("gap-0 w-full")
            .props(f"data-remote-server={server.name} data-enabled={str(server.enabled).lower()}")
        ):
            with ui.row().classes("items-center gap-1 no-wrap"):
                ui.label(server.name).classes("text-sm")
                ui.label(urlsplit(server.url).netloc).classes("lc-meta")
                if server.owner is None and self.viewer.team:
                    ui.label("team").classes("lc-chip")
                if changeable:
                    switch = ui.switch(value=server.enabled).props("dense").mark("remote-enabled")
                    switch.props["aria-label"] = f"Use {server.name}"
                    switch.on_value_change(lambda e, n=server.name: self._enable(n, bool(e.value)))
            tools = [t.name for t in self.remote.tools_of(server)]
            text = ", ".join(tools) if tools else "Its tools show once it is connected (Connect)."
            ui.label(text).classes("lc-meta break-words").mark("remote-tools")
            if server.name in self.pending:
                question = self.pending[server.name]
                sign_in_link(question.url, question.message, functools.partial(self._cancel, server.name))
            if server.name in self.words:
                ui.label(self.words[server.name]).classes("lc-meta lc-error-text break-words").mark("remote-problem")
            with ui.row().classes("gap-1"):
                _button("Connect", lambda n=server.name: self._connect(n), "remote-connect")
                _button("Sign out", lambda n=server.name: self._sign_out(n), "remote-sign-out")
                if changeable:
                    _button("Remove", lambda n=server.name: self._remove(n), "remote-remove")

    def _add_form(self) -> None:
        with ui.expansion("Add a tool server").classes("w-full text-sm").mark("remote-add"):
            name = ui.input("Name").props("dense").mark("remote-name")
            url = ui.input("Streamable-HTTP URL", placeholder="https://example.com/mcp").props("dense")
            url.mark("remote-url")
            team = ui.checkbox("For the whole team") if self.viewer.team and self.viewer.admin else None
            _button(
                "Add the server",
                lambda: self._add(name.value or "", url.value or "", bool(team and team.value)),
                "remote-do-add",
            )

    async def _add(self, name: str, url: str, team: bool) -> None:
        try:
            added = await self.remote.add(self.who, name, url, team_server=team)
        except RemoteRefused as exc:
            notice(str(exc), "warning")
            return
        self.refresh()
        await self._connect(added.name)

    async def _connect(self, name: str) -> None:
        self.words.pop(name, None)
        self.refresh()
        try:
            await self.remote.connect(self.viewer.person, name, functools.partial(self._ask, name))
        except ToolServerError as exc:
            self.words[name] = f"Not connected: {exc}."
        self.refresh()

    async def _ask(self, name: str, question: Question) -> QuestionAnswer:
        self.pending[name] = question
        self.refresh()
        try:
            assert question.done is not None
            return QuestionAnswer(await question.done)
        finally:
            self.pending.pop(name, None)
            self.refresh()

    def _cancel(self, name: str) -> None:
        question = self.pending.get(name)
        if question is not None and question.done is not None and not question.done.done():
            question.done.set_result("cancel")

    async def _enable(self, name: str, enabled: bool) -> None:
        await self._change(self.remote.enable(self.who, name, enabled))

    async def _remove(self, name: str) -> None:
        await self._change(self.remote.remove(self.who, name))

    async def _sign_out(self, name: str) -> None:
        await self.remote.sign_out(self.viewer.person, name)
        notice(f"Signed out of {name}: its next call asks you to sign in.", "info")

    async def _change(self, change: object) -> None:
        try:
            await change  # type: ignore[misc]
        except RemoteRefused as exc:
            notice(str(exc), "warning")
        self.refresh()


def _button(text: str, on_click: object, marker: str) -> None:
    button = ui.button(text, on_click=on_click).props("no-caps dense flat")  # type: ignore[arg-type]
    button.props["aria-label"] = text
    button.mark(marker)
