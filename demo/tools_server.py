"""The bundled demo tool server: a stdio MCP server (official ``mcp`` SDK) with a few honest tools.

    python -m demo.tools_server              # speaks MCP on stdin/stdout; the app starts it with the demo model
    python -m demo.tools_server --http 9000  # the same tools over streamable HTTP on http://127.0.0.1:9000/mcp

Tools: ``current_time``; ``calculator`` (arithmetic through a small AST walker: no ``eval``); ``search_notes``
over ``demo/notes.md``; ``slow_task(seconds)``, which reports progress and honours cancellation; ``always_fails``;
``web_snippet``, which returns hostile HTML (the page must show it as text).

Guarantees: ``slow_task`` appends one JSON line per start, finish and cancellation to the file named by
``LEDGERCHAT_DEMO_TOOL_RECORD`` (when set), with wall-clock times, so a test can prove the server saw the cancel.
"""

from __future__ import annotations

import ast
import json
import operator
import os
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("ledger-chat-demo", instructions="Demo tools for Ledger Chat: time, arithmetic, notes, a slow job.")
NOTES = Path(__file__).with_name("notes.md")
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


@server.tool()
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


@server.tool()
def current_time() -> str:
    """The current date and time of the machine running the tool, with its time zone."""
    return datetime.now().astimezone().strftime("%A %d %B %Y, %H:%M:%S %Z (UTC%z)")


@server.tool()
def calculator(expression: str) -> str:
    """Evaluate arithmetic: + - * / // % ** and parentheses, e.g. '(17 * 23) + 1'."""
    if len(expression) > 200:
        raise ToolError("The expression is too long (200 characters at most).")
    try:
        value = _evaluate(ast.parse(expression, mode="eval").body)
    except (ValueError, SyntaxError, ZeroDivisionError, OverflowError, TypeError) as exc:
        raise ToolError(f"Cannot compute {expression!r}: {exc}") from None
    return f"{expression} = {value:g}" if isinstance(value, float) else f"{expression} = {value}"


@server.tool()
def search_notes(query: str) -> str:
    """Search the bundled notes (retries, timeouts, caching, ...) for a word; returns the matching sections."""
    words = [w for w in query.lower().split() if w]
    sections = [s.strip() for s in NOTES.read_text(encoding="utf-8").split("# ") if s.strip()]
    hits = [s for s in sections if words and any(w.rstrip("s") in s.lower() for w in words)]
    if not hits:
        return f"No note mentions {query!r}."
    return "\n\n".join(f"# {h}" for h in hits[:3])


@server.tool()
def always_fails() -> str:
    """A tool that always fails, to show how a tool error reaches the model."""
    raise ToolError("The demo tool failed on purpose (the disk is on fire).")


@server.tool()
def web_snippet() -> str:
    """A snippet of a web page (untrusted content, to show it is displayed as text)."""
    return '<img src=x onerror="window.__pwned=true"><script>window.__pwned=true</script> <a href="javascript:x">x</a>'


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
