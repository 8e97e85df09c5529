"""Tools: the configured MCP servers (``config``), one connection to each (``mcp_server``), the hub that starts,
watches and restarts them (``hub``), a conversation's own servers over those (``chat_hub``: an editor's), and the
running of one step's tool calls with what a Stop does to them (``runs``); the servers' prompts (``prompts``: "/"
commands) and resources (``resources``: "@" context).
"""

from __future__ import annotations

from engine.tools import prompts, resources
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
from engine.tools.prompts import PromptArgument, PromptInfo, PromptMessages
from engine.tools.resources import FetchFailed, Piece, ResourceInfo
from engine.tools.result_parts import history_messages

__all__ = [
    "Action",
    "Answer",
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
    "ResolvedTool",
    "ResourceInfo",
    "ServerConfig",
    "ServerHealth",
    "ToolConfigError",
    "ToolDescribed",
    "ToolHub",
    "ToolServerError",
    "attach",
    "check_answer",
    "content_json",
    "detach",
    "fields",
    "history_messages",
    "load_tool_config",
    "own_name",
    "prompts",
    "resources",
]
