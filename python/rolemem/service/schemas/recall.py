"""Recall and the turn prompt: /query, /query_simple, /expand_words, /recall, /turn."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StringConstraints,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
)
from pydantic_core import PydanticCustomError

from .common import (
    AGENT_ID,
    AGENT_ID_DEFAULTED,
    CHARACTER_ID,
    ID_LENGTH,
    KEYWORD_LENGTH,
    MAX_CONTEXT_FIELDS,
    MESSAGE_LENGTH,
    NAME_LENGTH,
    NOW,
    QUERY_LIMIT,
    ROLE_CHARACTER_ID,
    USER_ID,
    GameTime,
    Id,
    Level,
    Request,
    Response,
    Share,
    TokenCount,
    Whole,
    field,
    flag,
    key,
)
from .common import text as text_field
from .component import Component
from .saves import _Target, one_target
from .storable import storable

ContextText = Annotated[str, StringConstraints(max_length=256)]
# strict: a text too long for ContextText must not pass as the number its digits spell
ContextScalar = ContextText | StrictInt | StrictFloat | StrictBool | None


def _one_kind(value: Any, handler: Any) -> Any:
    # one error naming the value's key, not one per member of the union, each located by
    # pydantic's tag for it (context.a.constrained-str)
    try:
        return handler(value)
    except ValidationError:
        raise PydanticCustomError(
            "context_value",
            "a context value is a text of at most 256 characters, a number, true or false, "
            "null, or a list of at most 64 texts, numbers or true/false",
        ) from None


Context = dict[
    Annotated[str, StringConstraints(min_length=1, max_length=KEYWORD_LENGTH)],
    Annotated[
        ContextScalar
        | Annotated[list[ContextText | StrictInt | StrictFloat | StrictBool], Field(max_length=64)],
        WrapValidator(_one_kind),
    ],
]


def context_field() -> Any:
    return Field(
        default_factory=dict,
        description="The game state that unlocks designer entries (queryParams fields): "
        "numbers compare as numbers, anything else as text; a missing intimacy is 1.",
        examples=[{"intimacy": 2, "exploration": 3, "scene": "studio"}],
        max_length=MAX_CONTEXT_FIELDS,
    )


class QueryRequest(Request):
    """dynamic-memory §十二: `query`, `limit`, `score_threshold`, plus who and when."""

    query: str = text_field(
        "The player's input.", "室友失恋了，我们陪她吃了一晚上火锅", max_length=MESSAGE_LENGTH
    )
    limit: Whole = field("Most events returned.", 5, default=5, ge=1, le=QUERY_LIMIT)
    score_threshold: Share | None = field(
        "0-1: also drop events whose fused score is lower (the evidence gate always applies).",
        0.5,
        default=None,
    )
    user_id: str = text_field(USER_ID, "mumu", max_length=ID_LENGTH)
    agent_id: str = text_field(AGENT_ID, "qiyu", max_length=ID_LENGTH)
    save_id: Id | None = key(
        "The save being played: events extracted from lines off its current branch are not "
        "recalled.",
        2,
        default=None,
    )
    now: GameTime | None = field(NOW, "2021-02-21T12:00:00", default=None)
    last_reply: str | None = text_field(
        "The character's previous reply, recalled with the query (spec §五.2).",
        "你室友还好吗？",
        max_length=MESSAGE_LENGTH,
        default=None,
    )
    dry_run: bool = flag("Only look: recalled memories get no strength or count.")


class _SpecEvent(Response):
    """An event in the spec's shape, as a recall ranks it and as the timeline lists it."""

    id: int = field("Its place in the list, 0-based: rank best first, or position oldest first.", 0)
    scope: str = field("user or official.", "user")
    index: str = field("The event's id as text (the spec's shape).", "17")
    event_id: int = field("The event.", 17)
    description: str = field("The event.", "木木的室友失恋了…")
    deepinsight: str | None = field("The insight.", None)
    place: str | None = field("Where.", "火锅店")
    updatetime: str | None = field("When, as the spec prints it.", "2019-03-12 21:10:00")
    time_text: str | None = field(
        "When, as the prompt reads it (dynamic-memory §七).", "2019-03-12"
    )
    keyword: list[str] = field("Tags.", ["室友", "火锅"])


