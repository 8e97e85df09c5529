"""Refresh of a sent "@" resource: fetched again from its tool server, as a new attachment of the next message.

Guarantees:
- A sent message's file that came from a resource (``Attachment.origin == "resource"``) has a button "Refresh
  <name>" beside its chip (``refresh_button``). Pressing it reads the resource again from its server
  (``engine.tools.resources.read``) and stores what it gives by sha256 (``engine.files.from_resource`` with
  ``replaces`` the sent file's sha256), then offers it on the message box's chips (the draft of the next message):
  the sent message never changes (the ledger keeps what was sent, and a new version of an earlier message would
  move the turns after it to another branch); what is sent next carries both hashes (the new file's ``sha256`` and
  its ``replaces``), which the audit panel shows.
- Bytes identical to the sent ones are not added again (a notice says the resource is unchanged); a server that is
  not running or fails, or bytes the limits refuse, are a notice in a sentence; the draft is untouched then.
- While its server has said the resource changed since the app last read it (``notifications/resources/updated``,
  kept by the hub's ``engine.tools.resource_watch``), the chip has the words "changed on <server>" beside its
  button (a polite live region, so a screen reader hears it come) and the button's name says so too ("Refresh
  <name>: it changed on <server>"); an open page shows it at once, a page opened later at once too. A Refresh
  (any read of it) takes the mark away. The sent message and the ledger never change for it. Showing the chip
  asks the server to tell of changes to it (once per connection; nothing when it offers no subscriptions).
- A resource of a remote server is read and watched through the page's person's own connection
  (``engine.tools.remote_context``): one not connected now is "not connected" in the notice, never another
  person's connection; its mark is that person's (``resource_watch.keyed``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from nicegui import ui

from engine.files import Files, from_resource
from engine.tools import FetchFailed, remote_context, resources
from ledger.decide import InputRejected
from ledger.events import Attachment
from ui.attachments import AttachmentTray, remember
from ui.notices import notice

log = logging.getLogger("ledger_chat.ui")
Draft = Callable[[], "AttachmentTray | None"]  # the message box's tray (the next message's chips), if any


def refresh_button(sent: Attachment, engine: Any, files: Files, draft: Draft) -> None:
    """The button "Refresh <name>" for a sent resource's file (nothing for any other file), with its "changed on
    <server>" mark; it reads from the app's tool servers and the page's person's remote ones, as the "@" menu."""
    if sent.origin != "resource" or sent.server is None or sent.ref is None:
        return
    from ui.context import current

    hub = remote_context.for_person(engine.tools, current().viewer().person)  # a remote server: the page's person's
    button = ui.button(icon="refresh", on_click=lambda: refresh(sent, hub, files, draft()))
    button.props("flat dense round size=sm").mark("refresh-resource")
    button.props["data-attachment"] = sent.sha256
    mark = ui.label(f"changed on {sent.server}").classes("lc-resource-changed").mark("resource-changed")
    mark.props.update({"aria-live": "polite", "data-attachment": sent.sha256})
    key = (remote_context.watch_key(hub, sent.server), sent.ref)  # a remote server's: this person's connection's

    def show(changed: bool) -> None:
        mark.set_visibility(changed)
        said = f"Refresh {sent.name}" + (f": it changed on {sent.server}" if changed else "")
        button.props["aria-label"] = button.props["title"] = said
        button.update()

    watch = resources.watch_of(hub)
    show(watch is not None and watch.changed(*key))
    if watch is not None:
        watch.listen(lambda server, uri, changed: show(changed) if (server, uri) == key else None,
                     lambda: not button.is_deleted)  # fmt: skip
        resources.watch(hub, sent.server, sent.ref)  # a chat opened later: its server is asked too


async def refresh(sent: Attachment, hub: Any, files: Files, tray: AttachmentTray | None) -> tuple[Attachment, ...]:
    """Fetch ``sent``'s resource again and offer what changed to ``tray``; what was offered."""
    assert sent.server is not None and sent.ref is not None
    if hub is None or tray is None:
        notice(f"{sent.name} cannot be refreshed here: no tool servers run, or no message box.", "warning")
        return ()
    try:
        await remote_context.reach(hub)  # a remote server not connected since a restart: its tokens start it
        pieces = await resources.read(hub, sent.server, sent.ref)
        fetched = await from_resource(files, sent.server, sent.ref, pieces, replaces=sent.sha256)
    except (FetchFailed, InputRejected) as exc:
        notice(f"The resource {sent.ref} could not be refreshed: {exc}", "warning", multi_line=True)
        return ()
    new = tuple(a for a in fetched if a.sha256 != sent.sha256)
    if not new:
        notice(f"{sent.ref} is unchanged since it was sent (the same sha256): nothing added.", "info")
        return ()
    for attachment in new:
        remember(attachment)  # this process fetched it: the tray may add it
        tray.offer(attachment)
    notice(f"{sent.ref} fetched again: added to your next message (it replaces the one sent).", "positive")
    return new
