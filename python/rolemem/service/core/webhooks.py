"""Webhooks: what happened, POSTed to the game's URLs apart from the request path, signed as
Stripe signs its events, so a receiver checks that rolemem sent it and that it is recent. One
thread delivers them in order of their due time; the retries, the failed deliveries kept in
the store and their replay are docs/service.md's "Webhooks". A service without webhook URLs
builds none of this: the places that emit events test for None."""

from __future__ import annotations

import hashlib
import heapq
import hmac
import itertools
import json
import logging
import secrets
import threading
import time
import urllib.error
import urllib.request
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...sql.project import write_sql

if TYPE_CHECKING:
    from .state import Store

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Rolemem-Signature"
_TIMEOUT = 5.0  # seconds a receiver has to answer one delivery
# deliveries queued or waiting for a retry; past it, a new event is logged and counted failed
_MAX_PENDING = 10_000


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A receiver answers; a redirect (3xx) is a failed delivery, never followed elsewhere."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


# straight to the receiver: no proxy from the environment, no redirect followed
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirects())


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The signature header's value for `body` sent at `timestamp`."""
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class Webhooks:
    """The delivery thread, its queue and the counts /status shows."""

    def __init__(self, store: Store) -> None:
        settings, self._store = store.settings, store
        assert settings.webhook_secret is not None  # the settings refuse URLs without one
        self.urls, self._secret = settings.webhooks, settings.webhook_secret
        self._retries, self._backoff = settings.webhook_retries, settings.webhook_backoff
        # (due time, sequence, url, event, attempts so far, replayed) by due time
        self._due: list[tuple[float, int, str, dict[str, Any], int, bool]] = []
        self._sequence = itertools.count()  # equal due times: in order of queueing
        self._wake = threading.Condition()
        self._closed = False
        self.counts = {"delivered": 0, "retried": 0, "failed": 0}
        self.last_error: str | None = None
        # deliveries kept in the store, and those of them a replay has queued
        self.kept = len(self._read())
        self._replaying: set[tuple[str, str]] = set()
        self._thread = threading.Thread(target=self._run, name="rolemem-webhooks", daemon=True)
        self._thread.start()

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        """Queue the event `kind` for every URL (returns at once)."""
        event = {
            "id": f"evt_{secrets.token_hex(12)}",
            "type": kind,
            "created": int(time.time()),
            "data": data,
        }
        with self._wake:
            full = len(self._due) + len(self.urls) > _MAX_PENDING
        if full:  # the receivers are far behind: never grow without bound
            self.counts["failed"] += len(self.urls)
            log.warning("webhook %s (%s) not queued: %d pending", event["id"], kind, _MAX_PENDING)
            return
        for url in self.urls:
            self._queue(url, event, attempts=0, replayed=False)

    def replay(self) -> int:
        """Queue every kept failed delivery again; how many (each row goes once it is
        delivered; failing again, it stays)."""
        queued = 0
        for url, body in self._read():
            event = json.loads(body)
            with self._wake:
                if (event["id"], url) in self._replaying:
                    continue  # queued by an earlier replay, not yet tried
                self._replaying.add((event["id"], url))
            self._queue(url, event, attempts=self._retries, replayed=True)
            queued += 1
        return queued

    def state(self) -> dict[str, Any]:
        with self._wake:
            pending = len(self._due)
        return {
            "urls": len(self.urls),
            "pending": pending,
            **self.counts,
            "kept": self.kept,
            "last_error": self.last_error,
        }

    def close(self) -> None:
        """Stop delivering; what is still queued is kept, to be replayed after a restart."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join(_TIMEOUT + 1)
        with self._wake:
            left, self._due = self._due, []
        for _, _, url, event, attempts, _ in left:
            self._kept(url, event, "the service stopped before it was delivered", attempts)

    def _queue(
        self, url: str, event: dict[str, Any], *, attempts: int, replayed: bool, delay: float = 0
    ) -> None:
        with self._wake:
            item = (time.monotonic() + delay, next(self._sequence), url, event, attempts, replayed)
            heapq.heappush(self._due, item)
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._closed and (not self._due or self._due[0][0] > time.monotonic()):
                    self._wake.wait(self._due[0][0] - time.monotonic() if self._due else None)
                if self._closed:
                    return
                _, _, url, event, attempts, replayed = heapq.heappop(self._due)
            self._deliver(url, event, attempts, replayed)

    def _deliver(self, url: str, event: dict[str, Any], attempts: int, replayed: bool) -> None:
        body = json.dumps(event, ensure_ascii=False, default=str).encode("utf-8")
        request = urllib.request.Request(
            url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": "rolemem-webhooks",
                SIGNATURE_HEADER: sign(self._secret, int(time.time()), body),
            },
        )
        try:
            with _OPENER.open(request, timeout=_TIMEOUT) as answer:
                answer.read()
        except (urllib.error.URLError, OSError, ValueError) as exc:
            self._failed(url, event, attempts + 1, replayed, f"{type(exc).__name__}: {exc}")
            return
        self.counts["delivered"] += 1
        if replayed:
            self._kept(url, event, None)
            self.kept -= 1

    def _failed(
        self, url: str, event: dict[str, Any], attempts: int, replayed: bool, error: str
    ) -> None:
        self.last_error = error
        if attempts <= self._retries:  # a due time in the queue, not rolemem.retry's blocking wait
            self.counts["retried"] += 1
            delay = self._backoff * 2 ** (attempts - 1)
            self._queue(url, event, attempts=attempts, replayed=replayed, delay=delay)
            return
        self.counts["failed"] += 1
        log.warning("webhook %s of %s failed %d times: %s", event["id"], url, attempts, error)
        self._kept(url, event, error, attempts)
        if not replayed:
            self.kept += 1

    def _kept(self, url: str, event: dict[str, Any], error: str | None, attempts: int = 0) -> None:
        """Keep the failed delivery (error given), or forget it once delivered."""
        with self._wake:
            self._replaying.discard((event["id"], url))
        parameters: dict[str, Any] = {"event_id": event["id"], "url": url}
        if error is not None:
            parameters.update(
                event_type=event["type"],
                body=json.dumps(event, ensure_ascii=False, default=str),
                attempts=attempts,
                error=error[:2000],
                now=datetime.now(),
            )
        sql = write_sql("delete_webhook_delivery" if error is None else "keep_webhook_delivery")
        try:
            self._store.write(lambda cur: cur.execute(sql, parameters))
        except Exception as exc:  # the store is closing or failing: the log keeps the id
            log.warning("webhook %s of %s not kept: %s", event["id"], url, exc)

    def _read(self) -> list[tuple[str, str]]:
        """The kept deliveries: (url, event JSON)."""
        with self._store.engine.reading() as cur:
            rows = cur.execute(write_sql("kept_webhook_deliveries")).fetchall()
        return [(str(url), str(body)) for url, body in rows]
