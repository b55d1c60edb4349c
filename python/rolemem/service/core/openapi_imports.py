"""What the designer imports take, said in the OpenAPI document: the import's own checks
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
from .openapi_storable import COMPONENT_REF

DESIGNER_CONFIG = "DesignerConfigIn"
LOREBOOK = "SillyTavernLorebook"
LOREBOOK_PATH = "/config/import/sillytavern/{character_id}"
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
        "additionalProperties": True,
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
        (("extensions",), {"type": "object", "additionalProperties": True}),
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


def designer_config(current: dict[str, Any]) -> dict[str, Any]:
    """DesignerConfigIn with its entries spelled out and at least one of them."""
    properties = dict(current["properties"])
    for kind in KINDS:
        entries = {"type": "array", "minItems": 1, "items": _entry(kind)}
        properties[kind] = {
            **{k: v for k, v in properties[kind].items() if k not in ("additionalProperties",)},
            "additionalProperties": entries,
        }
    return {
        **current,
        "properties": properties,
        "anyOf": [
            {"required": [kind], "properties": {kind: {"minProperties": 1}}} for kind in KINDS
        ],
    }


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
        "additionalProperties": True,
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
        "additionalProperties": True,
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
        "additionalProperties": True,
    }


def lorebook() -> dict[str, Any]:
    """The SillyTavern JSON the import reads: World Info ({entries: {uid: entry}}), a
    character card (data.character_book) or a character_book ({entries: [...]})."""
    card_book: dict[str, Any] = {
        "type": "object",
        "required": ["entries"],
        "properties": {
            "entries": {"type": "array", "minItems": 1, "items": _lorebook_entry(False)}
        },
        "additionalProperties": True,
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
        "additionalProperties": True,
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
                "additionalProperties": True,
            },
        },
        "additionalProperties": True,
    }
    book = {
        **card_book,
        "title": "character_book",
        "properties": {**card_book["properties"], "data": _NONE},  # else read as a card
    }
    return {
        "title": LOREBOOK,
        "description": "The SillyTavern JSON.",
        "oneOf": [world_info, card, book],
    }


def install(document: dict[str, Any], schemas: dict[str, Any]) -> None:
    """The imports' request schemas replaced by what the import takes."""
    if DESIGNER_CONFIG in schemas:
        schemas[DESIGNER_CONFIG] = designer_config(schemas[DESIGNER_CONFIG])
    operation = document.get("paths", {}).get(LOREBOOK_PATH, {}).get("post")
    if operation is not None:
        schemas[LOREBOOK] = lorebook()
        content = operation["requestBody"]["content"]["application/json"]
        content["schema"] = {"$ref": COMPONENT_REF + LOREBOOK}
