"""What `/ready` waits for: the store reachable with every table rolemem's schema defines, the
designer config loaded, the embedder (unless keyword-only) warm. The warm-up runs on a daemon
thread of its own, so the event loop answers `/health` meanwhile and a stopping service
never waits for a model load."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

from ...errors import BusyError
from ...schema import APP_TABLES, CONFIG_TABLES
from ...schema.memory import MEMORY_TABLES
from ...sql.project import write_sql
from ...text.tokens import extract_keywords, search_keywords

log = logging.getLogger(__name__)

# every table the service reads or writes (the vectors' table is made apart: its width is the
# embedder's)
NEEDED_TABLES = frozenset(
    [table.name for table in (*APP_TABLES, *CONFIG_TABLES, *MEMORY_TABLES)]
    + ["memory_event_embedding", "official_event_embedding"]
)


def warm_tokenizer() -> None:
    extract_keywords("预热一下分词")
    search_keywords("预热一下分词")


class NotReady(BusyError):
    """The service is not ready for requests yet (or the store stopped answering)."""


def check_schema(engine: Any) -> None:
    """NotReady naming the tables rolemem needs that the store lacks (one catalog statement):
    none means the store is reachable and its schema is rolemem's."""
    with engine.reading() as cur:
        rows = cur.execute(write_sql("store_table_names", engine=engine.name)).fetchall()
    missing = sorted(NEEDED_TABLES - {row[0] for row in rows})
    if missing:
        raise NotReady(
            f"the store lacks {', '.join(missing)}: run `rolemem init-db` on it (the service "
            "creates no game tables on a shared database)"
        )


# a warm-up step: its name, what it is doing while it runs, the work
Step = tuple[str, str, Callable[[], object]]


class Readiness:
    """The warm-up's steps, each waiting (saying what it does), failed (with the error) or done."""

    def __init__(self, steps: Sequence[Step]) -> None:
        self._steps = list(steps)
        self._lock = threading.Lock()
        self._reasons: dict[str, str] = {name: doing for name, doing, _ in self._steps}
        self._stopped = False

    @property
    def reason(self) -> str | None:
        """Why the service is not ready (the first step not done: the reasons keep the steps'
        order), or None."""
        with self._lock:
            return next((f"{name}: {why}" for name, why in self._reasons.items()), None)

    def stop(self) -> None:
        """The service stops: a step failing from here on (its store closed) is not news."""
        self._stopped = True

    def start(self) -> None:
        threading.Thread(target=self.warm_up, name="rolemem-warm-up", daemon=True).start()

    def warm_up(self) -> None:
        """Each step in order; a failed step is logged and stays the reason (no retry: a store
        or model that fails at start-up needs the operator)."""
        for name, _, step in self._steps:
            try:
                step()
            except Exception as exc:
                with self._lock:
                    self._reasons[name] = f"failed: {exc}"
                if not self._stopped:  # stopping, a step fails as its store closes: not news
                    log.error("not ready: %s failed: %s: %s", name, type(exc).__name__, exc)
                return
            with self._lock:
                del self._reasons[name]
