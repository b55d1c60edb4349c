"""The service's limits and keys: every request is bounded in size and time, and every value
here is a `rolemem serve` option (its --help prints the defaults)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServiceSettings:
    """Limits of one `rolemem serve`."""

    # required in X-API-Key on every route but /health (None: open)
    api_key: str | None = None
    # designer routes (/official, /config) take this key when set, else the API key
    designer_key: str | None = None
    # a key file (core/keys.py): named keys with a role and a players glob, read again when
    # it changes; with it, every route but the probes, docs and console needs a key
    keys_file: str | None = None
    # request limits, "N/s" or "N/min", per player (the request's user_id) and per key, in
    # each process (core/quotas.py)
    player_rate: str | None = None
    key_rate: str | None = None
    # a request body larger than this is refused (413) before it is read in full
    max_body_bytes: int = 1024 * 1024
    # a request's headers must arrive within this many seconds of the connection opening (or
    # of the previous answer), its body within this many of its headers: else 408
    header_timeout: float = 10.0
    body_timeout: float = 15.0
    # open connections per process; at the cap the one waiting longest for its headers is closed
    max_connections: int = 1000
    # a bulk import (POST /saves/{id}/import) has a limit of its own, in bytes and in lines:
    # past either it is refused with 413 as soon as the body says so, before any work
    import_max_bytes: int = 20 * 1024 * 1024
    import_max_lines: int = 50_000
    # recall and prompt work (/turn, /query, /recall, /expand_words) past this many seconds is
    # stopped and answered 503
    request_timeout: float = 10.0
    # threads doing per-request engine work
    request_threads: int = 8
    # DuckDB's threads for one statement: requests already run side by side on the request
    # threads, and per-turn statements are planning-bound, so splitting each one over the cores
    # only adds task switching (1 gave 4-31% more turns/s at 8 clients on 2 cores); a
    # maintenance or snapshot statement runs on these threads too
    engine_threads: int = 1
    # recall requests that wait while a recall statement runs are answered together by the
    # next statement, at most this many (1: one statement per request)
    max_batch: int = 8
    # extraction (LLM) workers, and the batches that may wait for one; a full queue leaves the
    # batch pending and the next append schedules it again
    extraction_threads: int = 2
    extraction_queue: int = 64
    # a failed extraction waits this many seconds (doubling per failure, stored in
    # memory_loop_state) before the next attempt, whatever the appends; the service tries it
    # again itself until this many attempts in a row failed (core/extraction.py)
    extraction_retry_seconds: float = 30.0
    extraction_retries: int = 3
    # seconds a SIGTERM waits for requests in flight before the service exits
    shutdown_grace: float = 5.0
    # an idempotency key answers the same request again for at least this many hours
    idempotency_hours: float = 24.0
    # saves without an owner (written by the game itself) are open to every player: only for
    # a game that keeps ownership itself; by default they are refused (403) to every caller
    open_ownerless_saves: bool = False
    # URLs that get the service's events (webhooks.py), signed with the secret; a delivery
    # that fails is tried again after webhook_backoff seconds, doubling, webhook_retries times
    webhooks: tuple[str, ...] = ()
    webhook_secret: str | None = None
    webhook_retries: int = 5
    webhook_backoff: float = 1.0

    def __post_init__(self) -> None:
        from ...errors import RolememError

        for name in (
            "max_body_bytes",
            "import_max_bytes",
            "import_max_lines",
            "request_threads",
            "engine_threads",
            "extraction_threads",
            "max_batch",
            "max_connections",
        ):
            if getattr(self, name) < 1:
                raise RolememError(f"{name} must be at least 1", field=name)
        for name in (
            "request_timeout",
            "header_timeout",
            "body_timeout",
            "shutdown_grace",
            "idempotency_hours",
            "extraction_retry_seconds",
        ):
            if not getattr(self, name) > 0:
                raise RolememError(f"{name} must be a positive number", field=name)
        for name in ("extraction_queue", "extraction_retries", "webhook_retries"):
            if getattr(self, name) < 0:
                raise RolememError(f"{name} must be 0 or more", field=name)
        if not self.webhook_backoff > 0:
            raise RolememError("webhook_backoff must be a positive number", field="webhook_backoff")
        object.__setattr__(self, "webhooks", tuple(self.webhooks))  # a list from JSON
        for url in self.webhooks:
            if not url.startswith(("http://", "https://")):
                raise RolememError(f"a webhook URL must be http(s)://…: {url!r}", field="webhooks")
        if self.webhooks and not self.webhook_secret:
            raise RolememError("webhooks need a secret to sign with", field="webhook_secret")
        from .quotas import Rate

        for name in ("player_rate", "key_rate"):
            if getattr(self, name) is not None:
                Rate.parse(getattr(self, name), name)
