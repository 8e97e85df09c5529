"""A small MCP server (official SDK, stdio) whose tool asks a URL-mode question, for the tests of questions that
the demo server does not ask: ``sign_in`` sends ``elicitation/create`` in url mode (2025-11-25; the SDK's
``Context.elicit_url`` needs that revision's back-channel) and returns the action it got; ``long_report`` returns
``long_report_text(kilobytes)``, a text as long as asked (the tests of results over the bound, ``ledger.bounds``).

    python -m tests.support.question_server
"""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

SIGN_IN_URL = "https://login.example.com/authorize?client=ledger-chat"
server = MCPServer("question-test-server")


@server.tool()
async def sign_in(ctx: Context) -> str:
    """Ask the person to sign in on an outside page (MCP elicitation, url mode)."""
    result = await ctx.elicit_url("Sign in to Example to continue.", SIGN_IN_URL, "sign-in-1")
    return f"sign in: {result.action}"


def long_report_text(kilobytes: int) -> str:
    """Numbered lines, some of them not ASCII, about ``kilobytes`` KB of UTF-8: a cut or a swap shows."""
    return "".join(f"{n:08d} report ✓ ünïcode {'r' * 30}\n" for n in range(kilobytes * 1024 // 52 + 1))


@server.tool()
def long_report(kilobytes: int) -> str:
    """A report of about ``kilobytes`` KB."""
    return long_report_text(kilobytes)


if __name__ == "__main__":
    server.run("stdio")
