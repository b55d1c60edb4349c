"""A dialogue line, a new role and a new save, once each: what the Python API stores
(saves.check_lines, saves.create_role, saves.create_save) and the service reads and documents
(LineIn: an append's lines, an import's rows; RoleCreate; SaveCreate), with the field types
they are written in (the service's schemas share them: service.schemas.common). Types and
sizes only: whether the role or the line exists, and the chain's rules, are the store's to
judge."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
)

from ..engines import duckdb_connect
from ..errors import RolememError
from ..sql.project import render_macro

# length limits (characters): ids and names (a name's is the SQL's, macro name_length: a
# memory's place and scene, which older rows are brought within, are names), a player's
# message, a dialogue line
ID_LENGTH = 128
NAME_LENGTH = int(render_macro("name_length"))
MESSAGE_LENGTH = 4000
LINE_LENGTH = 20000
# ids: what a JavaScript number holds exactly (a caller choosing an id cannot push a key
# sequence to the end of 64 bits)
MAX_ID = 2**53 - 1
# who was present for a line: at most this many roles (and as many script roles)
MAX_PRESENT = 64

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


def not_text(value: Any) -> Any:
    if isinstance(value, str | bytes | bool):
        raise ValueError("must be a JSON integer, not text or a boolean")
    return value


# a positive id, at most MAX_ID (the bounds inside the type: on an optional field pydantic
# would otherwise write them outside JSON Schema's words)
Id = Annotated[int, Field(ge=1, le=MAX_ID), BeforeValidator(not_text)]


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


def field(description: str, example: Any, *, default: Any = ..., **limits: Any) -> Any:
    """Any other field, with its description and example (and limits, if any)."""
    return Field(default, description=description, examples=[example], **limits)


key = field  # an id field: its type, Id, holds the bounds


def flag(description: str, *, default: bool = False, example: bool | None = None) -> Any:
    """A boolean field: JSON's true or false only (strict: no 1, no "true"), `default` when
    absent (the example, unless one is given)."""
    shown = default if example is None else example
    return Field(default, description=description, examples=[shown], strict=True)


PresentRoles = Annotated[list[Id], Field(max_length=MAX_PRESENT)]
PresentScriptRoles = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=ID_LENGTH)]], Field(max_length=MAX_PRESENT)
]


_UNSTORABLE = "must be text rolemem can store (no NUL, no lone surrogate)"


class Contract(BaseModel):
    """What every contract shares (a line, a new role or save, a memory:
    dynamic_memory.contract): unknown fields and NaN/infinity refused, text only as a store
    holds it."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    @field_validator("*")
    @classmethod
    def storable(cls, value: Any) -> Any:
        """Text a store holds: no NUL, no lone surrogate (the service's request guard refuses
        them in any body first)."""
        texts = value if isinstance(value, list) else [value]
        if any(isinstance(t, str) and not duckdb_connect.is_storable_text(t) for t in texts):
            raise ValueError(_UNSTORABLE)
        return value


class Line(Contract):
    """One dialogue line (the spec's line fields)."""

    attribute: Literal["system", "user", "assistant"] = field(
        "Who speaks: the player (user), a character or a system.", "user"
    )
    content: str = text("What is said.", "今天画画时你好温柔", max_length=LINE_LENGTH)
    role_id: Id | None = key("The character speaking (an assistant line).", 1, default=None)
    script_role_id: str | None = text(
        "A script NPC speaking, by its id.", "7", max_length=ID_LENGTH, default=None
    )
    display_name: str | None = text(
        "The speaker's shown name.", "木木", max_length=NAME_LENGTH, default=None
    )
    original_emotion: str | None = text(
        "The writer's emotion tag.", "开心", max_length=NAME_LENGTH, default=None
    )
    predicted_emotion: str | None = text(
        "A classifier's emotion tag (not used).", "开心", max_length=NAME_LENGTH, default=None
    )
    tts_content: str | None = text(
        "Voice text.", "きょうは…", max_length=MESSAGE_LENGTH, default=None
    )
    action_content: str | None = text(
        "Stage action.", "摸了摸头", max_length=MESSAGE_LENGTH, default=None
    )
    audio_file: str | None = text(
        "Voice file (not used).", "a/1.mp3", max_length=MESSAGE_LENGTH, default=None
    )
    created_at: GameTime | None = field(
        "When it was said (game clock); default: the request's `now`.",
        "2024-05-01T20:00:00",
        default=None,
    )
    present_role_ids: PresentRoles | None = field(
        "The roles present for the line: a character witnessed it (it is in its history, "
        "its extraction and its memories) when one of its roles was, or it spoke it. "
        "Omitted (and no present_script_role_ids): as the line before it on the branch; "
        "while no line says, every character was present.",
        [1, 2],
        default=None,
    )
    present_script_role_ids: PresentScriptRoles | None = field(
        "The script NPCs present for the line, by id (as present_role_ids).",
        ["7"],
        default=None,
    )