class RecalledEvent(_SpecEvent):
    score: float | None = field("Fused score, 0-1.", 0.71)
    log: str | None = field("The spec's log line.", "[记忆事件]--score=0.71,…")


class RecalledEntity(Response):
    id: int = field("Rank (0-based).", 0)
    kind: str = field("用户属性, 与主体和客体的关系, ...", "用户属性")
    score: float | None = field("Score.", 0.0)
    scope: str = field("user or official.", "user")
    index: dict[str, int] = field("{index: entity id} (the spec's shape).", {"index": 3})
    entity_id: int = field("The entity.", 3)
    description: str = field("The memory.", "木木对星座感兴趣")
    updatetime: str | None = field("When it was written.", "2024-09-24T13:00:00")
    matched_keywords: list[str] = field("Words that matched.", ["星座"])
    keyword: str = field("The attribute or relation name.", "兴趣")
    log: str | None = field("The spec's log line.", None)
    save_id: int | None = field(
        "The save a player's entity was extracted on (null: written by hand).", None
    )
    line_ids: list[int] | None = field(
        "The lines the save sees it came from (its visible mentions'; null: none).", None
    )


class TimelineEvent(_SpecEvent):
    save_id: int | None = field("The save it was extracted from.", None)


class QueryResponse(Response):
    memory_events: list[RecalledEvent] = field("Recalled events, best first.", [])
    memory_entities: list[RecalledEntity] = field("Recalled entity memories.", [])
    additional_info: dict[str, Any] = field(
        "Diagnostics: timings, the query's words and association words (the spec's shape).",
        {"query": "火锅"},
    )
    timeline: list[TimelineEvent] = field("The overview timeline (前情提要), oldest first.", [])
    prompt_text: str = field("All of it as the chat prompt reads it.", "前情提要：\n…")


class QuerySimpleResponse(Response):
    """Only the memory contents."""

    memory_events: list[str] = field("Recalled events' texts.", [])
    memory_entities: list[str] = field("Recalled entity memories' texts.", [])
    timeline: list[str] = field("The timeline's texts.", [])
    prompt_text: str = field("The prompt text.", "")


class ExpandWordsRequest(Request):
    """dynamic-memory §11.1."""

    sentence: str = text_field(
        "The text to find association words for.", "红色", max_length=MESSAGE_LENGTH
    )
    chinese_rd_count: Whole = field("Most association words.", 100, default=100, ge=0, le=10_000)
    logic_type: Literal["first", "second"] = field(
        "first: each word's strongest in turn; second: pooled, words several call up lifted.",
        "second",
        default="second",
    )
    filter_values: list[Level] = field(
        "Levels to drop ([0]: none).", [0], default=[], max_length=100
    )


class ExpandWordsResponse(Response):
    original_keywords: list[str] = field(
        "The sentence's words.", ["红色"], serialization_alias="原始关键词列表"
    )
    input_words: list[str] = field(
        "Words left after stopwords and names.", ["红色"], serialization_alias="输入的单词列表"
    )
    expanded_words: list[dict[str, int]] = field(
        "Association words with their levels.",
        [{"喜庆": 7}],
        serialization_alias="扩展的联想词列表",
    )


class RecallPreviewRequest(Request):
    """A designer's preview of a recall: what the player's input would recall under a game
    context, with why each entry is in or not; nothing recorded."""

    character_id: str = text_field(CHARACTER_ID, "qiyu", max_length=ID_LENGTH)
    user_id: str = text_field(USER_ID, "mumu", max_length=ID_LENGTH)
    text: str = text_field("The player's input.", "今天画画时你好温柔", max_length=MESSAGE_LENGTH)
    context: Context = context_field()
    user_name: str | None = text_field(
        "The player's name ({{user}}; never a recall word).",
        "木木",
        max_length=NAME_LENGTH,
        default=None,
    )
    char_name: str | None = text_field(
        "The character's name ({{char}}).", "祁煜", max_length=NAME_LENGTH, default=None
    )
    require_match: bool = flag("false: every unlocked entry, relevant or not.", default=True)


