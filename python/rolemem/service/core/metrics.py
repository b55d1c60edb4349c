"""The service's metrics in Prometheus' text format (prometheus-client), families prefixed
`rolemem_`, one registry per app. With several worker processes (`rolemem serve --workers N`
on PostgreSQL) the values live in `PROMETHEUS_MULTIPROC_DIR`, as prometheus-client's
multiprocess mode keeps them, and any worker's /metrics answers for all of them."""

from __future__ import annotations

import functools
import logging
import os
import time
from collections.abc import Iterator, Sequence
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ...sql.project import write_sql

log = logging.getLogger(__name__)

CONTENT_TYPE = CONTENT_TYPE_LATEST
MULTIPROCESS_VARIABLE = "PROMETHEUS_MULTIPROC_DIR"
# requests take milliseconds; a recall past its budget seconds
_REQUEST_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# an extraction or an LLM call takes seconds
_LLM_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)
# why the gate refuses a request (core/gate.py)
REFUSALS = ("key", "players", "rate_key", "rate_player")


class Metrics:
    """The families, and what the service calls to move them; for a scrape, the collector
    of them all, rolemem_memories read from the engine `memories_of` (none: the family is
    left out)."""

    def __init__(self) -> None:
        # no `_created` series (multiprocess mode has none): one process or several expose
        # the same families (a setting of prometheus-client for the whole process)
        disable_created_metrics()
        self.multiprocess = bool(os.environ.get(MULTIPROCESS_VARIABLE))
        self.registry = CollectorRegistry(auto_describe=True)
        # in multiprocess mode the values are files: nothing registers, a scrape reads them
        into = None if self.multiprocess else self.registry
        counter = functools.partial(Counter, registry=into)
        histogram = functools.partial(Histogram, registry=into)
        self.request_seconds = histogram(
            "rolemem_http_request_duration_seconds",
            "Time from a request's arrival to its answer, by method and route template.",
            ["method", "route"],
            buckets=_REQUEST_BUCKETS,
        )
        self.requests = counter(
            "rolemem_http_requests",
            "Requests answered, by method, route template and status.",
            ["method", "route", "status"],
        )
        self.extraction_attempts = counter(
            "rolemem_extraction_attempts",
            "Extraction jobs run (a save x character's due batches, retries included).",
        )
        self.extraction_failures = counter(
            "rolemem_extraction_failures", "Extraction jobs that failed."
        )
        self.extraction_seconds = histogram(
            "rolemem_extraction_duration_seconds",
            "Time an extraction job took (LLM calls and the writes).",
            buckets=_LLM_BUCKETS,
        )
        self.extraction_queue = Gauge(
            "rolemem_extraction_queue_depth",
            "Extraction jobs queued or running.",
            registry=into,
            multiprocess_mode="livesum",
        )
        self.llm_seconds = histogram(
            "rolemem_llm_call_duration_seconds",
            "Time of one LLM chat completion, by outcome (ok, error).",
            ["outcome"],
            buckets=_LLM_BUCKETS,
        )
        self.maintenance_runs = counter(
            "rolemem_maintenance_runs",
            "Maintenance runs, by outcome (finished, failed, skipped: another was under way).",
            ["outcome"],
        )
        self.refusals = counter(
            "rolemem_refusals",
            "Requests refused by the gate, by reason (key: no key or one the route does not "
            "allow; players: a player outside the key's glob; rate_key, rate_player: over a "
            "rate limit).",
            ["reason"],
        )
        # the known outcomes at 0 from the start: every family shows before its first event
        for outcome in ("ok", "error"):
            self.llm_seconds.labels(outcome)
        for outcome in ("finished", "failed", "skipped"):
            self.maintenance_runs.labels(outcome)
        self._refused = {reason: self.refusals.labels(reason) for reason in REFUSALS}
        # each label set's child looked up once (labels() takes a lock and builds a key)
        self._timing = functools.cache(self.request_seconds.labels)
        self._counted = functools.cache(self.requests.labels)
        self.memories_of: Any = None  # the engine whose memories a scrape counts

    # -- what the service calls ------------------------------------------------------------

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        """Once per request: one histogram observation, one counter (children cached)."""
        self._timing(method, route).observe(seconds)
        self._counted(method, route, str(status)).inc()

    def refused(self, reason: str) -> None:
        """A request the gate refused (one of REFUSALS)."""
        self._refused[reason].inc()

    def extraction(self, seconds: float, failed: bool) -> None:
        self.extraction_attempts.inc()
        self.extraction_seconds.observe(seconds)
        if failed:
            self.extraction_failures.inc()

    # -- a scrape ----------------------------------------------------------------------------

    def exposition(self) -> bytes:
        """The text format of every family (blocking: the memories' statement runs here)."""
        return generate_latest(self)

    def collect(self) -> Iterator[Metric]:
        """Every family, for one scrape (a collector of its own: generate_latest reads it,
        no registry claims its names)."""
        values: Collector = (
            multiprocess.MultiProcessCollector(None) if self.multiprocess else self.registry
        )
        yield from values.collect()
        engine = self.memories_of
        if engine is None:
            return
        family = GaugeMetricFamily(
            "rolemem_memories",
            "Memories per kind (event, entity, archived): exact on DuckDB, the planner's "
            "estimate on PostgreSQL.",
            labels=["kind"],
        )
        try:
            with engine.reading() as cur:
                rows = cur.execute(write_sql("count_memories", engine=engine.name)).fetchall()
        except Exception as exc:  # a scrape still answers the other families
            log.warning("memories per kind not read: %s: %s", type(exc).__name__, exc)
            return
        for kind, count in rows:
            family.add_metric([str(kind)], int(count))
        yield family

    def process_stopped(self) -> None:
        """This worker's live gauges leave the sums (multiprocess mode)."""
        if self.multiprocess:
            multiprocess.mark_process_dead(os.getpid())


class TimedChatModel:
    """An LLM whose every chat completion is timed into `metrics` (the ChatModel protocol)."""

    def __init__(self, llm: Any, metrics: Metrics) -> None:
        self.llm = llm
        self.model = llm.model
        self._seconds = metrics.llm_seconds

    def complete(self, messages: Sequence[dict[str, str]]) -> str:
        started = time.perf_counter()
        outcome = "error"
        try:
            answer = self.llm.complete(messages)
            outcome = "ok"
            return str(answer)
        finally:
            self._seconds.labels(outcome).observe(time.perf_counter() - started)
