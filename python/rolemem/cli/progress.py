"""The commands' progress bars: on stderr, and only when it is a terminal (a pipe or a log file
gets none)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def progress_bar(total: int, desc: str, unit: str = "it") -> Any:
    """A tqdm bar; bytes (`unit="B"`) counted in kB, MB …"""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit=unit,
        desc=desc,
        file=sys.stderr,
        disable=not sys.stderr.isatty(),
        unit_scale=unit == "B",
    )


def stage_bars() -> Callable[[str, int, int], None]:
    """progress(stage, done, total) drawn as one bar per stage."""
    bars: dict[str, Any] = {}

    def progress(stage: str, done: int, total: int) -> None:
        bar = bars.get(stage)
        if bar is None:
            bar = bars[stage] = progress_bar(total, stage)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return progress