class RecallRequest(RecallPreviewRequest):
    """Character (designer) memory for one player input under a game context."""

    explain: bool = flag("Also say, per entry, why it is or is not shown.", example=True)
    dry_run: bool = flag("A preview: the sticky queue and turn counter do not move.")


class Match(Response):
    word: str = field("The word or keyword that matched.", "酒")
    how: str = field(
        "keyword, keyword inside a word, associated keyword or content.", "keyword inside a word"
    )
    text_position: int | None = field("Where the keyword starts in the text (1-based).", 5)


class ExplainRow(Response):
    entry_key: str = field("The entry (kind:ordinal).", "attribute:1")
    entry_kind: str = field("attribute, event or dialogue_style.", "attribute")
    group_name: str = field("Category / event type / style type.", "能力特征")
    content: str = field("The entry.", "艺术天赋")
    status: str = field("shown, locked, over the limit or not relevant.", "shown")
    reason: str = field("Why, in words.", "matched 画画")
    failed_condition: str | None = field("For a locked entry, the first failing condition.", None)
    match_kind: str | None = field("keyword, associated keyword or content.", "keyword")
    matched_words: str | None = field("Words that matched, joined by 、.", "画画")
    matches: list[Match] = field("Every match, best first.", [])
    strength: int | None = field("1-5.", 5)
    recall_rank: int | None = field("Rank among this turn's recalls of its kind.", 1)
    display_rank: int | None = field("Rank in the prompt.", 1)
    recalled_turn: int | None = field("Turn it was last recalled, if queued.", 1)
    sticky_turns_left: int | None = field(
        "If queued, the turns it stays queued counting this one (its own 停留轮数, else the "
        "queue's).",
        3,
        default=None,
    )
    is_unlocked: bool = field(
        "Its conditions hold (entries that matched nothing: not judged).", True
    )
    is_recalled: bool = field("Recalled this turn.", True)
    is_carried_over: bool = field("Shown from an earlier turn's recall.", False)
    is_shown: bool = field("In the prompt.", True)


class RecallResponse(Response):
    character_memory_attributes: str = field(
        "{{character_memory_attributes}}.", "能力特征：艺术天赋"
    )
    character_memory_event: str = field("{{character_memory_event}}.", "")
    character_dialogue_style: str = field("{{character_dialogue_style}}.", "")
    explain: list[ExplainRow] = field("Per entry, why (with explain).", [])


