"""The naive way, for comparison only: a NiceGUI page that re-sends the whole answer on every chunk.

python -m bench.naive_app PORT API_BASE
"""

from __future__ import annotations

import os
import sys

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from nicegui import ui  # noqa: E402

from engine.offline import litellm  # noqa: E402


def main(port: int, api_base: str) -> None:
    ll = litellm()

    @ui.page("/")
    def page() -> None:
        box = ui.textarea(label="Message")
        answer = ui.markdown("")
        status = ui.label("idle").mark("status")

        async def send() -> None:
            status.set_text("streaming")
            response = await ll.acompletion(
                model="openai/test-model",
                api_base=api_base,
                api_key="x",
                stream=True,
                messages=[{"role": "user", "content": box.value}],
                max_retries=0,
            )
            text = ""
            try:
                async for chunk in response:
                    if chunk.choices and chunk.choices[0].delta.content:
                        text += chunk.choices[0].delta.content
                        answer.set_content(text)
            finally:
                await response.aclose()
            status.set_text("complete")

        ui.button("Send", on_click=send)

    ui.run(host="127.0.0.1", port=port, reload=False, show=False, show_welcome_message=False)


if __name__ in {"__main__", "__mp_main__"}:
    main(int(sys.argv[1]), sys.argv[2])
