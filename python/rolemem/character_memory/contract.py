"""A designer config entry, once: what the import validates (config.parse_designer_json) and
the service documents (/config/import's body, GET /config/{id}'s answer). Types only: values
(strength 1-5, operators, logics, sticky turns >= 0, not blank) are the SQL model's to judge
(int_character_config_problems); the schema states them too, so that a client taking it at its
word sends what imports."""

from __future__ import annotations

import ast
import copy
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from ..sql.project import render_macro

# selectiveLogic 0-3, as SillyTavern numbers them
LOGICS = ("AND_ANY", "NOT_ALL", "NOT_ANY", "AND_ALL")
# not blank as SQL's trim judges it (spaces only)
NOT_SPACES = "^[^\\u0000]*[^ \\u0000][^\\u0000]*$"
# the config's integer columns (strength, sticky_turns) are 32-bit
INT32 = range(-(2**31), 2**31)


# ids no route could name: clients and proxies resolve `.` and `..` in a URL path
DOT_SEGMENTS = (".", "..")


def addressable(character_id: str) -> str:
    """A designer config's character id, unless it is one a URL path cannot name."""
    if character_id in DOT_SEGMENTS:
        raise ValueError("cannot be . or .. (a URL path cannot name it)")
    return character_id


# a designer config's character id (a body's field or a path's parameter), the schema saying so
ConfigId = Annotated[
    str,
    AfterValidator(addressable),
    Field(json_schema_extra={"not": {"enum": list(DOT_SEGMENTS)}}),
]


def whole_number(value: Any) -> int | None:
    """`value` as an integer when JSON means one (2, or 2.0: JSON has one number type), in
    the config's integer columns; None for anything else (true included)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value not in INT32:
        return None
    return value


def refused(message: str, **context: Any) -> PydanticCustomError:
    """The import's own message for a value of the wrong type (ConfigError says it)."""
    return PydanticCustomError("designer_config", message, context)


# what the import says of a field's value of the wrong type ({got}: the value)
WRONG_TYPE = {
    "keywords": "keywords must be a list of strings",
    "content": "content must be a string",
    "strength": "strength must be an integer 1-5, got {got}",
    "event_date": 'date must be a string ("" when unknown)',
    "query_params": "queryParams must be a list of {field, value, operator}",
    "secondary_keywords": "次要关键词 (secondary_keywords) must be a list of strings",
    "secondary_logic": "次要关键词逻辑 (secondary_logic) must be a string",
    "is_constant": "常驻 (constant) must be true or false",
    "sticky_turns": "停留轮数 (sticky_turns) must be a whole number of turns, 0 or more",
}


def named(names: str, about: str, example: Any, schema: Any = None) -> Any:
    """A field designers name by any of `names` (the first is the spec's: the schema's and the
    export's); `schema`: what clients see, the SQL model's values included."""
    spelled = names.split()
    return Field(
        None,  # keywords and content are required by one_name_each
        alias=spelled[0],
        validation_alias=AliasChoices(*spelled),
        description=about,
        examples=[example],
        json_schema_extra=lambda generated: _state(generated, schema),
    )


def _state(generated: dict[str, Any], schema: Any) -> None:
    """No default (None: the field left out); `schema` instead of the type's, if given."""
    generated.pop("default", None)
    if schema is not None:
        said = {k: v for k, v in generated.items() if k in ("title", "description", "examples")}
        generated.clear()
        generated.update(said, **copy.deepcopy(schema() if callable(schema) else schema))


@cache
def operators() -> list[str]:
    """The queryParams operators, as the SQL macro lists them."""
    return list(ast.literal_eval(render_macro("query_param_operators")))


def condition() -> dict[str, Any]:
    """One queryParams condition's schema (its other keys free-form)."""
    scalar = [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]
    return {
        "type": "object",
        "description": "A game-state condition: {field, value, operator}.",
        "required": ["field", "value", "operator"],
        "properties": {
            "field": {"type": "string", "pattern": NOT_SPACES},
            "value": {"anyOf": [*scalar, {"type": "array", "items": {"anyOf": scalar}}]},
            "operator": {"enum": operators()},
        },
        "additionalProperties": True,
    }


WORDS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
STRENGTH = {"type": "integer", "minimum": 1, "maximum": 5}


