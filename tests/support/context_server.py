"""A second MCP server for the "/" and "@" tests, made with the SDK's ``MCPServer`` (FastMCP's successor in mcp 2):
prompts and resources of another shape than the demo server's.

    python -m tests.support.context_server   # stdio

Prompts: ``review(language, focus)`` (a user message, then an embedded resource: the code to review) and
``greet`` (an image and a text in one user message). Resources: ``config://second/settings.json`` (JSON text),
``image://second/logo.png`` (a PNG blob with a ``tEXt`` comment), ``counter://second/visits`` (its text changes at
every read: a Refresh gets new bytes). Completions for ``review``'s ``language``.
"""

from __future__ import annotations

import base64
import io
import json
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.types import Completion, EmbeddedResource, ImageContent, PromptReference, TextResourceContents
from pydantic import Field

server = MCPServer("second-context")
LANGUAGES = ("python", "rust", "go", "typescript")
CODE = "def add(a, b):\n    return a - b\n"
visits = {"count": 0}


def logo_png() -> bytes:
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo

    info = PngInfo()
    info.add_text("Author", "someone at home")
    out = io.BytesIO()
    Image.new("RGB", (24, 16), (30, 160, 90)).save(out, "PNG", pnginfo=info)
    return out.getvalue()


@server.prompt(title="Review code")
def review(
    language: Annotated[str, Field(description="The code's language")],
    focus: Annotated[str, Field(description="What to look at")] = "correctness",
) -> list[Message]:
    """Review a small piece of code for one thing."""
    code = TextResourceContents(uri="file:///second/add.py", mime_type="text/x-python", text=CODE)
    return [
        UserMessage(f"Review this {language} code for {focus}."),
        UserMessage(EmbeddedResource(resource=code)),
    ]


@server.prompt()
def greet() -> list[Message]:
    """Say hello to the logo."""
    data = base64.b64encode(logo_png()).decode("ascii")
    return [UserMessage(ImageContent(data=data, mime_type="image/png")), UserMessage("Say hello to this logo.")]


@server.resource("config://second/settings.json", name="settings.json", mime_type="application/json")
def settings() -> str:
    """The second server's settings (JSON)."""
    return json.dumps({"retries": 3, "timeout_seconds": 10})


@server.resource("image://second/logo.png", name="logo.png", mime_type="image/png")
def logo() -> bytes:
    """A small green logo (PNG, with a text comment the app must not send on)."""
    return logo_png()


@server.resource("counter://second/visits", name="visits.txt", mime_type="text/plain")
def counter() -> str:
    """How many times this resource was read (it changes at every read)."""
    visits["count"] += 1
    return f"visit {visits['count']}\n"


@server.completion()  # type: ignore[untyped-decorator]
async def complete(ref: Any, argument: Any, context: Any) -> Completion | None:
    if isinstance(ref, PromptReference) and argument.name == "language":
        return Completion(values=[v for v in LANGUAGES if v.startswith(str(argument.value or ""))])
    return None


if __name__ == "__main__":
    server.run("stdio")
