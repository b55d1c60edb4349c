"""What every request and response model shares: one base per direction, the length limits
(each is the schema's maxLength) and field helpers that always give a description and an
example (a dialogue line's, a new role's and a new save's, and the ones they are written in,
are memory_builder.contract's; a memory's are dynamic_memory.contract's: the Python API checks
them by these too)."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated

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

from ...dynamic_memory.contract import AGENT_ID as AGENT_ID
from ...dynamic_memory.contract import KEYWORD_LENGTH as KEYWORD_LENGTH
from ...dynamic_memory.contract import Share as Share
from ...memory_builder.contract import ID_LENGTH as ID_LENGTH
from ...memory_builder.contract import LINE_LENGTH as LINE_LENGTH
from ...memory_builder.contract import MAX_ID as MAX_ID
from ...memory_builder.contract import MESSAGE_LENGTH as MESSAGE_LENGTH
from ...memory_builder.contract import NAME_LENGTH as NAME_LENGTH
from ...memory_builder.contract import GameTime as GameTime
from ...memory_builder.contract import Id as Id
from ...memory_builder.contract import field as field
from ...memory_builder.contract import flag as flag
from ...memory_builder.contract import key as key
from ...memory_builder.contract import not_text
from ...memory_builder.contract import text as text
from .storable import storable

# limits besides a line's and a memory's (memory_builder.contract, dynamic_memory.contract)
MAX_LINES = 200
MAX_OBSERVED = 16  # characters one append observes
MAX_CONTEXT_FIELDS = 64
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


# answers: no aliases to populate by, no limits to state (a plain model)
Response = BaseModel


class Page(Response):
    limit: int = field("Page size.", 50)
    offset: int = field("Skipped.", 0)


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


# a JSON integer, as JSON Schema reads one: 2 and 2.0 are, "2" and true are not (pydantic's
# lax int would read both; its strict int refuses 2.0, which the schema allows)
Whole = Annotated[int, BeforeValidator(not_text)]
# a count of tokens a prompt may take (at least 1)
TokenCount = Annotated[int, Field(ge=1, le=2**31 - 1), BeforeValidator(not_text)]
# a level of the association words' filter (expand_words), 0-100
Level = Annotated[int, Field(ge=0, le=100), BeforeValidator(not_text)]


USER_ID = "The player (your game's player id)."
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
NOW = "The game's clock now (naive ISO time; default: the server's clock)."
