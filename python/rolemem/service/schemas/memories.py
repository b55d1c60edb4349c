"""A player's memories and the designers' official ones: listing, editing, archiving."""

from __future__ import annotations

from typing import Any, Literal

from ...dynamic_memory.contract import (
    EntityEdit,
    EntityRecord,
    EventEdit,
    EventRecord,
    Owned,
)
from ...dynamic_memory.contract import FactEdit as FactValue
from .common import (
    ID_LENGTH,
    GameTime,
    Page,
    Request,
    Response,
    field,
    flag,
    text,
)

MemoryKind = Literal["event", "entity", "events", "entities"]


class MemoryItem(Response):
    memory_type: Literal["event", "entity"] = field("event or entity.", "event")
    memory_id: int = field("Its id.", 17)
    agent_id: str = field("The character that remembers it.", "qiyu")
    user_id: str = field("The player.", "mumu")
    description: str = field("The memory.", "木木第一次走进祁煜的画廊")
    deepinsight: str | None = field("What an event says about the people.", None)
    place: str | None = field("Where an event happened.", "画廊")
    scene: str | None = field("The scene an event was extracted in.", "gallery")
    entity_name: str | None = field("The entity (entities).", None)
    entity_type: str | None = field("主体/客体/具体实体/泛化实体 (entities).", None)
    entity_kind: str | None = field("用户属性, 与主体和客体的关系, ... (entities).", None)
    keyword: str | None = field("The attribute or relation name (entities).", None)
    keywords: list[str] = field("Tags.", ["画廊"])
    importance: float | None = field("0-1 as extracted (events).", 0.5)
    strength: int = field("Grows when mentioned again and when recalled.", 1)
    recall_count: int = field("Recalls that returned it.", 0)
    save_id: int | None = field(
        "The save an event was extracted from (an entity: its newest mention's).", 2
    )
    first_line_id: int | None = field("Its first source line on the chain.", 9)
    last_line_id: int | None = field(
        "Its deepest source line: the event shows on a chain while this line is on it (an "
        "entity: its mentions' newest).",
        15,
    )
    line_ids: list[int] | None = field(
        "The lines an event came from (the transcript message the extraction named, else its "
        "batch's), or an entity's mentions, in id order; null for memories added by hand.",
        [9, 10],
    )
    is_pinned: bool = field("Never archived by cleanup.", False)
    is_on_current_branch: bool | None = field(
        "Whether the source save's current branch shows it (an entity: one of its mentions; "
        "null: no source save).",
        True,
    )
    created_at: GameTime = field("When it happened or was written.", "2021-02-01T15:00:00")
    updated_at: GameTime | None = field("When it was last written or merged.", None)
    last_recalled_at: GameTime | None = field("When a recall last returned it.", None)


class MemoryPage(Page):
    items: list[MemoryItem] = field("Newest first.", [])
    total: int = field("Memories matching the filters.", 20)


# a memory's edit, its one contract (the Python API's edits too), as requests
class OfficialMemoryEdit(Request, EventEdit):
    """Fields to change of a designer memory (its text and event fields)."""


class MemoryEdit(Request, EntityEdit, EventEdit):
    """Fields to change; an event takes the event fields, an entity the entity fields."""


class Edited(Response):
    memory_type: Literal["event", "entity", "fact"] = field("event, entity or fact.", "event")
    memory_id: int = field("Its id now (a new one when an event's text changed).", 17)
    status: Literal["updated"] = field("updated.", "updated")


class Archived(Response):
    memory_type: Literal["event", "entity", "fact"] = field("event, entity or fact.", "event")
    memory_id: int = field("The memory archived.", 17)
    status: Literal["archived"] = field("Archived (reason deleted), not destroyed.", "archived")


class ForgetRequest(Request):
    """Forget a player (with one agent, or all)."""

    agent_id: str | None = text(
        "Only this agent's memories (default: all).", "qiyu", max_length=ID_LENGTH, default=None
    )
    purge: bool = flag(
        "false: archive everything (reason forgotten); true: remove the memories, their "
        "archive and recall log for good (privacy requests), and, without agent_id, the "
        "player's saves and lines and everything kept of them (saves are not per agent: a "
        "purge with agent_id keeps them)."
    )


class Forgotten(Response):
    events: int = field("Events archived or removed.", 14)
    entities: int = field("Entities archived or removed.", 6)
    facts: int = field("Facts archived or removed.", 3)
    archived_rows: int | None = field("With purge: archive rows removed.", 20, default=None)
    recall_log_rows: int | None = field("With purge: recall log rows removed.", 0, default=None)
    deleted: dict[str, int] | None = field(
        "With purge: rows deleted per table (without agent_id also the player's saves, lines "
        "and what the memory loop and the service kept of the player).",
        {"save": 2, "line": 30, "memory_event": 14},
        default=None,
    )


class ArchivedMemory(Response):
    id: int = field("Archive row.", 3)
    memory_type: str = field("event or entity.", "event")
    memory_id: int = field("The memory's id when it was live.", 17)
    agent_id: str = field("The agent.", "qiyu")
    user_id: str | None = field("The player (null: official).", "mumu")
    reason: str = field(
        "weakest_share, inactive_trim, consolidated, deleted, edited or forgotten.", "deleted"
    )
    strength: int = field("Its strength then.", 1)
    memory: dict[str, Any] = field("The whole row as it was.", {"description": "…"})
    archived_at: GameTime = field("When.", "2024-05-02T04:00:00")


