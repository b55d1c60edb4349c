"""Maintenance runs of the service (`POST /admin/maintenance` and the schedule): the memory
loop's cleanup, consolidation and missing context vectors, then the idempotency records past
their retention swept (`--idempotency-hours`), one run at a time across every
process of the store, on the maintenance worker; counted in the metrics, announced by webhook."""

from __future__ import annotations

import logging
from concurrent.futures import Future
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...errors import BusyError, ConflictError
from . import idempotency

if TYPE_CHECKING:
    from .state import Store

log = logging.getLogger(__name__)


_UNDER_WAY = (
    "a maintenance run is under way (here or in another process of the store); "
    "try again when it ends"
)


_PARTLY_DONE = (
    "maintenance kept meeting conflicting writes; what it finished first stays done (cleanup, "
    "then each consolidation batch, then the idempotency sweep commit one by one): run it "
    "again to finish"
)


def start_maintenance(store: Store) -> Future[dict[str, Any]]:
    """A maintenance run on the maintenance worker (its future: the run's report, or
    ConflictError while another runs). One asked while a run of this process is queued or
    running is refused at once, as one of another process is (the worker runs one at a time:
    it would wait, then run again for nothing)."""
    if not store.maintenance_asked.acquire(blocking=False):
        store.metrics.maintenance_runs.labels("skipped").inc()
        refused: Future[dict[str, Any]] = Future()
        refused.set_exception(ConflictError(_UNDER_WAY))
        return refused

    def run() -> dict[str, Any]:
        try:
            return maintain(store)
        finally:
            store.maintenance_asked.release()

    try:
        return store.maintenance.submit(run)
    except BaseException:
        store.maintenance_asked.release()
        raise


def maintain(store: Store) -> dict[str, Any]:
    """One maintenance run (the module docstring's): ConflictError while another runs."""
    with store.engine.only_one("maintenance") as mine:
        if not mine:
            store.metrics.maintenance_runs.labels("skipped").inc()
            raise ConflictError(_UNDER_WAY)
        started = datetime.now()
        try:
            # its writes retried as the store's (store.write): a cleanup meeting a delete
            report = store.loop.maintain(now=started, write=store.write)
            # a write of its own (all or nothing); a key still within its retention stays
            forgotten = store.write(
                idempotency.forget_expired, hours=store.settings.idempotency_hours
            )
        except Exception as exc:
            store.metrics.maintenance_runs.labels("failed").inc()
            if isinstance(exc, BusyError):
                # each step commits on its own: the generic busy answer says nothing changed
                raise BusyError(_PARTLY_DONE) from None
            raise
        finished = datetime.now()
    store.metrics.maintenance_runs.labels("finished").inc()
    store.last_maintenance = {
        "started_at": started,
        "finished_at": finished,
        "archived": dict(report.archived),
        "players_cleaned": report.players_cleaned,
        "consolidated_entities": report.consolidated_entities,
        "context_vectors": report.context_vectors,
        "idempotency_records_forgotten": forgotten,
    }
    if store.webhooks is not None:
        store.webhooks.emit("maintenance.finished", store.last_maintenance)
    log.info(
        "maintenance: %d players cleaned, %s archived, %d entities consolidated",
        report.players_cleaned,
        report.archived,
        report.consolidated_entities,
    )
    return store.last_maintenance
