"""Designer config for character memory: the designers' nested JSON <-> the seed tables.

The spec's format is `{类别: [{"关键词", "内容", "强度", "日期", "queryParams"}, ...]}` per kind
(attributes, events, dialogue styles). Seeds hold one row per entry, in designer order (an
explicit ordinal), with `keywords` and `query_params` as JSON. This module only reshapes and
checks structure (an entry's types: its .contract model); the content rules (strength range,
operators, sizes) are SQL (`int_character_config_problems`), run here on the staged rows so
nothing half-imports.
"""

from __future__ import annotations

import csv
import json
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..errors import NotFoundError, RolememError
from .contract import ENTRIES, AttributeEntry, addressable

# kind in the designer document -> (seed table, group column, entry_kind in SQL)
KINDS = {
    "attributes": ("character_attributes", "category", "attribute"),
    "events": ("character_events", "event_type", "event"),
    "dialogue_styles": ("character_dialogue_styles", "style_type", "dialogue_style"),
}
# Recall rules an entry may add (SillyTavern's, for any config): secondary keywords and the
# logic they must pass over the player's text, always recalled while unlocked, and how many
# turns it stays queued. Optional, with these defaults (older files and tables lack them).
RULE_DEFAULTS: dict[str, Any] = {
    "secondary_keywords": [],
    "secondary_logic": None,
    "is_constant": False,
    "sticky_turns": None,
}
# entry fields whose wrong type the import names before the others' (as it always has)
_CHECKED_FIRST = (("keywords",), ("content",), ("strength",), ("event_date",))
SEED_COLUMNS = {
    table: ["ordinal", "character_id", group_column]
    + (["event_date"] if kind == "events" else [])
    + ["keywords", "content", "strength", "query_params", *RULE_DEFAULTS]
    for kind, (table, group_column, _) in KINDS.items()
}
# columns holding JSON (written as compact JSON text)
JSON_COLUMNS = ("keywords", "query_params", "secondary_keywords")


class ConfigError(RolememError, ValueError):
    """Designer config that cannot be loaded; the message names file, entry and field."""


class CharacterNotFoundError(ConfigError, NotFoundError):
    """No designer config for the character asked for (a 404 over HTTP)."""


class ConfigWarning(UserWarning):
    """Config outside the spec's advice (keyword count, content length): loaded anyway."""


@dataclass
class CharacterConfig:
    """Seed rows per table, plus where each came from (for messages)."""

    tables: dict[str, list[dict[str, Any]]] = field(
        default_factory=lambda: {table: [] for table in SEED_COLUMNS}
    )
    locations: dict[tuple[str, int], str] = field(default_factory=dict)

    def extend(self, other: CharacterConfig) -> None:
        mine = {row["character_id"] for rows in self.tables.values() for row in rows}
        theirs = {row["character_id"] for rows in other.tables.values() for row in rows}
        if mine & theirs:
            where = min(other.locations.values(), default="another file")
            raise ConfigError(
                f"character {min(mine & theirs)!r} is configured twice "
                f"(again in {where}): one file per character"
            )
        for table, _, kind in KINDS.values():
            offset = max((r["ordinal"] for r in self.tables[table]), default=0)
            for row in other.tables[table]:
                new = {**row, "ordinal": row["ordinal"] + offset}
                self.tables[table].append(new)
                self.locations[(kind, new["ordinal"])] = other.locations[(kind, row["ordinal"])]


def _read_document(doc: str | Path | Mapping[str, Any]) -> tuple[Mapping[str, Any], str]:
    if isinstance(doc, Mapping):
        return doc, "<designer config>"
    path = Path(doc)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path.name}: not UTF-8 text (byte {exc.start}): save the file as UTF-8"
        ) from None
    try:
        parsed = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path.name}: malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    except RecursionError:
        raise ConfigError(f"{path.name}: the JSON nests too deeply") from None
    except ValueError as exc:
        raise ConfigError(f"{path.name}: {exc}") from None
    if not isinstance(parsed, Mapping):
        raise ConfigError(f"{path.name}: the document must be a JSON object")
    return parsed, path.name