class ArchivePage(Page):
    items: list[ArchivedMemory] = field("Oldest first.", [])


class TimelineItem(Response):
    event_id: int = field("The event.", 17)
    scope: str = field("user or official.", "user")
    description: str = field("The event.", "木木第一次走进祁煜的画廊")
    deepinsight: str | None = field("The insight.", None)
    place: str | None = field("Where.", "画廊")
    scene: str | None = field("The scene.", None)
    keywords: list[str] = field("Tags.", [])
    importance: float | None = field("0-1.", 0.5)
    strength: int = field("Strength.", 1)
    save_id: int | None = field("The save it was extracted from.", None)
    first_line_id: int | None = field("First source line.", None)
    last_line_id: int | None = field("Last source line.", None)
    created_at: GameTime = field("When.", "2021-02-01T15:00:00")


class Export(Response):
    user_id: str = field("The player.", "mumu")
    agent_id: str | None = field("Only this agent's (null: all).", None)
    exported_at: GameTime = field("When this export was made.", "2024-05-02T04:00:00")
    memories: list[MemoryItem] = field("Every live memory.", [])
    archived: list[ArchivedMemory] = field("Every archived memory.", [])


# an official memory's one contract (the Python API's too), as requests: their schemas say what
# the guard stores; a body naming its agent has agent_id first (Owned, last among the bases)
class OfficialEvent(Request, EventRecord, Owned):
    """An official (designer) event memory of an agent."""


class OfficialEntity(Request, EntityRecord, Owned):
    """An official (designer) entity memory of an agent."""

    # added alone, an entity may leave its time out (written now)
    updated_at: GameTime | None = field(  # type: ignore[assignment]
        "When it was written.", None, default=None
    )


class OfficialEventRecord(Request, EventRecord):
    """An event of an official import (the export's shape)."""


class OfficialEntityRecord(Request, EntityRecord):
    """An entity of an official import (the export's shape)."""


class OfficialImport(Request, Owned):
    """An agent's official memories, as `GET /official/{agent_id}` exports them."""

    events: list[OfficialEventRecord] = field("Events to add.", [], default=[])
    entities: list[OfficialEntityRecord] = field("Entities to add.", [], default=[])


class OfficialExport(Response):
    agent_id: str = field("The agent.", "qiyu")
    events: list[dict[str, Any]] = field("Its official events (the import's shape).", [])
    entities: list[dict[str, Any]] = field("Its official entities.", [])


class OfficialImported(Response):
    events: int = field("Events added.", 2)
    entities: int = field("Entities added.", 1)


class CreatedEvent(Response):
    event_id: int = field("The new event.", 31)


class CreatedEntity(Response):
    entity_id: int = field("The new entity.", 8)


class FactItem(Response):
    """A fact a character holds about the player, as resolved on the save's chain."""

    fact_id: int = field("The fact.", 31)
    subject: str = field("Whom it is about.", "阿远")
    attribute: str = field("The slot's attribute (an alias mapped: 居住地 is 住址).", "住址")
    stated_attribute: str = field("The attribute as it was stated.", "居住地")
    value: str = field("The value.", "北京")
    cardinality: Literal["one", "many"] = field(
        "`one`: a later value replaces it; `many`: values add up until one is superseded.", "one"
    )
    save_id: int | None = field("The save it was extracted on.", 2)
    line_id: int | None = field("The line stating it.", 21)
    line_ids: list[int] = field("The lines of the message stating it.", [21])
    is_current: bool = field("No later fact on the chain ended it.", True)
    ended_by_fact_id: int | None = field("The later fact that ended it (history).", None)
    ended_at_line_id: int | None = field("The line of the fact that ended it (history).", None)
    created_at: GameTime = field("When it was written.", "2024-05-01T20:05:00")


class KnownItem(Response):
    """One memory a character holds about the player on a save."""

    memory_id: int = field("The fact, entity or event.", 31)
    subject: str | None = field("A fact's subject, an entity's name (null: events).", "阿远")
    attribute: str | None = field("A fact's attribute, an entity's keyword.", "住址")
    content: str = field("A fact's value, an entity's or an event's description.", "北京")
    strength: int | None = field("An entity's or an event's strength (null: facts).", None)
    save_id: int | None = field(
        "The save a fact or an event was extracted on (an entity: its newest visible mention's).",
        2,
    )
    line_ids: list[int] | None = field(
        "The lines it came from (an entity: its visible mentions'; null: added by hand).", [21]
    )


class Knowledge(Response):
    """What a character holds about the player on a save."""

    facts: list[KnownItem] = field("The facts current on the save's branch.", [])
    entities: list[KnownItem] = field("The player's entities, strongest first.", [])
    events: list[KnownItem] = field(
        "The strongest events the save may see (its branch, the player's other playthroughs).",
        [],
    )


# a fact's edit, its one contract (the Python API's change_fact too), as a request
class FactEdit(Request, FactValue):
    """A fact's new value: stored as a new fact at the same line (the old one stays, ended)."""
