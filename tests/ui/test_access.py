"""Who may use the server, as rules: which binds need a token, the Host allowlist, same-origin, token checks."""

from __future__ import annotations

import pytest

from app.config import ConfigError, load_config
from ui.access import AccessPolicy, FailedAttempts, bare_host, new_token, parse_authority, peer_key


@pytest.mark.parametrize(
    ("args", "env", "needs"),
    [
        ([], {}, False),
        (["--host", "::1"], {}, False),
        (["--host", "localhost"], {}, False),
        (["--token"], {}, True),
        ([], {"LEDGERCHAT_TOKEN": "a-token-of-twenty-chars"}, True),
        (["--host", "0.0.0.0"], {}, True),
        (["--host", "192.168.1.20"], {}, True),
        (["--host", "::"], {}, True),
    ],
)
def test_a_loopback_bind_needs_a_token_only_when_asked_and_any_other_bind_always(
    args: list[str], env: dict[str, str], needs: bool
) -> None:
    assert load_config(args, env).needs_token is needs


def test_a_non_loopback_bind_with_no_token_is_refused_in_one_line_saying_why() -> None:
    with pytest.raises(ConfigError, match=r"^--no-token: refusing to serve 0\.0\.0\.0 without a token; anyone") as e:
        load_config(["--host", "0.0.0.0", "--no-token"], {})
    assert "\n" not in str(e.value)
    assert not load_config(["--no-token"], {}).needs_token


def test_a_given_token_is_checked_and_never_shown_in_the_settings() -> None:
    with pytest.raises(ConfigError, match="--token: must be at least 16"):
        load_config(["--token", "short"], {})
    config = load_config(["--token", "a-long-enough-secret-token"], {})
    assert config.token == "a-long-enough-secret-token" and "secret" not in repr(config)
    assert load_config(["--token"], {}).token == ""  # alone: generate one at start-up


def test_the_demo_and_the_start_up_url_follow_the_bound_host_with_ipv6_in_brackets() -> None:
    assert load_config(["--host", "::1", "--port", "9000"], {}).url_host == "[::1]"
    assert load_config(["--host", "::1", "--port", "9000"], {}).local_url == "http://[::1]:9000"
    assert load_config(["--host", "0.0.0.0", "--port", "9000"], {}).local_url == "http://127.0.0.1:9000"
    assert load_config(["--host", "::", "--port", "9000"], {}).local_url == "http://[::1]:9000"


def test_the_host_header_must_name_this_machine_or_an_allowed_name() -> None:
    loopback = AccessPolicy.for_bind("127.0.0.1", 8080, token=None)
    for good in ("127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]:8080", "localhost.:8080"):
        assert loopback.host_allowed(good), good
    for bad in ("attacker.example:8080", "127.0.0.1.nip.io", "10.0.0.5:8080", "", None):
        assert not loopback.host_allowed(bad), bad
    lan = AccessPolicy.for_bind("192.168.1.20", 8080, token="t", allowed_hosts=("chat.example.org",))
    assert lan.host_allowed("192.168.1.20:8080") and lan.host_allowed("chat.example.org")
    assert not lan.host_allowed("10.0.0.5:8080") and not lan.host_allowed("evil.example.org")
    everywhere = AccessPolicy.for_bind("0.0.0.0", 8080, token="t")
    assert everywhere.host_allowed("10.0.0.5:8080") and everywhere.host_allowed("[fe80::1]:8080")
    assert not everywhere.host_allowed("rebind.attacker.example:8080")
    assert AccessPolicy.for_bind("0.0.0.0", 8080, token="t", allowed_hosts=("*",)).host_allowed("any.name")


def test_an_origin_is_allowed_only_when_it_is_this_server_as_the_browser_reached_it() -> None:
    policy = AccessPolicy.for_bind("127.0.0.1", 8080, token=None)
    assert policy.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080")
    assert policy.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", "ws"), "a websocket's scheme is ws"
    assert policy.origin_allowed("https://chat.example.org", "chat.example.org:443", "https"), "the default port"
    assert policy.origin_allowed("http://[::1]:8080", "[::1]:8080")
    for foreign in (
        "http://attacker.example",
        "http://127.0.0.1:3000",
        "null",
        "file://",
        "http://localhost:8080",
        "http://127.0.0.1:8080/",  # an Origin never has a path, not even /
        "https://127.0.0.1:8080",  # another scheme
        "http://user@127.0.0.1:8080",
        "http://127.0.0.1:8080x",
        "http://127.0.0.1:08080x",
        "HTTP://127.0.0.1:8080 ",
    ):
        assert not policy.origin_allowed(foreign, "127.0.0.1:8080"), foreign
    assert not policy.origin_allowed("http://127.0.0.1:8080", "127.0.0.1:8080", "https"), "reached over TLS"
    assert not policy.origin_allowed("http://127.0.0.1", "127.0.0.1:8080"), "80 is not 8080"


