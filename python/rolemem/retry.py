"""One retry policy for work that met a passing failure: a write that met another writer's, a
statement chosen as a deadlock's victim or overtaken by a shard move, an LLM reply that did not
fit. Failures the store must remember (a webhook's, an extraction's) keep their own schedules."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def retry(
    work: Callable[[], T],
    *,
    attempts: int,
    on: tuple[type[Exception], ...] | Callable[[Exception], bool],
    wait: float = 0.01,
    deadline: float | None = None,
    before_retry: Callable[[Exception, int], None] | None = None,
) -> T:
    """`work()`, at most `attempts` calls. An exception `on` accepts (its types, or its
    predicate) is retried after a pause drawn up to `wait` seconds doubled per failure (full
    jitter, so writers that met do not meet again); any other, the last attempt's, or one whose
    pause would end past `deadline` seconds from the start is raised. `before_retry(error,
    attempt)` runs after the pause."""
    ends = None if deadline is None else time.monotonic() + deadline
    for attempt in range(1, attempts):
        try:
            return work()
        except Exception as exc:
            accepted = isinstance(exc, on) if isinstance(on, tuple) else on(exc)
            pause = random.uniform(0, wait * 2 ** (attempt - 1))
            if not accepted or ends is not None and time.monotonic() + pause > ends:
                raise
            time.sleep(pause)
            if before_retry is not None:
                before_retry(exc, attempt)
    return work()
