"""A memory, once: an event's, an entity's and a fact's fields as the Python API writes, edits
and imports them (store, entities, facts, edits, official) and the service reads and documents
(its memory routes' bodies, by subclassing), with the limits and types they are written in (the
service's schemas share them: service.schemas.common). Types and sizes only: the store's
checks and the SQL models judge the rest (whose memory it is, what a merge keeps)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StringConstraints,
    ValidationError,
    WithJsonSchema,
)

from ..errors import field_path
from ..memory_builder.contract import (
    ID_LENGTH,
    NAME_LENGTH,
    Contract,
    GameTime,
    field,
    not_text,
    text,
)
from ..schema.memory import ENTITY_KINDS, ENTITY_TYPES
from ..sql.project import render_macro
from .checks import MemoryInputError

# limits besides a line's (memory_builder.contract), the SQL's (macros/rules: a merge keeps an
# entity's description within memory_length, a migration brings older rows within them all):
# a memory's text and a keyword (characters), an event's tags
MEMORY_LENGTH = int(render_macro("memory_length"))
KEYWORD_LENGTH = int(render_macro("keyword_length"))
MAX_KEYWORDS = int(render_macro("max_keywords"))

EntityType = Literal[ENTITY_TYPES]  # type: ignore[valid-type]
EntityKind = Literal[ENTITY_KINDS]  # type: ignore[valid-type]


def _share(value: float) -> float:
    if not 0 <= value <= 1:
        raise ValueError("must be a number from 0 to 1")
    # kept to 12 decimals: a value nearer 0 is 0 (PostgreSQL's arithmetic refuses an underflow)
    return round(value, 12)


# a share from 0 to 1 (importance, feedback, a score): a JSON number, not a boolean
Share = Annotated[
    float,
    Field(strict=True),
    AfterValidator(_share),
    WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1}),
]
# a memory's strength as an edit sets it
Strength = Annotated[int, Field(ge=0, le=2**31 - 1), BeforeValidator(not_text)]
Keywords = list[
    Annotated[str, StringConstraints(min_length=1, max_length=KEYWORD_LENGTH, pattern=r"\S")]
]
# a value a fact ends: a fact's value
FactValue = Annotated[str, StringConstraints(min_length=1, max_length=MEMORY_LENGTH, pattern=r"\S")]
AGENT_ID = "The agent whose memories these are (the memory owner: required here)."


class Owned(Contract):
    """The agent an official memory belongs to (first in a body that names it)."""

    agent_id: str = text(AGENT_ID, "qiyu", max_length=ID_LENGTH)


class EventRecord(Contract):
    """An event as it is written, and as the official export writes it and an import reads
    it."""

    description: str = text("The event.", "祁煜的画廊在海边", max_length=MEMORY_LENGTH)
    created_at: GameTime = field("When it happened.", "2020-01-01T10:00:00")
    keywords: Keywords = field(
        f"Tags, each at most {KEYWORD_LENGTH} characters.",
        ["画廊", "海边"],
        default=[],
        max_length=MAX_KEYWORDS,
    )
    place: str | None = text("Where.", "海边", max_length=NAME_LENGTH, default=None)
    scene: str | None = text("The scene.", "gallery", max_length=NAME_LENGTH, default=None)
    deepinsight: str | None = text(
        "What it says.", "祁煜喜欢海", max_length=MEMORY_LENGTH, default=None
    )
    importance: Share | None = field("0-1.", 0.5, default=None)
    feedback: Share | None = field("0-1.", 0.5, default=None)


class EntityRecord(Contract):
    """An entity memory as it is written, and as the official export writes it and an import
    reads it."""

    entity_name: str = text("The entity.", "祁煜", max_length=NAME_LENGTH)
    entity_type: EntityType = field("Its type.", "主体")
    kind: EntityKind = field("Attribute or relation kind.", "特殊实体属性")
    keyword: str = text("The attribute or relation name.", "职业", max_length=KEYWORD_LENGTH)
    description: str = text("The memory.", "是画家", max_length=MEMORY_LENGTH)
    updated_at: GameTime = field("When it was written.", "2020-01-01T10:00:00")


class OfficialMemories(Owned):
    """An agent's official memories, as the export gives them."""

    events: list[EventRecord] = field("Events to add.", [], default=[])
    entities: list[EntityRecord] = field("Entities to add.", [], default=[])


