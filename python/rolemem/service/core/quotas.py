"""Request limits (`--player-rate`, `--key-rate`: `N/s` or `N/min`) as token buckets in the
process (with `--workers N`, each process has its own budget); the 429 and the RateLimit-*
headers are the gate's. Buckets are touched on the event loop only (no lock). At most
MOST_BUCKETS names are kept, the least recently used forgotten first: a forgotten bucket is
a full one, which matters only when more players than that are active within one refill."""

from __future__ import annotations

import math
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from ...errors import RolememError

# a bucket is an OrderedDict entry and a float (~115 bytes) besides the player id it keeps:
# 100,000 players take ~12 MB, ~17 MB with ids of 20 characters (measured with tracemalloc)
MOST_BUCKETS = 100_000
_RATE = re.compile(r"\s*(\d{1,9})\s*/\s*(s|sec|second|m|min|minute)\s*")
_WINDOWS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0}


@dataclass(frozen=True)
class Rate:
    """N requests a second or a minute."""

    count: int
    seconds: float

    @classmethod
    def parse(cls, text: str, field: str) -> Rate:
        match = _RATE.fullmatch(text)
        if match is None or int(match.group(1)) < 1:
            raise RolememError(
                f"{field} must be N/s or N/min with N at least 1 (e.g. 5/s)", field=field
            )
        return cls(int(match.group(1)), _WINDOWS[match.group(2)])

    def __str__(self) -> str:
        return f"{self.count}/{'s' if self.seconds == 1 else 'min'}"


@dataclass(frozen=True)
class Budget:
    """A bucket once a request took its token (`reset`: whole seconds until it is full,
    at least 1)."""

    limit: int
    remaining: int
    reset: int

    def headers(self) -> dict[str, str]:
        return {
            "RateLimit-Limit": str(self.limit),
            "RateLimit-Remaining": str(self.remaining),
            "RateLimit-Reset": str(self.reset),
        }


@dataclass(frozen=True)
class Limited(Budget):
    """A refused request's bucket (`retry_after`: whole seconds until a token is back, at
    least 1)."""

    retry_after: int = field(kw_only=True)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after), **super().headers()}


class Buckets:
    """Token buckets by name, each kept as one number: the time at which it will be full
    again (GCRA, the same arithmetic as a bucket of tokens)."""

    def __init__(
        self,
        rate: Rate,
        most: int = MOST_BUCKETS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.interval = rate.seconds / rate.count  # one token's refill
        self.span = rate.seconds  # a full bucket's refill
        self.most = most
        self.clock = clock
        # name -> when its bucket is full again (past: full now)
        self._full_at: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._full_at)

    def take(self, name: str) -> Limited | None:
        """One token of `name`'s bucket; Limited when it has none (nothing taken)."""
        now = self.clock()
        full_at = self._full_at.get(name)
        if full_at is None:
            if len(self._full_at) >= self.most:
                self._full_at.popitem(last=False)
            full_at = now
        else:
            self._full_at.move_to_end(name)
            full_at = max(full_at, now)
        taken = full_at + self.interval  # when it would be full again after this request
        if taken - now <= self.span + self.interval * 1e-6:  # sums of intervals round
            self._full_at[name] = taken
            return None
        self._full_at[name] = full_at
        return Limited(
            limit=self.rate.count,
            remaining=0,
            reset=max(1, math.ceil(full_at - now)),
            retry_after=max(1, math.ceil(taken - now - self.span)),
        )

    def budget(self, name: str) -> Budget:
        """What `name`'s bucket holds now (after the request's take: its answer's headers)."""
        now = self.clock()
        ahead = max(0.0, self._full_at.get(name, now) - now)  # refill still to come
        used = math.ceil(ahead / self.interval - 1e-6)  # tokens taken and not yet back
        return Budget(self.rate.count, max(0, self.rate.count - used), max(1, math.ceil(ahead)))
