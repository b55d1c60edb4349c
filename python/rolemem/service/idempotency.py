"""`Idempotency-Key` on writes a client may retry (appends, regenerates, new saves and roles):
the key and its first answer are stored in the same transaction as the write, so a retry after
a timeout gets that answer and nothing is written twice; the same key with another request is
refused (409). Keys are kept `hours` (24 by default) and then forgotten."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import duckdb

from ..errors import ConflictError, RolememError

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255


def check_key(key: str | None) -> str | None:
    if key is None:
        return None
    if not key.strip() or len(key) > MAX_KEY_LENGTH or not key.isprintable():
        raise RolememError(
            f"{HEADER} must be 1-{MAX_KEY_LENGTH} printable characters", field=HEADER
        )
    return key


def fingerprint(route: str, request: Any) -> str:
    """The request as a hash: the route and the body's canonical JSON."""
    text = json.dumps([route, request], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def once(
    cur: duckdb.DuckDBPyConnection,
    key: str | None,
    request_hash: str,
    write: Callable[[duckdb.DuckDBPyConnection], dict[str, Any]],
    *,
    hours: float,
) -> dict[str, Any]:
    """`write(cur)`'s answer, or, for a key seen within `hours`, the first answer again
    (inside the caller's transaction, which also holds the write)."""
    if key is None:
        return write(cur)
    now = datetime.now()
    cur.execute(
        "delete from rolemem_idempotency where key = $key and created_at < $expired",
        {"key": key, "expired": now - timedelta(hours=hours)},
    )
    seen = cur.execute(
        "select request_hash, response from rolemem_idempotency where key = $key", {"key": key}
    ).fetchone()
    if seen is not None:
        if seen[0] != request_hash:
            raise ConflictError(
                f"{HEADER} {key!r} was used for another request; use a new key per request",
                field=HEADER,
            )
        return dict(json.loads(seen[1]))
    answer = write(cur)
    cur.execute(
        """insert into rolemem_idempotency (key, request_hash, response, created_at)
        values ($key, $hash, $response, $now)""",
        {
            "key": key,
            "hash": request_hash,
            "response": json.dumps(answer, ensure_ascii=False, default=str),
            "now": now,
        },
    )
    return answer


def forget_expired(cur: duckdb.DuckDBPyConnection, *, hours: float) -> int:
    """Drop keys older than `hours` (maintenance)."""
    rows = cur.execute(
        "delete from rolemem_idempotency where created_at < $expired returning 1",
        {"expired": datetime.now() - timedelta(hours=hours)},
    ).fetchall()
    return len(rows)
