"""Official (designer) memories per agent: export and import, as JSON or CSV."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from .base import Context
from .checks import MemoryInputError
from .contract import OFFICIAL_FIELDS, OfficialMemories, checked
from .edits import Edits
from .entities import Entities
from .store import Events


class Official:
    """The designers' memories of an agent, in and out."""

    def __init__(self, context: Context, events: Events, entities: Entities, edits: Edits) -> None:
        self.context, self.events, self.entities, self.edits = context, events, entities, edits

    def export_official(self, agent_id: str) -> dict[str, Any]:
        """The agent's official memories as JSON-ready data (timestamps ISO 8601)."""
        listed = {"events": self.edits.list_events, "entities": self.edits.list_entities}
        return {"agent_id": agent_id} | {
            name: [
                {k: row[k].isoformat() if isinstance(row[k], datetime) else row[k] for k in fields}
                for row in listed[name](agent_id=agent_id, scope="official")
            ]
            for name, fields in OFFICIAL_FIELDS.items()
        }

    def export_official_csv(self, agent_id: str, directory: str | Path) -> None:
        """The agent's official memories as `events.csv` and `entities.csv` (keywords as
        JSON text), the same fields as `export_official`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        doc = self.export_official(agent_id)
        for name, fields in OFFICIAL_FIELDS.items():
            with open(directory / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(handle, fieldnames=fields, lineterminator="\n")
                writer.writeheader()
                for row in doc[name]:
                    writer.writerow(
                        {
                            k: json.dumps(v, ensure_ascii=False) if k == "keywords" else v
                            for k, v in row.items()
                        }
                    )

    def import_official_csv(self, agent_id: str, directory: str | Path) -> tuple[int, int]:
        """Add official memories from `export_official_csv`'s two files."""
        directory = Path(directory)
        doc: dict[str, Any] = {"agent_id": agent_id}
        for name in ("events", "entities"):
            with open(directory / f"{name}.csv", encoding="utf-8", newline="") as handle:
                rows = list(csv.DictReader(handle))
            for index, row in enumerate(rows, start=2):
                for key, value in list(row.items()):
                    if value == "":  # an empty cell: not given
                        del row[key]
                    elif key == "keywords":
                        try:
                            row[key] = json.loads(value)
                        except json.JSONDecodeError:
                            raise MemoryInputError(
                                f"{name}.csv line {index}: keywords is not a JSON list"
                            ) from None
                    elif key in ("importance", "feedback"):
                        row[key] = float(value)
            doc[name] = rows
        return self.import_official(doc)

    def import_official(
        self, doc: Mapping[str, Any], *, progress: Callable[[int, int], None] | None = None
    ) -> tuple[int, int]:
        """Add official memories from `export_official`'s format. Events are checked all
        before any is written; returns (events, entities) added."""
        self.context.writable()
        if not isinstance(doc, Mapping):
            raise MemoryInputError(
                f"the official memories must be a mapping with agent_id, events and entities, "
                f"got {type(doc).__name__}"
            )
        official = checked(OfficialMemories, {**doc, **_times(doc)})
        owner = {"agent_id": official.agent_id, "scope": "official", "user_id": None}
        events = [{**event.model_dump(), **owner} for event in official.events]
        entity_params = [  # as checked_entity gives them
            {**e.model_dump(exclude={"updated_at"}), **owner, "user_name": None, "at": e.updated_at}
            for e in official.entities
        ]
        # every check before any write
        rows, vectors = self.events.prepare_events(events, progress)
        with self.context.store.transaction() as cur:
            self.events.write_events(cur, rows, vectors)
            for params in entity_params:
                self.entities.write_entity(cur, params)
        return len(events), len(entity_params)


def _times(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The records' times as the Python API reads them: text as datetime.fromisoformat does
    (a day alone: its midnight; anything else is left to the contract to name)."""
    read = {}
    for name, key in (("events", "created_at"), ("entities", "updated_at")):
        records = doc.get(name)
        if isinstance(records, list):
            read[name] = [
                {**record, key: _iso_time(record[key])}
                if isinstance(record, Mapping) and isinstance(record.get(key), str)
                else record
                for record in records
            ]
    return read


def _iso_time(value: str) -> datetime | str:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return value
