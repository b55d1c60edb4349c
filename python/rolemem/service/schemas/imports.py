"""A bulk import's answer."""

from __future__ import annotations

from .common import Response, field
from .saves import Extraction


class ImportObserved(Response):
    role_id: int = field("A character that speaks in the import.", 1)
    agent_id: str | None = field("Its memory owner (none: its memories are not extracted).", "qiyu")
    extraction: Extraction = field(
        "What the memory loop does next for it: scheduled (its turns are extracted in the "
        "background, a batch at a time), not_due, disabled (no LLM, or the role has no "
        "agent_id), deferred (the queue is full: the next append schedules it).",
        "scheduled",
    )


class Imported(Response):
    save_id: int = field("The save.", 2)
    line_count: int = field("The lines imported, in order, on the save's tip.", 2000)
    first_line_id: int = field("The first imported line (its parent: the old tip).", 24)
    tip_line_id: int = field("The save's tip now: the last imported line.", 2023)
    observed: list[ImportObserved] = field(
        "The characters that speak in the import, observed by the memory loop.",
        [{"role_id": 1, "agent_id": "qiyu", "extraction": "scheduled"}],
    )