class TurnRequest(_Target):
    """One reply's prompt for a save: the character's memory of every layer."""

    # a message, or a regenerate without one: in the schema too
    model_config = ConfigDict(
        json_schema_extra=one_target(
            "character_id",
            each=[
                {
                    "required": ["message"],
                    "properties": {
                        "message": {"type": "string"},
                        "regenerate": {"type": "boolean", "enum": [False]},
                    },
                },
                {
                    "required": ["regenerate"],
                    "properties": {
                        "message": {"type": "null"},
                        "regenerate": {"type": "boolean", "enum": [True]},
                    },
                },
            ],
        )
    )

    save_id: Id = key("The save (slot) being played.", 2)
    character_id: str | None = text_field(
        ROLE_CHARACTER_ID, "qiyu", max_length=ID_LENGTH, default=None
    )
    agent_id: str | None = text_field(
        AGENT_ID_DEFAULTED, "qiyu", max_length=ID_LENGTH, default=None
    )
    user_id: str = text_field(USER_ID, "mumu", max_length=ID_LENGTH)
    # before message: message's check reads it
    regenerate: bool = flag(
        "The prompt for a new reply in place of the save's tip (a swipe), with no message: "
        "the conversation up to the player line the tip answered, that line once and last. "
        "The tip must be a reply (409 naming regenerate); nothing is stored or counted (as "
        "dry_run): store the new reply with POST /saves/{save_id}/regenerate."
    )
    message: str | None = text_field(
        "The player's new message (required, unless regenerate).",
        "今天画画时你好温柔",
        max_length=MESSAGE_LENGTH,
        default=None,
        validate_default=True,
    )
    # one component both branches name (a generator would make it once a branch)
    context: Annotated[Context, Component("TurnRequestContext", storable)] = context_field()
    now: GameTime | None = field(NOW, "2021-02-21T12:00:00", default=None)
    user_name: str | None = text_field(
        "The player's name: {{user}}, and the name of the player's lines that show no "
        "display_name in the history (default: the save's user_name, else 用户).",
        "木木",
        max_length=NAME_LENGTH,
        default=None,
    )
    char_name: str | None = text_field(
        "The character's name ({{char}}; default: its role's name).",
        "钦灵",
        max_length=NAME_LENGTH,
        default=None,
    )
    max_prompt_tokens: TokenCount | None = field(
        "The most tokens the prompt may take (prompt_tokens): the lowest-ranked memory items "
        "go first, then the oldest history; the template's text and the message are never cut "
        "(400 naming max_prompt_tokens when they alone pass it). Each memory block is also "
        "bounded by its budget (seed memory_prompt_budgets).",
        4000,
        default=None,
    )
    dry_run: bool = flag("A preview or a retry: no strength, count or sticky queue changes.")

    @field_validator("message")
    @classmethod
    def _message_unless_regenerate(cls, message: str | None, info: ValidationInfo) -> str | None:
        regenerate = info.data.get("regenerate") is True
        if message is None and not regenerate:
            raise ValueError("is required (or regenerate: true, for a new reply to the tip)")
        if message is not None and regenerate:
            raise ValueError(
                "give no message with regenerate: the prompt answers the player line the "
                "save's tip answered"
            )
        return message


class ChatMessage(Response):
    role: Literal["system", "user", "assistant"] = field("OpenAI-style role.", "user")
    content: str = field("The text.", "今天画画时你好温柔")


class TraceRow(Response):
    layer: str = field(
        "character, dynamic_event, timeline, dynamic_entity or history.", "character"
    )
    item: str | None = field("What it is about.", "艺术天赋", default=None)
    status: str = field(
        "shown, locked, no evidence, ..., or budget (cut to fit a block's budget or "
        "max_prompt_tokens).",
        "shown",
    )
    why: str | dict[str, Any] | None = field(
        "Why: a condition, matched words, score components, the window.",
        "keyword: 画画",
        default=None,
    )
    kind: str | None = field(
        "Character entries: attribute, event or dialogue_style.", None, default=None
    )
    event_id: int | None = field("Dynamic events: the event.", None, default=None)
    entity_id: int | None = field("Dynamic entities: the entity (or fact).", None, default=None)
    save_id: int | None = field(
        "Dynamic events: the save it was extracted on; entities: their newest visible "
        "mention's (null: added by hand).",
        None,
        default=None,
    )
    line_ids: list[int] | None = field(
        "Dynamic events: the lines it came from; entities: the lines of their mentions this "
        "save sees (null: none, added by hand).",
        None,
        default=None,
    )
    sticky_turns_left: int | None = field(
        "Character entries: turns it stays queued.", None, default=None
    )


class TurnResponse(Response):
    messages: list[ChatMessage] = field("The prompt, OpenAI-style.", [])
    prompt_tokens: int = field(
        "The prompt's tokens: each message's count, summed (one rule, macro "
        "prompt_token_count: a character outside ASCII counts 1, ASCII 1 per 4 characters).",
        851,
    )
    trace: list[TraceRow] = field("Every item in or out, and why.", [])
