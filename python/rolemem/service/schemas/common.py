"""What every request and response model shares: one base per direction, the length limits
(each is the schema's maxLength) and field helpers that always give a description and an
example."""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    GetJsonSchemaHandler,
    WithJsonSchema,
)
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from .storable import storable

# length limits (characters): ids and names, a player's message, a dialogue line, a memory
ID_LENGTH = 128
NAME_LENGTH = 128
MESSAGE_LENGTH = 4000
LINE_LENGTH = 20000
MEMORY_LENGTH = 2000
KEYWORD_LENGTH = 64
MAX_KEYWORDS = 50
MAX_LINES = 200
MAX_OBSERVED = 16  # characters one append observes
MAX_CONTEXT_FIELDS = 64
# ids: what a JavaScript number holds exactly (a caller choosing an id cannot push a key
# sequence to the end of 64 bits; saves.MAX_CHOSEN_ID)
MAX_ID = 2**53 - 1
QUERY_LIMIT = 1000


class Request(BaseModel):
    """Requests refuse unknown fields and NaN/infinity. Their schema says what the request
    guard stores (storable), and a default in the field's description: openapi-typescript (7,
    default options) types every property with a `default` as required, which suits answers
    (the field is always there) but not requests."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        schema = handler(core_schema)
        model = handler.resolve_ref_schema(schema)
        for branch in (model, *model.get("oneOf", [])):  # whole branches: saves.one_target
            for prop in branch.get("properties", {}).values():
                default = prop.pop("default", None)  # null: FastAPI leaves it out anyway
                if default is not None:
                    default = json.dumps(default, ensure_ascii=False)
                    prop["description"] = f"{prop.get('description', '')} Default: {default}."
        storable(model)
        return schema


class Response(BaseModel):
    model_config = ConfigDict(populate_by_name=True)


# a naive ISO time of a real day (years 1000-9999; seconds and fractions optional): as a
# regular expression the schema can state and a client or fuzzer can generate from, so the
# service accepts exactly what the schema says (day by month, 29 February in leap years)
_DAY = (
    "(([1-9][0-9]{3}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])"
    "|(0[469]|11)-(0[1-9]|[12][0-9]|30)|02-(0[1-9]|1[0-9]|2[0-8])))"
    "|([1-9][0-9](0[48]|[2468][048]|[13579][26])|([2468][048]|[13579][26])00)-02-29)"
)
NAIVE_TIME = f"^{_DAY}[T ]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{{1,6}})?)?$"
_NAIVE_TIME = re.compile(NAIVE_TIME)


def _naive_text(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value
    if not isinstance(value, str) or not _NAIVE_TIME.match(value):
        raise ValueError(
            "must be a naive time in the game's clock (no time zone), like 2021-02-21T12:00:00"
        )
    return value


# the game's clock: naive ISO 8601 times; `format: date-time` (RFC 3339, an offset required)
# would say the opposite, so a string of the pattern the service checks (its own bounds:
# 2021-02-21T12:00 to 2021-02-21T12:00:00.000000)
GameTime = Annotated[
    datetime,
    BeforeValidator(_naive_text),
    WithJsonSchema({"type": "string", "pattern": NAIVE_TIME, "minLength": 16, "maxLength": 26}),
]


def _with_offset(value: datetime) -> datetime:
    # the store keeps the service's clock naive (local time, as datetime.now() gives it)
    return value if value.tzinfo is not None else value.astimezone()


# a time of the service's own clock (when it ran, failed, will retry), never a game's: ISO
# 8601 with the server's UTC offset, so a client in another zone reads the same moment
ServiceTime = Annotated[
    datetime,
    AfterValidator(_with_offset),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


def _not_text(value: Any) -> Any:
    if isinstance(value, str | bytes | bool):
        raise ValueError("must be a JSON integer, not text or a boolean")
    return value


# a JSON integer, as JSON Schema reads one: 2 and 2.0 are, "2" and true are not (pydantic's
# lax int would read both; its strict int refuses 2.0, which the schema allows)
Whole = Annotated[int, BeforeValidator(_not_text)]
# a positive id, at most MAX_ID (the bounds inside the type: on an optional field pydantic
# would otherwise write them outside JSON Schema's words)
Id = Annotated[int, Field(ge=1, le=MAX_ID), BeforeValidator(_not_text)]
# a memory's strength as an edit sets it
Strength = Annotated[int, Field(ge=0, le=2**31 - 1), BeforeValidator(_not_text)]
# a share from 0 to 1 (importance, feedback, a score): a JSON number, not a boolean, kept to
# 12 decimals (a value nearer 0 is 0: PostgreSQL's arithmetic refuses an underflow)
Share = Annotated[
    float, Field(ge=0, le=1, strict=True), AfterValidator(lambda value: round(value, 12))
]
# a count of tokens a prompt may take (at least 1)
TokenCount = Annotated[int, Field(ge=1, le=2**31 - 1), BeforeValidator(_not_text)]
# a level of the association words' filter (expand_words), 0-100
Level = Annotated[int, Field(ge=0, le=100), BeforeValidator(_not_text)]


def text(
    description: str, example: str, *, max_length: int, default: Any = ..., **more: Any
) -> Any:
    """A text field: not blank, at most `max_length` characters (`more`: Field's options)."""
    return Field(
        default,
        description=description,
        examples=[example],
        min_length=1,
        max_length=max_length,
        pattern=r"\S",
        **more,
    )


def key(description: str, example: int, *, default: Any = ..., **more: Any) -> Any:
    """An id field (its type: Id, which holds the bounds)."""
    return Field(default, description=description, examples=[example], **more)


def field(description: str, example: Any, *, default: Any = ..., **limits: Any) -> Any:
    """Any other field, with its description and example (and limits, if any)."""
    return Field(default, description=description, examples=[example], **limits)


USER_ID = "The player (your game's player id)."
AGENT_ID = "The agent whose memories these are (the memory owner: required here)."
CHARACTER_ID = "The character's id in the designer config."
# a request naming a role: the ids its role carries (POST /roles), overridable but never in
# contradiction
ROLE_AGENT_ID = (
    "The agent whose memories these are (the memory owner; default: the role's agent_id; "
    "required for a script NPC or a role without one; given for a role that has one, it "
    "must be the role's: 409 otherwise)."
)
ROLE_CHARACTER_ID = (
    "The character's id in the designer config (default: the role's character_id; required "
    "for a script NPC or a role without one; given for a role that has one, it must be the "
    "role's: 409 otherwise)."
)
AGENT_ID_DEFAULTED = (
    "The agent whose memories these are (default: the role's agent_id, else the "
    "character_id; given for a role that has one, it must be the role's: 409 otherwise)."
)
SAVE_ID = "The save (slot) being played."
NOW = "The game's clock now (naive ISO time; default: the server's clock)."
