"""A second MCP server for the "/" and "@" tests, made with the SDK's ``MCPServer`` (FastMCP's successor in mcp 2):
prompts and resources of another shape than the demo server's.

    python -m tests.support.context_server   # stdio
    python -m tests.support.context_server --http 9001   # streamable HTTP on http://127.0.0.1:9001/mcp

Prompts: ``review(language, focus)`` (a user message, then an embedded resource: the code to review) and
``greet`` (an image and a text in one user message). Resources: ``config://second/settings.json`` (JSON text),
``image://second/logo.png`` (a PNG blob with a ``tEXt`` comment), ``counter://second/visits`` (its text changes at
every read: a Refresh gets new bytes). Completions for ``review``'s ``language``.

The tool ``visit`` counts a visit (``counter://second/visits`` changes) and says so to whoever watches it, both ways
the SDK has: ``notifications/resources/updated`` to a client that sent ``resources/subscribe`` (before 2026-07-28:
this server serves that request) and ``ctx.notify_resource_updated`` for ``subscriptions/listen`` streams
(2026-07-28). ``LC_CONTEXT_NO_SUBSCRIBE=1`` serves neither (the server offers no subscriptions at all);
``LC_CONTEXT_RECORD`` names a file that gets one line per request the server receives (its method).
"""

from __future__ import annotations

import base64
import io
import json
import os
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.types import (
    Completion,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    PromptReference,
    SubscribeRequestParams,
    TextResourceContents,
)
from pydantic import Field

SUBSCRIPTIONS = os.environ.get("LC_CONTEXT_NO_SUBSCRIBE") != "1"
RECORD = os.environ.get("LC_CONTEXT_RECORD")
server = MCPServer("second-context", subscriptions=None if SUBSCRIPTIONS else False)
LANGUAGES = ("python", "rust", "go", "typescript")
CODE = "def add(a, b):\n    return a - b\n"
COUNTER = "counter://second/visits"
visits = {"count": 0}
subscribed: set[str] = set()  # URIs a client asked about with ``resources/subscribe``


async def record(ctx: Any, call_next: Any) -> Any:
    """Each request's method, one line in ``LC_CONTEXT_RECORD`` (what the client asked this server)."""
    if RECORD and ctx.request_id is not None:
        with open(RECORD, "a", encoding="utf-8") as out:
            out.write(f"{ctx.method}\n")
    return await call_next(ctx)


async def subscribe(ctx: Any, params: SubscribeRequestParams) -> EmptyResult:
    subscribed.add(str(params.uri))
    return EmptyResult()


server._lowlevel_server.middleware.append(record)
if SUBSCRIPTIONS:
    server._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)


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


@server.tool()
async def visit(ctx: Context) -> str:
    """Count one visit: the resource counter://second/visits changes (its watchers are told)."""
    visits["count"] += 1
    if COUNTER in subscribed:
        await ctx.session.send_resource_updated(COUNTER)
    await ctx.notify_resource_updated(COUNTER)
    return f"{visits['count']} visits so far"


@server.resource(COUNTER, name="visits.txt", mime_type="text/plain")
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
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--http":  # a remote server people add (tests/engine/test_remote_context)
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
