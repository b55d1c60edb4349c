"""`Idempotency-Key` on writes a client may retry (appends, regenerates, new saves and roles):
the key and its first answer are stored in the same transaction as the write, so a retry after
a timeout gets that answer and nothing is written twice; the same key with another request is
refused (409). Keys are scoped by player: one player's key never answers or blocks another's
(the stored key is the pair). Keys are kept `hours` (24 by default) and then forgotten."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import duckdb

from ...engines.postgres import CITUS
from ...errors import ConflictError
from ...sql.project import used, write_sql

HEADER = "Idempotency-Key"
MAX_KEY_LENGTH = 255
# visible ASCII, spaces inside: the header's pattern, checked by the routes' Header parameter
# (a 422 before any write; a header is ASCII on the wire anyway)
KEY_PATTERN = r"^[\x21-\x7e][\x20-\x7e]*$"


def fingerprint(route: str, request: Any) -> str:
    """The request as a hash: the route and the body's canonical JSON."""
    text = json.dumps([route, request], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# On Citus the records are distributed by their player (`user_id`, never null there): a
# request of no player (a role, the config) keeps its record under this fixed partition, one
# shard, which no player can name (a player id is non-empty text). Its key is still scoped to
# no player.
NO_PLAYER = ""


def once(
    cur: duckdb.DuckDBPyConnection,
    key: str | None,
    player: str | None,
    request_hash: str,
    write: Callable[[duckdb.DuckDBPyConnection], dict[str, Any]],
    *,
    hours: float,
    engine: str = "duckdb",
) -> dict[str, Any]:
    """`write(cur)`'s answer, or, for `player`'s key seen within `hours`, the first answer
    again (inside the caller's transaction, which also holds the write; `engine`: the
    cursor's, where on Citus each statement names the record's player: one shard)."""
    if key is None:
        return write(cur)
    now = datetime.now()
    stored = json.dumps([player, key], ensure_ascii=False)  # in its player's scope: no two meet
    owner = NO_PLAYER if player is None and engine == CITUS else player
    forget = write_sql("forget_idempotency_key", engine=engine)
    expired = {"key": stored, "expired": now - timedelta(hours=hours), "user_id": owner}
    cur.execute(forget, used(forget, expired))
    seen_sql = write_sql("seen_idempotency_key", engine=engine)
    seen = cur.execute(seen_sql, used(seen_sql, {"key": stored, "user_id": owner})).fetchone()
    if seen is not None:
        if seen[0] != request_hash:
            raise ConflictError(
                # never the key itself: no answer echoes a request value
                f"this {HEADER} was used for another request; use a new key per request",
                field=HEADER,
            )
        return dict(json.loads(seen[1]))
    answer = write(cur)
    cur.execute(
        write_sql("insert_idempotency_record"),
        {
            "key": stored,
            "user_id": owner,
            "hash": request_hash,
            "response": json.dumps(answer, ensure_ascii=False, default=str),
            "now": now,
        },
    )
    return answer


def forget_expired(cur: duckdb.DuckDBPyConnection, *, hours: float) -> int:
    """Drop keys older than `hours` (maintenance)."""
    rows = cur.execute(
        write_sql("forget_expired_idempotency"),
        {"expired": datetime.now() - timedelta(hours=hours)},
    ).fetchall()
    return len(rows)