class AttributeEntry(BaseModel):
    """An entry as designers write it (the spec's names; the English ones are read too), and
    the recall rules it may add (SillyTavern's, for any config): secondary keywords and the
    logic they must pass, always recalled while unlocked, turns it stays queued."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,  # JSON's types as they are (no "5" for 5)
        loc_by_alias=False,
        serialize_by_alias=True,
        json_schema_extra={"required": ["关键词", "内容", "强度"]},
    )

    keywords: list[str] = named(
        "关键词 keywords", "Keywords that recall it.", ["温柔"], {**WORDS, "minItems": 1}
    )
    content: str = named(
        "内容 content", "The text.", "对{{user}}格外温柔", {"type": "string", "pattern": NOT_SPACES}
    )
    strength: int | None = named("强度 strength", "1-5.", 5, STRENGTH)
    query_params: list[Mapping[Any, Any]] | None = named(
        "queryParams query_params",
        "Unlock conditions: {field, value, operator}, all must hold.",
        [{"field": "intimacy", "value": 3, "operator": "gte"}],
        lambda: {"type": ["array", "null"], "items": condition()},
    )
    secondary_keywords: list[str] | None = named(
        "次要关键词 secondary_keywords",
        "Secondary keywords: with the logic, whether a keyword match counts.",
        ["画室"],
        {**WORDS, "type": ["array", "null"]},
    )
    secondary_logic: str | None = named(
        "次要关键词逻辑 secondary_logic",
        f"How the secondary keywords decide: {', '.join(LOGICS)}.",
        "AND_ANY",
        {"enum": [*LOGICS, None]},
    )
    is_constant: bool = named("常驻 constant", "Recalled whenever unlocked, matched or not.", True)
    sticky_turns: int | None = named(
        "停留轮数 sticky_turns",
        "Turns a recall stays queued.",
        5,
        {"type": ["integer", "null"], "minimum": 0, "maximum": 2**31 - 1},
    )
    extensions: Mapping[Any, Any] = Field(
        default_factory=dict,
        exclude=True,  # carried in the document, not a seed column
        description="Another tool's fields (a SillyTavern entry's), carried.",
        examples=[{}],
    )

    @model_validator(mode="before")
    @classmethod
    def one_name_each(cls, entry: Any) -> Any:
        """Keys trimmed and in any letter case, by any of a field's names, each field once;
        `extensions` (another tool's fields, character_memory.sillytavern) as it is."""
        if not isinstance(entry, Mapping):
            raise refused(f"an entry must be an object, got {type(entry).__name__}")
        names = {
            name.lower(): (field, spelled.alias)
            for field, spelled in cls.model_fields.items()
            if isinstance(spelled.validation_alias, AliasChoices)
            for name in map(str, spelled.validation_alias.choices)
        }
        read: dict[str, Any] = {}
        given: dict[str, Any] = {}
        for raw_key, value in entry.items():
            if raw_key == "extensions" and not isinstance(value, Mapping):
                raise refused("extensions must be an object")
            exact = ("", raw_key) if raw_key == "extensions" else (None, None)
            field, key = names.get(str(raw_key).strip().lower(), exact)
            if key is None:
                raise refused(f"unknown key {raw_key!r}")
            if key in read:  # which would win is the JSON's order: say one
                raise refused(f"{given[key]!r} and {raw_key!r} both give {field}")
            read[key], given[key] = value, raw_key
        for field, key in (("keywords", "关键词"), ("content", "内容")):
            if key not in read:
                raise refused(f"{field} is required")
        return read

    @field_validator("strength", "sticky_turns", mode="before")
    @classmethod
    def whole(cls, value: Any) -> int | None:
        """2.0 as 2 (JSON has one number type); not a 32-bit whole number: refused."""
        number = whole_number(value)
        if value is not None and number is None:
            raise ValueError(value)
        return number

    @field_validator("*", mode="wrap")
    @classmethod
    def said_as_the_import_says(cls, value: Any, handler: Any, info: Any) -> Any:
        try:
            return handler(value)
        except ValueError:  # pydantic's ValidationError too
            raise refused(WRONG_TYPE[str(info.field_name)], got=repr(value)) from None

    @field_validator("query_params")
    @classmethod
    def keys_trimmed(cls, conditions: list[Mapping[Any, Any]] | None) -> list[dict[str, Any]]:
        return [{str(k).strip(): v for k, v in c.items()} for c in conditions or []]

    @field_validator("secondary_logic")
    @classmethod
    def as_sillytavern_spells_it(cls, logic: str | None) -> str | None:
        return logic and logic.strip().upper()


class EventEntry(AttributeEntry):
    """An event entry: an attribute's fields and its date."""

    event_date: str = named("日期 date event_date", "The date as written.", "三年前")


class StyleEntry(AttributeEntry):
    """A dialogue style entry: its strength may be left out."""

    model_config = ConfigDict(json_schema_extra={"required": ["关键词", "内容"]})

    strength: int | None = named(
        "强度 strength", "1-5.", 3, {**STRENGTH, "type": ["integer", "null"]}
    )


# kind in the designer document -> its entries' model
ENTRIES: dict[str, type[AttributeEntry]] = {
    "attributes": AttributeEntry,
    "events": EventEntry,
    "dialogue_styles": StyleEntry,
}
