"""Roles, saves and lines: the save lifecycle's requests and answers (a bulk import's too)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Discriminator, Field, Tag, ValidationInfo, field_validator

from ...memory_builder.contract import Line, NewRole, NewSave
from .common import (
    ID_LENGTH,
    LINE_LENGTH,
    MAX_LINES,
    MAX_OBSERVED,
    MESSAGE_LENGTH,
    NAME_LENGTH,
    NOW,
    ROLE_AGENT_ID,
    USER_ID,
    GameTime,
    Id,
    Page,
    Request,
    Response,
    ServiceTime,
    field,
    key,
    text,
)


# a new role's and a new save's one contract (the Python API's too), as requests, as LineIn
class RoleCreate(Request, NewRole):
    """A game character the AI plays."""


class Role(Response):
    role_id: int = field("The role's key.", 2)
    name: str = field("The character's name.", "祁煜")
    character_id: str | None = field("Its designer config (null: requests name it).", "qiyu")
    agent_id: str | None = field(
        "The owner of its dynamic memories: its own agent_id, else its character_id (null: "
        "requests name it).",
        "qiyu",
    )
    omniscient: bool = field("Whether it witnessed every line (a narrator).", False)


class SaveCreate(Request, NewSave):
    """A new save, empty or forked from a line of one of the player's saves."""


class SaveItem(Response):
    save_id: int = field("The save's key.", 12)
    name: str | None = field("The slot's name.", "第一章")
    tip_line_id: int | None = field("The last line of the branch being played.", 15)
    forked_from_line_id: int | None = field(
        "For a fork, where its chain passes into the save it was forked from.", None
    )


class Save(SaveItem):
    user_id: str | None = field(
        "The player it belongs to (null only for a save the game wrote without one, open to "
        "all when the service runs with --open-ownerless-saves).",
        "mumu",
    )
    user_name: str | None = field("The player's name as prompts say it.", "木木")


class SavePage(Page):
    items: list[SaveItem] = field("The player's saves, oldest first.", [])
    total: int = field("The player's saves in all.", 2)


class SaveDeleted(Response):
    save_id: int = field("The save deleted.", 12)
    deleted: dict[str, int] = field(
        "Rows deleted per table: the save, its lines, what they produced (events with their "
        "postings and vectors, extraction batches and extracted lines, loop state, and on "
        "DuckDB the write-time history).",
        {"save": 1, "line": 12, "memory_event": 2},
    )


class Speaker(Response):
    role_id: int | None = field("The character's role, if it has one.", 1)
    script_role_id: str | None = field("The script NPC's id, if it is one.", None)
    role_name: str | None = field("The role's name.", "钦灵")
    display_name: str | None = field("The name its newest line shows.", "钦灵")
    line_count: int = field("Its lines on the branch.", 4)


class SaveDetail(Save):
    line_count: int = field("Lines on the current branch, root to tip.", 15)
    chain_problem: str | None = field("What is wrong with the chain, if anything.", None)
    speakers: list[Speaker] = field("The characters that speak on the branch.", [])


# the line's one contract (the Python API's too), as a request: its schema says what the guard
# stores
class LineIn(Request, Line):
    """One dialogue line (the spec's line fields)."""


def one_target(
    script_needs: str, *, each: list[dict[str, Any]] | None = None
) -> Callable[[dict[str, Any]], None]:
    """Exactly one identity, in the schema too (a generated client's union type), for values
    the code accepts: an integer role_id, or a text script_role_id with `script_needs` (a
    script NPC has no role to give it). `each`: another exactly-one-of the request has, its
    branches combined with these (a branch per pair). The model's json_schema_extra."""
    targets: list[dict[str, Any]] = [
        {
            "required": ["role_id"],
            "properties": {"role_id": {"type": "integer"}, "script_role_id": {"type": "null"}},
        },
        {
            "required": ["script_role_id", script_needs],
            "properties": {
                "script_role_id": {"type": "string"},
                script_needs: {"type": "string"},
                "role_id": {"type": "null"},
            },
        },
    ]
    branches = [
        {
            "required": [*target["required"], *other.get("required", [])],
            "properties": {**target["properties"], **other["properties"]},
        }
        for target in targets
        for other in each or [{"properties": {}}]
    ]
    return lambda schema: _whole_branches(schema, branches)


