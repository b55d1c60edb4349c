"""Request and response models (pydantic): the spec's field names, Chinese ones as aliases."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, str_strip_whitespace=True)


class QueryRequest(_Request):
    """dynamic-memory §十二: `query`, `limit`, `score_threshold`, plus who and when."""

    query: str = Field(min_length=1)
    limit: int = Field(default=5, ge=1, le=1000)
    score_threshold: float | None = Field(default=None, ge=0, le=1)
    user_id: str = Field(min_length=1)
    agent_id: str = Field(min_length=1)
    save_id: int | None = None
    now: datetime | None = None
    last_reply: str | None = None


class QueryResponse(BaseModel):
    memory_events: list[dict[str, Any]]
    memory_entities: list[dict[str, Any]]
    additional_info: dict[str, Any]
    timeline: list[dict[str, Any]]
    prompt_text: str


class QuerySimpleResponse(BaseModel):
    """Only the memory contents."""

    memory_events: list[str]
    memory_entities: list[str]
    timeline: list[str]
    prompt_text: str


class ExpandWordsRequest(_Request):
    """dynamic-memory §11.1."""

    sentence: str = Field(min_length=1)
    chinese_rd_count: int = Field(default=100, ge=0, le=10_000)
    logic_type: Literal["first", "second"] = "second"
    filter_values: list[int] = Field(default_factory=list)


class ExpandWordsResponse(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    original_keywords: list[str] = Field(serialization_alias="原始关键词列表")
    input_words: list[str] = Field(serialization_alias="输入的单词列表")
    expanded_words: list[dict[str, int]] = Field(serialization_alias="扩展的联想词列表")


class RecallRequest(_Request):
    """Character (designer) memory for one player input under a game context."""

    character_id: str = Field(min_length=1)
    user_id: str = Field(min_length=1)
    text: str = Field(min_length=1)
    context: dict[str, Any] = Field(default_factory=dict)
    user_name: str | None = None
    char_name: str | None = None
    require_match: bool = True


class RecallResponse(BaseModel):
    character_memory_attributes: str
    character_memory_event: str
    character_dialogue_style: str
    explain: list[dict[str, Any]]


class _Character(_Request):
    role_id: int | None = None
    script_role_id: str | None = None

    @model_validator(mode="after")
    def _one_identity(self) -> _Character:
        if (self.role_id is None) == (self.script_role_id is None):
            raise ValueError("give exactly one of role_id or script_role_id")
        return self


class TurnRequest(_Character):
    save_id: int
    character_id: str = Field(min_length=1)
    agent_id: str | None = None
    user_id: str = Field(min_length=1)
    message: str = Field(min_length=1)
    context: dict[str, Any] = Field(default_factory=dict)
    now: datetime | None = None
    user_name: str | None = None
    char_name: str | None = None


class TurnResponse(BaseModel):
    messages: list[dict[str, str]]
    token_counts: dict[str, int]
    trace: list[dict[str, Any]]


class NewLine(_Request):
    attribute: Literal["system", "user", "assistant"]
    content: str
    role_id: int | None = None
    script_role_id: str | None = None
    display_name: str | None = None
    original_emotion: str | None = None
    tts_content: str | None = None
    action_content: str | None = None


class ObserveAfter(_Character):
    """Run the memory loop for this character once the lines are stored (in the background)."""

    user_id: str = Field(min_length=1)
    agent_id: str = Field(min_length=1)
    scene: str | None = None
    now: datetime | None = None


class LinesRequest(_Request):
    save_id: int
    lines: list[NewLine] = Field(min_length=1, max_length=1000)
    observe: ObserveAfter | None = None


class LinesResponse(BaseModel):
    line_ids: list[int]
    tip_line_id: int


class SnapshotResponse(BaseModel):
    path: str
    bytes: int


class OfficialEvent(_Request):
    """An official (designer) event memory of an agent."""

    agent_id: str = Field(min_length=1)
    description: str = Field(min_length=1)
    created_at: datetime
    keywords: list[str] = Field(default_factory=list)
    place: str | None = None
    scene: str | None = None
    deepinsight: str | None = None
    importance: float | None = Field(default=None, ge=0, le=1)


class OfficialEntity(_Request):
    """An official (designer) entity memory of an agent."""

    agent_id: str = Field(min_length=1)
    entity_name: str = Field(min_length=1)
    entity_type: str
    kind: str
    keyword: str = Field(min_length=1)
    description: str = Field(min_length=1)
    updated_at: datetime | None = None


class OfficialEdit(_Request):
    """Fields to change (the editable ones of an event or entity)."""

    fields: dict[str, Any] = Field(min_length=1)
