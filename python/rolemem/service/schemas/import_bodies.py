"""/config/import/sillytavern's body as JSON Schema (the import's checks, .sillytavern's, and
the SQL rules, so what it admits imports): World Info, a character card or a bare
character_book, with at least one entry, each with keys and content."""

from __future__ import annotations

from typing import Any

from ...character_memory.config import KINDS
from ...character_memory.contract import LOGICS, NOT_SPACES, condition
from .storable import STORABLE_REF, storable

# a field that must be absent (not `false`: openapi-python-client reads only objects)
_NONE: dict[str, Any] = {"not": {}}
_WORDS = {"type": "array", "items": {"type": "string"}}


def _lorebook_entry(world_info: bool) -> dict[str, Any]:
    """A lorebook entry: keys (at least one) and content (not blank) required."""
    rolemem = {
        "type": ["object", "null"],
        "properties": {
            "kind": {"enum": list(KINDS)},
            "group": {"type": ["string", "null"]},
            "date": {"type": "string"},
            "queryParams": {"type": "array", "items": condition()},
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
