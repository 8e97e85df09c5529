"""A continued answer on the page (Continue, ``ledger.continuation``): one answer, its join marked.

Guarantees:
- ``prefix_steps``: what an answer shows above its selected attempt's own steps: the steps (text and tool calls) of
  the attempts that attempt continues and that the model history keeps, in order; nothing for an attempt that
  continues none. So the page shows prefix + continuation as one answer, exactly the texts the model is sent.
- ``answer_steps``: the same answer as one sequence of steps, the texts at the join joined (for an export).
- ``join_marker``: a thin line labelled "continued" between the prefix and the continuation, a note with an
  accessible name ("Continued after a stop"); made only where there is a prefix.
- ``reopened``: a continuation that goes on inside a code block the prefix left open is shown inside that block
  (its fence line repeated above its first step): the stored text is never changed, only how it is shown.
- ``carried``: a prefix stopped inside bold, strikethrough or a code span (its last paragraph opens one and does
  not close it) has that last paragraph shown with the continuation, as one markdown text (live and finished): the
  continuation's closing ``**`` closes it, no literal ``**`` shows; the join marker then stands above that
  paragraph and says so. Outside a code block only; nothing is carried otherwise.
- ``continue_button``: the action row's Continue (accessible name "Continue this answer"), only where the ledger
  says the answer may be continued (``ledger.continuation.continuable``: cut short, latest, nothing streaming).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from nicegui import ui

from ledger.continuation import continuable, joined, links
from ledger.state import AttemptState, ConversationState, ToolCallState

JOIN_NAME = "Continued after a stop: the text after this line continues the answer"
JOIN_WITHIN = "Continued after a stop: the paragraph after this line was stopped and continued"
CONTINUE_TITLE = "Go on from where the answer stopped: a new attempt that continues this text"


def prefix_steps(conv: ConversationState, attempt: AttemptState) -> list[tuple[str, list[ToolCallState]]]:
    """The (text, tool calls) of each step shown above ``attempt``'s own (see the module's guarantees)."""
    steps: list[tuple[str, list[ToolCallState]]] = []
    for link in links(conv, attempt)[:-1]:
        if link.in_history:
            steps += _joined_on(
                steps, [(link.step_text(i), link.step_calls(i)) for i in range(max(len(link.steps), 1))]
            )
    return steps


def _joined_on(
    steps: list[tuple[str, list[ToolCallState]]], more: list[tuple[str, list[ToolCallState]]]
) -> list[tuple[str, list[ToolCallState]]]:
    """``more``, its first text joined onto the last of ``steps`` (taken off them) when that step called no tool:
    a text a stop cut and a Continue went on with is one text, however many continuations it took."""
    if steps and not steps[-1][1] and more:
        text, _ = steps.pop()
        more[0] = (joined(text, more[0][0]), more[0][1])
    return more


def answer_steps(conv: ConversationState, attempt: AttemptState) -> list[tuple[str, list[ToolCallState]]]:
    """Every step of the answer as one (an export): the prefix's, then ``attempt``'s, the texts at the join joined
    (``ledger.continuation.joined``) when the prefix's last step called no tool."""
    steps = prefix_steps(conv, attempt)
    return steps + _joined_on(
        steps, [(attempt.step_text(i), attempt.step_calls(i)) for i in range(max(len(attempt.steps), 1))]
    )


def open_fence(text: str) -> str | None:
    """The opening line of a fenced code block ``text`` leaves open, if any."""
    opener: str | None = None
    for line in text.split("\n"):
        stripped = line.strip()
        if opener is None:
            if stripped.startswith(("```", "~~~")):
                opener = stripped
        else:
            width = len(opener) - len(opener.lstrip(opener[0]))
            if stripped and set(stripped) == {opener[0]} and len(stripped) >= width:
                opener = None
    return opener


def reopened(prefix: str, text: str) -> str:
    """``text`` as shown after ``prefix``: inside the code block the prefix left open, if it left one."""
    fence = open_fence(prefix)
    return f"{fence}\n{text}" if fence is not None and text else text


OPENERS = ("**", "__", "~~", "`")  # inline runs a markdown paragraph opens and closes with the same marker


def carried(prefix: str) -> tuple[str, str]:
    """(the prefix shown above the join, its last paragraph shown with the continuation: "" when none is)."""
    if open_fence(prefix) is not None:
        return prefix, ""
    cut = prefix.rfind("\n\n")
    last = prefix[cut + 2 :] if cut >= 0 else prefix
    if not any(last.count(marker) % 2 for marker in OPENERS):
        return prefix, ""
    return (prefix[:cut] if cut >= 0 else ""), last


def join_marker(within: bool = False) -> None:
    """The thin "continued" line at the join (in the current container); ``within``: above the paragraph the stop
    cut (``carried``)."""
    name = JOIN_WITHIN if within else JOIN_NAME
    with (
        ui.element("div")
        .classes("lc-continued")
        .props(f'role="note" aria-label="{name}" title="The answer was stopped and then continued"')
        .mark("continued-marker")
    ):
        ui.label("continued").props('aria-hidden="true"')


def continue_button(conv: ConversationState, message_id: str, go_on: Callable[[str], Awaitable[object]] | None) -> None:
    """Continue, in the current row, when this answer may be continued."""
    if go_on is None or not continuable(conv, message_id):
        return
    button = ui.button("Continue", icon="fast_forward", on_click=lambda: go_on(message_id))
    button.props('flat dense no-caps aria-label="Continue this answer"').mark("continue")
    button.props["title"] = CONTINUE_TITLE
