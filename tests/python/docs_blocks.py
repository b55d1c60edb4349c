"""The code blocks of README.md and docs/**/*.md, as the tests run them.

A fenced block whose info string is `python` or `bash`/`sh`/`shell` runs in the test command.
Two HTML comments, on the line right above a block, say otherwise:

- `<!-- not run: why -->`: the block is shown, not run (an install, a server left running…);
- `<!-- run by tests/python/test_x.py -->`: another test runs it as printed (the game
  walkthrough against a real server); that test reads this page.

Any other info string (`text`, `json`, `console`…) is output or a synopsis, never run."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .conftest import REPO

RUN = {"python": "python", "bash": "shell", "sh": "shell", "shell": "shell"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```\s*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*(not run:|run by)\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # relative to the repo
    line: int  # of the opening fence, 1-based
    info: str
    text: str
    marker: str | None  # "not run: …" or "run by …"

    @property
    def kind(self) -> str | None:
        """The kind of code the tests run ("python" or "shell"), else None."""
        return RUN.get(self.info)

    @property
    def runs_here(self) -> bool:
        return self.kind is not None and self.marker is None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


def blocks_of(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        above = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(above)
        found.append(
            Block(
                page=str(page.relative_to(REPO)),
                line=line,
                info=match.group(1),
                text=match.group(2),
                marker=f"{marker.group(1)} {marker.group(2)}" if marker else None,
            )
        )
    return found


def all_blocks() -> list[Block]:
    return [block for page in pages() for block in blocks_of(page)]
