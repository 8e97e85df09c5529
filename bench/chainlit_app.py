"""The Chainlit side of ``bench.stream_bench``'s comparison: the smallest Chainlit chat that streams a litellm answer.

Run by the bench from a throwaway venv (``chainlit run bench/chainlit_app.py``), never imported by the app or the
tests. ``BENCH_API_BASE`` is the bench's upstream; after each answer the app appends a line to ``BENCH_DONE_FILE``,
so the bench knows the server side is done.
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOG", "ERROR")

import chainlit as cl  # noqa: E402 - only in the throwaway venv
import litellm  # noqa: E402

litellm.telemetry = False  # as the app sets litellm up (engine.offline)
litellm.suppress_debug_info = True
litellm.drop_params = True


@cl.on_message  # type: ignore[untyped-decorator]  # chainlit: only in the throwaway venv
async def on_message(message: cl.Message) -> None:
    answer = cl.Message(content="")
    response = await litellm.acompletion(
        model="openai/test-model",
        api_base=os.environ["BENCH_API_BASE"],
        api_key="sk-bench",
        messages=[{"role": "user", "content": message.content}],
        stream=True,
        stream_options={"include_usage": True},
        max_retries=0,
    )
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta is not None and chunk.choices[0].delta.content:
            await answer.stream_token(chunk.choices[0].delta.content)
    await answer.send()
    with open(os.environ["BENCH_DONE_FILE"], "a") as done:
        done.write("done\n")
