"""The approval policy as one pure function (``engine.tools.approval.resolve``), over every combination hypothesis
finds: what the config and a preset set wins (the stricter of the two), annotations only fill in where nothing is
set, a grant lets only an ``ask``/``once`` call run and only for the tool's current hash, and ``never`` never runs."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engine.tools.approval import MODES, STRICTNESS, Grants, resolve, tool_hash
from engine.tools.config import parse_tool_config

modes = st.sampled_from(MODES)
tables = st.dictionaries(st.sampled_from(["*", "delete_note", "other"]), modes, max_size=3)
hints = st.fixed_dictionaries(
    {},
    optional={
        "readOnlyHint": st.booleans(),
        "destructiveHint": st.booleans(),
        "openWorldHint": st.booleans(),
        "idempotentHint": st.booleans(),
    },
)
hashes = st.sampled_from([None, "h-now", "h-old"])


def explicit(table: dict[str, Any], tool: str) -> str | None:
    return table.get(tool, table.get("*"))


@given(hints, tables, st.one_of(st.none(), tables), hashes, hashes)
def test_the_config_and_preset_decide_and_annotations_only_fill_in_never_widening_them(
    annotations: dict[str, bool],
    server: dict[str, Any],
    preset: dict[str, Any] | None,
    chat: str | None,
    on: str | None,
) -> None:
    policy = resolve("delete_note", annotations, server, preset, Grants(current="h-now", chat=chat, server=on))
    set_here = [m for m in (explicit(server, "delete_note"), explicit(preset or {}, "delete_note")) if m]
    if set_here:
        assert policy.mode == max(set_here, key=lambda m: STRICTNESS[m])
    elif annotations.get("readOnlyHint") is True:
        assert (policy.mode, policy.why) == ("run", "read_only")
    else:
        assert policy.mode == "ask"
        assert policy.why in ("destructive", "open_world", "no_hints", "chat_grant_void", "server_grant_void")
    if policy.mode == "never":
        assert policy.action == "refuse"
    elif policy.mode == "run":
        assert policy.action == "run" and policy.granted is None
    else:
        granted = "h-now" in (chat, on)
        assert policy.action == ("run" if granted else "ask")
        if not granted and (chat or on):
            assert policy.why in ("chat_grant_void", "server_grant_void"), "a grant for another hash is void, said so"


def test_the_grant_hash_is_the_sha256_of_the_tools_canonical_name_description_and_schema() -> None:
    schema = {"type": "object", "properties": {"title": {"type": "string"}}}
    same = tool_hash("delete_note", "Delete a note.", dict(reversed(list(schema.items()))))
    assert tool_hash("delete_note", "Delete a note.", schema) == same and len(same) == 64
    assert tool_hash("delete_note", "Delete a note. Also the bin.", schema) != same
    assert tool_hash("delete_note", "Delete a note.", {**schema, "required": ["title"]}) != same


def test_a_plain_approval_mode_means_every_tool_and_confirm_still_means_ask() -> None:
    (plain,) = parse_tool_config({"mcpServers": {"x": {"command": "a", "approval": "run"}}})
    assert plain.modes == {"*": "run"}
    (old,) = parse_tool_config({"mcpServers": {"x": {"command": "a", "confirm": True}}})
    assert old.modes == {"*": "ask"}
    (both,) = parse_tool_config({"mcpServers": {"x": {"command": "a", "confirm": True, "approval": {"r": "run"}}}})
    assert both.modes == {"*": "ask", "r": "run"}