class EventEdit(Contract):
    """Fields to change of an event (a designer's memory: its text and event fields)."""

    description: str | None = text(
        "New text (an event's new text is stored as a new event id: its words and vectors "
        "follow it).",
        "木木喜欢海边",
        max_length=MEMORY_LENGTH,
        default=None,
    )
    deepinsight: str | None = text(
        "Event: the insight.", "木木喜欢安静", max_length=MEMORY_LENGTH, default=None
    )
    place: str | None = text("Event: the place.", "海边", max_length=NAME_LENGTH, default=None)
    scene: str | None = text("Event: the scene.", "beach", max_length=NAME_LENGTH, default=None)
    importance: Share | None = field("Event: 0-1.", 0.8, default=None)
    feedback: Share | None = field("Event: the player's feedback, 0-1.", 0.5, default=None)
    strength: Strength | None = field("Strength.", 5, default=None)
    is_pinned: bool | None = field(
        "Pinned memories are never archived by cleanup.", True, default=None, strict=True
    )


class EntityEdit(Contract):
    """An entity's own fields to change (with EventEdit's description, strength and pin)."""

    entity_name: str | None = text(
        "Entity: its name.", "木木", max_length=NAME_LENGTH, default=None
    )
    entity_type: EntityType | None = field("Entity: its type.", "客体", default=None)
    kind: EntityKind | None = field("Entity: its kind.", "用户属性", default=None)
    keyword: str | None = text(
        "Entity: the attribute or relation name.", "兴趣", max_length=KEYWORD_LENGTH, default=None
    )
    user_name: str | None = text(
        "Entity: the player's name.", "木木", max_length=NAME_LENGTH, default=None
    )


class FactRecord(Contract):
    """A player's fact as it is written: a slot (subject, attribute), its value, and the
    values of the slot it ends."""

    subject: str = text("Whom it is about.", "阿远", max_length=NAME_LENGTH)
    attribute: str = text(
        "The attribute as stated (an alias maps it to its slot).", "居住地", max_length=NAME_LENGTH
    )
    value: str = text("The value.", "北京", max_length=MEMORY_LENGTH)
    supersedes: list[FactValue] = field("Values of the slot it ends.", ["上海"], default=[])
    created_at: GameTime = field("When it was written.", "2024-05-01T20:05:00")


class FactEdit(Contract):
    """A fact's new value: stored as a new fact at the same line (the old one stays, ended)."""

    value: str = text("The new value.", "杭州", max_length=MEMORY_LENGTH)


class MemoryEdit(EventEdit, EntityEdit):
    """Fields to change of any memory, as the Python API's edits take them."""


# the export's fields, in the records' order (its JSON keys, its CSV columns)
OFFICIAL_FIELDS = {
    "events": list(EventRecord.model_fields),
    "entities": list(EntityRecord.model_fields),
}

# the Python API's words for a few of pydantic's complaints, as its callers have read them
_SAID = {
    "literal_error": "must be one of {expected}",
    "string_too_short": "must be a non-empty string",
    "string_pattern_mismatch": "must be a non-empty string",
}


def checked(model: type[Contract], values: Any, where: str = "") -> Any:
    """`values` as `model`, or a MemoryInputError naming each field refused as the service's
    422 does (entities[0].kind; the message after `where`, e.g. "event 1: "), and the value
    refused."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        said = []
        for error in exc.errors()[:5]:
            name = field_path(error["loc"]) or ""
            said_so = _SAID.get(error["type"])
            words = said_so.format(**error.get("ctx", {})) if said_so else error["msg"]
            words = words.removeprefix("Value error, ")
            joint = " " if words.startswith("must") else ": "
            said.append((name, f"{joint}{words}, got {error['input']!r:.80}"))
        message = "; ".join(f"{where}{name}{words}" for name, words in said)
        raise MemoryInputError(message, field=said[0][0]) from None
