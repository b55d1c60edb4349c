"""The sticky recall queue of one save x character kept in the store (table
character_recall_queue), so every service process sharing a database, and a restart, continue
the same countdown. One read before the recall and one upsert after it (none for a dry run):
the statements are macros read_recall_queue and writes/update_recall_queue (else
write_recall_queue)."""

from __future__ import annotations

import json
import threading
from datetime import datetime
from typing import Any

from ..sql.project import update_else_upsert, write_sql
from .recall import CharacterMemory, RecallSession


class StoredRecallSession(RecallSession):
    """The recalls of one save x character: the turn counter and the sticky queue read from
    the store before each recall and written back after it (`recall` as RecallSession's;
    the counter is the store's, so the in-memory `turn` is not kept here). `store`: an engine
    (rolemem.engines)."""

    def __init__(self, memory: CharacterMemory, store: Any, save_id: int, user_id: str) -> None:
        self.memory = memory
        self.store = store
        self.save_id = save_id
        self.user_id = user_id
        self._key = {"save_id": save_id, "character_id": memory.character_id, "user_id": user_id}

    def _held(self) -> threading.Lock:
        return self.memory.save_lock(self.save_id)

    def _state(self) -> tuple[int, list[dict[str, Any]]]:
        rows = self.store.run(write_sql("read_recall_queue", engine=self.store.name), self._key)
        return (int(rows[0][0]), json.loads(rows[0][1])) if rows else (0, [])

    def _keep(self, turn: int, queue: list[dict[str, Any]]) -> None:
        values = {
            **self._key,
            "turn_number": turn,
            "queue": json.dumps(queue, separators=(",", ":")),
            "now": datetime.now(),
        }
        with self.store.transaction() as cur:
            update_else_upsert(
                cur, "update_recall_queue", "write_recall_queue", values, engine=self.store.name
            )
