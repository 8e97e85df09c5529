"""A tool's question (MCP elicitation) put to the person at the editor, or declined when it cannot be.

Guarantees:
- ``can_ask`` reads the client's ``initialize`` capabilities: an editor that declares form elicitation
  (``elicitation.form``) is asked the form questions; a URL question, or any question for an editor without it, is
  declined at once (``decline``: the tool goes on and the model reads what the tool makes of it), the reason
  (``reason``) in the ledger (``question_answered`` by ``app``, with its ``reason``: the page and the audit show it)
  and the log.
- ``ask`` sends one ``elicitation/create`` (form mode, bound to the session and the tool call) and answers the
  question through the engine (``Engine.answer_question``, checked against the form's schema there): accept with
  the editor's values, decline, or cancel, as the editor answered. A schema the protocol cannot carry, an answer
  whose values do not fit the form, an error or a closed editor: declined the same way, saying why. A question
  already answered meanwhile (a Stop answers it ``cancel``) is left as it is.
"""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Any

from acp import Client
from acp.schema import AcceptElicitationResponse, ElicitationFormSessionMode, ElicitationSchema
from pydantic import ValidationError

from engine.commands import Engine, InputRejected
from ledger.events import QuestionAsked

log = logging.getLogger("ledger_chat.editor")


def can_ask(client_capabilities: Any) -> bool:
    """Whether the editor takes form questions (``clientCapabilities.elicitation.form``)."""
    elicitation = getattr(client_capabilities, "elicitation", None)
    return elicitation is not None and elicitation.form is not None


def reason(asked: QuestionAsked, editor_asks: bool) -> str | None:
    """Why the question is declined without asking (None: it is asked)."""
    if not editor_asks:
        return "this editor takes no questions (it declared no form elicitation)"
    if asked.mode != "form":
        return "this bridge asks form questions only"
    return None


async def ask(engine: Engine, client: Client, session_id: str, cid: str, asked: QuestionAsked) -> None:
    """Put the question to the editor and hand its answer to the engine."""
    try:
        schema = ElicitationSchema.model_validate(json.loads(asked.requested))
        mode = ElicitationFormSessionMode(session_id=session_id, tool_call_id=asked.call_id, requested_schema=schema)
        response = await client.create_elicitation(message=asked.message, mode=mode)
    except (ValueError, ValidationError) as exc:
        return decline(engine, cid, asked, f"its form cannot be sent to the editor ({exc})")
    except Exception as exc:  # noqa: BLE001 - an error, a malformed answer, a closed editor: never a hang
        return decline(engine, cid, asked, f"the editor did not answer ({exc})")
    content = response.content if isinstance(response, AcceptElicitationResponse) else None
    try:
        engine.answer_question(cid, asked.question_id, response.action, content)
    except InputRejected as exc:
        log.info("the answer to question %s came too late: %s", asked.question_id, exc)
    except ValueError as exc:
        decline(engine, cid, asked, f"the editor's answer does not fit the form ({exc})")


def decline(engine: Engine, cid: str, asked: QuestionAsked, why: str) -> None:
    """Answer the question ``decline`` (if it still waits), saying why in the ledger (``by`` app) and the log."""
    log.info("declined the question of tool call %s: %s", asked.call_id, why)
    with contextlib.suppress(InputRejected):
        engine.decline_question(cid, asked.question_id, why)
