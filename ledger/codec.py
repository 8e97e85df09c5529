"""One codec between events and plain dicts: the JSON Lines export format and the store's document format.

Guarantees:
- ``to_dict(e)`` gives ``{"seq", "ts", "kind", "conversation_id", ...fields}`` with the field names of docs/ledger.md;
  tuples become lists, ``Param`` tuples become an object, nested values become objects.
- ``from_dict(to_dict(e)) == e`` for every event; ``actor`` and ``owner`` are left out when ``None``
  (``ABSENT_WHEN_NONE``), so a personal-mode ledger is written exactly as before team mode, and older versions
  (a rolling upgrade, a rollback) read it; an attachment's ``origin``, ``server``, ``ref`` and ``replaces`` likewise.
- ``dumps_line`` is valid UTF-8 JSON for any event, even one carrying a lone surrogate (written as a JSON escape).
- ``from_dict`` rejects an unknown kind, a missing required field, an unknown field or a value of the wrong
  type with a ``CodecError`` whose message names the kind and the field.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterable, Iterator
from typing import Any, Literal, Union

from ledger.errors import CodecError
from ledger.events import (
    EVENT_CLASSES,
    AnyEvent,
    Attachment,
    AttemptUsage,
    Event,
    Param,
    TextRef,
    ToolPart,
    TurnMetrics,
    Usage,
)

KIND_TO_CLASS: dict[str, type[Event]] = {cls.KIND: cls for cls in EVENT_CLASSES}
_VALUE_CLASSES = (Usage, TurnMetrics, Param, Attachment, ToolPart, TextRef, AttemptUsage)
# fields written only when set: personal mode's events stay exactly as a version before team mode wrote (and reads)
ABSENT_WHEN_NONE = frozenset({"actor", "owner", "cwd"})
# an attachment's fields written only when set: a file a person attached is written exactly as before they existed
ATTACHMENT_ABSENT_WHEN_NONE = frozenset({"origin", "server", "ref", "replaces"})


def to_dict(event: Event) -> dict[str, Any]:
    """Encode an event as a plain, JSON-ready dict (kind right after seq and ts)."""
    out: dict[str, Any] = {"seq": event.seq, "ts": event.ts, "kind": event.KIND}
    hints = _hints(type(event))
    for field in _fields(type(event)):
        if field.name in ("seq", "ts"):
            continue
        value = getattr(event, field.name)
        if value is None and field.name in ABSENT_WHEN_NONE:
            continue
        out[field.name] = _encode_params(value) if hints[field.name] == _PARAMS else _encode(value)
    return out


def from_dict(data: dict[str, Any]) -> AnyEvent:
    """Decode a dict made by ``to_dict``; raise ``CodecError`` naming what is wrong."""
    if not isinstance(data, dict):
        raise CodecError(f"an event must be an object, got {type(data).__name__}")
    kind = data.get("kind")
    cls = KIND_TO_CLASS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise CodecError(f"unknown event kind {kind!r}")
    return typing.cast(AnyEvent, _decode_dataclass(cls, data, context=str(kind), ignore=("kind",)))


def dumps_line(event: Event) -> str:
    """One JSON Lines line (no newline) for an event; always encodable as UTF-8 (a lone surrogate is escaped)."""
    line = json.dumps(to_dict(event), ensure_ascii=False, separators=(",", ":"))
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(to_dict(event), ensure_ascii=True, separators=(",", ":"))
    return line


def to_jsonl(events: Iterable[Event]) -> Iterator[str]:
    """JSON Lines, one event per line, each ending in a newline."""
    for event in events:
        yield dumps_line(event) + "\n"


def from_jsonl(lines: Iterable[str]) -> list[AnyEvent]:
    """Decode JSON Lines (blank lines are skipped); raise ``CodecError`` with the line number on a bad line."""
    events: list[AnyEvent] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            events.append(from_dict(json.loads(line)))
        except (CodecError, json.JSONDecodeError) as exc:
            raise CodecError(f"line {number}: {exc}") from exc
    return events


# --- helpers ---------------------------------------------------------------------------------------------------


def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return dataclasses.fields(cls)


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


_PARAMS = tuple[Param, ...]


def _encode_params(value: tuple[Param, ...]) -> dict[str, Any]:
    return {p.name: p.value for p in value}


def _encode(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    if isinstance(value, _VALUE_CLASSES):
        skip = ATTACHMENT_ABSENT_WHEN_NONE if isinstance(value, Attachment) else frozenset()
        return {
            f.name: _encode(getattr(value, f.name))
            for f in _fields(type(value))
            if not (f.name in skip and getattr(value, f.name) is None)
        }
    return value


Decoder = typing.Callable[[Any, str], Any]  # (value, context) -> the decoded value, or CodecError naming context
_PLANS: dict[type, tuple[frozenset[str], tuple[tuple[str, bool, Decoder], ...]]] = {}
_DECODERS: dict[Any, Decoder] = {}


def _decode_dataclass(cls: type, data: dict[str, Any], *, context: str, ignore: tuple[str, ...] = ()) -> Any:
    if not isinstance(data, dict):
        raise CodecError(f"{context}: expected an object, got {type(data).__name__}")
    names, plan = _plan(cls)
    if not names.issuperset(data):
        unknown = sorted(set(data) - names - set(ignore))
        if unknown:
            raise CodecError(f"{context}: unknown field {unknown[0]!r}")
    kwargs: dict[str, Any] = {}
    for name, required, decode in plan:
        if name in data:
            kwargs[name] = decode(data[name], f"{context}.{name}")
        elif required:
            raise CodecError(f"{context}: missing field {name!r}")
    return cls(**kwargs)


def _plan(cls: type) -> tuple[frozenset[str], tuple[tuple[str, bool, Decoder], ...]]:
    """A dataclass's fields with their decoders, made once per class (the type hints are read once)."""
    plan = _PLANS.get(cls)
    if plan is None:
        hints = _hints(cls)
        fields = _fields(cls)
        required = {
            f.name: f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING for f in fields
        }
        plan = _PLANS[cls] = (
            frozenset(f.name for f in fields),
            tuple((f.name, required[f.name], _decoder(hints[f.name])) for f in fields),
        )
    return plan


