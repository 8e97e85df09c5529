"""The tool servers panel: each configured server, its state, its tools, and what went wrong in plain words.

Guarantees: a projection of ``Engine.tool_health()``; rebuilt only when that changed (the process's one poll of it,
``ui.context.TOOLS_SECONDS``, and the page's renders of the list ask); a server that failed or is restarting says so
with the reason; a tool a server lists but the model is not offered (one that needs MCP tasks) is named with the
reason (``data-withheld-tool``); nothing here can start a configured server. Below them, the remote servers a
person adds at run time (``ui.remote_panel``), followed on the same poll. Each listed tool's description, exactly as the
model receives it, is shown as text under its name, collapsed (``ui.tool_descriptions``); one whose tool changed
since a grant the person gave (``show_grants``: the grants panel's list) is marked as changed and open.
"""

from __future__ import annotations

from nicegui import ui

from engine.commands import Engine, GrantView
from engine.people import PERSONAL, Viewer
from engine.tools import ServerHealth
from ui.approval_words import MODE_WORDS
from ui.remote_panel import RemotePanel
from ui.sign_in_card import remote_of
from ui.tool_descriptions import changed_tools, description_box
from ui.watch import Watch

STATE_WORDS = {
    "starting": "starting…",
    "ready": "ready",
    "failed": "not available",
    "restarting": "restarting…",
    "stopped": "stopped",
}


class ToolServersPanel:
    def __init__(self, engine: Engine, health: Watch[tuple[ServerHealth, ...]], viewer: Viewer = PERSONAL) -> None:
        self.engine = engine
        self._shown: tuple[ServerHealth, ...] | None = None
        self._health: tuple[ServerHealth, ...] = ()
        self._grants: tuple[GrantView, ...] = ()
        self.root = ui.column().classes("w-full gap-1 lc-tools").mark("tool-servers")
        remote = remote_of(engine)
        self.remote = RemotePanel(remote, viewer) if remote is not None else None  # people's own (ui.remote_panel)
        health.follow(self.show)

    def refresh(self) -> None:
        self.show(self.engine.tool_health())

    def show_grants(self, grants: tuple[GrantView, ...]) -> None:
        """The grants the person gave (this chat's and every server's): a tool changed since is marked."""
        if grants != self._grants:
            self._grants = grants
            self._shown = None
            self.show(self._health)

    def show(self, health: tuple[ServerHealth, ...]) -> None:
        self._health = health
        if self.remote is not None:
            self.remote.refresh()
        if health == self._shown:
            return
        self._shown = health
        self.root.clear()
        self.root.set_visibility(bool(health))
        with self.root:
            ui.label("Tools").classes("text-sm font-medium")
            for server in health:
                with (
                    ui.column()
                    .classes("gap-0 w-full")
                    .props(f"data-tool-server={server.name} data-state={server.state}")
                ):
                    with ui.row().classes("items-center gap-1 no-wrap"):
                        ui.icon("circle", size="10px").classes(f"lc-health lc-health-{server.state}")
                        ui.label(server.name).classes("text-sm")
                        ui.label(STATE_WORDS[server.state]).classes("lc-meta")
                        if server.confirm:
                            ui.label("asks first").classes("lc-chip").tooltip("Each call waits for your Run or Skip")
                    if server.tools:  # each tool with its approval mode when it does not simply run
                        modes = dict(server.modes)
                        names = [
                            t if modes.get(t, "run") == "run" else f"{t} ({MODE_WORDS[modes[t]]})" for t in server.tools
                        ]
                        ui.label(", ".join(names)).classes("lc-meta break-words").mark("tool-names")
                    changed = changed_tools(server.name, server.described, self._grants)
                    for described in server.described:
                        description_box(described.name, described.description, changed=described.name in changed)
                    for tool in server.withheld:
                        line = ui.label(f"{tool.name}: {tool.reason}").classes("lc-meta break-words")
                        line.props["data-withheld-tool"] = tool.name
                        line.mark("tool-withheld")
                    if server.message:
                        ui.label(server.message).classes("lc-meta lc-error-text break-words")
