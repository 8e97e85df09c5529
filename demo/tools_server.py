"""The bundled demo tool server: a stdio MCP server (official ``mcp`` SDK) with a few honest tools.

    python -m demo.tools_server              # speaks MCP on stdin/stdout; the app starts it with the demo model
    python -m demo.tools_server --http 9000  # the same tools over streamable HTTP on http://127.0.0.1:9000/mcp

Tools: ``current_time``; ``calculator`` (arithmetic through a small AST walker: no ``eval``); ``search_notes``
over ``demo/notes.md``; ``slow_task(seconds)``, which reports progress and honours cancellation; ``always_fails``;
``web_snippet``, which returns hostile HTML (the page must show it as text). Rich results: ``draw_chart`` (a PNG
drawn with Pillow, and the numbers as ``structuredContent``), ``notes_file`` (an embedded text resource and a
resource link), ``beep`` (a short WAV), ``whoami`` (the client's name and version as it introduced itself).
``place_order(item)`` asks the person a question (MCP elicitation, form mode: name, quantity, size, gift wrap)
through the SDK's ``Resolve``/``Elicit``, which speaks both revisions: an ``elicitation/create`` request at
2025-11-25, an ``input_required`` result at 2026-07-28 (``Context.elicit`` has no back-channel there).
``delete_note`` is annotated ``destructiveHint: true`` (so it asks before it runs; every other tool is
``readOnlyHint: true``); ``LEDGERCHAT_DEMO_DELETE_CHANGED`` appends to its description (a changed tool).
``batch_report`` declares ``execution.taskSupport: required`` and answers a plain call with -32601, as servers
that need MCP tasks do. Prompts, resources (text, image, binary, a template), completions and ``tiny_image`` (a
PNG with a damaged chunk) are in ``demo.tools_context``.

Guarantees: ``place_order`` records each answer it got (``question_answered``: action, values, revision);
``slow_task`` appends one JSON line per start, finish and cancellation to the file named by
``LEDGERCHAT_DEMO_TOOL_RECORD`` (when set), with wall-clock times, so a test can prove the server saw the cancel.
"""

from __future__ import annotations

import ast
import base64
import json
import operator
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from mcp import MCPError
from mcp.server.mcpserver import AcceptedElicitation, Context, Elicit, ElicitationResult, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import (
    METHOD_NOT_FOUND,
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
    ToolAnnotations,
    ToolExecution,
)
from pydantic import BaseModel, Field

from demo.tools_context import register

TASK_REQUIRED = {"batch_report"}
READ_ONLY = ToolAnnotations(read_only_hint=True)  # every demo tool but ``delete_note`` only reads (the default: run)
DELETE_DESCRIPTION = "Delete a note from the bundled notes for good (a demo: nothing is really deleted)."


class DemoServer(MCPServer):
    """The SDK's server, with ``execution.taskSupport: required`` declared on the tools of ``TASK_REQUIRED``."""

    async def list_tools(self) -> list[Tool]:
        tools = await super().list_tools()
        required = ToolExecution(task_support="required")
        return [t.model_copy(update={"execution": required}) if t.name in TASK_REQUIRED else t for t in tools]


server = DemoServer("ledger-chat-demo", instructions="Demo tools for Ledger Chat: time, arithmetic, notes, a slow job.")
NOTES = Path(__file__).with_name("notes.md")
register(server)  # prompts, resources and completions (``demo.tools_context``)
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


@server.tool(annotations=READ_ONLY)
async def slow_task(seconds: float, ctx: Context) -> str:
    """Work for the given number of seconds (at most 60), reporting progress; stops at once when cancelled."""
    seconds = max(0.0, min(float(seconds), 60.0))
    record("slow_task_started", seconds=seconds)
    start = time.monotonic()
    try:
        while (elapsed := time.monotonic() - start) < seconds:
            await ctx.report_progress(round(elapsed, 2), seconds, f"{elapsed:.1f} of {seconds:g} s")
            await anyio.sleep(min(0.2, seconds - elapsed))
    except anyio.get_cancelled_exc_class():
        record("slow_task_cancelled", after=round(time.monotonic() - start, 3))
        raise
    record("slow_task_finished")
    return f"The slow task finished after {seconds:g} s."


@server.tool(annotations=READ_ONLY)
def current_time() -> str:
    """The current date and time of the machine running the tool, with its time zone."""
    return datetime.now().astimezone().strftime("%A %d %B %Y, %H:%M:%S %Z (UTC%z)")


@server.tool(annotations=READ_ONLY)
def calculator(expression: str) -> str:
    """Evaluate arithmetic: + - * / // % ** and parentheses, e.g. '(17 * 23) + 1'."""
    if len(expression) > 200:
        raise ToolError("The expression is too long (200 characters at most).")
    try:
        value = _evaluate(ast.parse(expression, mode="eval").body)
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError) as exc:
        raise ToolError(f"Cannot compute {expression!r}: {exc}") from None
    return f"{expression} = {value:g}" if isinstance(value, float) else f"{expression} = {value}"


@server.tool(annotations=READ_ONLY)
def search_notes(query: str) -> str:
    """Search the bundled notes (retries, timeouts, caching, ...) for a word; returns the matching sections."""
    words = [w for w in query.lower().split() if w]
    sections = [s.strip() for s in NOTES.read_text(encoding="utf-8").split("# ") if s.strip()]
    hits = [s for s in sections if words and any(w.rstrip("s") in s.lower() for w in words)]
    if not hits:
        return f"No note mentions {query!r}."
    return "\n\n".join(f"# {h}" for h in hits[:3])


