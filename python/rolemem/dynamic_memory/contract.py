"""An official (designer) memory, once: an event's and an entity's record as the Python API
imports them (Official.import_official) and the service reads and documents (its official
routes' bodies, by subclassing), with the limits and types they are written in (the service's
schemas share them: service.schemas.common). Types and sizes only: the store's checks and the
SQL models judge the rest."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    field_validator,
)

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
PYTHON_API = "python_api"
AGENT_ID = "The agent whose memories these are (the memory owner: required here)."


class Owned(Contract):
    """The agent an official memory belongs to (first in a body that names it)."""

    agent_id: str = text(AGENT_ID, "qiyu", max_length=ID_LENGTH)


class Record(Contract):
    """A record's time, read by the Python API (validation context PYTHON_API) as
    datetime.fromisoformat reads it (a day alone: its midnight), as it always has; the
    service's, only as its schema says."""

    @field_validator("created_at", "updated_at", mode="before", check_fields=False)
    @classmethod
    def iso_time(cls, value: Any, info: ValidationInfo) -> Any:
        if info.context == PYTHON_API and isinstance(value, str):
            with contextlib.suppress(ValueError):
                return datetime.fromisoformat(value)
        return value


class EventRecord(Record):
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


class EntityRecord(Record):
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


# the export's fields, in the records' order (its JSON keys, its CSV columns)
OFFICIAL_FIELDS = {
    "events": list(EventRecord.model_fields),
    "entities": list(EntityRecord.model_fields),
}


def complaints(exc: ValidationError) -> tuple[str, str]:
    """The contract's complaints as (message, the first one's field), each naming its field
    (entities[0].kind) and the value refused."""
    said = [
        ("".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in e["loc"]).lstrip("."), e)
        for e in exc.errors()
    ]
    return "; ".join(f"{n}: {e['msg']}, got {e['input']!r:.80}" for n, e in said[:5]), said[0][0]