def _whole_branches(schema: dict[str, Any], branches: list[dict[str, Any]]) -> None:
    """`schema` as `oneOf: [whole objects]`, one per branch: each branch carries every
    property of the schema, narrowed to the type the branch names (openapi-python-client
    reads only the branches of a schema that also has properties of its own;
    openapi-typescript reads both alike)."""
    properties, required = schema.pop("properties"), schema.pop("required", [])
    extra = schema.pop("additionalProperties", None)
    schema.pop("type", None)
    schema["oneOf"] = []
    for branch in branches:
        whole: dict[str, Any] = {
            "type": "object",
            "properties": {
                name: _narrowed(prop, branch["properties"].get(name))
                for name, prop in properties.items()
            },
            "required": sorted({*required, *branch["required"]}),
        }
        if extra is not None:
            whole["additionalProperties"] = extra
        schema["oneOf"].append(whole)


def _narrowed(prop: dict[str, Any], branch: dict[str, Any] | None) -> dict[str, Any]:
    """`prop` where the branch says its type: the option of that type (null: none), with
    what else the branch says of it (an `enum`)."""
    if branch is None:
        return prop
    kind = branch["type"]
    keep = {k: v for k, v in prop.items() if k in ("title", "description", "examples", "default")}
    if kind == "null":
        return {"type": "null", **keep}
    for option in prop.get("anyOf", [prop]):
        if option.get("type") == kind:
            narrowed = {**option, **keep}
            if "enum" in branch:
                narrowed["enum"] = narrowed["examples"] = list(branch["enum"])
            return narrowed
    return {**keep, **branch}


class _Target(Request):
    model_config = ConfigDict(json_schema_extra=one_target("agent_id"))

    script_role_id: str | None = text(
        "The character, by script NPC id.", "7", max_length=ID_LENGTH, default=None
    )
    # checked after script_role_id (declared first), so a request giving neither is refused
    # naming role_id
    role_id: Id | None = key(
        "The character, by role (or script_role_id: exactly one).",
        1,
        default=None,
        validate_default=True,
    )

    @field_validator("role_id")
    @classmethod
    def _one_identity(cls, role_id: int | None, info: ValidationInfo) -> int | None:
        if "script_role_id" in info.data and (role_id is None) == (
            info.data["script_role_id"] is None
        ):
            raise ValueError("give exactly one of role_id or script_role_id")
        return role_id


class Observe(_Target):
    """Extract this character's memories of the save when a batch of turns is due."""

    agent_id: str | None = text(ROLE_AGENT_ID, "qiyu", max_length=ID_LENGTH, default=None)
    user_id: str | None = text(
        "The player (default: the request's user_id; if both are given, they must be the "
        "same: the save's owner).",
        "mumu",
        max_length=ID_LENGTH,
        default=None,
    )
    scene: str | None = text(
        "The scene the appended lines were played in, stored with them: the turns before a "
        "change of scene are extracted at once, as a batch of their own scene.",
        "gallery",
        max_length=NAME_LENGTH,
        default=None,
    )
    user_name: str | None = text(
        "The player's name, as memories and the extraction transcript say it (default: the "
        "save's user_name; a line's display_name comes first).",
        "木木",
        max_length=NAME_LENGTH,
        default=None,
    )
    char_name: str | None = text(
        "The character's name (default: its role's name).",
        "祁煜",
        max_length=NAME_LENGTH,
        default=None,
    )
    now: GameTime | None = field("Deprecated: the request's `now`.", None, default=None)


def _one_or_many(value: Any) -> str:
    return "~many" if isinstance(value, list) else "~one"


# one character or a list of them, told apart by the value's JSON type (the tags, `~…`, are
# no field: an error names `observe.role_id` or `observe[1].role_id`)
OneOrMany = Annotated[
    Annotated[Observe, Tag("~one")]
    | Annotated[list[Observe], Field(min_length=1, max_length=MAX_OBSERVED), Tag("~many")],
    Discriminator(_one_or_many),
]


