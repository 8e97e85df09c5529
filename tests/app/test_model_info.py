"""``--model-info FILE`` (litellm's model-map shape) and ``--max-attachment-mb``: read and checked at start-up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.config import ConfigError, load_config
from engine.files import models


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "is not valid JSON"),
        ('["openai/x"]', "must be a JSON object of model names to objects"),
        ('{"openai/x": true}', "must be a JSON object of model names to objects"),
    ],
)
def test_a_bad_model_info_file_stops_start_up_with_a_line_naming_it(tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "models.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=f"--model-info: {path}.*{needle}"):
        load_config(["--model-info", str(path)], {})
    with pytest.raises(ConfigError, match="cannot be read"):
        load_config(["--model-info", str(tmp_path / "missing.json")], {})


def test_a_model_the_file_declares_takes_images_once_registered(tmp_path: Path) -> None:
    path = tmp_path / "models.json"
    path.write_text(json.dumps({"openai/lc-declared-vision": {"supports_vision": True, "max_input_tokens": 32000}}))
    config = load_config(["--model-info", str(path)], {})
    assert not models.takes_images("openai/lc-undeclared")
    models.declare(json.loads(path.read_text()))  # what app.wiring does with config.model_info
    assert config.model_info == path and models.takes_images("openai/lc-declared-vision")


def test_the_attachment_limit_is_checked_and_sets_the_per_file_and_per_message_limits() -> None:
    with pytest.raises(ConfigError, match="--max-attachment-mb: 0 must be more than 0"):
        load_config(["--max-attachment-mb", "0"], {})
    limits = load_config(["--max-attachment-mb", "5"], {}).file_limits
    assert (limits.max_file_bytes, limits.max_message_bytes) == (5 * 1024 * 1024, 50 * 1024 * 1024)
    assert load_config([], {"LEDGERCHAT_MAX_ATTACHMENT_MB": "80"}).file_limits.max_message_bytes == 80 * 1024 * 1024
