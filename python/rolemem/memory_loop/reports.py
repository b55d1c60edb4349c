"""What observations and maintenance report, and the small rules they share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..dynamic_memory import MemoryInputError
from ..memory_builder import int_or_none, script_role_or_none
from ..sql.project import update_else_upsert


@dataclass
class ObserveReport:
    """What one observation did. `extracted_turns`: turns sent to the LLM and committed;
    `pending_turns`: turns after the watermark now (the context window)."""

    save_id: int
    target_key: str
    extracted_turns: int = 0
    event_ids: list[int] = field(default_factory=list)
    entity_ids: list[int] = field(default_factory=list)
    batch_keys: list[str] = field(default_factory=list)
    pending_turns: int = 0
    watermark_line_id: int | None = None
    scene_changed: bool = False
    # a failure's back-off under way (MemoryLoop.retry_seconds): nothing was sent before it
    # ends; failed_attempts: the failures since the last success
    retry_at: datetime | None = None
    failed_attempts: int = 0


@dataclass
class MaintenanceReport:
    """What one maintenance run did, per rule and in total."""

    archived: dict[str, int] = field(default_factory=dict)  # reason -> memories archived
    players_cleaned: int = 0
    consolidated_entities: int = 0
    context_vectors: int = 0  # events given the context vector they lacked
    archived_ids: list[tuple[str, int]] = field(default_factory=list)


def write_state(
    cur: Any, state: Mapping[str, Any], *, engine: str, keep_scene: bool, extracted: bool = False
) -> None:
    """The save x character's loop state as `state` leaves it, in the caller's transaction."""
    names = ("save_id", "target_key", "user_id", "agent_id", "scene", "now", "role_id")
    params = {
        **{name: state[name] for name in (*names, "script_role_id")},
        "keep_scene": keep_scene,
        "extracted": extracted,
    }
    update_else_upsert(cur, "update_loop_state", "upsert_loop_state", params, engine=engine)


class _AlreadyExtracted(Exception):
    """Another caller committed this batch first: roll back ours, write nothing."""


def required_id(value: Any, name: str, where: str) -> int:
    """An id the call needs: int_or_none's checks, and MemoryInputError when it is None."""
    checked = int_or_none(value, name, where)
    if checked is None:
        raise MemoryInputError(f"{name} is required")
    return checked


def observed_target(role_id: Any, script_role_id: Any) -> tuple[int | None, str | None]:
    """The observed character, checked: exactly one of a role id or a script role id (its
    key, `target_key`, is the models' rule: macro memory_target_key, read from the plan)."""
    role_id = int_or_none(role_id, "role_id", "observe")
    script_role_id = script_role_or_none(script_role_id, "script_role_id", "observe")
    if (role_id is None) == (script_role_id is None):
        raise MemoryInputError("give the character as exactly one of role_id or script_role_id")
    return role_id, script_role_id


def event_times(
    events: list[tuple[datetime | None, int | None]],
    messages: Sequence[Mapping[str, Any]],
    line_times: list[datetime | None],
    now: datetime,
) -> list[datetime]:
    """When each event of a batch happened: `events` are (the time the dialogue states, the
    number of the message it comes from) in the LLM's order (dialogue order). A stated time
    wins; else the newest time among the lines of its message; else, without a message
    number, the newest time up to the end of the event's equal share of the batch's lines;
    lines without times spread the events one second apart, ending at `now`. Equal times are
    then moved a second apart, so a batch never gets identical stamps."""
    count, times = len(events), list[datetime]()
    for index, (stated, number) in enumerate(events):
        share = slice(-(-(index + 1) * len(line_times) // count))  # up to its share's end (ceil)
        timed = [t for t in line_times[message_span(number, messages) or share] if t is not None]
        at = stated or (max(timed) if timed else now - timedelta(seconds=count - 1 - index))
        while at in times:
            at += timedelta(seconds=1)
        times.append(at)
    return times


def source_lines(
    number: int | None,
    messages: Sequence[Mapping[str, Any]],
    lines: Sequence[Mapping[str, Any]],
) -> list[int]:
    """The ids of the lines a batch's event came from, in chain order: those of the numbered
    transcript message it names (`messages`: the batch's, with each message's first and last
    line position in `lines`), else every line of the batch (a memory keeps the lines it came
    from: model int_loop_line_coverage, macro is_event_in_scope)."""
    return [line["id"] for line in lines[message_span(number, messages) or slice(None)]]


def message_span(number: int | None, messages: Sequence[Mapping[str, Any]]) -> slice | None:
    """The positions in the batch's lines of the numbered transcript message `number`
    (`messages`: each message's first and last line position); None when it names none."""
    if number is None or not 1 <= number <= len(messages):
        return None
    return slice(messages[number - 1]["first_line"], messages[number - 1]["last_line"] + 1)