class LinesAppend(Request):
    """Lines to append on the save's tip, in order, in one transaction."""

    user_id: str | None = text(USER_ID, "mumu", max_length=ID_LENGTH, default=None)
    lines: list[LineIn] = Field(
        min_length=1,
        max_length=MAX_LINES,
        description="The lines, oldest first; each becomes the parent of the next.",
        examples=[[{"attribute": "user", "content": "今天画画时你好温柔"}]],
    )
    now: GameTime | None = field(NOW, "2024-05-01T20:00:00", default=None)
    observe: OneOrMany | None = Field(
        None,
        description="Run the memory loop after the append for a character, or for each of a "
        f"list of them (at most {MAX_OBSERVED}; one named again is observed once, as its "
        "first entry says; the items give one scene if any): "
        "each one's batch is extracted when it is due, whoever spoke.",
        examples=[[{"role_id": 1, "user_id": "mumu"}, {"role_id": 2, "user_id": "mumu"}]],
    )

    @field_validator("observe")
    @classmethod
    def _one_scene(cls, observe: Observe | list[Observe] | None) -> Any:
        if isinstance(observe, list) and len({item.scene for item in observe} - {None}) > 1:
            raise ValueError("one scene: the appended lines are played in one")
        return observe

    def observed(self) -> list[tuple[str, Observe]]:
        """The characters to observe, each once (named again: its first entry), with the
        scene the lines are played in; each with where the request names it (`observe.` or
        `observe[i].`, what an error about it says)."""
        if self.observe is None:
            return []
        if not isinstance(self.observe, list):
            return [("observe.", self.observe)]
        scene = next((item.scene for item in self.observe if item.scene is not None), None)
        firsts = {(item.role_id, item.script_role_id): item for item in reversed(self.observe)}
        return [
            (f"observe[{index}].", item.model_copy(update={"scene": scene}))
            for index, item in enumerate(self.observe)
            if firsts[(item.role_id, item.script_role_id)] is item
        ]


class LegacyLinesAppend(LinesAppend):
    """`POST /lines`: the same as `POST /saves/{save_id}/lines`, the save in the body."""

    save_id: Id = key("The save.", 2)


Extraction = Literal["scheduled", "not_due", "disabled", "deferred"]


class LinesObserved(Response):
    role_id: int | None = field("The character observed, by role.", 1)
    script_role_id: str | None = field("The character observed, by script NPC.", None)
    agent_id: str = field("Its memory owner.", "qiyu")
    extraction: Extraction = field(
        "What the memory loop does next for it (as `extraction`).", "not_due"
    )


class LinesAppended(Response):
    save_id: int = field("The save.", 2)
    line_ids: list[int] = field("The new lines' ids, in order.", [24, 25])
    tip_line_id: int = field("The save's tip now.", 25)
    extraction: Extraction = field(
        "scheduled: a batch of turns is due and queued for the LLM; not_due: nothing to "
        "extract yet; disabled: no observe asked or no LLM configured; deferred: the "
        "extraction queue is full, the next append schedules it again. Several characters "
        "observed: scheduled if any was, else deferred if any was, else not_due.",
        "not_due",
    )
    observed: list[LinesObserved] = field(
        "Each character observed, in the order given (none without `observe`).",
        [{"role_id": 1, "script_role_id": None, "agent_id": "qiyu", "extraction": "not_due"}],
        default=[],
    )


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


class RegeneratedLine(Request):
    """The new reply; speaker fields not given are the replaced reply's."""

    content: str = text("The regenerated reply.", "才、才没有呢！", max_length=LINE_LENGTH)
    role_id: Id | None = key("The character (default: the replaced reply's).", 1, default=None)
    script_role_id: str | None = text(
        "The NPC (default: the replaced reply's).", "7", max_length=ID_LENGTH, default=None
    )
    display_name: str | None = text("The shown name.", "钦灵", max_length=NAME_LENGTH, default=None)
    original_emotion: str | None = text(
        "The emotion tag.", "生气", max_length=NAME_LENGTH, default=None
    )
    tts_content: str | None = text(
        "Voice text.", "ち、違うもん！", max_length=MESSAGE_LENGTH, default=None
    )
    action_content: str | None = text(
        "Stage action.", "脸红", max_length=MESSAGE_LENGTH, default=None
    )
    created_at: GameTime | None = field("When (game clock).", None, default=None)


