"""The tool servers' MCP prompts as an editor's "/" commands (ACP ``available_commands``), beside the presets'.

Guarantees:
- ``offered(engine, cid)`` lists the prompts of the servers the session's turns use (the app's, then the session's
  own: ``ToolHub.of_chat``, then the remote servers its owner uses that are connected, or start without asking anyone:
  ``engine.tools.remote_context``; one that needs a sign-in is not offered) as commands named ``<server>.<prompt>``
  (other characters than letters, digits, ``_`` and ``-`` become ``-``). A preset's command never has a dot, so
  neither hides the other. A prompt with arguments has an input hint: one argument takes the whole text; with several,
  ``name=value`` pairs (a value with spaces quoted), or the whole text as the first argument. No tool servers
  (``--no-tools``), or none with prompts: none.
- ``command(engine, cid, text)``: a prompt's text that starts with such a command fetches the prompt
  (``engine.tools.prompts.get``) and stores its messages by sha256 as the page does (``engine.files.fetched``:
  ``origin="prompt"``, its server and name): (the attachments, the text the message keeps). The text after the
  command is the prompt's arguments (the message keeps no text then), or, for a prompt without arguments, the
  message's own text (sent before the prompt's messages, as the page sends typed words before its chips). A text
  that names no offered prompt is (None, text) and goes as it is. A required argument left out is refused
  (invalid params) before the server is asked; a server that fails, or bytes the file limits refuse, refuse the
  prompt (a JSON-RPC error in a sentence) and nothing is recorded.
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from acp import RequestError
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from engine.commands import Engine, InputRejected
from engine.files import from_prompt
from engine.tools import FetchFailed, PromptInfo, prompts, remote_context
from ledger.events import Attachment

COMMAND = re.compile(r"/([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)(?:\s+|$)")


def name_of(prompt: PromptInfo) -> str:
    return f"{prompt.server}.{re.sub(r'[^A-Za-z0-9_-]+', '-', prompt.name).strip('-') or 'prompt'}"


def _hub(engine: Engine, cid: str) -> Any:
    return engine.tools.of_chat(cid) if engine.tools is not None else None


async def listed(engine: Engine, cid: str) -> dict[str, PromptInfo]:
    """The prompts offered in conversation ``cid``, by command name (the first of a name wins)."""
    hub = _hub(engine, cid)
    if hub is not None:
        await remote_context.reach(hub)  # the owner's remote servers, started without asking anyone
    named: dict[str, PromptInfo] = {}
    for prompt in await prompts.prompts(hub) if hub is not None else ():
        named.setdefault(name_of(prompt), prompt)
    return named


async def offered(engine: Engine, cid: str) -> list[AvailableCommand]:
    return [
        AvailableCommand(name=name, description=_about(p), input=_input(p))
        for name, p in (await listed(engine, cid)).items()
    ]


def _about(prompt: PromptInfo) -> str:
    said = prompt.description or prompt.title
    return f"The prompt {prompt.name} of the tool server {prompt.server}" + (f": {said}" if said else "")


def _input(prompt: PromptInfo) -> AvailableCommandInput | None:
    args = prompt.arguments
    if not args:
        return None
    first = args[0]
    if len(args) == 1:
        hint = f"{first.name}" + (f": {first.description}" if first.description else "")
    else:
        pairs = " ".join(f"{a.name}=…" for a in args)
        hint = f"{first.name} (the whole text), or {pairs} (quote a value with spaces)"
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))


def arguments_of(prompt: PromptInfo, text: str) -> dict[str, str]:
    """The prompt's arguments from the text after its command (see the module's guarantees)."""
    names = [a.name for a in prompt.arguments]
    text = text.strip()
    values: dict[str, str] = {}
    if len(names) > 1 and text:
        try:
            words = shlex.split(text)
        except ValueError:  # an unclosed quote: not pairs
            words = []
        pairs = [w.partition("=") for w in words]
        if words and all(sep and key in names for key, sep, _ in pairs):
            values = {key: value for key, _, value in pairs}
    if not values and text and names:
        values = {names[0]: text}
    missing = [a.name for a in prompt.arguments if a.required and not values.get(a.name)]
    if missing:
        said = ", ".join(missing)
        raise RequestError.invalid_params(
            {"details": f"the prompt {name_of(prompt)} needs {said}: {_input(prompt).root.hint}"}  # type: ignore[union-attr]
        )
    return values


async def command(engine: Engine, cid: str, text: str) -> tuple[tuple[Attachment, ...] | None, str]:
    """(the attachments the prompt a leading ``/server.prompt`` names gave, the message's text); (None, text)."""
    found = COMMAND.match(text)
    if found is None or engine.tools is None:
        return None, text
    prompt = (await listed(engine, cid)).get(found.group(1))
    if prompt is None:
        return None, text
    rest = text[found.end() :]
    arguments = arguments_of(prompt, rest)
    try:
        got = await prompts.get(_hub(engine, cid), prompt.server, prompt.name, arguments)
        stored = await from_prompt(engine.files, prompt.server, prompt.name, got)
    except FetchFailed as exc:
        raise RequestError.internal_error(
            {"details": f"the prompt {name_of(prompt)} could not be had: {exc}"}
        ) from None
    except InputRejected as exc:
        raise RequestError.invalid_params({"details": f"the prompt {name_of(prompt)} was refused: {exc}"}) from None
    return stored, ("" if prompt.arguments else rest)
