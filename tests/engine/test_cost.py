"""What attempts cost, through litellm against the scripted upstream: a stopped answer costs the map's price of its
tokens (counted locally and marked so when the provider reported none), a failed attempt is priced as well, the
chat's total is the sum of its attempts, and a model the map does not know stays unknown until ``--model-info``
gives its price."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from app.config import load_model_info
from engine.commands.assembly import build_engine
from engine.commands.engine import Engine
from engine.files import models
from engine.offline import litellm
from engine.provider.calls import ProviderConfig
from engine.provider.cost import attempt_cost, chat_cost, has_price, turn_cost
from ledger.state import ConversationState
from store.tinydb.store import Store
from tests.support.engine import TEST_KEY, current_attempt, make_settings, one_end_each
from tests.support.upstream import Behavior, ScriptedUpstream
from tests.support.waiting import wait_until
from ui.export import archive

WORDS = " ".join(f"w{n}" for n in range(200))
MakeEngine = Callable[[str], Engine]


@pytest.fixture
async def engine_for(tmp_path: Path, upstream: ScriptedUpstream) -> AsyncIterator[MakeEngine]:
    """An engine answering as ``model`` (the upstream does not care which), its ledger checked afterwards."""
    made: list[tuple[Engine, list]] = []

    def make(model: str) -> Engine:
        config = ProviderConfig(model=model, api_base=upstream.base_url, api_key=TEST_KEY)
        engine = build_engine(Store.open(tmp_path / f"data{len(made)}", flush_interval=0.05), make_settings("", config))
        seen: list = []
        engine.subscribe(seen.append)
        made.append((engine, seen))
        return engine

    yield make
    for engine, seen in made:
        await engine.shutdown()
        assert not one_end_each(seen)
        engine.store.close()


def map_price(model: str, input_tokens: int, output_tokens: int) -> float:
    """The price per token straight from litellm's map, times the tokens (no cache reads here)."""
    entry = litellm().model_cost[model]
    return float(input_tokens * entry["input_cost_per_token"] + output_tokens * entry["output_cost_per_token"])


def conv_of(engine: Engine, cid: str) -> ConversationState:
    conv = engine.conversation(cid)
    assert conv is not None
    return conv


async def test_a_stopped_answer_costs_the_maps_price_of_its_estimated_tokens_marked_as_estimated(
    engine_for: MakeEngine, upstream: ScriptedUpstream
) -> None:
    engine = engine_for("openai/gpt-4o-mini")
    cid = engine.create_conversation()
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    _, answer = await engine.submit(cid, "count slowly")
    await wait_until(lambda: current_attempt(engine, cid, answer).chunks_rendered >= 5)
    assert await engine.cancel(cid, "user")
    attempt = current_attempt(engine, cid, answer)
    metrics = attempt.metrics
    assert attempt.status == "interrupted" and metrics is not None and metrics.estimated
    assert metrics.input_tokens > 0 and metrics.output_tokens > 0
    cost = attempt_cost(attempt)
    assert cost.usd == pytest.approx(map_price("gpt-4o-mini", metrics.input_tokens, metrics.output_tokens))
    assert cost.estimated and cost.unknown == 0


async def test_a_reported_answer_is_priced_exactly_and_the_chats_total_is_the_sum_of_every_attempt(
    engine_for: MakeEngine, upstream: ScriptedUpstream
) -> None:
    engine = engine_for("openai/gpt-4o-mini")
    cid = engine.create_conversation()
    upstream.plan(Behavior(text="a short answer", input_tokens=1000, cached_tokens=400), Behavior(status=400))
    _, first = await engine.submit(cid, "one")
    await wait_until(lambda: not engine.is_streaming(cid))
    done = attempt_cost(current_attempt(engine, cid, first))
    metrics = current_attempt(engine, cid, first).metrics
    assert metrics is not None and (metrics.input_tokens, metrics.cached_tokens) == (1000, 400)
    entry = litellm().model_cost["gpt-4o-mini"]
    expected = 600 * entry["input_cost_per_token"] + 400 * entry["cache_read_input_token_cost"]
    expected += metrics.output_tokens * entry["output_cost_per_token"]
    assert done.usd == pytest.approx(expected) and not done.estimated
    await engine.retry(cid, first)  # the provider refuses it: a failed attempt, priced too
    await wait_until(lambda: not engine.is_streaming(cid))
    upstream.plan(Behavior(text=WORDS, chunk_delay=0.01))
    _, second = await engine.submit(cid, "two")
    await wait_until(lambda: current_attempt(engine, cid, second).chunks_rendered >= 3)
    await engine.cancel(cid, "user")
    conv = conv_of(engine, cid)
    each = [attempt_cost(a) for a in conv.attempts.values()]
    assert sorted(a.status for a in conv.attempts.values()) == ["complete", "failed", "interrupted"]
    assert all(c.usd is not None for c in each)
    chat = chat_cost(conv)
    assert chat.usd == pytest.approx(sum(c.usd or 0 for c in each)) and chat.attempts == 3
    assert chat.estimated  # the failed and the stopped attempts were counted locally
    exported = json.loads(zipfile.ZipFile(io.BytesIO(archive(engine))).read("costs.json"))
    assert exported["chats"][cid]["total"]["usd"] == pytest.approx(chat.usd)
    assert exported["total"]["usd"] == pytest.approx(chat.usd) and exported["total"]["estimated"]
    retried = [attempt_cost(conv.attempts[a]).usd or 0 for a in conv.messages[first].attempt_ids]
    assert len(retried) == 2 and turn_cost(conv, first).usd == pytest.approx(sum(retried))


async def test_a_model_the_map_does_not_know_stays_unknown_until_model_info_gives_its_price(
    engine_for: MakeEngine, upstream: ScriptedUpstream, tmp_path: Path
) -> None:
    unknown, priced = engine_for("openai/cost-test-unknown"), engine_for("openai/cost-test-priced")
    info = tmp_path / "model-info.json"
    prices = {"input_cost_per_token": 2e-6, "output_cost_per_token": 1e-5}
    info.write_text(json.dumps({"openai/cost-test-priced": prices}))
    models.declare(load_model_info(info))  # what --model-info does at start-up
    chats = []
    for engine in (unknown, priced):
        cid = engine.create_conversation()
        upstream.plan(Behavior(text="fine", input_tokens=500))
        await engine.submit(cid, "price me")
        await wait_until(lambda e=engine, c=cid: not e.is_streaming(c))  # type: ignore[misc]
        chats.append(conv_of(engine, cid))
    (gone,) = chats[0].attempts.values()
    assert attempt_cost(gone).usd is None and attempt_cost(gone).unknown == 1
    assert chat_cost(chats[0]).usd is None  # unknown, never zero
    (paid,) = chats[1].attempts.values()
    assert paid.metrics is not None and paid.metrics.input_tokens == 500
    assert attempt_cost(paid).usd == pytest.approx(500 * 2e-6 + paid.metrics.output_tokens * 1e-5)


def test_a_model_info_entry_without_prices_leaves_the_model_unknown_not_free() -> None:
    litellm()
    models.declare({"openai/cost-test-window-only": {"max_input_tokens": 2000}})
    models.declare({"openai/cost-test-window-only": {"supports_vision": True}})  # litellm fills the rest with None
    models.declare({"openai/cost-test-free": {"input_cost_per_token": 0, "output_cost_per_token": 0}})
    assert not has_price("openai/cost-test-window-only")
    assert has_price("openai/cost-test-free") and has_price("openai/gpt-4o-mini")
