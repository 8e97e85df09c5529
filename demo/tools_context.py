"""The demo tool server's prompts and resources (MCP ``prompts/*``, ``resources/*``, ``completion/complete``), and
``tiny_image``, the reference server's PNG with a damaged ``iCCP`` chunk; ``register(server)`` adds them.

Prompts: ``summarize_notes(topic, style)`` (arguments with completion: the notes' topics) and ``standup`` (none).
Resources: ``notes://demo/notes.md`` (Markdown text), ``chart://demo/week.png`` (a PNG image),
``data://demo/sample.bin`` (binary bytes, ``application/octet-stream``), and the template
``notes://demo/section/{topic}`` (one section of the notes; ``topic`` completes from the notes' headings).
``LEDGERCHAT_DEMO_NOTES_SUFFIX`` is appended to ``notes://demo/notes.md`` (a resource that changed).
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from pathlib import Path
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import AssistantMessage, Message, UserMessage
from mcp.types import (
    CallToolResult,
    Completion,
    ImageContent,
    PromptReference,
    ResourceTemplateReference,
    TextContent,
    ToolAnnotations,
)
from pydantic import Field

NOTES = Path(__file__).with_name("notes.md")
STYLES = ("bullets", "one paragraph", "a table")
SAMPLE = bytes(range(256)) * 4  # 1 KB of every byte value: not text, not an image


def topics() -> list[str]:
    """The notes' section headings, lower case (``# Retries`` -> ``retries``)."""
    text = NOTES.read_text(encoding="utf-8")
    return [line[2:].strip().lower() for line in text.splitlines() if line.startswith("# ")]


def section(topic: str) -> str:
    for part in NOTES.read_text(encoding="utf-8").split("\n# "):
        heading, _, body = part.lstrip("# ").partition("\n")
        if heading.strip().lower() == topic.strip().lower():
            return f"# {heading.strip()}\n{body.strip()}\n"
    return f"No section of the notes is called {topic!r}.\n"


def chart_png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (64, 40), "white")
    draw = ImageDraw.Draw(image)
    for n, value in enumerate((12, 19, 7, 15, 22)):
        draw.rectangle((4 + n * 12, 38 - value, 12 + n * 12, 38), fill=(37, 99, 235))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def damaged_png() -> bytes:
    """A 20×20 PNG whose ``iCCP`` chunk has a bad CRC (and a ``tEXt`` comment): Chromium shows it."""
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (20, 20), (220, 40, 40)).save(out, "PNG")
    png = out.getvalue()
    body = b"icc\x00\x00" + zlib.compress(b"not really a colour profile")
    iccp = struct.pack(">I", len(body)) + b"iCCP" + body + b"\xde\xad\xbe\xef"  # the wrong CRC
    text = b"Comment\x00made at home, 51.5N 0.1W"
    comment = struct.pack(">I", len(text)) + b"tEXt" + text + struct.pack(">I", zlib.crc32(b"tEXt" + text))
    return png[:33] + iccp + comment + png[33:]


def register(server: MCPServer) -> None:
    """Add the prompts, resources, completions and ``tiny_image`` to ``server``."""
    read_only = ToolAnnotations(read_only_hint=True)

    @server.prompt(title="Summarize the notes")
    def summarize_notes(
        topic: Annotated[str, Field(description="Which section of the notes (retries, timeouts, …)")],
        style: Annotated[str, Field(description="bullets, one paragraph or a table")] = "bullets",
    ) -> list[Message]:
        """Summarize one section of the demo notes, in the style asked for."""
        return [UserMessage(f"Summarize the notes on {topic} as {style}:\n\n{section(topic)}")]

    @server.prompt(title="Stand-up")
    def standup() -> list[Message]:
        """Write today's stand-up from yesterday's notes."""
        return [
            UserMessage("Write my stand-up: what I did yesterday, what I do today, what blocks me."),
            AssistantMessage("Happy to. What did you work on yesterday?"),
            UserMessage("Retries and timeouts in the demo notes."),
        ]

    @server.resource("notes://demo/notes.md", name="notes.md", title="Demo notes", mime_type="text/markdown")
    def notes() -> str:
        """The bundled notes, whole."""
        return NOTES.read_text(encoding="utf-8") + os.environ.get("LEDGERCHAT_DEMO_NOTES_SUFFIX", "")

    @server.resource("chart://demo/week.png", name="week.png", title="This week's chart", mime_type="image/png")
    def chart() -> bytes:
        """A small bar chart of this week's demo numbers (PNG)."""
        return chart_png()

    @server.resource("data://demo/sample.bin", name="sample.bin", mime_type="application/octet-stream")
    def sample() -> bytes:
        """1 KB of binary sample data (every byte value, four times)."""
        return SAMPLE

    @server.resource("notes://demo/section/{topic}", name="notes section", mime_type="text/markdown")
    def notes_section(topic: str) -> str:
        """One section of the notes, by its heading."""
        return section(topic)

    @server.completion()  # type: ignore[untyped-decorator,no-untyped-call]
    async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
        typed = str(argument.value or "").lower()
        if isinstance(ref, PromptReference) and argument.name == "style":
            return Completion(values=[s for s in STYLES if s.startswith(typed)])
        if isinstance(ref, PromptReference | ResourceTemplateReference) and argument.name == "topic":
            return Completion(values=[t for t in topics() if t.startswith(typed)])
        return None

    @server.tool(annotations=read_only)
    def tiny_image() -> CallToolResult:
        """A tiny 20×20 PNG whose colour-profile chunk is damaged (as the reference MCP server's get-tiny-image)."""
        import base64

        data = base64.b64encode(damaged_png()).decode("ascii")
        return CallToolResult(
            content=[TextContent(text="A tiny red square."), ImageContent(data=data, mime_type="image/png")]
        )