class Regenerate(Request):
    """Regenerate the tip's reply: a sibling line that becomes the tip."""

    user_id: str | None = text(USER_ID, "mumu", max_length=ID_LENGTH, default=None)
    line: RegeneratedLine = field("The new reply.", {"content": "才、才没有呢！"})
    now: GameTime | None = field(NOW, None, default=None)


class Regenerated(Response):
    save_id: int = field("The save.", 2)
    line_ids: list[int] = field("The new line.", [26])
    tip_line_id: int = field("The save's tip now (the new line).", 26)
    replaced_line_id: int = field("The reply it replaces (kept: a reload returns to it).", 23)


class TipMove(Request):
    """Reload a save point: the tip moves to a line of this save's tree."""

    user_id: str | None = text(USER_ID, "mumu", max_length=ID_LENGTH, default=None)
    line_id: Id = key("The line to continue from.", 21)


class Tip(Response):
    save_id: int = field("The save.", 2)
    tip_line_id: int = field("The save's tip now.", 21)


class LineOut(Response):
    line_position: int = field("Position on the branch (0 = root).", 0)
    line_id: int = field("The line.", 9)
    parent_line_id: int | None = field("Its parent.", None)
    save_id: int = field("The save it belongs to (a fork shows its origin's lines).", 2)
    attribute: str = field("system, user or assistant.", "user")
    content: str = field("What is said.", "你好")
    role_id: int | None = field("The character.", None)
    script_role_id: str | None = field("The script NPC.", None)
    display_name: str | None = field("The shown name.", None)
    original_emotion: str | None = field("The emotion tag.", None)
    predicted_emotion: str | None = field("A classifier's emotion tag.", None)
    tts_content: str | None = field("Voice text.", None)
    action_content: str | None = field("Stage action.", None)
    audio_file: str | None = field("Voice file.", None)
    created_at: GameTime | None = field("When it was said.", None)
    present_role_ids: list[int] | None = field(
        "The roles present for it, as the branch says (the line's own, else the line before "
        "it's); null: every character.",
        None,
    )
    present_script_role_ids: list[str] | None = field(
        "The script NPCs present for it, as the branch says.", None
    )


class BranchPage(Response):
    save_id: int = field("The save.", 2)
    tip_line_id: int | None = field("Its tip.", 23)
    lines: list[LineOut] = field("Lines of the current branch, oldest first.", [])
    has_more: bool = field("Older lines exist.", False)
    next_before: int | None = field("Pass as `before` for the page before this one.", None)


class MemoryStatus(Response):
    save_id: int = field("The save.", 2)
    agent_id: str = field("The agent.", "qiyu")
    target_key: str = field("The character observed (role_id=N or script_role_id=X).", "role_id=1")
    pending_turns: int = field("Turns after the extraction watermark.", 3)
    watermark_line_id: int | None = field("The last line extraction covered.", None)
    last_batch_key: str | None = field("The newest extraction batch of this save.", None)
    last_extracted_at: GameTime | None = field("When it was extracted.", None)
    last_observed_at: GameTime | None = field("When the loop last looked.", None)
    last_error: str | None = field("The last failed extraction.", None)
    last_error_at: ServiceTime | None = field(
        "When it failed (the server's clock, with its UTC offset).", None
    )
    failed_attempts: int = field("Failed extractions since the last success.", 0)
    next_attempt_at: ServiceTime | None = field(
        "After a failure: no extraction before this time, whatever the appends (the "
        "back-off, in the store: every process honours it); then the service tries again "
        "itself while the failures in a row are fewer than --extraction-retries, else the "
        "next append does. Null: no back-off.",
        None,
    )
    extraction: Literal["queued", "retrying", "idle", "disabled"] = field(
        "queued: a batch waits for (or is with) the LLM; retrying: the last attempt failed "
        "and the service tries again at next_attempt_at; idle: nothing queued (after "
        "--extraction-retries failures in a row, an append after next_attempt_at tries "
        "again); disabled: no LLM configured.",
        "idle",
    )
    last_maintained_at: GameTime | None = field(
        "When maintenance last ran over this player's memories of the agent (cleanup).", None
    )
