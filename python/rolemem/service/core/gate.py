"""Who may call what, and how often, decided before a request's body is read (plain ASGI
middleware, between the access log and the body readers):

1. the route's group (`route_of`: the route that will take the request; the probes, the docs
   and the console are open) and the request's key (`KeyRing.identify`): a key the group does
   not allow (`KeyRing.allows`, the one rule) is a 401 naming `X-API-Key`;
2. the players the request names in its path (`/users/{user_id}/…`) and query (`?user_id=`):
   one outside the key's `players` glob is a 403 naming `user_id`;
3. `--key-rate`, then `--player-rate` for those players: an empty bucket is a 429 with
   `Retry-After` and `RateLimit-*`.

A JSON body's `user_id` and `observe.user_id` are checked the same way once the request guard
has parsed the body, before validation and any store work: the gate leaves the check in the
request's scope (guard.BODY_CHECK). A save named by a request is then checked against the
user_id by its route (another player's save is a 404), so a key reaches only its players'
saves. Every refusal is counted (`refused(reason)`: key, players, rate_key, rate_player) and
the key's name (never its secret) is kept for the access log line."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ..schemas.common import ID_LENGTH
from .access import KEY_NAME
from .errors import error_response
from .guard import BODY_CHECK, NO_KEY, first_values, refuse, send_refusal
from .keys import Key, KeyRing
from .quotas import Buckets, Limited

OPEN = "open"  # the group of routes that need no key
# the route group of a request (None: no route takes it) and its path parameters
RouteOf = Callable[[Scope], tuple[str | None, Mapping[str, Any]]]
_NOT_THEIRS = "this key may not act for that player (the key's players glob does not match)"


class Gate:
    """See the module docstring."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        ring: KeyRing,
        route_of: RouteOf,
        player_buckets: Buckets | None = None,
        key_buckets: Buckets | None = None,
        refused: Callable[[str], None] = lambda reason: None,
    ) -> None:
        self.app = app
        self.ring, self.route_of = ring, route_of
        self.players, self.keys = player_buckets, key_buckets
        self.refused = refused

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        idle = not self.ring.keyed and self.players is None and self.keys is None
        if scope["type"] != "http" or idle:
            await self.app(scope, receive, send)
            return
        group, params = self.route_of(scope)
        if group == OPEN:
            await self.app(scope, receive, send)
            return
        headers = first_values(scope)
        key = self.ring.identify(headers.get(b"x-api-key", b""))
        state = scope.setdefault("state", {})
        if key is not None:  # the access line names it, refused or not
            state[KEY_NAME] = key.name
        if not self.ring.allows(key, group):
            self.refused("key")
            await refuse(scope, receive, send, headers, 401, "Unauthorized", NO_KEY, "X-API-Key")
            return
        named = [("user_id", value) for value in _players_named(scope, params)]
        refusal = self._admit(key, named)
        if refusal is None and self.keys is not None:
            limited = self.keys.take("" if key is None else key.name)
            if limited is not None:
                refusal = self._limited("rate_key", limited, self.keys, "X-API-Key")
        taken: set[str] = set()
        if refusal is None:
            refusal = self._take(named, taken)
        if refusal is not None:
            await send_refusal(scope, receive, send, headers, refusal)
            return
        if self.players is not None or (key is not None and key.players is not None):
            state[BODY_CHECK] = lambda document: self._body(key, document, taken)
        await self.app(scope, receive, send)

    def _body(self, key: Key | None, document: Any, taken: set[str]) -> Response | None:
        """The refusal of a parsed JSON body naming a player the key may not act for, or one
        over their rate (players the path or query named were counted already)."""
        if not isinstance(document, dict):
            return None
        named = []
        if isinstance(document.get("user_id"), str):
            named.append(("user_id", document["user_id"]))
        observe = document.get("observe")
        if isinstance(observe, dict) and isinstance(observe.get("user_id"), str):
            named.append(("observe.user_id", observe["user_id"]))
        return self._admit(key, named) or self._take(named, taken)

    def _admit(self, key: Key | None, named: list[tuple[str, str]]) -> Response | None:
        if key is None or key.players is None:
            return None
        for field, player in named:
            if not key.acts_for(player):
                self.refused("players")
                return error_response(403, "Forbidden", _NOT_THEIRS, field)
        return None

    def _take(self, named: list[tuple[str, str]], taken: set[str]) -> Response | None:
        """A token from each named player's bucket, each player once per request. An id
        validation refuses anyway (empty, too long) gets no bucket: buckets stay small."""
        if self.players is None:
            return None
        for field, player in named:
            if player in taken or not 0 < len(player) <= ID_LENGTH:
                continue
            taken.add(player)
            limited = self.players.take(player)
            if limited is not None:
                return self._limited("rate_player", limited, self.players, field)
        return None

    def _limited(self, reason: str, limited: Limited, buckets: Buckets, field: str) -> Response:
        self.refused(reason)
        whose = "player" if reason == "rate_player" else "key"
        text = f"over the {whose} rate limit ({buckets.rate}): try again in {limited.retry_after} s"
        response = error_response(429, "TooManyRequests", text, field)
        response.headers.update(limited.headers())
        return response


def _players_named(scope: Scope, params: Mapping[str, Any]) -> list[str]:
    """The user_ids in the path and the query (every one: a repeated parameter too), read as
    Starlette reads them."""
    named = []
    if isinstance(params.get("user_id"), str):
        named.append(params["user_id"])
    query: bytes = scope.get("query_string", b"")
    if b"user_id" in query:
        pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
        named.extend(value for name, value in pairs if name == "user_id")
    return named
