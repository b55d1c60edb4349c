"""A designer config entry, once: what the import validates (config.parse_designer_json) and
what the service documents (/config/import's body, GET /config/{id}'s answer).

Types only. The values (strength 1-5, operators, logics, sticky turns >= 0, not blank) are the
SQL model's to judge (int_character_config_problems): the schema states them too, so that a
client taking it at its word sends what imports, and nothing here checks them. A key is read
trimmed and in any letter case, by the spec's name (the schema's) or its English one; two
names for one field are refused.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictStr,
    ValidationError,
    WrapValidator,
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


def typed(message: str) -> WrapValidator:
    """The type's own check, its failure said as `message`."""

    def check(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError:
            raise refused(message) from None

    return WrapValidator(check)


def whole(message: str) -> BeforeValidator:
    """An optional whole number (whole_number), else `message` (`{got}`: the value)."""

    def check(value: Any) -> int | None:
        number = whole_number(value)
        if value is not None and number is None:
            raise refused(message, got=repr(value))
        return number

    return BeforeValidator(check)


def named(*names: str, **field: Any) -> Any:
    """A field designers name `names[0]` (the spec's name: the schema's and the export's), or
    any other of `names`."""
    return Field(alias=names[0], validation_alias=AliasChoices(*names), **field)


def _or_empty(value: Any) -> Any:
    return [] if value is None else value


def stated(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema clients see, the SQL model's values included (a Field's extra)."""
    return {"json_schema_extra": lambda generated: _replace(generated, schema)}


def _replace(generated: dict[str, Any], schema: dict[str, Any]) -> None:
    said = {k: generated[k] for k in ("title", "description", "examples") if k in generated}
    generated.clear()
    generated.update(said, **schema)


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


def _conditions(generated: dict[str, Any]) -> None:
    _replace(generated, {"type": ["array", "null"], "items": condition()})


WORDS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
Words = Annotated[list[StrictStr], BeforeValidator(_or_empty)]
Strength = Annotated[int | None, whole("strength must be an integer 1-5, got {got}")]
STRENGTH = {"type": "integer", "minimum": 1, "maximum": 5}


class AttributeEntry(BaseModel):
    """An entry as designers write it (the spec's names; the English ones are read too), and
    the recall rules it may add (SillyTavern's, for any config): secondary keywords and the
    logic they must pass, always recalled while unlocked, turns it stays queued."""

    model_config = ConfigDict(
        extra="forbid",
        loc_by_alias=False,
        serialize_by_alias=True,
        json_schema_extra={"required": ["关键词", "内容", "强度"]},
    )

    keywords: Annotated[list[StrictStr], typed("keywords must be a list of strings")] = named(
        "关键词",
        "keywords",
        description="Keywords that recall it.",
        examples=[["温柔"]],
        **stated({**WORDS, "minItems": 1}),
    )
    content: Annotated[StrictStr, typed("content must be a string")] = named(
        "内容",
        "content",
        description="The text.",
        examples=["对{{user}}格外温柔"],
        **stated({"type": "string", "pattern": NOT_SPACES}),
    )
    strength: Strength = named(
        "强度", "strength", default=None, description="1-5.", examples=[5], **stated(STRENGTH)
    )
    query_params: Annotated[
        list[Mapping[str, Any]],
        BeforeValidator(_or_empty),
        typed("queryParams must be a list of {field, value, operator}"),
        AfterValidator(lambda params: [{str(k).strip(): v for k, v in c.items()} for c in params]),
    ] = named(
        "queryParams",
        "query_params",
        default=None,
        description="Unlock conditions: {field, value, operator}, all must hold.",
        examples=[[{"field": "intimacy", "value": 3, "operator": "gte"}]],
        json_schema_extra=_conditions,
    )
    secondary_keywords: Annotated[
        Words, typed("次要关键词 (secondary_keywords) must be a list of strings")
    ] = named(
        "次要关键词",
        "secondary_keywords",
        default=None,
        description="Secondary keywords: with the logic, whether a keyword match counts.",
        examples=[["画室"]],
        **stated({**WORDS, "type": ["array", "null"]}),
    )
    secondary_logic: Annotated[
        StrictStr | None,
        typed("次要关键词逻辑 (secondary_logic) must be a string"),
        AfterValidator(lambda logic: logic and logic.strip().upper()),  # as SillyTavern spells it
    ] = named(
        "次要关键词逻辑",
        "secondary_logic",
        default=None,
        description=f"How the secondary keywords decide: {', '.join(LOGICS)}.",
        examples=["AND_ANY"],
        **stated({"enum": [*LOGICS, None]}),
    )
    is_constant: Annotated[StrictBool, typed("常驻 (constant) must be true or false")] = named(
        "常驻",
        "constant",
        default=None,
        description="Recalled whenever unlocked, matched or not.",
        examples=[True],
    )
    sticky_turns: Annotated[
        int | None,
        whole("停留轮数 (sticky_turns) must be a whole number of turns, 0 or more"),
    ] = named(
        "停留轮数",
        "sticky_turns",
        default=None,
        description="Turns a recall stays queued.",
        examples=[5],
        **stated({"type": ["integer", "null"], "minimum": 0, "maximum": 2**31 - 1}),
    )
    extensions: dict[str, Any] = Field(
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
            raise refused("an entry must be an object, got {got}", got=type(entry).__name__)
        names = {
            name.lower(): (field, spelled.alias)
            for field, spelled in cls.model_fields.items()
            if isinstance(spelled.validation_alias, AliasChoices)
            for name in spelled.validation_alias.choices
            if isinstance(name, str)
        }
        read: dict[str, Any] = {}
        given: dict[str, Any] = {}
        for raw_key, value in entry.items():
            if raw_key == "extensions" and not isinstance(value, Mapping):
                raise refused("extensions must be an object")
            field, key = ("", raw_key) if raw_key == "extensions" else (None, None)
            field, key = names.get(str(raw_key).strip().lower(), (field, key))
            if key is None:
                raise refused("unknown key {key}", key=repr(raw_key))
            if key in read:  # which would win is the JSON's order: say one
                raise refused(
                    "{one} and {other} both give {field}",
                    one=repr(given[key]),
                    other=repr(raw_key),
                    field=field,
                )
            read[key], given[key] = value, raw_key
        return read


class EventEntry(AttributeEntry):
    """An event entry: an attribute's fields and its date."""

    event_date: Annotated[StrictStr, typed('date must be a string ("" when unknown)')] = named(
        "日期",
        "date",
        "event_date",
        default=None,
        description="The date as written.",
        examples=["三年前"],
    )


class StyleEntry(AttributeEntry):
    """A dialogue style entry: its strength may be left out."""

    model_config = ConfigDict(json_schema_extra={"required": ["关键词", "内容"]})

    strength: Strength = named(
        "强度",
        "strength",
        default=None,
        description="1-5.",
        examples=[3],
        **stated({**STRENGTH, "type": ["integer", "null"]}),
    )


# kind in the designer document -> its entries' model
ENTRIES: dict[str, type[AttributeEntry]] = {
    "attributes": AttributeEntry,
    "events": EventEntry,
    "dialogue_styles": StyleEntry,
}
