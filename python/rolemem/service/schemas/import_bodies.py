"""What the designer imports take, as their JSON Schema: the import's own checks
(character_memory.config, .sillytavern) and the SQL rules (int_character_config_problems) as
JSON Schema, so that a document the schema admits is imported. The schema is the stricter
where the code is lenient in ways a schema cannot say (keys read in any letter case and
spacing, a logic in any letter case).

- /config/import: at least one entry; every group a list of at least one; an entry's keys
  by the spec's names (the English ones the import also reads are in the description),
  关键词 (at least one) and 内容 (not blank) required, and 强度 1-5 too but for dialogue
  styles;
- /config/import/sillytavern: a World Info file, a character card or a bare
  character_book, with at least one entry, each with keys and content.
"""

from __future__ import annotations

import ast
from functools import cache
from typing import Any

from ...character_memory.config import KINDS
from ...character_memory.sillytavern import LOGICS
from ...sql.project import render_macro
from .storable import STORABLE_REF, storable

# not blank as SQL's trim judges it (spaces only)
NOT_SPACES = "^[^\\u0000]*[^ \\u0000][^\\u0000]*$"
# a field that must be absent (not `false`: openapi-python-client reads only objects)
_NONE: dict[str, Any] = {"not": {}}
_TURNS = {"minimum": 0, "maximum": 2**31 - 1}  # the column is an integer
_WORDS = {"type": "array", "items": {"type": "string"}}


@cache
def _operators() -> list[str]:
    """The queryParams operators, as the SQL macro lists them."""
    return list(ast.literal_eval(render_macro("query_param_operators")))


def _condition() -> dict[str, Any]:
    scalar = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
    return {
        "type": "object",
        "description": "A game-state condition: {field, value, operator}.",
        "required": ["field", "value", "operator"],
        "properties": {
            "field": {"type": "string", "pattern": NOT_SPACES},
            "value": {"anyOf": [*scalar, {"type": "array", "items": {"anyOf": scalar}}]},
            "operator": {"enum": _operators()},
        },
        "additionalProperties": STORABLE_REF,
    }


def _entry(kind: str) -> dict[str, Any]:
    """A designer entry of `kind`, its fields by the spec's names: the English ones the import
    also reads are left out, as a schema cannot say "one of these names, at most one"
    without more `not`s than schemathesis can draw from."""
    strength: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 5}
    if kind == "dialogue_styles":
        strength = {**strength, "type": ["integer", "null"]}
    fields: list[tuple[tuple[str, ...], dict[str, Any]]] = [
        (("关键词", "keywords"), {**_WORDS, "minItems": 1}),
        (("内容", "content"), {"type": "string", "pattern": NOT_SPACES}),
        (("强度", "strength"), strength),
        (("queryParams", "query_params"), {"type": ["array", "null"], "items": _condition()}),
        (("次要关键词", "secondary_keywords"), {**_WORDS, "type": ["array", "null"]}),
        (("次要关键词逻辑", "secondary_logic"), {"enum": [*LOGICS, None]}),
        (("常驻", "constant"), {"type": "boolean"}),
        (("停留轮数", "sticky_turns"), {"type": ["integer", "null"], **_TURNS}),
        (("extensions",), {"type": "object", "additionalProperties": STORABLE_REF}),
    ]
    if kind == "events":
        fields.append((("日期", "date", "event_date"), {"type": "string"}))
    required = [names[0] for names, _ in fields[: 2 if kind == "dialogue_styles" else 3]]
    others = ", ".join(f"{name} ({names[0]})" for names, _ in fields for name in names[1:])
    return {
        "type": "object",
        "description": f"An entry, its fields by the spec's names (the import reads {others} "
        "too, one name a field).",
        "properties": {names[0]: schema for names, schema in fields},
        "required": required,
        "additionalProperties": False,
    }


def designer_config(schema: dict[str, Any], example: dict[str, Any]) -> None:
    """DesignerConfigIn's schema with its entries spelled out and at least one of them, and
    `example` (its json_schema_extra)."""
    schema["examples"] = [example]
    for kind in KINDS:
        entries = {"type": "array", "minItems": 1, "items": _entry(kind)}
        schema["properties"][kind]["additionalProperties"] = entries
    schema["anyOf"] = [
        {"required": [kind], "properties": {kind: {"minProperties": 1}}} for kind in KINDS
    ]


def _lorebook_entry(world_info: bool) -> dict[str, Any]:
    """A lorebook entry: keys (at least one) and content (not blank) required."""
    rolemem = {
        "type": ["object", "null"],
        "properties": {
            "kind": {"enum": list(KINDS)},
            "group": {"type": ["string", "null"]},
            "date": {"type": "string"},
            "queryParams": {"type": "array", "items": _condition()},
        },
        "additionalProperties": STORABLE_REF,
    }
    settings = {
        "selectiveLogic": {"type": ["integer", "null"], "minimum": 0, "maximum": len(LOGICS) - 1},
        "sticky": {"type": ["integer", "null"], "minimum": -(2**31), "maximum": 2**31 - 1},
    }
    keys, order, flag = (
        ("key", "order", "disable") if world_info else ("keys", "insertion_order", "enabled")
    )
    extensions: dict[str, Any] = {
        "type": ["object", "null"],
        "properties": {"rolemem": rolemem, **({} if world_info else settings)},
        "additionalProperties": STORABLE_REF,
    }
    properties: dict[str, Any] = {
        keys: {**_WORDS, "minItems": 1},
        "content": {"type": "string", "pattern": NOT_SPACES},
        "comment": {"type": ["string", "null"]},
        order: {"type": "number"},
        flag: {"type": "boolean"},
        "keysecondary" if world_info else "secondary_keys": {**_WORDS, "type": ["array", "null"]},
        "selective": {"type": "boolean"},
        "constant": {"type": "boolean"},
        "extensions": extensions,
        **(settings if world_info else {"name": {"type": ["string", "null"]}}),
    }
    return {
        "type": "object",
        "required": [keys, "content"],
        "properties": properties,
        "additionalProperties": STORABLE_REF,
    }


def lorebook(_: dict[str, Any]) -> dict[str, Any]:
    """The SillyTavern JSON the import reads: World Info ({entries: {uid: entry}}), a
    character card (data.character_book) or a character_book ({entries: [...]}), as the
    guard stores it (the SillyTavernLorebook component's schema)."""
    card_book: dict[str, Any] = {
        "type": "object",
        "required": ["entries"],
        "properties": {
            "entries": {"type": "array", "minItems": 1, "items": _lorebook_entry(False)}
        },
        "additionalProperties": STORABLE_REF,
    }
    world_info = {
        "title": "World Info",
        "type": "object",
        "required": ["entries"],
        "properties": {
            "entries": {
                "type": "object",
                "minProperties": 1,
                "additionalProperties": _lorebook_entry(True),
            }
        },
        "additionalProperties": STORABLE_REF,
    }
    card = {
        "title": "Character card",
        "type": "object",
        "required": ["data"],
        "properties": {
            "entries": _NONE,  # an object of entries would make it World Info
            "data": {
                "type": "object",
                "required": ["character_book"],
                "properties": {"character_book": card_book},
                "additionalProperties": STORABLE_REF,
            },
        },
        "additionalProperties": STORABLE_REF,
    }
    book = {
        **card_book,
        "title": "character_book",
        "properties": {**card_book["properties"], "data": _NONE},  # else read as a card
    }
    document = {"description": "The SillyTavern JSON.", "oneOf": [world_info, card, book]}
    storable(document)
    return document
