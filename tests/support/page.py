"""NiceGUI ``user``-fixture tests: what the simulated user sees (read from the page's elements), and ``send``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from nicegui import ui
from nicegui.testing import User
from nicegui.testing.user_interaction import UserInteraction

from engine.commands.engine import Engine
from tests.support.waiting import wait_until
from ui.answer_status import shown_status
from ui.chat_list import ChatList
from ui.context import current
from ui.markdown.safe import MarkdownBlock
from ui.markdown.stream import MarkdownStream


@dataclass
class SeenAnswer:
    status: str
    attempt: str
    text: str
    markers: list[str]


def engine() -> Engine:
    """The engine of the app under test (started by NiceGUI's test runner through ``main.py``)."""
    return current().require_engine()


def elements(user: User, **query: Any) -> list[ui.element]:
    """The elements matching a query, in page order, or [] (``user.find`` asserts that something matches)."""
    try:
        return sorted(user.find(**query).elements, key=lambda e: e.id)
    except AssertionError:
        return []


def answers(user: User) -> list[SeenAnswer]:
    """Every assistant message on the page, in order: its data-status, data-attempt, and rendered text."""
    roots = elements(user, marker="assistant-message")
    seen = []
    for root in roots:
        blocks = [el.markdown for el in root.descendants() if _is_text(el) and el.markdown]
        labels = [el.text for el in root.descendants() if isinstance(el, ui.label) and el.visible and el.text]
        status, attempt = shown_status(root) or (root.props.get("data-status"), root.props.get("data-attempt"))
        seen.append(
            SeenAnswer(
                status=str(status),
                attempt=str(attempt),
                text="\n\n".join(blocks),
                markers=labels,
            )
        )
    return seen


def answer_html(user: User) -> str:
    """The HTML the page holds for every assistant answer (what the browser will put in the DOM)."""
    roots = elements(user, marker="assistant-message")
    return "".join(str(el.content) for root in roots for el in root.descendants() if _is_text(el))


def _is_text(el: ui.element) -> bool:
    """An answer's text: a step's streamed markdown (not its reasoning) or a rendered block."""
    return isinstance(el, MarkdownBlock) or (isinstance(el, MarkdownStream) and not el.plain)


def last_answer(user: User) -> SeenAnswer:
    found = answers(user)
    assert found, "no answer on the page"
    return found[-1]


def button(user: User, name: str) -> Any:
    """The visible button with that accessible name (asserting it exists), ready to ``.click()``."""
    matches = [b for b in elements(user, kind=ui.button, content=name) if b.visible]
    assert matches, f"no visible button {name!r}"
    return user.find(kind=ui.button, content=name)


async def click(user: User, name: str, timeout: float = 5.0) -> None:
    """Click the button with that name as a person would: once it is visible and enabled; with several (Retry on
    every answer), the one furthest down the page (the newest)."""

    def ready() -> list[ui.element]:
        return [b for b in elements(user, kind=ui.button, content=name) if b.visible and b.enabled]

    found = await wait_until(ready, timeout, f"button {name!r} enabled")
    UserInteraction(user, {found[-1]}, name).click()


async def send(user: User, text: str) -> None:
    """Type and press Enter; return once the new answer's element exists (so `last_answer` is the new one)."""
    before = len(elements(user, marker="assistant-message"))
    user.find("Message").type(text)
    user.find("Message").trigger("keydown.enter.exact.prevent")
    await wait_until(lambda: len(elements(user, marker="assistant-message")) > before, 5, "the new answer's element")


def chat_list(user: User) -> ChatList:
    """The conversation list's element (its rows are what the browser renders)."""
    (found,) = (e for e in elements(user, marker="conversation-list") if isinstance(e, ChatList))
    return found


def listed(user: User) -> list[str]:
    """The titles the conversation list shows, top to bottom."""
    return [row.title for row in chat_list(user).rows]


def list_action(user: User, action: str, cid: str) -> None:
    """What a click on a row's link ("open"), Rename or Delete button sends from the browser."""
    user.find(marker="conversation-list").trigger("act", [action, cid])
