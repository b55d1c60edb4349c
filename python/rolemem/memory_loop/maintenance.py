"""Maintenance: cleanup archives the weakest memories of players due (by the SQL rules),
consolidation asks the LLM to merge entity descriptions, context vectors are filled in."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..dynamic_memory import SETTING_SEEDS, DynamicMemory, naive_time
from ..dynamic_memory.archive import TABLES, archive
from ..dynamic_memory.entities import rewrite_mentions
from ..dynamic_memory.responses import from_json
from ..memory_builder import history
from ..sql.project import compose, write_sql
from .extraction_reply import consolidate
from .llm import ChatModel
from .reports import MaintenanceReport
from .sql import MAINTENANCE_SETTINGS, MAINTENANCE_SQL

_SOURCES = ("memory_event", "memory_entity", "memory_loop_state", "memory_maintenance_run")


class Maintenance:
    """Cleanup, consolidation, context vectors."""

    def __init__(
        self, memory: DynamicMemory, llm: ChatModel | None, settings: Mapping[str, Any]
    ) -> None:
        self.memory, self.llm, self.settings = memory, llm, settings

    def maintain(
        self,
        *,
        now: datetime | None = None,
        progress: Callable[[str, int, int], None] | None = None,
        write: Callable[[Callable[[Any], Any]], Any] | None = None,
    ) -> MaintenanceReport:
        """Cleanup (archive the weakest memories of players due, per the SQL rules), then, with
        an LLM, consolidate entities whose descriptions were merged since the last time; then,
        with an embedder, give events stored without a context vector theirs.
        `progress(stage, done, total)` is called as each stage ('cleanup', 'consolidation',
        'context vectors') advances (the CLI draws bars with it). `write(work)` runs the
        cleanup's and each consolidation batch's `work(cur)` in one transaction and answers what
        it answers (default: the store's; the service's retries one that met a conflicting
        write)."""
        now = naive_time(now or datetime.now(), "now")
        step = progress or (lambda stage, done, total: None)
        step("cleanup", 0, 1)
        report = MaintenanceReport()
        params = {"now": now, **{name: self.settings[name] for name in MAINTENANCE_SETTINGS}}
        store = self.memory.store
        sql = compose(
            "int_memory_maintenance_due",
            {"int_memory_maintenance_requests": MAINTENANCE_SQL},
            "select quotas, candidates from int_memory_maintenance_due",
            # the sources are the store's tables of their names
            existing=(*SETTING_SEEDS, *_SOURCES),
            engine=store.name,
        )
        write = write or self._in_transaction

        def due(cur: Any) -> dict[str, Any]:
            # the candidates as the cleanup's transaction sees them: on DuckDB read in it, so a
            # memory pinned (or otherwise changed) after it began makes the archive a conflict,
            # which the writer may retry (reading them again); on PostgreSQL read just before
            if store.name != "duckdb":
                return store.records(sql, params, json_as_text=False)[0]
            return history.records(cur, sql, params)[0]

        def unpinned(cur: Any, candidates: list[Any]) -> list[Any]:
            # each player's candidates still unpinned, locked (macro lock_unpinned_memories):
            # on PostgreSQL a pin committed since the read above keeps its memory
            ids: dict[tuple[str, str], list[int]] = {}
            for item in candidates:
                ids.setdefault((item["memory_type"], item["user_id"]), []).append(item["memory_id"])
            kept: set[tuple[str, int]] = set()
            for (memory_type, user_id), memory_ids in sorted(ids.items()):
                lock = write_sql("lock_unpinned_memories", TABLES[memory_type], engine=store.name)
                found = cur.execute(lock, {"user_id": user_id, "ids": memory_ids}).fetchall()
                kept.update((memory_type, memory_id) for (memory_id,) in found)
            return [item for item in candidates if (item["memory_type"], item["memory_id"]) in kept]

        def clean(cur: Any) -> tuple[list[Any], dict[tuple[str, str], list[int]]]:
            row = due(cur)
            quotas, candidates = from_json(row["quotas"] or []), list(row["candidates"] or [])
            candidates = unpinned(cur, candidates)
            by_kind: dict[tuple[str, str], list[int]] = {}
            for item in candidates:
                by_kind.setdefault((item["memory_type"], item["reason"]), []).append(
                    item["memory_id"]
                )
            for (memory_type, reason), ids in sorted(by_kind.items()):
                archive(cur, memory_type, reason, ids, now, engine=store.name)
            archived = Counter((item["agent_id"], item["user_id"]) for item in candidates)
            for quota in quotas:
                cur.execute(
                    write_sql("insert_maintenance_run", engine=store.name),
                    {
                        "agent_id": quota["agent_id"],
                        "user_id": quota["user_id"],
                        "rule": quota["rule"],
                        "memory_count": quota["memory_count"],
                        "archived": archived[(quota["agent_id"], quota["user_id"])],
                        "now": now,
                    },
                )
            return quotas, by_kind

        quotas, by_kind = write(clean)  # the attempt that committed
        for (memory_type, reason), ids in sorted(by_kind.items()):
            report.archived[reason] = report.archived.get(reason, 0) + len(ids)
            report.archived_ids += [(memory_type, i) for i in ids]
        report.players_cleaned = len(quotas)
        step("cleanup", 1, 1)
        if self.llm is not None:
            report.consolidated_entities = self._consolidate(now, step, write)
        report.context_vectors = self.memory.fill_context_vectors(
            lambda done, total: step("context vectors", done, total)
        )
        return report

    def _in_transaction(self, work: Callable[[Any], Any]) -> Any:
        with self.memory.store.transaction() as cur:
            return work(cur)

    def _consolidate(
        self,
        now: datetime,
        step: Callable[[str, int, int], None],
        write: Callable[[Callable[[Any], Any]], Any],
    ) -> int:
        """Entities with merged descriptions whose mentions lie on one chain, in batches to
        the LLM; each batch rewritten in one transaction (each entity's mentions replaced by
        one citing all their lines), the old rows archived with reason 'consolidated'."""
        assert self.llm is not None
        store = self.memory.store
        # merged entities whose mentions lie on one chain (the rewrite cites all their lines;
        # those spread over branches keep each branch's fragments)
        entities = self.memory.consolidable_entities()
        sources = {entity["id"]: entity for entity in entities}
        size = max(1, self.settings["consolidation_batch_size"])
        done = 0
        step("consolidation", 0, len(entities))
        for start in range(0, len(entities), size):
            batch = entities[start : start + size]
            merged = consolidate(self.llm, batch, max_attempts=self.settings["llm_max_attempts"])
            if not merged:
                continue

            def rewrite(tx: Any, merged: dict[Any, Any] = merged) -> None:
                archive(
                    tx, "entity", "consolidated", list(merged), now, keep=True, engine=store.name
                )
                tx.execute(
                    write_sql("consolidate_entity_descriptions", engine=store.name),
                    {"ids": list(merged), "texts": list(merged.values()), "now": now},
                )
                for entity_id in merged:
                    rewrite_mentions(tx, entity_id, sources[entity_id], now, engine=store.name)

            write(rewrite)
            done += len(merged)
            step("consolidation", min(start + size, len(entities)), len(entities))
        return done
