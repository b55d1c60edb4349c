"""A SillyTavern lorebook, once: what the import reads (sillytavern checks an entry's types by
its layout's model; every other field is carried) and the service documents (its body). The
schema also says what the SQL rules refuse (an entry without keys or with blank content, a book
without entries), so that a client taking it at its word sends what imports."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, Tag

from .config import KINDS
from .contract import INT32, LOGICS, NOT_SPACES, condition, whole_number

# 2.0 as 2 (JSON has one number type); the bounds are the field's
Whole = BeforeValidator(lambda value: value if whole_number(value) is None else whole_number(value))
ABSENT: dict[str, Any] = {"not": {}}  # (not `false`: openapi-python-client reads only objects)


class Carried(BaseModel):
    """The fields rolemem reads, typed as JSON has them (no "5" for 5); the others carried."""

    model_config = ConfigDict(extra="allow", strict=True, loc_by_alias=False)


class Rolemem(Carried):
    """`extensions.rolemem`: the entry's kind, group, date and game-state conditions."""

    kind: Literal[tuple(KINDS)] = "attributes"  # type: ignore[valid-type]
    group: str | None = None
    date: str = ""
    queryParams: list[Any] = Field(
        default_factory=list, json_schema_extra=lambda s: s.update(items=condition())
    )


class Settings(Carried):
    """How secondary keys decide (selectiveLogic: LOGICS by index); turns a recall stays."""

    selectiveLogic: Annotated[int, Field(ge=0, le=len(LOGICS) - 1), Whole] | None = None
    sticky: Annotated[int, Field(ge=INT32.start, le=INT32.stop - 1), Whole] | None = None


class Extensions(Carried):
    """Other tools' fields of an entry; rolemem's under `rolemem`."""

    rolemem: Rolemem | None = None


class CardExtensions(Extensions, Settings):
    """A card entry's extensions: SillyTavern keeps its logic and sticky there."""


class Entry(Carried):
    """What both layouts' entries share."""

    content: str = Field("", json_schema_extra={"pattern": NOT_SPACES})  # SQL refuses blank
    comment: str | None = None
    selective: bool = True
    constant: bool = False
    extensions: Extensions | None = None


class WorldInfoEntry(Entry, Settings):
    """A World Info entry."""

    model_config = ConfigDict(json_schema_extra={"required": ["key", "content"]})

    keys: list[str] = Field([], alias="key", json_schema_extra={"minItems": 1})  # SQL: 1 at least
    order: float = 100
    disable: bool = False
    keysecondary: list[str] | None = None


class CardEntry(Entry):
    """A character_book's entry (a card's, or a bare book's)."""

    model_config = ConfigDict(json_schema_extra={"required": ["keys", "content"]})

    keys: list[str] = Field([], json_schema_extra={"minItems": 1})
    insertion_order: float = 100
    enabled: bool = True
    secondary_keys: list[str] | None = None
    name: str | None = None
    extensions: CardExtensions | None = None


class CardBook(Carried):
    """A character card's character_book: its entries in a list."""

    entries: list[CardEntry] = Field(min_length=1)


class CardData(Carried):
    """A character card's data."""

    character_book: CardBook


class CharacterCard(Carried):
    """A character card (V2/V3), its book in data (no entries: that would be World Info)."""

    model_config = ConfigDict(json_schema_extra=lambda s: s["properties"].update(entries=ABSENT))

    data: CardData


class CharacterBook(CardBook):
    """A character_book alone (no data: that would be a card)."""

    model_config = ConfigDict(json_schema_extra=lambda s: s["properties"].update(data=ABSENT))


class WorldInfo(Carried):
    """World Info: entries by uid."""

    entries: dict[str, WorldInfoEntry] = Field(min_length=1)


def layout_of(doc: Any) -> str | None:
    """Which layout a document is: World Info when its entries are an object, a card when it
    has data.character_book, a bare character_book when its entries are a list."""
    if not isinstance(doc, Mapping):
        return None
    if isinstance(doc.get("entries"), Mapping):
        return "world_info"
    data = doc.get("data")
    if isinstance(data, Mapping) and isinstance(data.get("character_book"), Mapping):
        return "card"
    return "character_book" if isinstance(doc.get("entries"), list) else None


Lorebook = Annotated[
    Annotated[WorldInfo, Tag("world_info")]
    | Annotated[CharacterCard, Tag("card")]
    | Annotated[CharacterBook, Tag("character_book")],
    Discriminator(layout_of),
    Field(description="The SillyTavern JSON."),
]