def _decoder(hint: Any) -> Decoder:
    found = _DECODERS.get(hint)
    if found is None:
        found = _DECODERS[hint] = _make_decoder(hint)
    return found


def _make_decoder(hint: Any) -> Decoder:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        args = typing.get_args(hint)
        optional = type(None) in args
        members = tuple(_decoder(arg) for arg in args if arg is not type(None))

        def union(value: Any, context: str) -> Any:
            if value is None and optional:
                return None
            errors = []
            for member in members:
                try:
                    return member(value, context)
                except CodecError as exc:
                    errors.append(str(exc))
            raise CodecError(errors[0] if len(errors) == 1 else f"{context}: bad value {value!r}")

        return union
    if origin is Literal:
        allowed = typing.get_args(hint)

        def literal(value: Any, context: str) -> Any:
            if value not in allowed:
                raise CodecError(f"{context}: {value!r} is not one of {list(allowed)}")
            return value

        return literal
    if origin is tuple:
        (item,) = typing.get_args(hint)[:1]
        if item is Param:
            return _params
        each = _decoder(item)

        def items(value: Any, context: str) -> Any:
            if not isinstance(value, list):
                raise CodecError(f"{context}: expected a list, got {type(value).__name__}")
            return tuple(each(v, context) for v in value)

        return items
    if hint in _VALUE_CLASSES:
        return lambda value, context: _decode_dataclass(hint, value, context=context)
    if hint is float:
        return _number
    if hint is int:
        return _integer
    if hint in (str, bool):

        def exact(value: Any, context: str) -> Any:
            if type(value) is not hint:
                raise CodecError(f"{context}: expected {hint.__name__}, got {value!r}")
            return value

        return exact
    raise CodecError(f"cannot decode type {hint!r}")  # pragma: no cover - a new field type needs a rule


def _params(value: Any, context: str) -> tuple[Param, ...]:
    if not isinstance(value, dict):
        raise CodecError(f"{context}: expected an object of parameters")
    return tuple(Param(name=str(k), value=v) for k, v in value.items())


def _number(value: Any, context: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CodecError(f"{context}: expected a number, got {value!r}")
    return float(value)


def _integer(value: Any, context: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CodecError(f"{context}: expected an integer, got {value!r}")
    return value