def quoted_cut(value: Any, limit: int = 60) -> str:
    """`value` as text, cut to `limit` characters (a file's own keys and values, quoted)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number designers can use (NaN and infinity are refused)")


def parse_designer_json(
    doc: str | Path | Mapping[str, Any], *, character_id: str | None = None
) -> CharacterConfig:
    """Designer JSON (a path or a mapping) -> seed rows. Structure errors raise ConfigError."""
    document, source = _read_document(doc)
    character = character_id or document.get("character_id")
    if not isinstance(character, str) or not character.strip():
        raise ConfigError(f"{source}: character_id is required (argument or document key)")
    try:
        addressable(character)
    except ValueError as exc:
        raise ConfigError(f"{source}: character_id {exc}", field="character_id") from None
    # `extensions`: what another tool's fields carry (character_memory.sillytavern), not stored
    unknown = set(document) - set(KINDS) - {"character_id", "extensions"}
    if unknown:
        raise ConfigError(
            f"{source}: unknown section(s) {sorted(unknown)}; expected {sorted(KINDS)}"
        )
    config = CharacterConfig()
    for kind, (table, group_column, entry_kind) in KINDS.items():
        groups = document.get(kind, {})
        if not isinstance(groups, Mapping):
            raise ConfigError(f"{source}: {kind} must map each {group_column} to a list")
        for group, entries in groups.items():
            within = f"{source}: {kind}.{quoted_cut(group)}"  # (a group's name may be long)
            if not isinstance(entries, list):
                raise ConfigError(f"{within} must be a list of entries")
            if not entries:  # never exported so: a group is named by its entries
                raise ConfigError(f"{within} has no entries")
            for index, entry in enumerate(entries):
                where = f"{within}[{index}]"
                row = _entry_row(entry, kind, where)
                ordinal = len(config.tables[table]) + 1
                config.tables[table].append(
                    {"ordinal": ordinal, "character_id": character, group_column: group, **row}
                )
                config.locations[(entry_kind, ordinal)] = where
    return config


def _entry_row(entry: Any, kind: str, where: str) -> dict[str, Any]:
    """One entry as its kind's contract model reads it -> its seed columns."""
    try:
        read = ENTRIES[kind].model_validate(entry)
    except ValidationError as exc:
        error = min(exc.errors(), key=lambda error: error["loc"][:1] not in _CHECKED_FIRST)
        raise ConfigError(f"{where}: {error['msg']}") from None
    row = {"strength": None, "query_params": [], **RULE_DEFAULTS}
    if kind == "events":
        row["event_date"] = ""
    return {**row, **read.model_dump(by_alias=False, exclude_none=True)}


_EXPORT_ORDER = ("日期", "内容", "关键词", "强度", "queryParams")


def export_designer_json(config: CharacterConfig, character_id: str) -> dict[str, Any]:
    """Seed rows of one character -> the designers' nested JSON (keys as in the spec)."""
    known = sorted({row["character_id"] for rows in config.tables.values() for row in rows})
    if character_id not in known:
        # (the service reads one character's rows: no list to offer there)
        others = f"; configured: {known}" if known else ""
        message = f"no config for character {character_id!r}{others}"
        raise CharacterNotFoundError(message, field="character_id")
    document: dict[str, Any] = {"character_id": character_id}
    for kind, (table, group_column, _) in KINDS.items():
        groups: dict[str, list[dict[str, Any]]] = {}
        rows = sorted(
            (r for r in config.tables[table] if r["character_id"] == character_id),
            key=lambda r: r["ordinal"],
        )
        for row in rows:
            entry = ENTRIES[kind].model_construct(**{**RULE_DEFAULTS, **row})
            unset = {c for c in RULE_DEFAULTS if getattr(entry, c) == RULE_DEFAULTS[c]}
            said = entry.model_dump(exclude_none=True, exclude=unset)  # by the spec's names
            # the designers' own order first (a re-exported file diffs only where it changed)
            said = {**{key: said[key] for key in _EXPORT_ORDER if key in said}, **said}
            groups.setdefault(row[group_column], []).append(said)
        document[kind] = groups
    return document


