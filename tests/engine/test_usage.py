"""Usage from the provider wherever it arrived: a finished step keeps its reasoning and cached counts, a stopped or
failed step keeps the prompt tokens the provider reported before the end (Anthropic's ``message_start``, Gemini's
``usageMetadata``), and only what was never reported is counted locally, saying which."""

from __future__ import annotations

import re

import pytest

from engine.commands.engine import Engine
from ledger.events.core import Cancelled, Failed, Persisted, StepFinished, Usage
from ledger.folds.audit import audit
from tests.support.dialects import DIALECTS
from tests.support.engine import EngineFactory, current_attempt
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.audit_words import phase_detail

WORDS = " ".join(f"w{n}" for n in range(120))
#: The dialects whose stream reports the prompt's usage before its end (the others only in their last chunk).
EARLY = {"anthropic", "gemini"}
#: The dialects that report prompt-cache reads.
CACHING = {"openai", "anthropic", "gemini"}


def persisted(engine: Engine, cid: str) -> Persisted:
    return [e for e in engine.events(cid) if isinstance(e, Persisted)][-1]


async def test_a_stopped_anthropic_turn_records_the_input_tokens_of_message_start_as_reported(
    engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = "anthropic"
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, input_tokens=321, cached_tokens=100, chunk_delay=0.01))
    _, m1 = await engine.submit(cid, "count for me")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    assert await engine.cancel(cid, "user")
    (cancelled,) = [e for e in engine.events(cid) if isinstance(e, Cancelled)]
    assert cancelled.usage == Usage(input_tokens=321, cached_tokens=100, partial=True)
    metrics = persisted(engine, cid).metrics
    assert (metrics.input_tokens, metrics.cached_tokens, metrics.input_estimated) == (321, 100, False)
    assert metrics.output_estimated and metrics.output_tokens > 0 and metrics.estimated
    (shown,) = audit(engine.events(cid))  # the audit panel: which count is the provider's, which is local
    details = {p.kind: phase_detail(p) for p in shown.phases}
    assert details["cancelled"].endswith("chars kept, reported before the Stop: 321 in")
    assert re.fullmatch(r"interrupted, 321 in · ~\d+ out", details["persisted"]), details["persisted"]


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_stopped_turn_keeps_what_was_reported_and_estimates_only_the_rest(
    dialect: str, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, input_tokens=321, chunk_delay=0.01))
    _, m1 = await engine.submit(cid, "count for me")
    await wait_until(lambda: current_attempt(engine, cid, m1).chunks_rendered >= 3)
    assert await engine.cancel(cid, "user")
    metrics = persisted(engine, cid).metrics
    if dialect in EARLY:
        assert (metrics.input_tokens, metrics.input_estimated) == (321, False)
    else:
        assert metrics.input_estimated and metrics.input_tokens != 321
    assert metrics.output_estimated


@pytest.mark.parametrize("dialect", sorted(EARLY))
async def test_a_failed_step_keeps_the_prompt_tokens_reported_before_the_drop(
    dialect: str, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, input_tokens=555, drop_after=4))
    await engine.submit(cid, "hi")
    await wait_until(lambda: not engine.is_streaming(cid))
    (failed,) = [e for e in engine.events(cid) if isinstance(e, Failed)]
    assert failed.usage is not None and failed.usage.input_tokens == 555 and failed.usage.partial
    metrics = persisted(engine, cid).metrics
    assert (metrics.input_tokens, metrics.input_estimated, metrics.output_estimated) == (555, False, True)


@pytest.mark.parametrize("dialect", DIALECTS)
async def test_a_finished_step_keeps_its_reasoning_and_cached_token_counts(
    dialect: str, engines: EngineFactory, upstream: ScriptedUpstream
) -> None:
    engines.dialect = dialect
    engine = engines()
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="a b c", reasoning="one two", input_tokens=40, cached_tokens=30, chunk_delay=0.001))
    await engine.submit(cid, "think")
    await wait_until(lambda: not engine.is_streaming(cid))
    (step,) = [e for e in engine.events(cid) if isinstance(e, StepFinished)]
    assert step.usage is not None and step.usage.input_tokens == 40 and step.usage.reasoning_tokens > 0
    assert step.usage.cached_tokens == (30 if dialect in CACHING else 0)
    metrics = persisted(engine, cid).metrics
    assert not metrics.estimated and metrics.input_estimated is False and metrics.output_estimated is False
    assert (metrics.reasoning_tokens, metrics.cached_tokens) == (step.usage.reasoning_tokens, step.usage.cached_tokens)