class NewRole(Contract):
    """A game character the AI plays."""

    id: Id | None = key("The role's key; omit to get the next free one.", 2, default=None)
    name: str = text(
        "The character's name (used for {{char}} and in memories).", "祁煜", max_length=NAME_LENGTH
    )
    character_id: str | None = text(
        "Its designer config: `/turn` for the role then needs no character_id (omitted: "
        "each `/turn` names it).",
        "qiyu",
        max_length=ID_LENGTH,
        default=None,
    )
    agent_id: str | None = text(
        "The owner of its dynamic memories: `/turn` and `observe` for the role then need no "
        "agent_id (omitted: the character_id).",
        "qiyu",
        max_length=ID_LENGTH,
        default=None,
    )
    omniscient: bool = flag("A narrator: it witnessed every line, whoever a line says was present.")


class NewSave(Contract):
    """A new save, empty or forked from a line of one of the player's saves."""

    id: Id | None = key("The save's key; omit to get the next free one.", 12, default=None)
    user_id: str = text(
        "The player the save belongs to: only they reach it (every save has an owner).",
        "mumu",
        max_length=ID_LENGTH,
    )
    name: str | None = text("The slot's name.", "第一章", max_length=NAME_LENGTH, default=None)
    user_name: str | None = text(
        "The player's name as prompts and memories say it (set once; a fork keeps its "
        "save's); a request's own user_name overrides it.",
        "木木",
        max_length=NAME_LENGTH,
        default=None,
    )
    from_line_id: Id | None = key(
        "Fork: the new save's tip is this line, and the lines up to it are shared, not copied.",
        15,
        default=None,
    )


C = TypeVar("C", bound=Contract)


def checked(contract: type[C], values: Mapping[str, Any], at: str = "") -> C:
    """`values` as `contract` reads them, or the RolememError of its first complaint (the
    Python API's message: `_refused`), naming the field under `at` (a line: `lines[0]`)."""
    try:
        return contract.model_validate(values)
    except ValidationError as exc:
        raise _refused(exc, at) from None


# the Python API's words for the contract's own types (text, ids) failing; other failures
# (a line's attribute, a list too long) in pydantic's
_TEXT_ERRORS = {"string_type", "string_too_short", "string_pattern_mismatch"}
_ID_ERRORS = {"int_type", "int_parsing", "int_from_float", "greater_than_equal", "less_than_equal"}


def _refused(exc: ValidationError, at: str = "") -> RolememError:
    """The contract's first complaint as the Python API raises it: the field named (under
    `at`) and what would be valid, or the unknown fields."""
    errors = exc.errors()
    unknown = sorted(str(e["loc"][0]) for e in errors if e["type"] == "extra_forbidden")
    if unknown:
        return RolememError(f"{at or 'the call'}: unknown fields {unknown}", field=at or None)
    error = errors[0]
    named = ".".join(filter(None, [at, *map(str, error["loc"][:1])]))
    if error["type"] in _TEXT_ERRORS:
        said = " must be non-empty text"
    elif error["type"] == "string_too_long":
        said = f" must be non-empty text of at most {error['ctx']['max_length']} characters"
    elif error["type"] == "string_unicode":  # a lone surrogate, before `storable` sees it
        said = f" {_UNSTORABLE}"
    elif error["type"] in _ID_ERRORS:
        said = f" must be from 1 to {MAX_ID}"
    elif error["type"] == "value_error":  # a validator's own words (storable, GameTime, Id)
        said = f" {error['ctx']['error']}"
    else:
        said = f": {error['msg']}"
    return RolememError(f"{named}{said}, got {error['input']!r:.80}", field=named or None)
