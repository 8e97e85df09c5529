"""Where traces go: ``--otlp-endpoint``, the standard OTEL variables, ``export --otlp``, and a bad URL in one line."""

from __future__ import annotations

import pytest

from app.config import ConfigError, load_config


def test_no_endpoint_anywhere_exports_nothing() -> None:
    assert load_config([], {}).telemetry.traces_url is None


def test_the_flag_is_a_base_url_for_traces_and_metrics_and_content_stays_off() -> None:
    telemetry = load_config(["--otlp-endpoint", "http://127.0.0.1:4318/"], {}).telemetry
    assert telemetry.traces_url == "http://127.0.0.1:4318/v1/traces"
    assert telemetry.metrics_url == "http://127.0.0.1:4318/v1/metrics"
    assert telemetry.content is False and telemetry.service_name == "ledger-chat"


def test_the_standard_variables_are_read_and_the_flag_wins_over_them() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SERVICE_NAME": "chat-eu"}
    telemetry = load_config(["--otel-content"], env).telemetry
    assert telemetry.traces_url == "http://collector:4318/v1/traces" and telemetry.service_name == "chat-eu"
    assert telemetry.content is True
    env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] = "http://tempo:4318/v1/traces"
    assert load_config([], env).telemetry.traces_url == "http://tempo:4318/v1/traces"
    assert load_config(["--otlp-endpoint", "http://x:1"], env).telemetry.traces_url == "http://x:1/v1/traces"


def test_export_sends_spans_only_when_its_otlp_flag_asks() -> None:
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}
    assert load_config(["export"], env).telemetry.traces_url is None
    config = load_config(["export", "--otlp", "http://127.0.0.1:4318", "--conversation", "c1"], env)
    assert config.telemetry.traces_url == "http://127.0.0.1:4318/v1/traces" and config.conversation == "c1"


def test_an_endpoint_that_is_not_http_is_named_in_one_line() -> None:
    with pytest.raises(ConfigError, match="--otlp-endpoint: 'grpc://x:4317/v1/traces'"):
        load_config(["--otlp-endpoint", "grpc://x:4317"], {})