def write_seed_csvs(config: CharacterConfig, directory: str | Path) -> None:
    """Write the three seed CSVs (JSON columns as compact JSON text), all or none: each is
    written beside its target first and the three are renamed into place only when all were
    written."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    staged: list[Path] = []
    try:
        for table in SEED_COLUMNS:
            columns = config_columns(config, table)
            # true and false as dbt's seeds read them (None: an empty field, as csv writes it)
            flags = columns["is_constant"]
            columns["is_constant"] = [None if flag is None else str(flag).lower() for flag in flags]
            staged.append(directory / f".{table}.csv.tmp")
            with open(staged[-1], "w", encoding="utf-8", newline="") as handle:
                writer = csv.writer(handle, lineterminator="\n")
                writer.writerow(columns)
                writer.writerows(zip(*columns.values(), strict=True))
        for path in staged:  # every file written: move them into place
            path.replace(path.with_name(path.name[1:].removesuffix(".tmp")))
    finally:
        for path in staged:
            path.unlink(missing_ok=True)


def config_columns(config: CharacterConfig, seed: str, offset: int = 0) -> dict[str, list[Any]]:
    """One seed table's rows of `config` as bound columns (JSON columns as text, ordinals
    shifted by `offset`)."""
    rows = config.tables[seed]
    return {
        column: [
            row[column] + offset
            if column == "ordinal"
            # compact, as the seed CSVs and DuckDB's json_extract write it: every engine
            # quotes a condition's value the same way
            else json.dumps(
                row.get(column, RULE_DEFAULTS.get(column)),
                ensure_ascii=False,
                separators=(",", ":"),
            )
            if column in JSON_COLUMNS
            # rows built before the recall rules (or by hand) have their defaults
            else row.get(column, RULE_DEFAULTS.get(column))
            for row in rows
        ]
        for column in SEED_COLUMNS[seed]
    }


MAX_ADVICE = 50  # advice lines reported, then one counting the rest


def report_problems(
    config: CharacterConfig, problems: list[tuple[str, int, str, str, str]]
) -> None:
    """Raise one ConfigError for all errors; warn (ConfigWarning) for out-of-advice sizes.

    `problems` rows come from the SQL model int_character_config_problems:
    (entry_kind, ordinal, field, severity, message)."""
    errors: list[str] = []
    advice: list[str] = []
    for entry_kind, ordinal, field_name, severity, message in problems:
        where = config.locations.get((entry_kind, ordinal), f"{entry_kind} #{ordinal}")
        if field_name in RULE_DEFAULTS:  # named as the designers' JSON names it too
            field_name = f"{AttributeEntry.model_fields[field_name].alias} ({field_name})"
        (errors if severity == "error" else advice).append(f"{where}: {field_name}: {message}")
    if len(advice) > MAX_ADVICE:  # an answer bounded whatever the entries' number
        advice[MAX_ADVICE:] = [f"{len(advice) - MAX_ADVICE} more lines of advice (not shown)"]
    for text in advice:
        warnings.warn(text, ConfigWarning, stacklevel=3)
    if errors:
        raise ConfigError("invalid character config:\n" + "\n".join(errors))


DEMO_CHARACTERS = ("qiyu.json", "qinling.json")


def demo_config() -> CharacterConfig:
    """The demo characters shipped with rolemem (the spec's examples: qiyu, and qinling)."""
    from importlib import resources

    config = CharacterConfig()
    for name in DEMO_CHARACTERS:
        text = resources.files("rolemem").joinpath(f"data/characters/{name}").read_text("utf-8")
        config.extend(parse_designer_json(json.loads(text)))
    return config


def read_seed_csvs(directory: str | Path | None = None) -> CharacterConfig:
    """The three config CSVs `write_seed_csvs` wrote (default: the demo config) -> rows."""
    if directory is None:
        return demo_config()
    config = CharacterConfig()
    for kind, (table, _, entry_kind) in KINDS.items():
        columns = SEED_COLUMNS[table]
        path = Path(directory) / f"{table}.csv"
        try:
            with open(path, encoding="utf-8", newline="") as handle:
                records = list(csv.DictReader(handle))
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
        for number, record in enumerate(records, start=2):
            where = f"{table}.csv line {number}"
            # files written before the recall rules lack their columns: the defaults
            if not set(columns) - set(RULE_DEFAULTS) <= set(record) <= set(columns):
                raise ConfigError(f"{where}: expected the columns {columns}")
            try:
                row: dict[str, Any] = {
                    **record,
                    "ordinal": int(record["ordinal"]),
                    "strength": int(record["strength"]) if record["strength"] else None,
                    "keywords": json.loads(record["keywords"]),
                    "query_params": json.loads(record["query_params"] or "[]"),
                    "secondary_keywords": json.loads(record.get("secondary_keywords") or "[]"),
                    "secondary_logic": record.get("secondary_logic") or None,
                    "is_constant": _flag(record.get("is_constant") or "false"),
                    "sticky_turns": int(record["sticky_turns"])
                    if record.get("sticky_turns")
                    else None,
                }
            except (ValueError, json.JSONDecodeError) as exc:
                raise ConfigError(f"{where}: {exc}") from None
            fields = ENTRIES[kind].model_fields  # the entry's types, as the import checks them
            row.update(
                _entry_row({f.alias: row[c] for c, f in fields.items() if c in row}, kind, where)
            )
            config.tables[table].append(row)
            config.locations[(entry_kind, row["ordinal"])] = where
        config.tables[table].sort(key=lambda row: row["ordinal"])
    return config


def _flag(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError(f"is_constant must be true or false, got {text!r}")
    return text.lower() == "true"