@pytest.mark.parametrize(
    "host",
    ["[::1]evil", "localhost:evil", "[::1]:8080x", "localhost:80:80", "::1", "localhost/x", "a@localhost", "[::1"],
)
def test_a_host_header_that_is_not_exactly_name_and_port_is_refused(host: str) -> None:
    policy = AccessPolicy.for_bind("127.0.0.1", 8080, token=None)
    assert parse_authority(host) is None
    assert not policy.host_allowed(host)
    assert not AccessPolicy.for_bind("0.0.0.0", 8080, token="t", allowed_hosts=("*",)).host_allowed(host)


def test_a_host_header_is_read_as_host_and_port() -> None:
    assert parse_authority("LocalHost.:8080") == ("localhost", 8080)
    assert parse_authority("[::1]") == ("::1", None)
    assert parse_authority("10.0.0.5:65535") == ("10.0.0.5", 65535)
    assert parse_authority("10.0.0.5:65536") is None


def test_wrong_tokens_are_counted_per_machine_an_ipv6_slash_64_being_one() -> None:
    assert peer_key("10.0.0.9") == "10.0.0.9" and peer_key("::1") == "::1"
    assert peer_key("2001:db8:1:2:aaaa::1") == peer_key("2001:db8:1:2:bbbb::2") == "2001:db8:1:2::/64"
    assert peer_key("::ffff:10.0.0.9") == "10.0.0.9"
    attempts = FailedAttempts(limit=3, window=60)
    for n in range(50):
        attempts.record("10.0.0.9", now=n / 100)
    assert len(attempts._recent("10.0.0.9", 1)) == 3, "a blocked peer's tries are not kept"


def test_proxies_are_believed_only_when_named_and_must_be_addresses() -> None:
    assert load_config([], {}).forwarded_allow_ips == ()
    assert load_config(["--forwarded-allow-ips", "127.0.0.1, 10.0.0.0/8"], {}).forwarded_allow_ips == (
        "127.0.0.1",
        "10.0.0.0/8",
    )
    assert load_config([], {"LEDGERCHAT_FORWARDED_ALLOW_IPS": "::1"}).forwarded_allow_ips == ("::1",)
    with pytest.raises(ConfigError, match="--forwarded-allow-ips: 'proxy.local' is not an IP address"):
        load_config(["--forwarded-allow-ips", "proxy.local"], {})


def test_tokens_and_cookies_are_compared_exactly_and_the_cookie_is_not_the_token() -> None:
    token = new_token()
    policy = AccessPolicy.for_bind("0.0.0.0", 8080, token=token)
    assert len(token) >= 40 and new_token() != token
    assert policy.token_matches(token) and not policy.token_matches(token[:-1]) and not policy.token_matches("")
    assert policy.cookie_value != token and policy.cookie_matches(policy.cookie_value)
    assert not policy.cookie_matches(token)
    assert not AccessPolicy.for_bind("127.0.0.1", 8080, token=None).token_matches("")
    assert policy.cookie_name == "ledgerchat-token-8080"


def test_wrong_tokens_are_limited_per_address_in_a_sliding_window() -> None:
    attempts = FailedAttempts(limit=3, window=60)
    for n in range(3):
        assert attempts.blocked("10.0.0.9", now=n) == 0
        attempts.record("10.0.0.9", now=n)
    assert attempts.blocked("10.0.0.9", now=3) == pytest.approx(57)
    assert attempts.blocked("10.0.0.8", now=3) == 0, "another address is not affected"
    assert attempts.blocked("10.0.0.9", now=60.5) == 0, "the oldest failure left the window"


@pytest.mark.parametrize(
    ("value", "host"),
    [("127.0.0.1:8080", "127.0.0.1"), ("[::1]:80", "::1"), ("::1", "::1"), ("Example.ORG.", "example.org")],
)
def test_a_host_is_read_without_port_brackets_case_or_trailing_dot(value: str, host: str) -> None:
    assert bare_host(value) == host
