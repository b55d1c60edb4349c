"""Health, snapshots and designer config."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, TypeAdapter

from ...character_memory import lorebook_contract
from ...character_memory.contract import (
    ENTRIES,
    AttributeEntry,
    ConfigId,
    EventEntry,
    StyleEntry,
)
from .common import ID_LENGTH, Request, Response, ServiceTime, field, text
from .storable import StorableJson, storable


class Health(Response):
    status: str = field("ok while the service runs.", "ok")


class Ready(Response):
    status: str = field("ready: warm, and the store answers.", "ready")


class Batching(Response):
    statements: int = field("Statements run.", 120)
    requests: int = field("Requests they answered (more than statements: batching paid).", 410)
    largest_batch: int = field("The most requests one statement answered.", 8)
    max_batch: int = field("The limit (`--max-batch`).", 8)


class ContextWindows(Response):
    reused: int = field(
        "/turn windows taken from the save's last plan (its tip and batches unchanged).", 150
    )
    planned: int = field("Windows planned again: none kept, or the save moved since.", 10)


class WebhookState(Response):
    urls: int = field("Webhook URLs (`--webhook`).", 1)
    pending: int = field("Deliveries queued or waiting for their retry.", 0)
    delivered: int = field("Deliveries a receiver took (2xx) since the process started.", 42)
    retried: int = field("Failed attempts tried again since the process started.", 1)
    failed: int = field("Deliveries that failed every retry since the process started.", 0)
    kept: int = field(
        "Failed deliveries kept in the store to be replayed (POST /admin/webhooks/replay).", 0
    )
    last_error: str | None = field("Why the last failed attempt failed.", None)


class Replayed(Response):
    queued: int = field("Kept deliveries queued again.", 3)


class Status(Response):
    dynamic_recall: Batching = field(
        "Player-memory recall statements (/query, /turn).",
        {"statements": 120, "requests": 410, "largest_batch": 8, "max_batch": 8},
    )
    character_recall: Batching | None = field(
        "Designer-memory recall statements (/recall, /turn); null before the first.", None
    )
    extraction_queued: int = field("Extraction batches queued or being extracted.", 0)
    context_windows: ContextWindows = field(
        "Context windows asked for (/turn).", {"reused": 150, "planned": 10}
    )
    last_maintenance: Maintenance | None = field(
        "This process's last maintenance run (POST /admin/maintenance or --maintain-every).",
        None,
    )
    webhooks: WebhookState | None = field(
        "This process's webhook deliveries; null without --webhook.", None
    )


class Maintenance(Response):
    started_at: ServiceTime = field(
        "When the run started (the server's clock, with its UTC offset).",
        "2024-05-01T03:00:00+08:00",
    )
    finished_at: ServiceTime = field("When it ended.", "2024-05-01T03:00:02+08:00")
    archived: dict[str, int] = field(
        "Memories archived, by reason (weakest_share, inactive_trim, consolidated).",
        {"weakest_share": 12},
    )
    players_cleaned: int = field("Players whose memories the cleanup rules looked at.", 3)
    consolidated_entities: int = field("Entities the LLM rewrote (with an LLM only).", 0)
    context_vectors: int = field("Events given the context vectors they lacked.", 0)
    idempotency_records_forgotten: int = field(
        "Idempotency-Key records past their retention (--idempotency-hours) deleted.", 0
    )


class MaintenanceStarted(Response):
    status: Literal["running"] = field(
        "The run goes on after the answer (past the request's time budget); /status shows it "
        "when it ends.",
        "running",
    )


class Snapshot(Response):
    path: str = field("Where the read-only copy was written.", "snapshot.duckdb")
    bytes: int = field("Its size.", 5_242_880)


DESIGNER_CONFIG_EXAMPLE: dict[str, Any] = {
    "character_id": "qiyu",
    "attributes": {
        "性格特征": [
            {
                "关键词": ["温柔", "体贴", "细心"],
                "内容": "对{{user}}格外温柔",
                "强度": 5,
                "queryParams": [{"field": "intimacy", "value": 3, "operator": "gte"}],
            }
        ]
    },
}


class DesignerConfig(Response):
    """A character's designer config (what `POST /config/import` takes)."""

    character_id: str = field("The character.", "qiyu")
    attributes: dict[str, list[AttributeEntry]] = field("Per category (属性大类).", {})
    events: dict[str, list[EventEntry]] = field("Per event type.", {})
    dialogue_styles: dict[str, list[StyleEntry]] = field("Per style type.", {})


