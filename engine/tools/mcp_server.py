"""One connection to one configured MCP server, through the official ``mcp`` SDK (2.x).

Guarantees:
- The SDK's transport and session are entered and left in one owner task (anyio requires it); any other task
  may call ``call`` concurrently.
- Cancelling a task that awaits ``call`` makes the SDK send ``notifications/cancelled`` for that request (MCP
  2.x does so by itself; 1.x never did); the session stays usable.
- A server that dies makes every call in flight fail with ``ServerGone`` and marks the connection dead; the hub
  decides whether to start a new one. Nothing here ever raises anything but ``ToolServerError`` subclasses from
  ``start`` and ``call``.
- The server's stderr goes to a log file of its own (never the app's terminal or the page).
- The client introduces itself as ``ledger-chat`` with the app's version (``engine.tools.identity``).
- A result is kept whole (``engine.tools.result_content``): every content part, binary bytes in ``blobs``.
- A tool whose ``execution.taskSupport`` is ``required`` is not offered (this SDK's client cannot make
  task-augmented calls: its task types are types only, never dispatched): it is in ``withheld`` with the reason,
  never in ``tools``.
- A ``notifications/resources/updated`` the server sends (after a ``resources/subscribe``, or on a
  ``subscriptions/listen`` stream: the session tees those too) is handed to ``updated`` with its URI
  (``engine.tools.resource_watch`` marks it); any other notification is left to the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from engine.tools.config import ServerConfig
from engine.tools.elicitation import Ask, Deadline, Elicitations, TimedOut, drive_call
from engine.tools.identity import client_info
from engine.tools.result_content import Retouch, convert
from ledger.events import TextRef, ToolPart
from store.blobs import BlobStore, MemoryBlobs

log = logging.getLogger("ledger_chat.tools")
TASKS_REQUIRED = "needs MCP task-augmented calls, which this client does not make yet; not offered to the model"
Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class ToolServerError(Exception):
    """Root of what a tool server connection raises.

    ToolServerError
     ├── ServerUnavailable   the server could not be started, or is not running now
     ├── ServerGone          the server's process or connection ended while a call was in flight
     └── CallTimedOut        the call passed its deadline (the server was told to cancel)
    """


class ServerUnavailable(ToolServerError):
    pass


class ServerGone(ToolServerError):
    pass


class CallTimedOut(ToolServerError):
    pass


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    schema: dict[str, Any]
    annotations: dict[str, Any] = field(default_factory=dict)  # the MCP tool annotations (camelCase hints)


@dataclass(frozen=True, slots=True)
class CallOutcome:
    text: str
    is_error: bool
    parts: tuple[ToolPart, ...] = ()
    structured: str | None = None
    whole: TextRef | None = None  # over ``ledger.bounds.TEXT_BOUND``: ``text`` is the preview of this blob


@dataclass(frozen=True, slots=True)
class Withheld:
    """A tool the server lists that is not offered to the model, and why."""

    name: str
    reason: str


class MCPConnection:
    def __init__(self, config: ServerConfig, log_dir: Path | None = None, blobs: BlobStore | None = None) -> None:
        self.config = config
        self.log_dir = log_dir
        self.blobs: BlobStore = blobs if blobs is not None else MemoryBlobs()
        self.tools: tuple[ToolSpec, ...] = ()
        self.withheld: tuple[Withheld, ...] = ()
        self._session: Any = None
        self._stop = asyncio.Event()
        self._ready: asyncio.Future[None] | None = None
        self._owner: asyncio.Task[None] | None = None
        self._errlog: TextIO | None = None
        self.elicitations = Elicitations()
        self.retouch: Retouch | None = None  # re-encodes result images (the hub's; ``engine.tools.result_content``)
        self.auth: Any = None  # an ``httpx2.Auth`` for a streamable-HTTP server (a remote one's sign-in)
        self.updated: Callable[[str], None] | None = None  # told the URI of each ``resources/updated``

    @property
    def revision(self) -> str:
        """The MCP protocol revision the server negotiated ("" before it did)."""
        return self.elicitations.revision

    @property
    def session(self) -> Any:
        """The SDK's ``ClientSession`` (None before it is ready and after it ended)."""
        return self._session

    @property
    def alive(self) -> bool:
        return self._session is not None and not self._stop.is_set()

    async def start(self, timeout: float = 30.0) -> None:
        """Start the server, initialize, list its tools; raise ``ServerUnavailable`` with a readable reason."""
        self._ready = asyncio.get_running_loop().create_future()
        self._owner = asyncio.get_running_loop().create_task(self._own(), name=f"mcp {self.config.name}")
        try:
            await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except TimeoutError:
            await self.stop()
            raise ServerUnavailable(f"did not answer within {timeout:g} s") from None
        except ToolServerError:
            await self.stop()
            raise

    async def call(
        self, name: str, arguments: dict[str, Any], progress: Progress | None = None, ask: Ask | None = None
    ) -> CallOutcome:
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED

        session = self._session
        if session is None or self._stop.is_set():
            raise ServerUnavailable("it is not running")
        deadline = Deadline(self.config.timeout)  # paused while a question waits for a person
        try:
            with self.elicitations.inflight(ask, deadline):
                result = await drive_call(session, name, arguments, progress, ask, deadline)
        except TimedOut:
            raise CallTimedOut(f"no result within {self.config.timeout:g} s") from None
        except MCPError as exc:
            if exc.code == CONNECTION_CLOSED:
                self._stop.set()
                raise ServerGone("the tool server stopped while running this call (connection closed)") from None
            return CallOutcome(text=f"The tool server answered with an error: {exc.message}", is_error=True)
        whole = await convert(result, self.blobs, self.retouch)
        return CallOutcome(
            text=whole.text,
            is_error=bool(getattr(result, "is_error", False)),
            parts=whole.parts,
            structured=whole.structured,
            whole=whole.whole,
        )

    async def stop(self) -> None:
        self._stop.set()
        if self._owner is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._owner, 6.0)
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None

    async def _own(self) -> None:
        from mcp import ClientSession, StdioServerParameters, stdio_client

        assert self._ready is not None
        try:
            async with contextlib.AsyncExitStack() as stack:
                if self.config.command:
                    params = StdioServerParameters(
                        command=self.config.command,
                        args=list(self.config.args),
                        env=self.config.env or None,
                        cwd=self.config.cwd,
                    )
                    read, write = await stack.enter_async_context(stdio_client(params, errlog=self._stderr()))
                else:
                    import httpx2
                    from mcp.client.streamable_http import streamable_http_client

                    client = await stack.enter_async_context(
                        httpx2.AsyncClient(headers=self.config.headers, auth=self.auth)
                    )
                    streams = await stack.enter_async_context(
                        streamable_http_client(self.config.url or "", http_client=client)
                    )
                    read, write = streams[0], streams[1]
                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        client_info=client_info(),
                        elicitation_callback=self.elicitations.callback,
                        message_handler=self._message,
                    )
                )
                await _negotiate(session, self.config.protocol)
                self.elicitations.revision = session.protocol_version or ""
                listed = await session.list_tools()
                offered = [t for t in listed.tools if _task_support(t) != "required"]
                self.withheld = tuple(
                    Withheld(name=t.name, reason=TASKS_REQUIRED) for t in listed.tools if t not in offered
                )
                self.tools = tuple(
                    ToolSpec(
                        name=t.name,
                        description=t.description or "",
                        schema=dict(t.input_schema or {}),
                        annotations=t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else {},
                    )
                    for t in offered
                )
                self._session = session
                self._ready.set_result(None)
                await self._stop.wait()
        except Exception as exc:  # noqa: BLE001 - every start-up failure becomes a readable reason
            if not self._ready.done():
                self._ready.set_exception(ServerUnavailable(_reason(exc, self.config.command)))
            else:
                log.warning("tool server %s ended: %s", self.config.name, _reason(exc))
        finally:
            self._session = None
            self._stop.set()

    async def _message(self, message: Any) -> None:
        from mcp.types import ResourceUpdatedNotification

        if isinstance(message, ResourceUpdatedNotification) and self.updated is not None:
            self.updated(str(message.params.uri))

    def _stderr(self) -> TextIO:
        if self.log_dir is None:
            return sys.stderr
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self._errlog = (self.log_dir / f"mcp-{self.config.name}.log").open("a", encoding="utf-8")
        return self._errlog


async def _negotiate(session: Any, protocol: str) -> None:
    """2026-07-28 (``server/discover``) when the server speaks it, else the 2025-11-25 handshake; or the pinned one."""
    from mcp import MCPError

    if protocol == "2025-11-25":
        await session.initialize()
        return
    try:
        await session.discover()
    except MCPError:
        if protocol == "2026-07-28":
            raise
        await session.initialize()


def _task_support(tool: Any) -> str | None:
    execution = getattr(tool, "execution", None)
    return getattr(execution, "task_support", None)


def _reason(exc: BaseException, command: str | None = None) -> str:
    """Why a server failed, as words (never a bare ``None``: a missing command is named from the config)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(e, command) for e in exc.exceptions)
    if isinstance(exc, FileNotFoundError):
        missing = exc.filename or command
        return f"its command was not found ({missing})" if missing else "its command was not found"
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text[:300]