@server.tool(annotations=READ_ONLY)
def always_fails() -> str:
    """A tool that always fails, to show how a tool error reaches the model."""
    raise ToolError("The demo tool failed on purpose (the disk is on fire).")


@server.tool(annotations=READ_ONLY)
def web_snippet() -> str:
    """A snippet of a web page (untrusted content, to show it is displayed as text)."""
    return '<img src=x onerror="window.__pwned=true"><script>window.__pwned=true</script> <a href="javascript:x">x</a>'


@server.tool(annotations=READ_ONLY)
def draw_chart(title: str = "Requests per day") -> CallToolResult:
    """Draw a small bar chart (a PNG image) of this week's demo numbers; the numbers come as structured data too."""
    import io

    from PIL import Image, ImageDraw

    values = {"Mon": 12, "Tue": 19, "Wed": 7, "Thu": 15, "Fri": 22}
    image = Image.new("RGB", (320, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.text((10, 6), title[:40], fill="black")
    for n, (day, value) in enumerate(values.items()):
        left = 20 + n * 60
        draw.rectangle((left, 190 - value * 7, left + 40, 190), fill=(37, 99, 235))
        draw.text((left + 8, 176 - value * 7), day, fill="black")
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return CallToolResult(
        content=[
            TextContent(text=f"A bar chart titled {title!r}: the busiest day was Fri (22)."),
            ImageContent(data=base64.b64encode(buffer.getvalue()).decode("ascii"), mime_type="image/png"),
        ],
        structured_content={"title": title, "unit": "requests", "values": values},
    )


@server.tool(annotations=READ_ONLY)
def notes_file() -> CallToolResult:
    """The bundled notes: the first section embedded as a text resource, and a link to the whole file."""
    text = NOTES.read_text(encoding="utf-8")
    first = "# " + text.split("# ")[1].strip()
    uri = "file:///demo/notes.md"
    return CallToolResult(
        content=[
            TextContent(text="The notes file starts with its section on retries."),
            EmbeddedResource(resource=TextResourceContents(uri=uri, mime_type="text/markdown", text=first)),
            ResourceLink(uri=uri, name="notes.md", title="Demo notes", mime_type="text/markdown", size=len(text)),
        ]
    )


@server.tool(annotations=READ_ONLY)
def beep() -> CallToolResult:
    """A short beep (a WAV sound the user can play)."""
    import io
    import math
    import struct
    import wave

    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(
            b"".join(struct.pack("<h", int(8000 * math.sin(n / 8000 * 2 * math.pi * 440))) for n in range(1600))
        )
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return CallToolResult(
        content=[TextContent(text="Beep (440 Hz, 0.2 s)."), AudioContent(data=data, mime_type="audio/wav")]
    )


class Order(BaseModel):
    """The form ``place_order`` asks the person to fill in (MCP elicitation, form mode)."""

    name: str = Field(title="Name", description="Who the order is for", min_length=1)
    quantity: int = Field(title="Quantity", description="How many (1 to 10)", ge=1, le=10)
    size: Literal["S", "M", "L"] = Field(title="Size")
    gift: bool = Field(False, title="Gift wrap")


def _ask_order() -> Elicit[Order]:
    return Elicit("Please fill in the order: who it is for, how many, which size, and whether to gift wrap it.", Order)


@server.tool(annotations=READ_ONLY)  # the demo places no order anywhere: it only answers
async def place_order(item: str, answer: Annotated[ElicitationResult[Order], Resolve(_ask_order)], ctx: Context) -> str:
    """Place an order for an item: asks the person for the details (name, quantity, size, gift wrap) first."""
    record(
        "question_answered",
        action=answer.action,
        revision=ctx.protocol_version,
        item=item,
        data=answer.data.model_dump() if isinstance(answer, AcceptedElicitation) else None,
    )
    if not isinstance(answer, AcceptedElicitation):
        return f"No order placed: the person chose {answer.action}."
    o = answer.data
    return f"Order placed: {o.quantity} x {item} ({o.size}) for {o.name}{', gift wrapped' if o.gift else ''}."


@server.tool(annotations=READ_ONLY)
def whoami(ctx: Context) -> str:
    """The MCP client calling this server, as it introduced itself (name and version)."""
    params = ctx.session.client_params
    info = params.client_info if params is not None else None
    if info is None:
        return "The client did not introduce itself."
    return f"{info.name} {info.version}"


@server.tool(annotations=READ_ONLY)
def batch_report(days: int = 7) -> str:
    """A long report that runs as an MCP task (task-augmented calls only)."""
    raise MCPError(METHOD_NOT_FOUND, "batch_report requires task augmentation (execution.taskSupport: required)")


@server.tool(
    annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False),
    description=DELETE_DESCRIPTION + os.environ.get("LEDGERCHAT_DEMO_DELETE_CHANGED", ""),
)
def delete_note(title: str, reason: str = "") -> str:
    """(described above: the description can change, to show that a changed tool voids its grants)"""
    record("delete_note", title=title, reason=reason)
    return f"Deleted the note {title!r} (not really: the demo keeps its notes)."


def record(event: str, **fields: Any) -> None:
    path = os.environ.get("LEDGERCHAT_DEMO_TOOL_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": event, "t": time.time(), "pid": os.getpid(), **fields}) + "\n")


def _evaluate(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _evaluate(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("the exponent is too large")
        result: float | int = _BINARY[type(node.op)](left, right)
        return result
    raise ValueError(f"{type(node).__name__} is not arithmetic")


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
