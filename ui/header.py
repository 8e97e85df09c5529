"""The page header: the chats button, the model (a picker when more than one is offered), theme, audit panel, and
in team mode the account menu (who is signed in, "Sign out", "Sign out everywhere").

Guarantees: every control has an accessible name and stays white on the dark header; the theme button is handled
in the browser (``window.lcTheme``: follow the system until chosen, then remember); picking a model only changes
what the page asks for next (``on_model``); the model a chat starts with is ``engine.commands.Presets.model_of``.
On a phone (below 700 px, ``static/surface.css``) the chat's title takes the header's room (up to two lines, never
cut to "Ne…"): the model, the agent preset, the presets link and the chat's cost (``data-lc-header-chips``) fold
into a menu behind the "Model, preset and cost" button, opened and closed in the browser (``lcSurface.chips``:
the button, Esc, a tap elsewhere); they are the same controls as on a desktop, where they stay in the header.
"""

from __future__ import annotations

from collections.abc import Callable

from nicegui import ui
from nicegui.events import ValueChangeEventArguments

from engine.people import Person
from ui.format import model_label

SIGN_OUT_JS = (
    "() => { const f = document.createElement('form'); f.method = 'post'; f.action = '/signout';"
    " const i = document.createElement('input'); i.type = 'hidden'; i.name = 'everywhere'; i.value = 'EVERYWHERE';"
    " f.append(i); document.body.append(f); f.submit(); }"
)
CHIPS = "Model, preset and cost"  # the phone's menu of what the header shows beside the title on a desktop


def build_header(
    *,
    badge: str,
    models: tuple[str, ...],
    model: str,
    on_model: Callable[[str], None],
    toggle_chats: Callable[[], object],
    toggle_audit: Callable[[], object],
    extra: Callable[[], object] | None = None,
    person: Person | None = None,
) -> tuple[ui.select | None, ui.label]:
    """Build the header; returns the model picker (None when one model is offered) and the chat's title."""
    picker: ui.select | None = None
    with ui.header().classes("lc-header items-center gap-2 px-3 py-1 no-wrap"):
        chats = ui.button(icon="menu", on_click=toggle_chats)
        chats.props('flat round dense color=white aria-label="Chats" data-lc-chats-toggle')
        ui.label("Ledger Chat").classes("text-lg font-medium gt-xs")
        with ui.element("div").classes("lc-header-chips").props("data-lc-header-chips"):
            if len(models) > 1:

                def changed(e: ValueChangeEventArguments[str]) -> None:
                    if e.value in models:
                        on_model(e.value)

                picker = ui.select({m: model_label(m) for m in models}, value=model, on_change=changed)
                picker.props('dense dark borderless options-dense aria-label="Model for the next answer"')
                picker.classes("lc-model-picker").mark("model-picker")
            else:
                ui.label(badge).classes("lc-model-badge").mark("model-label")
            if extra is not None:  # the agent preset picker and the chat's cost (``ui.preset_picker``)
                extra()
        heading = ui.label("New chat").classes("lc-chat-title").props("role=heading aria-level=1").mark("chat-title")
        chips = ui.button(icon="more_vert").classes("lc-header-more").mark("header-chips")
        chips.props(f'flat round dense color=white aria-label="{CHIPS}" aria-expanded=false aria-haspopup=true')
        chips.on("click", js_handler="() => window.lcSurface && window.lcSurface.chips()")
        with ui.button().props('flat round dense color=white aria-label="Switch between light and dark"') as theme:
            ui.icon("dark_mode").classes("lc-when-light")
            ui.icon("light_mode").classes("lc-when-dark")
        theme.on("click", js_handler="() => window.lcTheme && window.lcTheme.toggle()")
        ui.button(icon="timeline", on_click=toggle_audit).props(
            'flat round dense color=white aria-label="Audit panel"'
        ).mark("audit-toggle")
        if person is not None:
            account_menu(person.name, person.admin)
        else:  # personal mode: the usage page (ui.usage_page) by its own button
            ui.button(icon="bar_chart", on_click=lambda: ui.navigate.to("/usage")).props(
                'flat round dense color=white aria-label="Usage"'
            ).mark("usage-link")
    return picker, heading


def account_menu(person: str, admin: bool) -> None:
    """Team mode: who is signed in, "Usage" (``/usage``), "Accounts" for an admin (``/admin/users``), "Sign out"
    and "Sign out everywhere" (a form posted to ``/signout``)."""
    button = ui.button(icon="account_circle").props("flat round dense color=white")
    button.props["aria-label"] = f"Account: {person}"  # a provider's name claim: a value, never parsed as props
    with button, ui.menu().mark("account-menu"):
        ui.menu_item(f"Signed in as {person}").props("disable")
        ui.menu_item("Usage", on_click=lambda: ui.navigate.to("/usage"))  # (ui.usage_page)
        if admin:
            ui.menu_item("Accounts", on_click=lambda: ui.navigate.to("/admin/users"))
        for words, everywhere in (("Sign out", "0"), ("Sign out everywhere", "1")):
            item = ui.menu_item(words)
            item.on("click", js_handler=SIGN_OUT_JS.replace("EVERYWHERE", everywhere))
