"""Official (designer) memories per agent: export and import, as JSON or CSV."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .base import Context
from .checks import MemoryInputError, _iso_time, _records, checked_entity, checked_text
from .edits import Edits
from .entities import Entities
from .sql import _OFFICIAL_FIELDS
from .store import Events


class Official:
    """The designers' memories of an agent, in and out."""

    def __init__(self, context: Context, events: Events, entities: Entities, edits: Edits) -> None:
        self.context, self.events, self.entities, self.edits = context, events, entities, edits

    def export_official(self, agent_id: str) -> dict[str, Any]:
        """The agent's official memories as JSON-ready data (timestamps ISO 8601)."""

        def plain(rows: list[dict[str, Any]], keep: Sequence[str]) -> list[dict[str, Any]]:
            return [
                {k: (row[k].isoformat() if isinstance(row[k], datetime) else row[k]) for k in keep}
                for row in rows
            ]

        return {
            "agent_id": agent_id,
            "events": plain(
                self.edits.list_events(agent_id=agent_id, scope="official"),
                _OFFICIAL_FIELDS["events"],
            ),
            "entities": plain(
                self.edits.list_entities(agent_id=agent_id, scope="official"),
                _OFFICIAL_FIELDS["entities"],
            ),
        }

    def export_official_csv(self, agent_id: str, directory: str | Path) -> None:
        """The agent's official memories as `events.csv` and `entities.csv` (keywords as
        JSON text), the same fields as `export_official`."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        doc = self.export_official(agent_id)
        for name, rows in (("events", doc["events"]), ("entities", doc["entities"])):
            with open(directory / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
                writer = csv.DictWriter(
                    handle, fieldnames=_OFFICIAL_FIELDS[name], lineterminator="\n"
                )
                writer.writeheader()
                for row in rows:
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
                    if value == "":
                        row[key] = None
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
        agent_id = checked_text(doc.get("agent_id"), "agent_id")
        events = [
            {
                **e,
                "agent_id": agent_id,
                "scope": "official",
                "user_id": None,
                "created_at": _iso_time(e, "created_at", f"events[{index}]"),
            }
            for index, e in enumerate(_records(doc, "events"))
        ]
        entity_params = []
        for index, entity in enumerate(_records(doc, "entities")):
            unknown = set(entity) - set(_OFFICIAL_FIELDS["entities"])
            if unknown:
                raise MemoryInputError(f"entities[{index}]: unknown fields {sorted(unknown)}")
            try:
                entity_params.append(
                    checked_entity(
                        scope="official",
                        user_id=None,
                        agent_id=agent_id,
                        entity_name=entity.get("entity_name"),
                        entity_type=entity.get("entity_type"),
                        kind=entity.get("kind"),
                        keyword=entity.get("keyword"),
                        description=entity.get("description"),
                        updated_at=_iso_time(entity, "updated_at", f"entities[{index}]"),
                        user_name=None,
                    )
                )
            except MemoryInputError as exc:
                raise MemoryInputError(f"entities[{index}]: {exc}") from None
        # every check before any write
        rows, vectors = self.events.prepare_events(events, progress)
        with self.context.store.transaction() as cur:
            self.events.write_events(cur, rows, vectors)
            for params in entity_params:
                self.entities.write_entity(cur, params)
        return len(events), len(entity_params)
