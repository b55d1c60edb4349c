"""An official (designer) memory, once: an event's and an entity's record as the Python API
imports them (Official.import_official) and the service reads and documents (its official
routes' bodies, by subclassing), with the limits and types they are written in (the service's
schemas share them: service.schemas.common). Types and sizes only: the store's checks and the
SQL models judge the rest."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints

from ..memory_builder.contract import ID_LENGTH, NAME_LENGTH, Contract, GameTime, field, text
from ..schema.memory import ENTITY_KINDS, ENTITY_TYPES

# length limits (characters) besides a line's (memory_builder.contract)
MEMORY_LENGTH = 2000
KEYWORD_LENGTH = 64
MAX_KEYWORDS = 50

EntityType = Literal[ENTITY_TYPES]  # type: ignore[valid-type]
EntityKind = Literal[ENTITY_KINDS]  # type: ignore[valid-type]
# a share from 0 to 1 (importance, feedback, a score): a JSON number, not a boolean, kept to
# 12 decimals (a value nearer 0 is 0: PostgreSQL's arithmetic refuses an underflow)
Share = Annotated[
    float, Field(ge=0, le=1, strict=True), AfterValidator(lambda value: round(value, 12))
]
# a tag: not blank, at most KEYWORD_LENGTH characters
Keywords = list[
    Annotated[str, StringConstraints(min_length=1, max_length=KEYWORD_LENGTH, pattern=r"\S")]
]
AGENT_ID = "The agent whose memories these are (the memory owner: required here)."


class Owned(Contract):
    """The agent an official memory belongs to (first in a body that names it)."""

    agent_id: str = text(AGENT_ID, "qiyu", max_length=ID_LENGTH)


class EventRecord(Contract):
    """An official event as the export writes it and an import reads it."""

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
    """An official entity memory as the export writes it and an import reads it."""

    entity_name: str = text("The entity.", "祁煜", max_length=NAME_LENGTH)
    entity_type: EntityType = field("Its type.", "主体")
    kind: EntityKind = field("Attribute or relation kind.", "特殊实体属性")
    keyword: str = text("The attribute or relation name.", "职业", max_length=KEYWORD_LENGTH)
    description: str = text("The memory.", "是画家", max_length=MEMORY_LENGTH)
    updated_at: GameTime = field("When it was written.", "2020-01-01T10:00:00")


class OfficialMemories(Owned):
    """An agent's official memories, as the export gives them."""

    events: Sequence[EventRecord] = field("Events to add.", [], default=[])
    entities: Sequence[EntityRecord] = field("Entities to add.", [], default=[])
