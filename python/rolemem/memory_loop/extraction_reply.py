"""LLM extraction of memories from a slice of dialogue, and LLM consolidation of entities.

The prompts are package data (`data/prompts/*.md`). Replies are one JSON object (a ```json
fence is tolerated) validated by pydantic models; an invalid reply is sent back to the LLM with
the validation error, at most `max_attempts` calls in all, then `ExtractionError`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from datetime import datetime
from importlib import resources
from string import Template
from typing import Annotated, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
)

from ..dynamic_memory.contract import (
    KEYWORD_LENGTH,
    MEMORY_LENGTH,
    NAME_LENGTH,
    EntityKind,
    EntityType,
)
from ..errors import RolememError
from ..retry import retry
from .llm import ChatModel, LLMError

log = logging.getLogger(__name__)


class ExtractionError(RolememError):
    """Extraction (or consolidation) failed after its retries; nothing was written."""


Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
# an extracted memory's texts within the memory contract's limits: one past them is an invalid
# reply, sent back to the LLM to correct like any other (the store would refuse it, and the
# batch with it, at every retry)
MemoryText = Annotated[Text, StringConstraints(max_length=MEMORY_LENGTH)]
Name = Annotated[Text, StringConstraints(max_length=NAME_LENGTH)]
Keyword = Annotated[Text, StringConstraints(max_length=KEYWORD_LENGTH)]


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", allow_inf_nan=False, str_strip_whitespace=True)


class ExtractedEvent(_Reply):
    """One event memory as the LLM extracted it."""

    description: MemoryText
    deepinsight: MemoryText | None = None
    keywords: list[Keyword] = Field(default_factory=list, max_length=30)
    place: Name | None = None
    time: datetime | None = None
    importance: float | None = Field(default=None, ge=0, le=1)
    # the numbered message of the transcript the event comes from (its lines' time is its time)
    message: int | None = Field(default=None, ge=1)

    @field_validator("time", mode="before")
    @classmethod
    def _minute_time(cls, value: object) -> object:
        if value is None or value == "":
            return None
        if not isinstance(value, str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", value):
            raise ValueError("time must be 'YYYY-MM-DD HH:MM'")
        return datetime.strptime(value, "%Y-%m-%d %H:%M")

    @field_validator("deepinsight", "place", mode="before")
    @classmethod
    def _blank_is_none(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value


class ExtractedEntity(_Reply):
    """One entity memory (attribute or relation) as the LLM extracted it."""

    entity_name: Name
    entity_type: EntityType
    kind: EntityKind
    keyword: Keyword
    description: MemoryText
    # the numbered message it comes from (its lines are the mention's; else the batch's)
    message: int | None = Field(default=None, ge=1)


class ExtractedFact(_Reply):
    """A fact stated in the dialogue (住址 北京): a slot's value as of its message. Which value
    is current is decided in SQL per chain (model int_memory_facts_resolved), not here."""

    subject: Text
    attribute: Text
    value: Text
    # the numbered message stating it (its lines are the fact's lines; else the batch's last)
    message: int | None = Field(default=None, ge=1)
    # values of this slot the fact ends (a `many` attribute's values end only so)
    supersedes: list[Text] = Field(default_factory=list, max_length=30)


class ExtractionReply(_Reply):
    """The whole extraction reply."""

    events: list[ExtractedEvent] = Field(default_factory=list)
    entities: list[ExtractedEntity] = Field(default_factory=list)
    facts: list[ExtractedFact] = Field(default_factory=list)


class ConsolidatedEntity(_Reply):
    id: int
    description: MemoryText


class ConsolidationReply(_Reply):
    entities: list[ConsolidatedEntity]


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)
ReplyModel = TypeVar("ReplyModel", bound=BaseModel)


def parse_reply(text: str, model: type[ReplyModel]) -> ReplyModel:
    """The reply as `model`; ValueError saying what is wrong (bad JSON, which field)."""
    fenced = _FENCE.match(text)
    body = fenced.group(1) if fenced else text.strip()
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"the reply is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    if not isinstance(data, dict):
        raise ValueError("the reply must be one JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in error['loc']) or 'reply'}: {error['msg']}"
            for error in exc.errors()[:5]
        )
        raise ValueError(f"the reply does not fit the format: {problems}") from None


def prompt(name: str, **values: str) -> str:
    """A prompt from package data with `$name` placeholders filled."""
    text = resources.files("rolemem").joinpath(f"data/prompts/{name}.md").read_text("utf-8")
    return Template(text).safe_substitute(values)


def render_dialogue(messages: Sequence[dict[str, str]]) -> str:
    """The memory builder's messages as one numbered transcript the extraction prompt
    describes (an event names the message it comes from by its number)."""
    return "\n".join(
        f"[{number}] {message['role']}: {message['content']}"
        for number, message in enumerate(messages, start=1)
    )


def ask(
    llm: ChatModel,
    messages: list[dict[str, str]],
    model: type[ReplyModel],
    max_attempts: int,
    what: str,
    *,
    retry_errors: bool = True,
) -> ReplyModel:
    """Call the LLM until its reply fits `model`, at most `max_attempts` calls. An invalid
    reply is answered with the problem so the next attempt can correct it. A failed call
    (LLMError) is tried again too, unless not `retry_errors`: then it ends the attempt at
    once (the caller retries after a back-off: one attempt, one failing call)."""

    def reply() -> ReplyModel:
        nonlocal messages
        text = llm.complete(messages)
        try:
            return parse_reply(text, model)
        except ValueError as exc:  # the next call sees its reply and the problem, to correct it
            correction = f"{exc}。请只输出一个符合格式的 JSON 对象。"
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": correction},
            ]
            raise

    def logged(exc: Exception, attempt: int) -> None:
        log.warning("%s: attempt %d/%d: %s", what, attempt, max_attempts, exc)

    retried = (ValueError, LLMError) if retry_errors else (ValueError,)
    try:  # no pause: the client's own retries wait for a server that failed
        return retry(reply, attempts=max_attempts, on=retried, wait=0, before_retry=logged)
    except (LLMError, ValueError) as exc:
        once = isinstance(exc, LLMError) and not retry_errors
        failed = "failed" if once else f"failed after {max_attempts} LLM calls"
        raise ExtractionError(f"{what} {failed}: {exc}") from None


def extract(
    llm: ChatModel,
    dialogue: Sequence[dict[str, str]],
    *,
    agent_name: str,
    user_name: str,
    max_attempts: int,
    fact_attributes: str = "（无）",
    current_facts: str = "（暂无）",
    retry_errors: bool = True,
) -> ExtractionReply:
    """Events, entities and facts from one batch of dialogue, from the character's point of
    view. `fact_attributes`: the attributes and aliases the prompt lists; `current_facts`: the
    facts current on the batch's chain (rendered by facts.fact_attributes and
    facts.current_facts)."""
    system = prompt(
        "extraction_zh",
        agent_name=agent_name,
        user_name=user_name,
        fact_attributes=fact_attributes,
        current_facts=current_facts,
    )
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": render_dialogue(dialogue)},
    ]
    return ask(
        llm, messages, ExtractionReply, max_attempts, "extraction", retry_errors=retry_errors
    )


def consolidate(
    llm: ChatModel, entities: Sequence[dict[str, object]], *, max_attempts: int
) -> dict[int, str]:
    """Merged descriptions by entity id; ids the LLM did not send back are left out."""
    listing = json.dumps(
        [
            {k: e[k] for k in ("id", "entity_name", "kind", "keyword", "description")}
            for e in entities
        ],
        ensure_ascii=False,
        indent=1,
    )
    messages = [
        {"role": "system", "content": prompt("consolidation_zh")},
        {"role": "user", "content": listing},
    ]
    reply = ask(llm, messages, ConsolidationReply, max_attempts, "consolidation")
    sent = {int(str(e["id"])) for e in entities}
    return {item.id: item.description for item in reply.entities if item.id in sent}
