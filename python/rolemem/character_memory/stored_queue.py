"""The sticky recall queue of one save x character kept in the store (table
character_recall_queue), so every service process sharing a database, and a restart, continue
the same countdown. One read before the recall and one upsert after it (none for a dry run):
the statements are macros read_recall_queue and writes/update_recall_queue (else
write_recall_queue)."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from ..sql.project import render_macro, update_else_upsert
from .recall import CharacterMemory, RecallResult, recall_turn


@functools.cache  # rendered once per engine
def _read_sql(engine: str) -> str:
    return render_macro("read_recall_queue", engine=engine)


class StoredRecallSession:
    """The recalls of one save x character: the turn counter and the sticky queue read from
    the store before each recall and written back after it. `store`: an engine
    (rolemem.engines)."""

    def __init__(self, memory: CharacterMemory, store: Any, save_id: int, user_id: str) -> None:
        self.memory = memory
        self.store = store
        self.save_id = save_id
        self.user_id = user_id

    def recall(
        self,
        text: str,
        context: Mapping[str, Any] | None = None,
        *,
        require_match: bool = True,
        user_name: str | None = None,
        char_name: str | None = None,
        dry_run: bool = False,
        explain: bool = False,
        template: str | None = None,
    ) -> RecallResult:
        """As RecallSession.recall; the counter and queue are the store's."""
        key = {"save_id": self.save_id, "character_id": self.memory.character_id}
        with self.memory.save_lock(self.save_id):
            rows = self.store.run(_read_sql(self.store.name), {**key, "user_id": self.user_id})
            turn, queue = (int(rows[0][0]), json.loads(rows[0][1])) if rows else (0, [])
            result, queue = recall_turn(
                self.memory,
                turn + 1,
                queue,
                text,
                context,
                require_match=require_match,
                user_name=user_name,
                char_name=char_name,
                explain=explain,
                template=template,
            )
            if not dry_run:
                values = {
                    **key,
                    "user_id": self.user_id,
                    "turn_number": result.turn,
                    "queue": json.dumps(queue, separators=(",", ":")),
                    "now": datetime.now(),
                }
                with self.store.transaction() as cur:
                    update_else_upsert(
                        cur,
                        "update_recall_queue",
                        "write_recall_queue",
                        values,
                        engine=self.store.name,
                    )
        return result
