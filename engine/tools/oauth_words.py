"""What ended a sign-in to a remote tool server, in words that say what happened (never one sentence for all).

Guarantees: ``SignInEnded`` is a ``ToolServerError`` with the tool result status it gives the call (``not_run``:
a Stop or a restart answered the sign-in, nothing was sent; ``declined``: the person gave up or the server's
sign-in page refused; ``error``: anything else) and one sentence; ``ended_by_error`` reads the SDK's errors (a
refused token request names the server's OAuth ``error`` code, a refused registration says so, metadata that
could not be read says which); ``unreachable`` names the step and the host that could not be reached;
``SignInNeeded`` is a start that needed a sign-in with nobody there to answer it. No token and no request body
beyond the OAuth ``error`` code is ever put in the words. The SDK's error log of a flow
that ended this way (a person's Cancel, a Stop, a refusal) is left out of the logs: it is the call's result.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Literal

from engine.tools.mcp_server import ToolServerError

EndStatus = Literal["not_run", "declined", "error"]
STEPS = {
    "metadata": "reading its sign-in metadata",
    "register": "registering Ledger Chat as a client",
    "token": "exchanging the sign-in for a token",
    "refresh": "refreshing the token",
}


class SignInEnded(ToolServerError):
    def __init__(self, status: EndStatus, words: str) -> None:
        super().__init__(words)
        self.status: EndStatus = status


class SignInNeeded(SignInEnded):
    """A start that needed a sign-in with nobody there to ask (the "/" and "@" menus reach servers so): the person
    signs in from the Tools panel or a tool call's card."""

    def __init__(self, server: str) -> None:
        super().__init__("error", f"{server} needs a sign-in; nobody could be asked")


class _Ended(logging.Filter):
    """The SDK logs every end of its flow as an error with a traceback: a sign-in given up or refused is not one."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], SignInEnded))


logging.getLogger("mcp.client.auth.oauth2").addFilter(_Ended())


def ended_by_answer(server: str, by: str, action: str) -> SignInEnded:
    if by == "stop":
        return SignInEnded("not_run", f"Not run: the turn was stopped while it waited for a sign-in to {server}")
    if by == "restart":
        return SignInEnded("not_run", f"Not run: the app stopped while it waited for a sign-in to {server}")
    if by == "app":
        return SignInEnded("not_run", f"Not run: nobody could be asked to sign in to {server}")
    return SignInEnded("declined", f"Not run: you did not sign in to {server} ({action})")


def refused_at_callback(server: str, query: dict[str, str]) -> SignInEnded:
    code = re.sub(r"[^A-Za-z0-9_.-]", "", query.get("error", ""))[:60] or "error"
    return SignInEnded("declined", f"{server} refused the sign-in: {code}")


def ended_by_error(server: str, exc: BaseException) -> SignInEnded:
    from mcp.client.auth.exceptions import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
    from pydantic import ValidationError

    if isinstance(exc, SignInEnded):
        return exc
    if isinstance(exc, PermissionError):
        return SignInEnded("error", f"the sign-in to {server} could not be kept: {exc}")
    if isinstance(exc, OAuthRegistrationError):
        return SignInEnded("error", f"{server} refused to register Ledger Chat as a client: {_code(str(exc))}")
    if isinstance(exc, OAuthTokenError):
        return SignInEnded("error", f"{server} refused the sign-in: {_code(str(exc))}")
    if isinstance(exc, OAuthFlowError):
        return SignInEnded("error", f"the sign-in to {server} could not go on: {_first_line(str(exc))}")
    if isinstance(exc, ValidationError):
        return SignInEnded("error", f"{server}'s sign-in metadata is not valid OAuth metadata")
    return SignInEnded("error", f"the sign-in to {server} failed ({type(exc).__name__})")


def unreachable(server: str, step: str) -> SignInEnded:
    """A request of the sign-in (``step``: ``what|host:port`` or ``refresh``) got no answer."""
    what, _, host = step.partition("|")
    where = f" ({host.rstrip(':')})" if host else ""
    return SignInEnded("error", f"{server}'s sign-in page could not be reached{where} while {STEPS.get(what, what)}")


def _code(text: str) -> str:
    """The OAuth ``error`` code of a refusal the SDK quotes (its response body), else its status line."""
    start = text.find("{")
    if start >= 0:
        try:
            body = json.loads(text[start:])
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            return re.sub(r"[^A-Za-z0-9_.-]", "", body["error"])[:60]
    return _first_line(text.split(":")[0])


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or ["no reason given"])[0][:200]
