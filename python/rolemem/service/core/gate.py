"""Who may call what, and how often, decided before a request's body is read (plain ASGI
middleware, between the access log and the body readers), so a refusal costs no body read,
validation or store work (docs/decisions/where-keys-are-checked.md; the rules are
docs/service.md's "Keys, roles and quotas"): a header given twice that must be given once
(400: which of two keys would be judged?), the key against the route's group (401), the
players the path and query name against the key's glob (403), the key's and then the
players' rates (429). A parsed JSON body's players are checked by what the gate leaves the
request guard (guard.BODY_CHECK). A tool call over /mcp is a request of its own route,
checked here too, spending the /mcp request's key token (one token a call, not two)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import MutableHeaders, QueryParams
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..schemas.common import ID_LENGTH
from .access import KEY_NAME
from .errors import error_response
from .guard import BODY_CHECK, NO_KEY, first_values, refuse, refused_repeat, send_refusal
from .keys import Key, KeyRing
from .quotas import Buckets, Budget

OPEN = "open"  # the group of routes that need no key
_NOT_THEIRS = "this key may not act for that player (the key's players glob does not match)"
_NAME_ONE = "this key acts for its players only (its players glob): name the player"
_NAMES_NONE = (
    "this key acts for its players only (its players glob), and this route names no player "
    "(it reaches every player's data or the service's)"
)


@dataclass(frozen=True)
class Routed:
    """What the gate knows of the route that takes a request."""

    group: str | None  # None: no route takes it (a 404 to a key holder), or /mcp
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)  # path parameters
    operation: tuple[str, str] | None = None  # (method, template) of a full match
    names_player: bool = False  # a user_id in its path, query or body
    body_player: bool = False  # a user_id in its JSON body
    relay: bool = False  # /mcp: each tool call is a request of its own route
    # a read every player shares (the designer config, the official memories, the word
    # lists): a key with a players glob may call it naming no player (api.main.SHARED_READS)
    shared_read: bool = False


RouteOf = Callable[[Scope], Routed]


@dataclass
class _Relayed:
    """The key token a /mcp request took, which its tool call spends (one, at most)."""

    key: str
    left: int = 1


# set while a /mcp request is served: its tool calls (requests to this app, made in the
# /mcp request's context) read it
_RELAYED: ContextVar[_Relayed | None] = ContextVar("rolemem_relayed", default=None)


class Gate:
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
        if scope["type"] == "http" and await refused_repeat(scope, receive, send):
            return  # before the key: which of two would be judged?
        if scope["type"] != "http" or idle:
            await self.app(scope, receive, send)
            return
        routed = self.route_of(scope)
        if routed.group == OPEN and not routed.relay:
            await self.app(scope, receive, send)
            return
        headers = first_values(scope)
        key = self.ring.identify(headers.get(b"x-api-key", b""))
        state = scope.setdefault("state", {})
        if key is not None:  # the access line names it, refused or not
            state[KEY_NAME] = key.name
        if not self.ring.allows(key, routed.group):
            self.refused("key")
            await refuse(scope, receive, send, headers, 401, "Unauthorized", NO_KEY, "X-API-Key")
            return
        named = [("user_id", value) for value in _players_named(scope, routed.params)]
        refusal = self._admit(key, named) or self._unnamed(key, routed, named)
        budgets: list[Budget] = []
        name = "" if key is None else key.name
        relayed = _RELAYED.get()
        if refusal is None and self.keys is not None:
            if relayed is not None and relayed.key == name and relayed.left > 0:
                relayed.left -= 1  # a tool call: the /mcp request took its token
            else:
                refusal = self._spend(self.keys, "key", name, "X-API-Key", budgets)
        taken: set[str] = set()
        if refusal is None:
            refusal = self._take(named, taken, budgets)
        if refusal is not None:
            await send_refusal(scope, receive, send, headers, refusal)
            return
        # a key with a players glob: the body must name the player where nothing else did
        required = not named and key is not None and key.players is not None and routed.body_player
        if self.players is not None or (key is not None and key.players is not None):
            state[BODY_CHECK] = lambda document: self._body(
                key, document, taken, budgets, required=required
            )
        rated = self.players is not None or self.keys is not None
        answer = _with_budget(send, budgets) if rated else send
        token = _RELAYED.set(_Relayed(name) if routed.relay and self.keys is not None else None)
        try:
            await self.app(scope, receive, answer)
        finally:
            _RELAYED.reset(token)

    def _unnamed(self, key: Key | None, routed: Routed, named: list[Any]) -> Response | None:
        """The 403 of a key with a players glob on a route that names no player (a body's
        are checked once it is parsed) and reads nothing all players share."""
        if key is None or key.players is None or named or routed.body_player:
            return None
        if routed.relay or routed.group is None or routed.shared_read:
            return None  # /mcp (its calls are checked), and paths no route takes (404)
        if routed.operation is None:
            return None  # a path whose routes take other methods: its 405 says so
        self.refused("players")
        if routed.names_player:
            return error_response(403, "Forbidden", _NAME_ONE, "user_id")
        return error_response(403, "Forbidden", _NAMES_NONE)

    def _body(
        self,
        key: Key | None,
        document: Any,
        taken: set[str],
        budgets: list[Budget],
        *,
        required: bool,
    ) -> Response | None:
        """The refusal of a parsed JSON body (None: none) by its players, or, `required`,
        for naming none."""
        places: list[tuple[str, Any]] = []
        if isinstance(document, dict):
            observe = document.get("observe")
            # several characters observed: each names its player
            observed = enumerate(observe) if isinstance(observe, list) else ()
            places = [("", document), ("observe.", observe)]
            places += [(f"observe[{index}].", target) for index, target in observed]
        named = [
            (f"{at}user_id", place["user_id"])
            for at, place in places
            if isinstance(place, dict) and isinstance(place.get("user_id"), str)
        ]
        if required and not named:
            self.refused("players")
            return error_response(403, "Forbidden", _NAME_ONE, "user_id")
        return self._admit(key, named) or self._take(named, taken, budgets)

    def _admit(self, key: Key | None, named: list[tuple[str, str]]) -> Response | None:
        if key is None or key.players is None:
            return None
        for field, player in named:
            if not key.acts_for(player):
                self.refused("players")
                return error_response(403, "Forbidden", _NOT_THEIRS, field)
        return None

    def _take(
        self, named: list[tuple[str, str]], taken: set[str], budgets: list[Budget]
    ) -> Response | None:
        """A token from each named player's bucket, once per request; an id validation
        refuses anyway (empty, too long) gets no bucket: buckets stay small."""
        if self.players is None:
            return None
        for where, player in named:
            if player in taken or not 0 < len(player) <= ID_LENGTH:
                continue
            taken.add(player)
            refusal = self._spend(self.players, "player", player, where, budgets)
            if refusal is not None:
                return refusal
        return None

    def _spend(
        self, buckets: Buckets, whose: str, name: str, field: str, budgets: list[Budget]
    ) -> Response | None:
        limited = buckets.take(name)
        if limited is None:
            budgets.append(buckets.budget(name))
            return None
        self.refused(f"rate_{whose}")
        text = f"over the {whose} rate limit ({buckets.rate}): try again in {limited.retry_after} s"
        response = error_response(429, "TooManyRequests", text, field)
        response.headers.update(limited.headers())
        return response


def _with_budget(send: Send, budgets: list[Budget]) -> Send:
    """`send`, adding the RateLimit-* headers of the bucket with the fewest requests left
    (read when the answer starts: a body's players are counted by then)."""

    async def answer(message: Message) -> None:
        if message["type"] == "http.response.start" and budgets:
            message.setdefault("headers", [])
            headers = MutableHeaders(scope=message)
            if "ratelimit-limit" not in headers:
                least = min(budgets, key=lambda budget: (budget.remaining, -budget.reset))
                for name, value in least.headers().items():
                    headers.append(name, value)
        await send(message)

    return answer


def _players_named(scope: Scope, params: Mapping[str, Any]) -> list[str]:
    """The user_ids in the path and the query (a repeated parameter too), the query decoded
    by the class a route's `Query` parameters are read from, so the gate and the route see
    one decoding (`?user%5Fid=x` is `user_id` to both)."""
    named = []
    if isinstance(params.get("user_id"), str):
        named.append(params["user_id"])
    if scope.get("query_string"):
        named.extend(QueryParams(scope["query_string"]).getlist("user_id"))
    return named
