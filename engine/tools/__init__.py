"""Tools: the configured MCP servers (``config``), one connection to each (``mcp_server``), the hub that starts,
watches and restarts them (``hub``), a conversation's own servers over those (``chat_hub``: an editor's), and the
running of one step's tool calls with what a Stop does to them (``runs``); the servers' prompts (``prompts``: "/"
commands) and resources (``resources``: "@" context; ``resource_watch``: which of them their servers said changed);
remote servers people add while the app runs (``remote``, ``remote_hub``: the app's hub ``AppHub``;
``remote_context``: their prompts and resources through each person's own connection), their OAuth
sign-in (``oauth``, ``oauth_words``; ``sign_ins``: those waiting for the browser, here or on another instance) and
their tokens sealed at rest (``vault``).
"""

from __future__ import annotations

from engine.tools import prompts, remote_context, resources
from engine.tools.approval import Answer, Grants
from engine.tools.asking import (
    Action,
    Field,
    PendingQuestion,
    Question,
    QuestionAnswer,
    check_answer,
    content_json,
    fields,
)
from engine.tools.chat_hub import ChatHub, attach, detach, own_name
from engine.tools.config import ServerConfig, ToolConfigError, load_tool_config
from engine.tools.elicitation import Ask
from engine.tools.hub import ResolvedTool, ServerHealth, ToolDescribed, ToolHub
from engine.tools.mcp_server import CallOutcome, ToolServerError
from engine.tools.oauth import client_metadata
from engine.tools.oauth_words import SignInEnded
from engine.tools.prompts import PromptArgument, PromptInfo, PromptMessages
from engine.tools.remote import Changer, RemoteRefused, RemoteServer, RemoteServers
from engine.tools.remote_hub import AppHub
from engine.tools.resources import FetchFailed, Piece, ResourceInfo
from engine.tools.result_parts import history_messages
from engine.tools.sign_ins import SignIns
from engine.tools.vault import KEY_ENV, TokenKeyError, Vault, load_key

__all__ = [
    "KEY_ENV",
    "Action",
    "Answer",
    "AppHub",
    "Changer",
    "Ask",
    "CallOutcome",
    "ChatHub",
    "FetchFailed",
    "Field",
    "Grants",
    "PendingQuestion",
    "Piece",
    "PromptArgument",
    "PromptInfo",
    "PromptMessages",
    "Question",
    "QuestionAnswer",
    "RemoteRefused",
    "RemoteServer",
    "RemoteServers",
    "ResolvedTool",
    "ResourceInfo",
    "ServerConfig",
    "ServerHealth",
    "SignInEnded",
    "SignIns",
    "ToolConfigError",
    "ToolDescribed",
    "ToolHub",
    "TokenKeyError",
    "ToolServerError",
    "Vault",
    "attach",
    "check_answer",
    "client_metadata",
    "content_json",
    "detach",
    "fields",
    "history_messages",
    "load_key",
    "load_tool_config",
    "own_name",
    "prompts",
    "remote_context",
    "resources",
]
