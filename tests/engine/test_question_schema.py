"""What a tool's form accepts: the fields read from the requested schema and the sentence a person sees for a
value that does not fit (``engine.tools.asking``), for every primitive the MCP spec allows in a form."""

from __future__ import annotations

from typing import Any

from engine.tools.asking import check_answer, fields

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "title": "Email", "format": "email", "description": "Where to write"},
        "code": {"type": "string", "minLength": 3, "maxLength": 5, "pattern": "^[A-Z]+$"},
        "ratio": {"type": "number", "title": "Ratio", "minimum": 0, "maximum": 1},
        "count": {"type": "integer", "title": "Count"},
        "agree": {"type": "boolean", "title": "I agree"},
        "colour": {"type": "string", "title": "Colour", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g"}]},
        "size": {"type": "string", "enum": ["s", "m"], "enumNames": ["Small", "Medium"]},
        "day": {"type": "string", "format": "date"},
    },
    "required": ["email", "count", "agree"],
}


def test_the_fields_come_in_the_schemas_order_with_titles_as_labels_and_choices_named() -> None:
    got = [(f.key, f.kind, f.label, f.required, f.choices) for f in fields(SCHEMA)]
    assert got == [
        ("email", "string", "Email", True, ()),
        ("code", "string", "code", False, ()),
        ("ratio", "number", "Ratio", False, ()),
        ("count", "integer", "Count", True, ()),
        ("agree", "boolean", "I agree", True, ()),
        ("colour", "choice", "Colour", False, (("r", "Red"), ("g", "g"))),
        ("size", "choice", "size", False, (("s", "Small"), ("m", "Medium"))),
        ("day", "string", "day", False, ()),
    ]


def test_valid_values_are_sent_typed_and_empty_optional_ones_are_left_out() -> None:
    raw = {"email": "a@b.co", "code": "", "ratio": "0.5", "count": "3", "agree": False, "colour": "g", "day": ""}
    content, errors = check_answer(SCHEMA, raw)
    assert errors == {}
    assert content == {"email": "a@b.co", "ratio": 0.5, "count": 3, "agree": False, "colour": "g"}


def test_each_kind_of_invalid_value_says_why_and_nothing_is_sent() -> None:
    raw = {"email": "nope", "code": "ab", "ratio": "2", "count": "1.5", "colour": "x", "size": "xl", "day": "32/1"}
    _, errors = check_answer(SCHEMA, raw)
    assert errors == {
        "email": "Email: is not a valid email.",
        "code": "code: needs at least 3 characters.",
        "ratio": "Ratio: must be at most 1.",
        "count": "Count: enter a whole number.",
        "agree": "I agree is required.",
        "colour": "Colour: choose one of the options offered.",
        "size": "size: choose one of the options offered.",
        "day": "day: is not a valid date.",
    }
    _, errors = check_answer(SCHEMA, {"email": "a@b.co", "count": "2", "agree": True, "code": "abc"})
    assert errors == {"code": "code: does not have the expected form."}