def _entries(schema: dict[str, Any]) -> None:
    """The entries as the import reads them (its checks, its messages: a 400) documented by
    their models; at least one, no group empty."""
    schema["examples"] = [DESIGNER_CONFIG_EXAMPLE]
    for kind, model in ENTRIES.items():
        entries = schema["properties"][kind]["additionalProperties"]
        entries.update(minItems=1, items=model.model_json_schema())
    schema["anyOf"] = [
        {"required": [kind], "properties": {kind: {"minProperties": 1}}} for kind in ENTRIES
    ]


class DesignerConfigIn(Request):
    """One character's designer JSON; its entries as the entry contract reads them (keys by the
    spec's names or the English ones), checked by the import."""

    model_config = ConfigDict(json_schema_extra=_entries)

    character_id: ConfigId = text("The character.", "qiyu", max_length=ID_LENGTH)
    attributes: dict[str, list[dict[str, StorableJson]]] = field(
        "Attribute entries per category (属性大类).", {}, default={}
    )
    events: dict[str, list[dict[str, StorableJson]]] = field(
        "Event entries per event type.", {}, default={}
    )
    dialogue_styles: dict[str, list[dict[str, StorableJson]]] = field(
        "Dialogue examples per style type.", {}, default={}
    )


class ConfigImported(Response):
    character_id: str = field("The character imported.", "qiyu")
    written: dict[str, int] = field("Rows written per config table.", {"character_attributes": 1})
    advice: list[str] = field(
        "Sizes outside the spec's advice (imported anyway): at most 50 lines, then one "
        "counting the rest.",
        [],
    )


def lorebook_schema(_: dict[str, Any]) -> dict[str, Any]:
    """The lorebook contract's schema as one component the guard stores, no defaults in it
    (openapi-typescript types a property with one as required)."""
    schema = TypeAdapter(lorebook_contract.Lorebook).json_schema()
    return storable(_inlined(schema, schema.pop("$defs")))


def _inlined(schema: Any, models: dict[str, Any]) -> Any:
    if isinstance(schema, dict) and "$ref" in schema:
        schema = models[schema["$ref"].removeprefix("#/$defs/")]
    if isinstance(schema, dict):
        return {key: _inlined(value, models) for key, value in schema.items() if key != "default"}
    return [_inlined(value, models) for value in schema] if isinstance(schema, list) else schema


class LorebookImported(ConfigImported):
    report: list[str] = field(
        "Each SillyTavern field with no meaning here, with the entries that set it (carried "
        "in `document`, not applied).",
        ["probability: probability is carried, not applied (recall is deterministic) (entries 1)"],
    )
    document: dict[str, Any] = field(
        "The designer JSON imported, carrying every SillyTavern field under `extensions`: "
        "keep it to export the same lorebook back (`rolemem config export --to sillytavern "
        "--json`).",
        {"character_id": "qiyu", "attributes": {}},
    )


class Lorebook(Response):
    """A SillyTavern World Info file: its entries by uid (other top-level fields pass)."""

    model_config = ConfigDict(extra="allow")

    entries: dict[str, dict[str, Any]] = field(
        "World Info entries by uid: key, content, comment, order, disable, extensions.rolemem.",
        {"0": {"uid": 0, "key": ["画画"], "content": "艺术天赋", "comment": "能力特征"}},
    )


class UnlockCell(Response):
    """One entry at one (intimacy, exploration) pair of levels."""

    entry_key: str = field("The entry (kind:id).", "event:3")
    entry_kind: str = field("attribute, event or dialogue_style.", "event")
    group_name: str | None = field("Its category or event name.", "海边")
    content: str = field("Its text.", "和木木在海边捡贝壳")
    other_fields: str = field(
        "Fields other than the levels its conditions read (judged failing here).", "scene"
    )
    intimacy: int = field("Intimacy level.", 3)
    exploration: int = field("Exploration level.", 2)
    is_unlocked: bool = field("Unlocked by a context holding only these levels.", False)
    is_unlocked_by_levels: bool = field("Its level conditions alone hold.", True)


class UnlockMatrix(Response):
    """What each intimacy/exploration level unlocks of a character's entries."""

    character_id: str = field("The character.", "qiyu")
    cells: list[UnlockCell] = field("Per entry and level pair, in entry order.", [])


class CharacterListed(Response):
    """A character the designer config holds."""

    character_id: str = field("The character.", "qiyu")
    entries: dict[str, int] = field(
        "Its entries per kind (attribute, event, dialogue_style).",
        {"attribute": 10, "dialogue_style": 2, "event": 4},
    )


class CharacterList(Response):
    """The characters of the designer config, by id."""

    characters: list[CharacterListed] = field("Every configured character, by id.", [])
