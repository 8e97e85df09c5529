"""Helpers for NiceGUI ``user``-fixture tests: what the simulated user sees, read from the page's elements."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from nicegui import ui
from nicegui.testing import User

import ui.context as app_context
from engine.engine import Engine
from ui.safe_markdown import MarkdownBlock


@dataclass
class SeenAnswer:
    status: str
    attempt: str
    text: str
    markers: list[str]


def engine() -> Engine:
    assert app_context.CONTEXT is not None and app_context.CONTEXT.engine is not None
    return app_context.CONTEXT.engine


def elements(user: User, **query) -> list[ui.element]:  # type: ignore[no-untyped-def]
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
        blocks = [el.markdown for el in root.descendants() if isinstance(el, MarkdownBlock) and el.markdown]
        labels = [el.text for el in root.descendants() if isinstance(el, ui.label) and el.visible and el.text]
        seen.append(
            SeenAnswer(
                status=str(root.props.get("data-status")),
                attempt=str(root.props.get("data-attempt")),
                text="\n\n".join(blocks),
                markers=labels,
            )
        )
    return seen


def answer_html(user: User) -> str:
    """The HTML the page holds for every assistant answer (what the browser will put in the DOM)."""
    roots = elements(user, marker="assistant-message")
    return "".join(str(el.content) for root in roots for el in root.descendants() if isinstance(el, MarkdownBlock))


def last_answer(user: User) -> SeenAnswer:
    found = answers(user)
    assert found, "no answer on the page"
    return found[-1]


def button(user: User, name: str):  # type: ignore[no-untyped-def]
    """The visible button with that accessible name (asserting it exists), ready to ``.click()``."""
    matches = [b for b in elements(user, kind=ui.button, content=name) if b.visible]
    assert matches, f"no visible button {name!r}"
    return user.find(kind=ui.button, content=name)


async def click(user: User, name: str, timeout: float = 5.0) -> None:
    """Click the button with that name as a person would: once it is visible and enabled."""
    await until(lambda: any(b.visible and b.enabled for b in elements(user, kind=ui.button, content=name)), timeout)
    user.find(kind=ui.button, content=name).click()


async def until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def send(user: User, text: str) -> None:
    """Type and press Enter; return once the new answer's element exists (so `last_answer` is the new one)."""
    before = len(elements(user, marker="assistant-message"))
    user.find("Message").type(text)
    user.find("Message").trigger("keydown.enter.exact.prevent")
    await until(lambda: len(elements(user, marker="assistant-message")) > before, timeout=5)
